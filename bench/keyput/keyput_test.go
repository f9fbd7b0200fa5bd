package keyput

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFirstDiff(t *testing.T) {
	data := []byte("0123456789")
	key := bytes.Repeat(data, 3)
	require.Equal(t, int64(-1), FirstDiff(key, data, 30))
	require.Equal(t, int64(-1), FirstDiff(key[:25], data, 25))
	bad := bytes.Clone(key)
	bad[17] = 'x'
	require.Equal(t, int64(17), FirstDiff(bad, data, 30))
	require.Equal(t, int64(20), FirstDiff(key[:20], data, 30), "short")
	require.Equal(t, int64(30), FirstDiff(key, data, 40), "short by a whole pattern")
	require.Equal(t, int64(25), FirstDiff(key, data, 25), "long")
}
