package container

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
)

// TestScanMeta damages one block each way ScanMeta can see without reading
// data (a missing file, a short file, a row that does not decode) and one
// way it cannot (a flipped byte, which only Scan finds).
func TestScanMeta(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, _ := diskVolume(t)
			c, err := v.Create(1, layout)
			require.NoError(t, err)
			data := pattern(9, 5000)
			for id := uint64(1); id <= 5; id++ {
				write(t, c, id, 0, data[:2500])
				write(t, c, id, 2500, data[2500:])
				_, err = c.PutBlock(id, 5000, PutOptions{Final: true})
				require.NoError(t, err)
			}
			require.NoError(t, c.Close())
			rep, err := c.ScanMeta(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Bad)
			require.Equal(t, int64(5), rep.Blocks)
			require.Equal(t, int64(25000), rep.Bytes)

			last := func(id uint64) string { // the file holding the block's end
				if layout == FilePerChunk {
					return c.chunkPath(id, 2500)
				}
				return c.blockPath(id)
			}
			require.NoError(t, os.Remove(last(2)))
			require.NoError(t, os.Truncate(last(3), 100))
			require.NoError(t, v.db.Set(blockKey(1, 4), []byte{0xff, 1, 2}, pebble.Sync))
			p, err := os.ReadFile(last(5))
			require.NoError(t, err)
			p[10] ^= 1
			require.NoError(t, os.WriteFile(last(5), p, 0o644))
			require.NoError(t, os.WriteFile(c.v.fs.PathJoin(c.chunks, "99.block"), []byte("x"), 0o644))

			rep, err = c.ScanMeta(context.Background())
			require.NoError(t, err)
			var ids []uint64
			for _, b := range rep.Bad {
				require.ErrorIs(t, b.Err, ErrCorrupt)
				ids = append(ids, b.LocalID)
			}
			require.Equal(t, []uint64{2, 3, 4}, ids)
			require.Contains(t, rep.Orphans, "99.block") // and block 4's files, whose row is gone

			_, err = c.Scan(context.Background())
			require.ErrorIs(t, err, ErrCorrupt, "Scan stops at the row that does not decode")
			require.NoError(t, v.db.Delete(blockKey(1, 4), pebble.Sync))
			rep, err = c.Scan(context.Background())
			require.NoError(t, err)
			ids = nil
			for _, b := range rep.Bad {
				ids = append(ids, b.LocalID)
			}
			require.Equal(t, []uint64{2, 3, 5}, ids)
		})
	}
}

// TestScanWait checks that Scan asks Wait for every chunk's bytes before it
// reads them, and stops with Wait's error.
func TestScanWait(t *testing.T) {
	v, _ := diskVolume(t)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	data := pattern(3, 4000)
	for id := uint64(1); id <= 3; id++ {
		write(t, c, id, 0, data)
		_, err = c.PutBlock(id, 4000, PutOptions{Final: true})
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	var asked int64
	rep, err := c.ScanWith(context.Background(), ScanOptions{Wait: func(_ context.Context, n int64) error {
		asked += n
		return nil
	}})
	require.NoError(t, err)
	require.Equal(t, int64(12000), asked)
	require.Equal(t, asked, rep.Bytes)
	stop := errors.New("stop")
	_, err = c.ScanWith(context.Background(), ScanOptions{Wait: func(context.Context, int64) error { return stop }})
	require.ErrorIs(t, err, stop)
}
