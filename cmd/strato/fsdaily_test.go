package main

import (
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/ec"
)

// crc32c is the CRC32C of b, what a file's COMPOSITE-CRC32C equals.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// writeLocal writes a local file and returns its path.
func writeLocal(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

func TestFSDuCountChecksumSetrep(t *testing.T) {
	h := dataCluster(t)
	local := t.TempDir()
	h.ok("sh", "volume", "create", "vol")
	// Blocks of 1 MiB and windows of 48 KiB: a block's end cuts a window.
	h.ok("sh", "bucket", "create", "/vol/bkt", "--block-size", "1 MiB", "--bytes-per-checksum", "48k")
	big := payload(3<<20+777, 7)
	h.ok("fs", "mkdir", "-p", "/vol/bkt/d/e")
	h.ok("fs", "put", writeLocal(t, local, "big", big), "/vol/bkt/d/big")
	h.ok("fs", "put", writeLocal(t, local, "small", []byte("hello")), "/vol/bkt/small")
	h.ok("fs", "touchz", "/vol/bkt/d/e/empty")

	// du: each entry of a directory; -s: the path itself; -v: a header.
	n := int64(len(big))
	require.Equal(t, fmt.Sprintf("%d  %d  /vol/bkt/d\n5%s  15%s  /vol/bkt/small\n", n, 3*n,
		strings.Repeat(" ", len(fmt.Sprint(n))-1), strings.Repeat(" ", len(fmt.Sprint(3*n))-2)), h.ok("fs", "du", "/vol/bkt"))
	require.Equal(t, fmt.Sprintf("%d  %d  /vol/bkt\n", n+5, 3*(n+5)), h.ok("fs", "du", "-s", "/vol/bkt"))
	require.Equal(t, "3 MiB  9 MiB  /vol/bkt/d/big\n", h.ok("fs", "du", "-h", "/vol/bkt/d/big"))
	require.Equal(t, "SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME\n0     0                                      /vol/bkt/d/e/empty\n",
		h.ok("fs", "du", "-v", "/vol/bkt/d/e"))
	require.JSONEq(t, fmt.Sprintf(`[{"path":"/vol/bkt","length":%d,"spaceConsumed":%d}]`, n+5, 3*(n+5)),
		h.ok("fs", "du", "-s", "/vol/bkt", "--json"))

	// count: hdfs's fixed-width columns; -q adds the quotas.
	require.Equal(t, fmt.Sprintf("%12d %12d %18d /vol/bkt\n", 3, 3, n+5), h.ok("fs", "count", "/vol/bkt"))
	require.Equal(t, fmt.Sprintf("%12s %15s %15s %15s %12d %12d %18d /vol/bkt/d\n", "none", "inf", "none", "inf", 2, 2, n),
		h.ok("fs", "count", "-q", "/vol/bkt/d"))
	h.ok("sh", "bucket", "setquota", "/vol/bkt", "--bytes", "1 GiB", "--namespace", "100")
	require.Equal(t, fmt.Sprintf("%12s %15s %15s %15s %12s %12s %18s %s\n%12d %15d %15s %15s %12d %12d %18s /vol/bkt\n",
		"QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA", "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE", "PATHNAME",
		100, 100-5, "1 GiB", "1021 MiB", 3, 3, "3 MiB"), h.ok("fs", "count", "-q", "-h", "-v", "/vol/bkt"))
	cj := jsonOf[[]map[string]any](t, h.ok("fs", "count", "/vol/bkt", "--json"))
	require.Equal(t, map[string]any{"path": "/vol/bkt", "directoryCount": 3.0, "fileCount": 3.0, "length": float64(n + 5),
		"spaceConsumed": float64(3 * (n + 5)), "quota": 100.0, "remainingQuota": 95.0, "spaceQuota": float64(1 << 30),
		"remainingSpaceQuota": float64(1<<30 - n - 5)}, cj[0])

	// checksum: the CRC32C of the bytes, as the connector and HDFS give it.
	sum := fmt.Sprintf("/vol/bkt/d/big\tCOMPOSITE-CRC32C\t%08x\n", crc32c(big))
	require.Equal(t, sum, h.ok("fs", "checksum", "/vol/bkt/d/big"))
	require.Equal(t, "/vol/bkt/d/e/empty\tCOMPOSITE-CRC32C\t00000000\n", h.ok("fs", "checksum", "/vol/bkt/d/e/empty"))
	require.JSONEq(t, fmt.Sprintf(`[{"path":"/vol/bkt/small","algorithm":"COMPOSITE-CRC32C","checksum":"%08x","bytesPerChecksum":49152,"length":5}]`,
		crc32c([]byte("hello"))), h.ok("fs", "checksum", "/vol/bkt/small", "--json"))
	require.Equal(t, "strato: checksum /vol/bkt/d: /vol/bkt/d is a directory", h.fail(1, "fs", "checksum", "/vol/bkt/d"))

	// setrep: rewritten with the new replication, the same bytes, owner,
	// permission and times.
	h.ok("fs", "chmod", "600", "/vol/bkt/d/big")
	h.ok("fs", "chown", "alice:eng", "/vol/bkt/d/big")
	before := jsonOf[map[string]any](t, h.ok("fs", "stat", "/vol/bkt/d/big", "--json"))
	require.Equal(t, "Replication 1 set: /vol/bkt/d/big\nReplication 1 set: /vol/bkt/d/e/empty\n", h.ok("fs", "setrep", "1", "/vol/bkt/d"))
	after := jsonOf[map[string]any](t, h.ok("fs", "stat", "/vol/bkt/d/big", "--json"))
	require.Equal(t, "ONE", after["replication"])
	for _, k := range []string{"owner", "group", "permission", "modificationTimeUnixMs", "length"} {
		require.Equal(t, before[k], after[k], k)
	}
	require.Equal(t, sum, h.ok("fs", "checksum", "/vol/bkt/d/big"))
	require.Equal(t, fmt.Sprintf("%d  %d  /vol/bkt/d/big\n", n, n), h.ok("fs", "du", "/vol/bkt/d/big"))
	require.JSONEq(t, `[{"path":"/vol/bkt/d/big","replication":"1","rewritten":false}]`,
		h.ok("fs", "setrep", "ONE", "/vol/bkt/d/big", "--json"))

	// To an erasure code and back: du counts the parity; checksum reads the
	// bytes.
	h.ok("fs", "setrep", "xor-2-1-1024k", "/vol/bkt/d/big")
	cfg, err := ec.Parse("xor-2-1-1024k")
	require.NoError(t, err)
	var onDisk int64
	for off := int64(0); off < n; off += 2 << 20 { // groups of two 1 MiB members
		for m := range cfg.Members() {
			onDisk += cfg.MemberLen(min(n-off, 2<<20), m)
		}
	}
	require.Equal(t, fmt.Sprintf("%d  %d  /vol/bkt/d/big\n", n, onDisk), h.ok("fs", "du", "/vol/bkt/d/big"))
	require.Equal(t, sum, h.ok("fs", "checksum", "/vol/bkt/d/big"))
	h.ok("fs", "setrep", "3", "/vol/bkt/d/big")
	require.Equal(t, big, []byte(h.ok("fs", "cat", "/vol/bkt/d/big")))
	require.Contains(t, h.ok("fs", "ls", "/vol/bkt/d"), "  3  alice  eng  "+fmt.Sprint(n)+"  ")

	require.Equal(t, `strato: setrep 2 /vol/bkt/d: 2 is not a replication: 1, 3, or an erasure coding config such as rs-6-3-1024k`,
		h.fail(2, "fs", "setrep", "2", "/vol/bkt/d"))
	require.Contains(t, h.fail(1, "fs", "setrep", "1", "/vol/bkt/nope"), "not found")
}

func TestFSTouchzTestHeadTail(t *testing.T) {
	h := dataCluster(t)
	local := t.TempDir()
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	data := payload(3000, 3)
	h.ok("fs", "put", writeLocal(t, local, "f", data), "/vol/bkt/f")

	// touchz: an empty file; again is fine; a non-empty file is not.
	require.Empty(t, h.ok("fs", "touchz", "/vol/bkt/z"))
	h.ok("fs", "touchz", "/vol/bkt/z")
	require.Equal(t, "strato: touchz /vol/bkt/f: /vol/bkt/f is not a zero-length file", h.fail(1, "fs", "touchz", "/vol/bkt/f"))
	require.Contains(t, h.fail(1, "fs", "touchz", "/vol/bkt/no/z"), "not found")
	h.ok("fs", "mkdir", "/vol/bkt/d")

	// test: exit 0 or 1, nothing printed; bad flags exit 2.
	for _, tc := range []struct {
		flag, path string
		holds      bool
	}{
		{"-e", "/vol/bkt/f", true}, {"-e", "/vol/bkt/none", false}, {"-e", "/vol", true}, {"-e", "/vol/bkt", true},
		{"-e", "/novol", false}, {"-e", "/vol/nobkt", false}, {"-e", "/vol/nobkt/f", false}, {"-d", "/", true},
		{"-d", "/vol/bkt/d", true}, {"-d", "/vol/bkt/f", false}, {"-d", "/vol/bkt/none", false},
		{"-f", "/vol/bkt/f", true}, {"-f", "/vol/bkt/d", false},
		{"-s", "/vol/bkt/f", true}, {"-s", "/vol/bkt/z", false},
		{"-z", "/vol/bkt/z", true}, {"-z", "/vol/bkt/f", false}, {"-z", "/vol/bkt/none", false},
	} {
		r := h.run("fs", "test", tc.flag, tc.path)
		want := 1
		if tc.holds {
			want = 0
		}
		require.Equal(t, want, r.code, "test %s %s: %s", tc.flag, tc.path, r.stderr)
		require.Empty(t, r.stdout+r.stderr, "test %s %s", tc.flag, tc.path)
	}
	require.Equal(t, "strato: test: give one of -e, -d, -f, -s, -z (usage: strato fs test -e|-d|-f|-s|-z PATH [flags])",
		h.fail(2, "fs", "test", "/vol/bkt/f"))
	require.Contains(t, h.fail(2, "fs", "test", "-e", "-d", "/vol/bkt/f"), "give one of")
	require.Contains(t, h.fail(2, "fs", "test", "-e"), "want 1 argument(s), got 0")

	// head and tail: the first and the last KiB.
	require.Equal(t, data[:1024], []byte(h.ok("fs", "head", "/vol/bkt/f")))
	require.Equal(t, data[len(data)-1024:], []byte(h.ok("fs", "tail", "/vol/bkt/f")))
	h.ok("fs", "put", writeLocal(t, local, "s", []byte("short")), "/vol/bkt/s")
	require.Equal(t, "short", h.ok("fs", "head", "/vol/bkt/s"))
	require.Equal(t, "short", h.ok("fs", "tail", "/vol/bkt/s"))
	require.Empty(t, h.ok("fs", "tail", "/vol/bkt/z"))
	require.Equal(t, "strato: head /vol/bkt/d: is a directory", h.fail(1, "fs", "head", "/vol/bkt/d"))
	require.Contains(t, h.fail(2, "fs", "tail", "-f", "/vol/bkt/f"), "unknown shorthand flag: 'f'")
}

// localTree returns the files under dir, by path relative to it, and
// their contents.
func localTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	}))
	return out
}

