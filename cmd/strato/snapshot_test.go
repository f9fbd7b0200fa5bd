package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSnapshotCommands drives strato sh snapshot against a cluster: a
// snapshot keeps what the bucket held (fs ls, cat and stat under
// .snapshot), diff names the changes, rename and delete work, and the
// snapshot is read-only.
func TestSnapshotCommands(t *testing.T) {
	h := dataCluster(t)
	h.ok("sh", "volume", "create", "/vol")
	h.ok("sh", "bucket", "create", "/vol/fsb", "--layout", "FSO")
	local := filepath.Join(t.TempDir(), "local.txt")
	require.NoError(t, os.WriteFile(local, []byte("hello snapshot"), 0o644))
	h.ok("fs", "mkdir", "/vol/fsb/dir")
	h.ok("fs", "put", local, "/vol/fsb/dir/a.txt")
	h.ok("fs", "put", local, "/vol/fsb/dir/b.txt")

	require.Contains(t, h.ok("sh", "snapshot", "create", "/vol/fsb", "s1"), "Created snapshot s1 of /vol/fsb")
	h.ok("fs", "rm", "--skip-trash", "/vol/fsb/dir/a.txt")
	h.ok("fs", "mv", "/vol/fsb/dir/b.txt", "/vol/fsb/dir/c.txt")
	h.ok("fs", "mkdir", "/vol/fsb/new")

	// The snapshot reads as the bucket was.
	ls := h.ok("fs", "ls", "/vol/fsb/.snapshot/s1/dir")
	require.Contains(t, ls, ".snapshot/s1/dir/a.txt")
	require.Contains(t, ls, ".snapshot/s1/dir/b.txt")
	require.NotContains(t, ls, "c.txt")
	require.Equal(t, "hello snapshot", h.ok("fs", "cat", "/vol/fsb/.snapshot/s1/dir/a.txt"))
	require.Contains(t, h.ok("fs", "ls", "/vol/fsb/.snapshot"), ".snapshot/s1")
	require.Contains(t, h.ok("fs", "stat", "/vol/fsb/.snapshot/s1/dir/b.txt"), "b.txt")

	diff := h.ok("sh", "snapshot", "diff", "/vol/fsb", "s1")
	require.Equal(t, "Difference between snapshot s1 and the current tree under /vol/fsb:\n"+
		"-\t./dir/a.txt\nR\t./dir/b.txt -> ./dir/c.txt\n+\t./new\n", diff)
	js := jsonOf[[]map[string]any](t, h.ok("sh", "snapshot", "diff", "/vol/fsb", "s1", "--json"))
	require.Len(t, js, 3)

	h.ok("sh", "snapshot", "create", "/vol/fsb", "s2")
	require.Equal(t, "Difference between snapshot s1 and snapshot s2 under /vol/fsb:\n"+
		"-\t./dir/a.txt\nR\t./dir/b.txt -> ./dir/c.txt\n+\t./new\n", h.ok("sh", "snapshot", "diff", "/vol/fsb", "s1", "s2"))
	list := h.ok("sh", "snapshot", "list", "/vol/fsb")
	require.Regexp(t, `(?m)^NAME +ID +CREATED\ns1 +1 +.*\ns2 +2 +`, list)
	require.Contains(t, h.ok("sh", "snapshot", "info", "/vol/fsb", "s2"), "/vol/fsb/.snapshot/s2")

	// Read-only, and bad requests get one clear line.
	require.Contains(t, h.fail(1, "fs", "put", local, "/vol/fsb/.snapshot/s1/x"), "read-only")
	require.Contains(t, h.fail(1, "fs", "rm", "--skip-trash", "/vol/fsb/.snapshot/s1/dir/a.txt"), "read-only")
	require.Contains(t, h.fail(1, "sh", "snapshot", "create", "/vol/fsb", "s1"), "snapshot already exists")
	require.Contains(t, h.fail(1, "sh", "snapshot", "create", "/vol/fsb", "a/b"), `must not contain "/"`)
	require.Contains(t, h.fail(1, "sh", "snapshot", "diff", "/vol/fsb", "nosuch"), "snapshot not found")
	require.Contains(t, h.fail(1, "sh", "snapshot", "diff", "/vol/fsb", "s2", "s1"), "compare the older with the newer")
	h.fail(2, "sh", "snapshot", "create")

	h.ok("sh", "snapshot", "rename", "/vol/fsb", "s1", "first")
	require.Equal(t, "hello snapshot", h.ok("fs", "cat", "/vol/fsb/.snapshot/first/dir/a.txt"))
	h.ok("sh", "snapshot", "delete", "/vol/fsb", "first")
	require.Contains(t, h.fail(1, "fs", "cat", "/vol/fsb/.snapshot/first/dir/a.txt"), "snapshot not found")
	require.False(t, strings.Contains(h.ok("sh", "snapshot", "list", "/vol/fsb"), "first"))
}
