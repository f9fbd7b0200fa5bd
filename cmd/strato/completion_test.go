package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPathCompletion: the shell completion of strato fs and sh lists
// volumes, buckets and a directory's entries from meta (cobra's hidden
// __complete command is what the shells' scripts call).
func TestPathCompletion(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "volume", "create", "other")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/dir/sub")
	h.ok("fs", "touchz", "/vol/bkt/dir/file")
	complete := func(args ...string) []string {
		t.Helper()
		r := execute(nil, append(append([]string{"__complete"}, args[:len(args)-1]...), "--meta", h.addr, args[len(args)-1])...)
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.True(t, strings.HasPrefix(lines[len(lines)-1], ":"), r.stdout) // the directive
		return lines[:len(lines)-1]
	}
	require.Equal(t, []string{"/other/", "/vol/"}, complete("fs", "ls", "/"))
	require.Equal(t, []string{"/vol/"}, complete("fs", "ls", "/v"))
	require.Equal(t, []string{"/vol/bkt/"}, complete("sh", "bucket", "info", "/vol/"))
	require.Equal(t, []string{"/vol/bkt/dir/file", "/vol/bkt/dir/sub/"}, complete("fs", "cat", "/vol/bkt/dir/"))
	require.Equal(t, []string{"/vol/bkt/dir/sub/"}, complete("fs", "rm", "/vol/bkt/dir/s"))
	require.Empty(t, complete("fs", "ls", "/nosuch/x/"))
}
