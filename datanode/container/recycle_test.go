//go:build linux

package container

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Sys().(*syscall.Stat_t).Ino
}

// kept lists the pool's files and their sizes.
func kept(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, recycleDir))
	require.NoError(t, err)
	out := map[string]int64{}
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		out[e.Name()] = info.Size()
	}
	return out
}

// The files of deleted blocks are kept, up to RecycleFiles, whole for a
// reader that has one open; a new block takes the oldest once it has waited
// the grace period (the same inode, emptied, holding exactly the new data);
// a block's existing file is never replaced; the pool survives a reopen,
// emptied.
func TestRecycledBlockFiles(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.RecycleFiles = 2
	v, c, dir := diskContainer(t, opts)
	data := pattern(5, 3000)
	for id := uint64(1); id <= 3; id++ {
		write(t, c, id, 0, data[:1000*id])
		_, err := c.PutBlock(id, int64(1000*id), PutOptions{Final: true})
		require.NoError(t, err)
	}
	open, err := os.Open(c.blockPath(1))
	require.NoError(t, err)
	defer open.Close()
	_, _, err = c.DeleteBlocks([]uint64{1, 2, 3})
	require.NoError(t, err)
	require.Len(t, kept(t, dir), 2, "two kept, the third removed")
	for id := uint64(1); id <= 3; id++ {
		_, err := os.Stat(c.blockPath(id))
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	keptInodes := map[uint64]bool{}
	for name := range kept(t, dir) {
		keptInodes[inode(t, filepath.Join(dir, recycleDir, name))] = true
	}
	got, err := io.ReadAll(open)
	require.NoError(t, err)
	require.Equal(t, data[:1000], got, "a reader that had the file open reads it whole")

	// Within the grace period a new block gets a new file.
	v.recycled.grace = time.Hour
	write(t, c, 9, 0, data[:10])
	require.False(t, keptInodes[inode(t, c.blockPath(9))])
	require.Len(t, kept(t, dir), 2)

	// After it, a new block takes a kept file: an inode of the deleted
	// blocks, emptied, holding exactly the new data.
	v.recycled.grace = 0
	write(t, c, 10, 0, data[:700])
	_, err = c.PutBlock(10, 700, PutOptions{Final: true})
	require.NoError(t, err)
	require.True(t, keptInodes[inode(t, c.blockPath(10))], "a kept inode")
	require.Len(t, kept(t, dir), 1)
	require.Equal(t, data[:700], readAll(t, c, 10))
	info, err := os.Stat(c.blockPath(10))
	require.NoError(t, err)
	require.Equal(t, int64(700), info.Size())

	// A block whose file exists already (left by a write never committed,
	// here made by hand) keeps it: nothing is renamed over it.
	require.NoError(t, os.WriteFile(c.blockPath(11), []byte("leftover"), 0o644))
	ino := inode(t, c.blockPath(11))
	require.False(t, v.recycled.take(c.blockPath(11)))
	require.Equal(t, ino, inode(t, c.blockPath(11)))
	left, err := os.ReadFile(c.blockPath(11))
	require.NoError(t, err)
	require.Equal(t, "leftover", string(left))
	require.Len(t, kept(t, dir), 1, "the file taken went back")

	// Reopened, the volume finds its kept files, emptied (one more, as a
	// crash could leave it), and the data of block 10.
	require.NoError(t, v.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, recycleDir, "99"), []byte("stale"), 0o644))
	v, err = OpenVolume(dir, opts)
	require.NoError(t, err)
	defer v.Close()
	require.Len(t, kept(t, dir), 2)
	for name, size := range kept(t, dir) {
		require.Zero(t, size, name)
	}
	c, err = v.Container(1)
	require.NoError(t, err)
	require.Equal(t, data[:700], readAll(t, c, 10))
	write(t, c, 12, 0, data[:50])
	write(t, c, 13, 0, data[:60])
	_, err = c.PutBlock(12, 50, PutOptions{})
	require.NoError(t, err)
	_, err = c.PutBlock(13, 60, PutOptions{})
	require.NoError(t, err)
	require.Empty(t, kept(t, dir))
	require.Equal(t, data[:50], readAll(t, c, 12))
	require.Equal(t, data[:60], readAll(t, c, 13))
}

// Files above recycleMaxFile are removed, not kept.
func TestLargeBlockFilesAreNotKept(t *testing.T) {
	opts := testOptions(vfs.Default)
	opts.MaxChunkSize = 2 << 20
	opts.MaxBlockSize = 4 << 20
	_, c, dir := diskContainer(t, opts)
	data := pattern(6, recycleMaxFile+4096)
	write(t, c, 1, 0, data)
	_, err := c.PutBlock(1, int64(len(data)), PutOptions{Final: true})
	require.NoError(t, err)
	_, _, err = c.DeleteBlocks([]uint64{1})
	require.NoError(t, err)
	require.Empty(t, kept(t, dir))
	_, err = os.Stat(c.blockPath(1))
	require.ErrorIs(t, err, os.ErrNotExist)
}
