package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
)

// dataCluster starts meta and three datanodes in process (minicluster)
// and returns a harness whose meta address reaches them.
func dataCluster(t *testing.T) *cliHarness {
	return dataClusterWith(t, minicluster.Options{})
}

// dataClusterWith is dataCluster with o's S3 gateway and clock.
func dataClusterWith(t *testing.T, o minicluster.Options) *cliHarness {
	t.Helper()
	o.Dir, o.BlockSize, o.ContainerSize = t.TempDir(), 4<<20, 64<<20
	c, err := minicluster.Start(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return &cliHarness{t: t, addr: c.MetaAddr(), s3: c.S3Endpoint()}
}

// runIn runs a command with stdin.
func (h *cliHarness) runIn(stdin io.Reader, args ...string) result {
	return execute(stdin, append(args, "--meta", h.addr)...)
}

// payload returns n reproducible pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestShKeyData(t *testing.T) {
	h := dataCluster(t)
	dir := t.TempDir()
	data := payload(5<<20+123, 1) // more than one 4 MiB chunk
	src := filepath.Join(dir, "src.bin")
	require.NoError(t, os.WriteFile(src, data, 0o644))

	h.ok("sh", "volume", "create", "vol")
	for _, layout := range []string{"OBS", "FSO"} {
		b := "/vol/" + strings.ToLower(layout) + "-bkt"
		// Blocks of 2 MiB: the key spans three.
		h.ok("sh", "bucket", "create", b, "--layout", layout, "--block-size", "2 MiB")

		// put from a file, info, get, cat.
		require.Empty(t, h.ok("sh", "key", "put", b+"/dir/k1", src))
		info := h.ok("sh", "key", "info", b+"/dir/k1")
		require.Contains(t, info, "Size:         5 MiB (5243003 bytes)\n")
		require.Contains(t, info, "CONTAINER")
		ki := jsonOf[map[string]any](t, h.ok("sh", "key", "info", b+"/dir/k1", "--json"))
		require.Equal(t, 5243003.0, ki["size"])
		require.Len(t, ki["blocks"], 3)

		out := filepath.Join(dir, layout+"-out.bin")
		h.ok("sh", "key", "get", b+"/dir/k1", out)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, data, got)
		st, err := os.Stat(out)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
		require.Contains(t, h.fail(1, "sh", "key", "get", b+"/dir/k1", out), "local file exists (use -f to replace it)")
		h.ok("sh", "key", "get", "-f", b+"/dir/k1", out)

		// Into a directory: under the key's last component.
		sub := filepath.Join(dir, layout)
		require.NoError(t, os.Mkdir(sub, 0o755))
		h.ok("sh", "key", "get", b+"/dir/k1", sub)
		got, err = os.ReadFile(filepath.Join(sub, "k1"))
		require.NoError(t, err)
		require.Equal(t, data, got)

		require.True(t, bytes.Equal(data, []byte(h.ok("sh", "key", "cat", b+"/dir/k1"))))
		require.Equal(t, string(data), h.ok("sh", "key", "get", b+"/dir/k1", "-"))

		// put from stdin, replacing an existing key.
		r := h.runIn(strings.NewReader("hello\n"), "sh", "key", "put", b+"/dir/k1", "-")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "hello\n", h.ok("sh", "key", "cat", b+"/dir/k1"))
		r = h.runIn(strings.NewReader(""), "sh", "key", "put", b+"/empty", "-")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "", h.ok("sh", "key", "cat", b+"/empty"))

		// list, rename, delete.
		keys := jsonOf[[]map[string]any](t, h.ok("sh", "key", "list", b, "--json"))
		require.Len(t, keys, 2)
		require.Equal(t, "dir/k1", keys[0]["name"])
		require.Regexp(t, `(?m)^THREE +6 B +\S+ +dir/k1$`, h.ok("sh", "key", "list", b))
		h.ok("sh", "key", "rename", b+"/dir/k1", "dir/k2")
		require.Equal(t, "hello\n", h.ok("sh", "key", "cat", b+"/dir/k2"))
		require.Contains(t, h.fail(1, "sh", "key", "cat", b+"/dir/k1"), "not found")
		h.ok("sh", "key", "delete", b+"/dir/k2")
		h.ok("sh", "key", "delete", b+"/empty")
		require.Contains(t, h.fail(1, "sh", "key", "info", b+"/dir/k2"), "not found")
	}
}

func TestFSData(t *testing.T) {
	h := dataCluster(t)
	dir := t.TempDir()
	data := payload(1<<20+7, 2)
	src := filepath.Join(dir, "part-0000")
	require.NoError(t, os.WriteFile(src, data, 0o644))

	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "/vol/bkt/out")

	// put: to a path, into a directory, over an existing file with -f.
	h.ok("fs", "put", src, "/vol/bkt/out/a")
	h.ok("fs", "put", src, "/vol/bkt/out")
	require.Contains(t, h.fail(1, "fs", "put", src, "/vol/bkt/out/a"), "file already exists")
	require.Contains(t, h.fail(1, "fs", "put", src, "/vol/bkt/missing/a"), "not found")
	r := h.runIn(strings.NewReader("small"), "fs", "put", "-f", "-", "/vol/bkt/out/a")
	require.Equal(t, 0, r.code, r.stderr)

	out := h.ok("fs", "ls", "/vol/bkt/out")
	// Columns are aligned, as hdfs dfs -ls does.
	require.Regexp(t, `(?m)^Found 2 items\n-rw-r--r--  3  \S+  \S+  5        \S+  /vol/bkt/out/a\n-rw-r--r--  3  \S+  \S+  1048583  \S+  /vol/bkt/out/part-0000\n$`, out)
	// -h: human sizes instead of bytes.
	require.Regexp(t, `(?m)^Found 2 items\n-rw-r--r--  3  \S+  \S+  5 B    \S+  /vol/bkt/out/a\n-rw-r--r--  3  \S+  \S+  1 MiB  \S+  /vol/bkt/out/part-0000\n$`,
		h.ok("fs", "ls", "-h", "/vol/bkt/out"))
	require.Equal(t, "5", strings.Fields(strings.Split(out, "\n")[1])[4], "awk '{print $5}' reads the size")
	require.Contains(t, h.ok("fs", "stat", "/vol/bkt/out/part-0000"), "Size:         1 MiB (1048583 bytes)\n")

	// get and cat.
	require.Equal(t, "small", h.ok("fs", "cat", "/vol/bkt/out/a"))
	h.ok("fs", "get", "/vol/bkt/out/part-0000", dir+"/copy")
	got, err := os.ReadFile(dir + "/copy")
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.Contains(t, h.fail(1, "fs", "get", "/vol/bkt/out/a", dir+"/copy"), "local file exists")
	h.ok("fs", "get", "-f", "/vol/bkt/out/a", dir+"/copy")
	got, err = os.ReadFile(dir + "/copy")
	require.NoError(t, err)
	require.Equal(t, "small", string(got))

	// mv and rm of files.
	h.ok("fs", "mv", "/vol/bkt/out/a", "/vol/bkt/b")
	require.Equal(t, "small", h.ok("fs", "cat", "/vol/bkt/b"))
	h.ok("fs", "rm", "/vol/bkt/b")
	require.Contains(t, h.fail(1, "fs", "cat", "/vol/bkt/b"), "not found")
}
