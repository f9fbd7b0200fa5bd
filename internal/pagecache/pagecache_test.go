package pagecache

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestResidentAndEvict: a file just written is in the page cache, and is
// not once evicted; reading it brings its pages back.
func TestResidentAndEvict(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 1<<20), 0o644))
	pages := (1 << 20) / os.Getpagesize()
	k, err := Resident(path)
	require.NoError(t, err)
	require.Equal(t, pages, k, "a file just written")
	require.NoError(t, Evict(path))
	k, err = Resident(path)
	require.NoError(t, err)
	require.Zero(t, k, "evicted")
	_, err = os.ReadFile(path)
	require.NoError(t, err)
	k, err = Resident(path)
	require.NoError(t, err)
	require.Equal(t, pages, k, "read again")
}