func TestFSPutGetCpTrees(t *testing.T) {
	h := dataCluster(t)
	local := t.TempDir()
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("sh", "bucket", "create", "/vol/other")
	src := filepath.Join(local, "src")
	big := string(payload(2<<20+5, 9))
	writeLocal(t, src, "a.txt", []byte("alpha"))
	writeLocal(t, src, "sub/b.bin", []byte(big))
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub/empty"), 0o755))
	one := writeLocal(t, local, "one", []byte("1"))
	two := writeLocal(t, local, "two", []byte("22"))

	// put: a directory to a new path makes it; onto a directory, into it;
	// several sources go into a directory, which must exist.
	h.ok("fs", "put", src, "/vol/bkt/tree")
	h.ok("fs", "mkdir", "/vol/bkt/in")
	h.ok("fs", "put", src, one, two, "/vol/bkt/in")
	require.Equal(t, []string{"/vol/bkt/in/one", "/vol/bkt/in/src", "/vol/bkt/in/src/a.txt", "/vol/bkt/in/src/sub",
		"/vol/bkt/in/src/sub/b.bin", "/vol/bkt/in/src/sub/empty", "/vol/bkt/in/two"}, lsPaths(h.ok("fs", "ls", "-R", "/vol/bkt/in")))
	require.Equal(t, big, h.ok("fs", "cat", "/vol/bkt/tree/sub/b.bin"))
	require.Equal(t, "strato: put "+one+" "+two+" /vol/bkt/none: /vol/bkt/none: no such directory (several sources go into a directory)",
		h.fail(1, "fs", "put", one, two, "/vol/bkt/none"))
	require.Contains(t, h.fail(1, "fs", "put", one, two, "/vol/bkt/in/one"), "/vol/bkt/in/one is not a directory")
	require.Contains(t, h.fail(1, "fs", "put", one, "/vol/bkt/in"), "file already exists")
	h.ok("fs", "put", "-f", two, "/vol/bkt/in/one")
	require.Equal(t, "22", h.ok("fs", "cat", "/vol/bkt/in/one"))
	require.Contains(t, h.fail(2, "fs", "put", "-", one, "/vol/bkt/in"), "- (stdin) cannot be one of several sources")

	// get: a directory recursively, several sources into a directory.
	out := filepath.Join(local, "out")
	h.ok("fs", "get", "/vol/bkt/tree", out)
	want := map[string]string{"a.txt": "alpha", "sub/": "", "sub/b.bin": big, "sub/empty/": ""}
	require.Equal(t, want, localTree(t, out))
	h.ok("fs", "get", "-f", "/vol/bkt/in/two", "/vol/bkt/in/src/sub", out) // sub/b.bin is there: -f
	want["two"], want["sub/b.bin"] = "22", big
	require.Contains(t, h.fail(1, "fs", "get", "/vol/bkt/in/two", out), "local file exists (use -f to replace it)")
	require.Contains(t, h.fail(1, "fs", "get", "/vol/bkt/in/two", "/vol/bkt/in/one", filepath.Join(local, "nodir")),
		"no such local directory (several sources go into a directory)")
	h.ok("fs", "get", "-f", "/vol/bkt/in/one", filepath.Join(out, "two"))
	want["two"] = "22"
	require.Equal(t, want, localTree(t, out))

	// cp: files, directories with -r, across buckets.
	h.ok("fs", "cp", "/vol/bkt/tree/a.txt", "/vol/other/a")
	require.Equal(t, "alpha", h.ok("fs", "cat", "/vol/other/a"))
	require.Equal(t, "strato: cp /vol/bkt/tree /vol/other/t: /vol/bkt/tree is a directory (use -r to copy it and its contents)",
		h.fail(1, "fs", "cp", "/vol/bkt/tree", "/vol/other/t"))
	h.ok("fs", "cp", "-r", "/vol/bkt/tree", "/vol/other/t")
	require.Equal(t, []string{"/vol/other/t/a.txt", "/vol/other/t/sub"}, lsPaths(h.ok("fs", "ls", "/vol/other/t")))
	require.Equal(t, big, h.ok("fs", "cat", "/vol/other/t/sub/b.bin"))
	h.ok("fs", "cp", "/vol/bkt/in/one", "/vol/bkt/in/two", "/vol/other/t")
	require.Equal(t, "22", h.ok("fs", "cat", "/vol/other/t/one"))
	require.Contains(t, h.fail(1, "fs", "cp", "/vol/bkt/in/one", "/vol/other/a"), "file already exists")
	h.ok("fs", "cp", "-f", "/vol/bkt/in/one", "/vol/other/a")
	require.Equal(t, "22", h.ok("fs", "cat", "/vol/other/a"))
	require.Contains(t, h.fail(1, "fs", "cp", "-r", "/vol/bkt/tree", "/vol/bkt/tree/sub"), "into itself")
	require.Contains(t, h.fail(1, "fs", "cp", "/vol/other/a", "/vol/other/a"), "are the same file")
	require.Contains(t, h.fail(2, "fs", "cp", "/vol/other/a"), "want at least 2 argument(s), got 1")

	// Off a terminal there is no progress bar, --quiet or not.
	r := h.run("fs", "cp", "-f", "/vol/bkt/tree/sub/b.bin", "/vol/other/b")
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stderr)
}

