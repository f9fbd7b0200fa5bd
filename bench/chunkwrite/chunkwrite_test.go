package chunkwrite

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
)

// A run writes what it claims: the container it leaves behind holds every
// block, complete and matching its checksums.
func TestRunChunkWrite(t *testing.T) {
	for _, layout := range Layouts {
		t.Run(layout, func(t *testing.T) {
			dir := t.TempDir()
			r, err := Run(context.Background(), Options{
				Chunks: 37, ChunkSize: 3000, ChunksPerBlock: 5, Threads: 3, Layout: layout, Dir: dir, Sync: true, Keep: true,
			})
			require.NoError(t, err)
			require.Equal(t, 37, r.Chunks)
			require.Greater(t, r.Elapsed, time.Duration(0))
			require.Greater(t, r.Latency.Max, time.Duration(0))
			require.Greater(t, r.ChunksPerSec(), 0.0)
			if layout == LayoutRaw {
				files, err := filepath.Glob(filepath.Join(r.Dir, "*.raw"))
				require.NoError(t, err)
				require.Len(t, files, 8)
				st, err := os.Stat(filepath.Join(r.Dir, "8.raw"))
				require.NoError(t, err)
				require.Equal(t, int64(2*3000), st.Size())
				return
			}
			v, err := container.OpenVolume(r.Dir, container.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			require.NoError(t, err)
			defer v.Close()
			c, err := v.Container(1)
			require.NoError(t, err)
			blocks, err := c.ListBlocks(0, 100)
			require.NoError(t, err)
			require.Len(t, blocks, 8)
			require.Equal(t, int64(2*3000), blocks[7].Length)
			rep, err := c.Scan(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Bad)
			require.Empty(t, rep.Orphans)
			require.Equal(t, int64(37*3000), rep.Bytes)
		})
	}
}

func TestChunkWritePlanMatrix(t *testing.T) {
	var out bytes.Buffer
	res, err := Plan{
		Options:     Options{Threads: 2, ChunksPerBlock: 4, Dir: t.TempDir()},
		Matrix:      true,
		MatrixSizes: []int64{1 << 10, 8 << 10},
		MatrixBytes: 64 << 10,
		Repeat:      2,
		Out:         &out,
	}.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, res, 6)
	for _, r := range res {
		require.True(t, r.Sync)
		require.Equal(t, int((64<<10)/r.ChunkSize), r.Chunks)
	}
	s := out.String()
	for _, want := range []string{"testname", "FILE_PER_BLOCK-1k", "FILE_PER_CHUNK-8k", "RAW-8k", "vs RAW", "medians of 2 runs", "█"} {
		require.Contains(t, s, want)
	}
	entries, err := os.ReadDir(filepath.Dir(res[0].Dir))
	require.NoError(t, err)
	require.Empty(t, entries, "each run removes its directory")
}

func TestChunkWriteOptionsValidate(t *testing.T) {
	o := Options{Layout: "file_per_chunk"}
	o.EnsureDefaults()
	require.NoError(t, o.Validate())
	require.Equal(t, LayoutFilePerChunk, o.Layout)
	o.Layout = "HDFS"
	require.Error(t, o.Validate())
}

// TestChunkWriteAtFreonSettings runs freon's -n 400000 -c 16 (25,000
// blocks) under a limit of 4,096 open files: a layout that kept every
// block's file open (RAW did) fails with "too many open files". Chunks are
// 64 bytes so that the test moves files, not bytes. FILE_PER_CHUNK closes
// every chunk's file as it writes it; its 400,000 files take minutes to
// create and remove here, so it runs a tenth of the chunks at the same -c.
func TestChunkWriteAtFreonSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("400,000 chunks per layout")
	}
	var l syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l))
	if l.Max > 4096 {
		l.Cur, l.Max = 4096, 4096 // for the rest of this test binary
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l))
	}
	for _, layout := range Layouts {
		t.Run(layout, func(t *testing.T) {
			n := 400000
			if layout == LayoutFilePerChunk {
				n = 40000
			}
			r, err := Run(context.Background(), Options{
				Chunks: n, ChunkSize: 64, ChunksPerBlock: 16, Threads: 16, Layout: layout, Dir: t.TempDir(), Sync: true,
				ChecksumSet: true, Checksum: checksum.NONE,
			})
			require.NoError(t, err)
			require.Equal(t, n, r.Chunks)
		})
	}
}
