package meta

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The table of deferred writes: bounded in bytes, each token taken once
// and only whole, tokens put back expire like the others, and expiry hands
// out the blocks of the tokens past their deadline, oldest first.
func TestDeferredWritesTable(t *testing.T) {
	block := func(id uint64) []*stratov1.BlockRecord {
		return []*stratov1.BlockRecord{{BlockId: &stratov1.BlockIDRecord{ContainerId: 1, LocalId: id}}}
	}
	t0 := time.Unix(1000, 0)
	// Three entries of a 22-byte token fill it.
	d := newDeferredWrites(3*(22+pendingEntryOverhead), time.Minute)
	var nonces [][]byte
	for i := range 3 {
		n := d.nonce()
		require.NotNil(t, n, "room for %d", i)
		token := append([]byte("token-"), n...)
		d.add(token, block(uint64(i+1)), t0.Add(time.Duration(i)*time.Second))
		nonces = append(nonces, n)
	}
	require.Nil(t, d.nonce(), "full: the next open is recorded")
	m := d.metrics()
	require.Equal(t, 3, m.Pending)
	require.LessOrEqual(t, m.Bytes, m.MaxBytes)

	token := func(i int) []byte { return append([]byte("token-"), nonces[i]...) }
	require.Nil(t, d.take([]byte("token-altered")), "only the whole token")
	p := d.take(token(0))
	require.NotNil(t, p)
	require.Nil(t, d.take(token(0)), "once")
	require.NotNil(t, d.nonce(), "room again")

	d.putBack(p) // Apply refused its commit
	require.Equal(t, uint64(1), d.metrics().Returned)
	require.Empty(t, d.due(t0.Add(59*time.Second), 10))
	due := d.due(t0.Add(61*time.Second), 10)
	require.Len(t, due, 2, "the put-back token and the second, not the third")
	require.ElementsMatch(t, []uint64{1, 2}, []uint64{due[0].BlockId.LocalId, due[1].BlockId.LocalId})
	require.Nil(t, d.take(token(1)), "expired")
	require.Len(t, d.due(t0.Add(time.Hour), 10), 1)
	m = d.metrics()
	require.Zero(t, m.Pending)
	require.Zero(t, m.Bytes)
	require.Equal(t, uint64(3), m.Expired)

	off := newDeferredWrites(-1, time.Minute)
	require.Nil(t, off.nonce(), "deferred writes off")
}