// TestFSCommandsOnce: every fs command is registered once, and the
// usage errors of the new ones exit 2 with one line.
func TestFSCommandsOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range newFSCmd().Commands() {
		require.False(t, seen[c.Name()], "fs %s twice", c.Name())
		seen[c.Name()] = true
	}
	for _, name := range []string{"du", "count", "cp", "setrep", "checksum", "touchz", "test", "head", "tail", "put", "get"} {
		require.True(t, seen[name], name)
	}

	h := startMeta(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fs", "du"}, "strato: du: want at least 1 argument(s), got 0 (usage: strato fs du [-s] [-h] [-v] PATH... [flags])"},
		{[]string{"fs", "count", "-x", "/"}, "unknown shorthand flag: 'x' in -x"},
		{[]string{"fs", "setrep", "/vol/bkt/f"}, "want at least 2 argument(s), got 1"},
		{[]string{"fs", "checksum", "/vol"}, "invalid path"},
		{[]string{"fs", "head", "/a/b/c", "/d"}, "want 1 argument(s), got 2"},
		{[]string{"fs", "get", "/vol/bkt/f"}, "want at least 2 argument(s), got 1"},
		{[]string{"fs", "put", "--quiet=maybe", "a", "/v/b/c"}, "invalid argument \"maybe\""},
	} {
		require.Contains(t, h.fail(2, tc.args...), tc.want, tc.args)
	}
	// Failures of the command, not of its line, exit 1.
	require.Equal(t, "strato: du /nosuch: volume not found: nosuch", h.fail(1, "fs", "du", "/nosuch"))
	require.Equal(t, "strato: count /vol/nob: bucket not found: vol/nob", h.fail(1, "fs", "count", "/vol/nob"))
}
