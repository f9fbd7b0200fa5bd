package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeleteAcks: a seq is acknowledged once, only if every command of it
// since the last heartbeat succeeded; a failed heartbeat keeps the
// acknowledgements for the next one.
func TestDeleteAcks(t *testing.T) {
	var d deleteAcks
	require.Empty(t, d.take())
	d.done(7, true)
	d.done(3, true)
	d.done(5, true)
	d.done(5, false) // one of seq 5's containers failed
	d.done(5, true)
	d.done(7, true)
	got := d.take()
	require.Equal(t, []uint64{3, 7}, got)
	require.Empty(t, d.take())
	d.requeue(got)
	require.Equal(t, []uint64{3, 7}, d.take())
}
