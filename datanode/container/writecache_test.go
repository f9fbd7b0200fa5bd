package container

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/internal/pagecache"
)

// With WriteCacheBytes, a volume leaves only the last bound's worth of its
// buffered block writes in the page cache, and every byte stays readable.
func TestWriteCacheBound(t *testing.T) {
	const bound, chunk = 256 << 10, 64 << 10
	opts := testOptions(vfs.Default)
	opts.WriteCacheBytes = bound
	v, c, _ := diskContainer(t, opts)
	if !c.DirectIO() {
		t.Skip("the volume's filesystem has no direct I/O, and keeps its files in memory")
	}
	data := [][]byte{pattern(9, 1<<20), pattern(10, 1<<20)}
	for i, d := range data {
		for off := 0; off < len(d); off += chunk {
			write(t, c, uint64(i+1), int64(off), d[off:off+chunk])
		}
	}
	held, max, dropped := v.WriteCache()
	require.Equal(t, int64(bound), max)
	require.Equal(t, int64(bound), held)
	require.Equal(t, int64(2<<20-bound), dropped)

	resident := func(id uint64) int {
		k, err := pagecache.Resident(c.blockPath(id))
		require.NoError(t, err)
		return k
	}
	require.Zero(t, resident(1), "block 1, written first, is still in the page cache")
	require.Equal(t, bound/4096, resident(2), "block 2's last %d bytes should be all that is cached", bound)
	for i, d := range data {
		_, err := c.PutBlock(uint64(i+1), int64(len(d)), PutOptions{Sync: true})
		require.NoError(t, err)
		require.Equal(t, d, readAll(t, c, uint64(i+1)))
	}
}

// Chunks that do not start on a large folio's boundary (the page cache
// keeps a file's pages in folios of up to 2 MiB on this kernel's ext4, and
// drops only whole ones) are dropped all the same: after 40 MiB of 3 MiB
// chunks under a bound of 4 MiB, at most the bound and the folio it starts
// in are cached.
func TestWriteCacheBoundUnalignedChunks(t *testing.T) {
	const bound, chunk, size = 4 << 20, 3 << 20, 40 << 20
	opts := testOptions(vfs.Default)
	opts.WriteCacheBytes = bound
	opts.MaxChunkSize = chunk
	opts.MaxBlockSize = size
	_, c, _ := diskContainer(t, opts)
	if !c.DirectIO() {
		t.Skip("the volume's filesystem has no direct I/O, and keeps its files in memory")
	}
	d := pattern(12, size)
	for off := 0; off < size; off += chunk {
		p := d[off:min(off+chunk, size)]
		require.NoError(t, c.WriteChunk(1, int64(off), p, sums(p), WriteOptions{Cache: true}))
	}
	k, err := pagecache.Resident(c.blockPath(1))
	require.NoError(t, err)
	require.LessOrEqual(t, k*4096, bound+2<<20, "%d MiB of the block's %d MiB still cached", k*4096>>20, size>>20)
}

// Without a bound the volume keeps no account, and drops nothing.
func TestWriteCacheUnbounded(t *testing.T) {
	v, c, _ := diskContainer(t, testOptions(vfs.Default))
	write(t, c, 1, 0, pattern(11, 64<<10))
	held, max, dropped := v.WriteCache()
	require.Zero(t, held+max+dropped)
	require.Nil(t, v.wcache)
}

func TestWriteCacheBytesNotNegative(t *testing.T) {
	o := testOptions(vfs.Default)
	o.WriteCacheBytes = -1
	o.EnsureDefaults()
	require.ErrorContains(t, o.Validate(), "WriteCacheBytes")
}
