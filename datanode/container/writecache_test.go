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
