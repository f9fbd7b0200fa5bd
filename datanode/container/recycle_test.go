//go:build linux

package container

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return info.Sys().(*syscall.Stat_t).Ino
}

func recycled(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, recycleDir))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		info, err := e.Info()
		require.NoError(t, err)
		require.Zero(t, info.Size(), "recycled files are empty")
		names = append(names, e.Name())
	}
	return names
}

// The files of deleted blocks are kept, emptied, up to RecycleFiles, and
// new blocks get them (the same inodes) with their own data intact; a
// block's existing file is never replaced; the pool survives a reopen.
func TestRecycledBlockFiles(t *testing.T) {
	dir := t.TempDir()
	opts := testOptions(vfs.Default)
	opts.RecycleFiles = 2
	v, err := OpenVolume(dir, opts)
	require.NoError(t, err)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	data := pattern(5, 3000)
	inodes := map[uint64]bool{}
	for id := uint64(1); id <= 3; id++ {
		write(t, c, id, 0, data[:1000*id])
		_, err := c.PutBlock(id, int64(1000*id), PutOptions{Final: true})
		require.NoError(t, err)
		inodes[inode(t, c.blockPath(id))] = true
	}
	_, _, err = c.DeleteBlocks([]uint64{1, 2, 3})
	require.NoError(t, err)
	require.Len(t, recycled(t, dir), 2, "two kept, the third removed")
	for id := uint64(1); id <= 3; id++ {
		_, err := os.Stat(c.blockPath(id))
		require.ErrorIs(t, err, os.ErrNotExist)
	}

	// A new block takes a kept file: its inode is one of the deleted
	// blocks', and it holds exactly the new data.
	write(t, c, 10, 0, data[:700])
	_, err = c.PutBlock(10, 700, PutOptions{Final: true})
	require.NoError(t, err)
	require.True(t, inodes[inode(t, c.blockPath(10))], "a recycled inode")
	require.Len(t, recycled(t, dir), 1)
	require.Equal(t, data[:700], readAll(t, c, 10))

	// A block whose file exists already (left by a write never committed,
	// here made by hand) keeps it: nothing is renamed over it.
	require.NoError(t, os.WriteFile(c.blockPath(11), []byte("leftover"), 0o644))
	ino := inode(t, c.blockPath(11))
	require.False(t, v.recycled.take(c.blockPath(11)))
	require.Equal(t, ino, inode(t, c.blockPath(11)))
	got, err := os.ReadFile(c.blockPath(11))
	require.NoError(t, err)
	require.Equal(t, "leftover", string(got))
	require.Len(t, recycled(t, dir), 1, "the file taken went back")

	// Reopened, the volume finds its kept file (a non-empty one left by a
	// crash is emptied) and the data of block 10.
	require.NoError(t, v.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, recycleDir, "99"), []byte("stale"), 0o644))
	v, err = OpenVolume(dir, opts)
	require.NoError(t, err)
	defer v.Close()
	require.Equal(t, 2, v.recycled.len())
	require.Len(t, recycled(t, dir), 2)
	c, err = v.Container(1)
	require.NoError(t, err)
	require.Equal(t, data[:700], readAll(t, c, 10))
	write(t, c, 12, 0, data[:50])
	write(t, c, 13, 0, data[:60])
	_, err = c.PutBlock(12, 50, PutOptions{})
	require.NoError(t, err)
	_, err = c.PutBlock(13, 60, PutOptions{})
	require.NoError(t, err)
	require.Empty(t, recycled(t, dir))
	require.Equal(t, data[:50], readAll(t, c, 12))
	require.Equal(t, data[:60], readAll(t, c, 13))
}
