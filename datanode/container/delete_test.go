package container

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// TestDeleteBlocks: dead blocks go from OPEN and CLOSED containers, with
// their files and their share of the counters; blocks already gone (or
// never there) are no error; the counters survive a reopen.
func TestDeleteBlocks(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, dir := diskVolume(t)
			c, err := v.Create(3, layout)
			require.NoError(t, err)
			data := pattern(3, 4000)
			for id := uint64(1); id <= 5; id++ {
				write(t, c, id, 0, data[:id*500])
				if layout == FilePerChunk {
					write(t, c, id, int64(id*500), data[id*500:id*500+100])
				}
				n := int64(id * 500)
				if layout == FilePerChunk {
					n += 100
				}
				_, err := c.PutBlock(id, n, PutOptions{Final: id%2 == 0})
				require.NoError(t, err)
			}
			// Block 9: written, never committed.
			write(t, c, 9, 0, data[:100])
			before := c.Info()
			extra := int64(0)
			if layout == FilePerChunk {
				extra = 100
			}

			n, bytes, err := c.DeleteBlocks([]uint64{2, 4, 4, 9, 77})
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.Equal(t, int64(1000+2000)+2*extra, bytes)
			info := c.Info()
			require.Equal(t, before.BlockCount-2, info.BlockCount)
			require.Equal(t, before.UsedBytes-bytes, info.UsedBytes)
			for _, id := range []uint64{2, 4, 9} {
				_, err := c.GetBlock(id)
				require.ErrorIs(t, err, ErrBlockNotFound)
			}
			require.Equal(t, data[:1500+extra], readAll(t, c, 3))
			rep, err := c.Scan(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Bad)
			require.Empty(t, rep.Orphans)

			// Again: nothing to do, no error.
			n, _, err = c.DeleteBlocks([]uint64{2, 4})
			require.NoError(t, err)
			require.Zero(t, n)

			// A CLOSED container gives dead blocks back too.
			require.NoError(t, c.Close())
			n, _, err = c.DeleteBlocks([]uint64{1, 5})
			require.NoError(t, err)
			require.Equal(t, 2, n)
			files, err := os.ReadDir(filepath.Join(dir, containersDir, "3", chunksDir))
			require.NoError(t, err)
			for _, f := range files {
				require.Regexp(t, `^3(\.block|_\d+\.chunk)$`, f.Name())
			}
			want := c.Info()
			require.Equal(t, int64(1), want.BlockCount)
			require.Equal(t, 1500+extra, want.UsedBytes)

			require.NoError(t, v.Close())
			v = openTestVolume(t, vfs.Default, dir)
			defer v.Close()
			c, err = v.Container(3)
			require.NoError(t, err)
			require.Equal(t, want, c.Info())
			require.Equal(t, data[:1500+extra], readAll(t, c, 3))
		})
	}
}

// While a copy holds a container's blocks, DeleteBlocks deletes nothing
// and says so; after the release it deletes.
func TestDeleteBlocksWaitsForHeldBlocks(t *testing.T) {
	v, err := OpenVolume("/vol", testOptions(vfs.NewMem()))
	require.NoError(t, err)
	defer v.Close()
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	p := pattern(3, 5000)
	require.NoError(t, c.WriteChunk(7, 0, p, checksum.Compute(checksum.CRC32C, 256, p), WriteOptions{}))
	_, err = c.PutBlock(7, 5000, PutOptions{})
	require.NoError(t, err)

	release := c.HoldBlocks()
	_, _, err = c.DeleteBlocks([]uint64{7})
	require.ErrorIs(t, err, ErrBusy)
	_, err = c.GetBlock(7)
	require.NoError(t, err, "the held block is still there")
	release()
	n, bytes, err := c.DeleteBlocks([]uint64{7})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, int64(5000), bytes)
}
