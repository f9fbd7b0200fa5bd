package benchcluster

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDirMake(t *testing.T) {
	given := filepath.Join(t.TempDir(), "a", "b")
	dir, remove, err := Dir{Path: given}.Make("strato-test-")
	require.NoError(t, err)
	require.Equal(t, given, dir)
	remove()
	require.DirExists(t, given, "a directory given is created and kept")

	dir, remove, err = Dir{}.Make("strato-test-")
	require.NoError(t, err)
	require.Contains(t, filepath.Base(dir), "strato-test-")
	require.DirExists(t, dir)
	remove()
	require.NoDirExists(t, dir, "a temporary directory is removed")

	dir, remove, err = Dir{Keep: true}.Make("strato-test-")
	require.NoError(t, err)
	remove()
	require.DirExists(t, dir, "Keep keeps the temporary directory")
	require.NoError(t, os.RemoveAll(dir))
}
