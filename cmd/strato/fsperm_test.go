package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func TestFSChmodChown(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/d/e")

	require.Empty(t, h.ok("fs", "chmod", "750", "/vol/bkt/d"))
	h.ok("fs", "chmod", "o+t,g-x", "/vol/bkt/d/e")
	h.ok("fs", "chown", "alice:eng", "/vol/bkt/d")
	h.ok("fs", "chown", ":ops", "/vol/bkt/d/e")
	out := h.ok("fs", "ls", "/vol/bkt/d")
	require.Regexp(t, `drwxr--r-t  -  \S+  ops  0  \S+  /vol/bkt/d/e\n$`, out)
	out = h.ok("fs", "ls", "/vol/bkt")
	require.Regexp(t, `drwxr-x---  -  alice  eng  0  \S+  /vol/bkt/d\n$`, out)
	st := h.ok("fs", "stat", "/vol/bkt/d/e")
	require.Contains(t, st, "Permission:  rwxr--r-t (1745)\n")
	require.Contains(t, st, "Group:       ops\n")

	// -R, and a bucket's root.
	h.ok("fs", "chown", "-R", "bob", "/vol/bkt/d")
	h.ok("fs", "chmod", "-R", "a=rx", "/vol/bkt/d")
	for _, p := range []string{"/vol/bkt/d", "/vol/bkt/d/e"} {
		sj := jsonOf[map[string]any](t, h.ok("fs", "stat", p, "--json"))
		require.Equal(t, "bob", sj["owner"], p)
		require.Equal(t, float64(0o555), sj["permission"], p)
	}
	h.ok("fs", "chmod", "1777", "/vol/bkt")
	h.ok("fs", "chown", "root:hadoop", "/vol/bkt")
	require.Contains(t, h.ok("fs", "stat", "/vol/bkt"), "Permission:  rwxrwxrwt (1777)\n")
	require.Regexp(t, `drwxrwxrwt  -  root  hadoop  0  \S+  /vol/bkt\n$`, h.ok("fs", "ls", "/vol"))

	require.Equal(t, "strato: chmod 644 /vol/bkt/nope: file or directory not found: vol/bkt/nope",
		h.fail(1, "fs", "chmod", "644", "/vol/bkt/nope"))
	require.Contains(t, h.fail(2, "fs", "chmod", "9", "/vol/bkt/d"), "neither octal nor")
	require.Contains(t, h.fail(2, "fs", "chmod", "17777", "/vol/bkt/d"), "at most 7777")
	require.Contains(t, h.fail(2, "fs", "chown", ":", "/vol/bkt/d"), "give an owner")
	require.Contains(t, h.fail(2, "fs", "chmod", "755", "/vol"), "not in a bucket")
}

func TestParseMode(t *testing.T) {
	for _, c := range []struct {
		mode       string
		from, want uint32
		dir        bool
	}{
		{"755", 0, 0o755, false},
		{"1777", 0, 0o1777, true},
		{"u+x", 0o644, 0o744, false},
		{"go-w", 0o777, 0o755, false},
		{"a=r", 0o1777, 0o444, true},
		{"u=rwx,g=rx,o=", 0o000, 0o750, false},
		{"+t", 0o777, 0o1777, true},
		{"a+X", 0o644, 0o644, false},
		{"a+X", 0o644, 0o755, true},
		{"u+s", 0o755, 0o4755, false},
	} {
		got, err := parseMode(c.mode, c.from, c.dir)
		require.NoError(t, err, c.mode)
		require.Equal(t, c.want, got, "%s from %#o: got %#o", c.mode, c.from, got)
	}
	st := &stratov1.FileStatus{}
	require.Equal(t, "-rw-r--r--", modeString(st))
}

// fs touch sets either time or both (hdfs dfs -touch), of a file, a
// directory or a bucket's root, and makes a missing file.
func TestFSTouch(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "/vol/bkt/d")
	times := func(p string) [2]string {
		t.Helper()
		st := jsonOf[map[string]any](t, h.ok("fs", "stat", p, "--json"))
		mtime, _ := st["modificationTimeUnixMs"].(float64)
		atime, _ := st["accessTimeUnixMs"].(float64)
		return [2]string{strconv.FormatInt(int64(mtime), 10), strconv.FormatInt(int64(atime), 10)}
	}
	ms := func(s string) string {
		ts, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return strconv.FormatInt(ts.UnixMilli(), 10)
	}
	t1, t2, t3 := "2026-01-02T15:04:05Z", "2025-06-07T08:09:10Z", "2024-03-04T05:06:07Z"

	// A missing file becomes an empty one, with the time given.
	require.Empty(t, h.ok("fs", "touch", "-t", t1, "/vol/bkt/d/f"))
	require.Contains(t, h.ok("fs", "stat", "/vol/bkt/d/f"), "Size:         0 B\n")
	require.Equal(t, [2]string{ms(t1), ms(t1)}, times("/vol/bkt/d/f"))
	h.ok("fs", "touch", "-m", "-t", t2, "/vol/bkt/d/f")
	require.Equal(t, [2]string{ms(t2), ms(t1)}, times("/vol/bkt/d/f"))
	h.ok("fs", "touch", "-a", "-t", t3, "/vol/bkt/d/f")
	require.Equal(t, [2]string{ms(t2), ms(t3)}, times("/vol/bkt/d/f"))
	for _, p := range []string{"/vol/bkt/d", "/vol/bkt"} {
		h.ok("fs", "touch", "-t", t2, p)
		require.Equal(t, [2]string{ms(t2), ms(t2)}, times(p), p)
	}
	// Now, without -t.
	before := time.Now().Add(-time.Second).UnixMilli()
	h.ok("fs", "touch", "-a", "/vol/bkt/d/f")
	got := times("/vol/bkt/d/f")
	atime, err := strconv.ParseInt(got[1], 10, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, atime, before)
	require.Equal(t, ms(t2), got[0])

	h.ok("fs", "touch", "-c", "/vol/bkt/d/nope")
	h.fail(1, "fs", "stat", "/vol/bkt/d/nope")
	require.Contains(t, h.fail(2, "fs", "touch", "-t", "yesterday", "/vol/bkt/d/f"), "not an RFC 3339 time")
	require.Contains(t, h.fail(2, "fs", "touch", "/vol"), "not in a bucket")
}

// fs df: the raw space of the datanodes that report (none here).
func TestFSDf(t *testing.T) {
	h := startMeta(t)
	out := h.ok("fs", "df")
	require.Contains(t, out, "Capacity:   0 B\n")
	require.Contains(t, out, "Use%:       -\n")
	require.Contains(t, out, "Datanodes:  0\n")
	require.Equal(t, map[string]any{"capacity": 0.0, "used": 0.0, "remaining": 0.0, "datanodes": 0.0},
		jsonOf[map[string]any](t, h.ok("fs", "df", "--json")))
}
