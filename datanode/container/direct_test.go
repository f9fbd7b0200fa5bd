package container

import (
	"testing"
	"unsafe"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

func alignedCopy(p []byte) []byte {
	buf := make([]byte, len(p)+directIOAlign)
	skip := (directIOAlign - int(uintptr(unsafe.Pointer(&buf[0]))%directIOAlign)) % directIOAlign
	out := buf[skip : skip+len(p)]
	copy(out, p)
	return out
}

// Aligned large chunks go through O_DIRECT, the others through the page
// cache, in the same block; what is read back is what was written, before
// and after a restart.
func TestDirectIO(t *testing.T) {
	if !directIOSupported {
		t.Skip("no O_DIRECT on this platform")
	}
	opts := testOptions(vfs.Default)
	opts.DirectIOMinSize = 8192
	v, c, dir := diskContainer(t, opts)
	data := pattern(11, 64<<10)
	// [0, 16k) direct, [16k, 20k) buffered (below the minimum),
	// [20k, 28k) direct, [28k, 28k+100) buffered (unaligned length), then
	// a direct chunk written first, out of order.
	cuts := []int{0, 16 << 10, 20 << 10, 28 << 10, 28<<10 + 100, 32 << 10, 64 << 10}
	for _, i := range []int{5, 0, 1, 2, 3, 4} {
		write(t, c, 1, int64(cuts[i]), alignedCopy(data[cuts[i]:cuts[i+1]]))
	}
	b, err := c.lockBlock(1)
	require.NoError(t, err)
	usedDirect := b.df != nil
	b.mu.Unlock()
	if !v.direct.Load() {
		t.Skip("the test directory's filesystem refuses O_DIRECT")
	}
	require.True(t, usedDirect)
	// An identical retry of a direct chunk is accepted; a different one is not.
	write(t, c, 1, 0, alignedCopy(data[:16<<10]))
	other := alignedCopy(pattern(12, 16<<10))
	require.ErrorIs(t, c.WriteChunk(1, 0, other, sums(other), WriteOptions{}), ErrOverwrite)
	_, err = c.PutBlock(1, 64<<10, PutOptions{Sync: true, Final: true})
	require.NoError(t, err)
	require.Equal(t, data, readAll(t, c, 1))
	require.NoError(t, v.Close())

	v, err = OpenVolume(dir, opts)
	require.NoError(t, err)
	defer v.Close()
	c, err = v.Container(1)
	require.NoError(t, err)
	require.Equal(t, data, readAll(t, c, 1))
}
