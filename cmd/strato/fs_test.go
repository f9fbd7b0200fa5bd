package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lsPaths returns the path column of `fs ls` output.
func lsPaths(out string) []string {
	var paths []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(l, "Found ") {
			paths = append(paths, f[len(f)-1])
		}
	}
	return paths
}

func TestFSNamespace(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")

	// mkdir without -p needs the parent; with -p it makes it, and an
	// existing directory is fine.
	require.Equal(t, "strato: mkdir /vol/bkt/a/b: parent directory /vol/bkt/a not found (use -p to create it)",
		h.fail(1, "fs", "mkdir", "/vol/bkt/a/b"))
	require.Equal(t, "strato: mkdir /vol/nob/a: bucket not found: vol/nob", h.fail(1, "fs", "mkdir", "/vol/nob/a"))
	require.Equal(t, "strato: mkdir /vol/nob/a/b: bucket not found: vol/nob", h.fail(1, "fs", "mkdir", "/vol/nob/a/b"))
	require.Empty(t, h.ok("fs", "mkdir", "-p", "/vol/bkt/a/b"))
	h.ok("fs", "mkdir", "-p", "/vol/bkt/a/b")
	h.ok("fs", "mkdir", "/vol/bkt/a/c")
	h.ok("fs", "mkdir", "vol/bkt/x")
	require.Equal(t, "strato: mkdir /vol/bkt/a/c: already exists", h.fail(1, "fs", "mkdir", "/vol/bkt/a/c"))

	// ls looks like hdfs dfs -ls: type and permission, replication, owner,
	// group, size, time, path.
	out := h.ok("fs", "ls", "/vol/bkt")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "Found 2 items", lines[0])
	row := regexp.MustCompile(`^drwxr-xr-x  -  \S+  \S+  0  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)  /vol/bkt/a$`)
	require.Regexp(t, row, lines[1])
	require.Equal(t, []string{"/vol/bkt/a", "/vol/bkt/x"}, lsPaths(out))
	require.Equal(t, []string{"/vol/bkt/a", "/vol/bkt/a/b", "/vol/bkt/a/c", "/vol/bkt/x"}, lsPaths(h.ok("fs", "ls", "-R", "/vol/bkt")))
	require.Equal(t, []string{"/vol", "/vol/bkt", "/vol/bkt/a", "/vol/bkt/a/b", "/vol/bkt/a/c", "/vol/bkt/x"}, lsPaths(h.ok("fs", "ls", "-R")))
	require.Equal(t, []string{"/vol/bkt"}, lsPaths(h.ok("fs", "ls", "/vol")))

	entries := jsonOf[[]map[string]any](t, h.ok("fs", "ls", "-R", "/vol/bkt/a", "--json"))
	require.Len(t, entries, 2)
	require.Equal(t, "/vol/bkt/a/b", entries[0]["path"])
	require.Equal(t, true, entries[0]["isDirectory"])

	// stat.
	st := h.ok("fs", "stat", "/vol/bkt/a")
	require.Contains(t, st, "Path:        /vol/bkt/a\n")
	require.Contains(t, st, "Type:        directory\n")
	sj := jsonOf[map[string]any](t, h.ok("fs", "stat", "/vol/bkt/a/b", "--json"))
	require.Equal(t, "/vol/bkt/a/b", sj["path"])
	require.Contains(t, h.ok("fs", "stat", "/vol"), "Type:        directory")
	require.Equal(t, "strato: stat /vol/bkt/nothing: file or directory not found: vol/bkt/nothing",
		h.fail(1, "fs", "stat", "/vol/bkt/nothing"))

	// mv: onto an existing directory moves into it (Hadoop rename).
	h.ok("fs", "mv", "/vol/bkt/a/c", "/vol/bkt/x")
	h.ok("fs", "mv", "/vol/bkt/a/b", "/vol/bkt/a/b2")
	require.Equal(t, []string{"/vol/bkt/a", "/vol/bkt/a/b2", "/vol/bkt/x", "/vol/bkt/x/c"}, lsPaths(h.ok("fs", "ls", "-R", "/vol/bkt")))
	require.Contains(t, h.fail(1, "fs", "mv", "/vol/bkt/a", "/vol/bkt/a/b2"), "cannot move a directory under itself")
	require.Contains(t, h.fail(1, "fs", "mv", "/vol/bkt/gone", "/vol/bkt/y"), "not found")

	// rm: a directory needs -r; -f forgives a missing path. (--skip-trash:
	// deleted, not moved into .Trash; trash_test.go has the trash.)
	require.Equal(t, "strato: rm /vol/bkt/x: is a directory (use -r to delete it and its contents)", h.fail(1, "fs", "rm", "/vol/bkt/x"))
	h.ok("fs", "rm", "-r", "--skip-trash", "/vol/bkt/x")
	require.Contains(t, h.fail(1, "fs", "rm", "/vol/bkt/x"), "not found")
	h.ok("fs", "rm", "-f", "/vol/bkt/x")
	require.Equal(t, []string{"/vol/bkt/a", "/vol/bkt/a/b2"}, lsPaths(h.ok("fs", "ls", "-R", "/vol/bkt")))
	require.Empty(t, h.ok("fs", "ls", "/vol/bkt/a/b2"), "an empty directory lists nothing, as in hdfs dfs -ls")
	require.Equal(t, "[]\n", h.ok("fs", "ls", "/vol/bkt/a/b2", "--json"))
	require.Equal(t, "strato: ls /vol/bkt/x: file or directory not found: vol/bkt/x", h.fail(1, "fs", "ls", "/vol/bkt/x"))
	require.Equal(t, "strato: ls /nosuch: volume not found: nosuch", h.fail(1, "fs", "ls", "/nosuch"))

	// Reads of a directory say so.
	require.Equal(t, "strato: cat /vol/bkt/a: is a directory", h.fail(1, "fs", "cat", "/vol/bkt/a"))
	require.Equal(t, "strato: get /vol/bkt/a -: /vol/bkt/a is a directory: it cannot go to stdout", h.fail(1, "fs", "get", "/vol/bkt/a", "-"))
	require.Contains(t, h.fail(1, "fs", "put", "/nonexistent/file", "/vol/bkt/f"), "open /nonexistent/file: no such file or directory")
	require.Contains(t, h.fail(2, "fs", "put", "-", "/vol/bkt/a"), "is a directory: name the file to write from stdin")
}
