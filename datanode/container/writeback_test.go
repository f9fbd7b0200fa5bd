package container

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// EagerWriteback starts the writeback of chunks of EagerWritebackMinSize
// and more, and leaves smaller ones to the kernel.
func TestEagerWritebackSkipsSmallChunks(t *testing.T) {
	var calls []int64
	old := writeback
	writeback = func(_ uintptr, _, n int64) { calls = append(calls, n) }
	defer func() { writeback = old }()
	opts := testOptions(vfs.Default)
	opts.EagerWriteback = true
	opts.EagerWritebackMinSize = 4096
	_, c, _ := diskContainer(t, opts)
	data := pattern(7, 8192)
	write(t, c, 1, 0, data[:1024])
	write(t, c, 2, 0, data[:4095])
	require.Empty(t, calls)
	write(t, c, 3, 0, data[:4096])
	write(t, c, 4, 0, data)
	require.Equal(t, []int64{4096, 8192}, calls)
}
