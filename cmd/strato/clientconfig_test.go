package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

// clientFile writes the client's config.toml (client.ConfigFile) under a
// new $XDG_CONFIG_HOME and returns its directory.
func clientFile(t *testing.T, content string) string {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := client.ConfigFile()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return filepath.Dir(path)
}

// TestClientClusters: the CLI takes meta's addresses, CA and token from a
// cluster of the client's file, named by --cluster or $STRATO_CLUSTER or
// the file's default; the flags beat it, and a named cluster beats
// $STRATO_META.
func TestClientClusters(t *testing.T) {
	addr := startMeta(t).addr
	t.Setenv("STRATO_META", "")
	t.Setenv("STRATO_CLUSTER", "")
	t.Setenv("STRATO_TOKEN", "")
	clientFile(t, `default = "down"

[clusters.test]
meta = ["`+addr+`"]

[clusters.down]
meta = ["127.0.0.1:1"]
`)
	status := []string{"whoami", "--timeout", "2s"}
	require.Equal(t, 0, execute(nil, append(status, "--cluster", "test")...).code)
	require.Equal(t, 1, execute(nil, status...).code, "the default cluster is down")
	require.Equal(t, 0, execute(nil, append(status, "--meta", addr)...).code, "--meta beats the default cluster")
	t.Setenv("STRATO_CLUSTER", "test")
	require.Equal(t, 0, execute(nil, status...).code)
	t.Setenv("STRATO_META", "127.0.0.1:1")
	require.Equal(t, 0, execute(nil, status...).code, "a named cluster beats $STRATO_META")
	t.Setenv("STRATO_CLUSTER", "")
	require.Equal(t, 1, execute(nil, status...).code, "$STRATO_META beats the default cluster")
	r := execute(nil, append(status, "--cluster", "prod")...)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--cluster prod: unknown cluster "prod" (the file names: down, test) in `)
}

// TestClientClusterFile: the CLI refuses a bad file with its line, and
// presents the token of the cluster's token-file.
func TestClientClusterFile(t *testing.T) {
	dir := clientFile(t, "[clusters.a]\nmeta = [\"m:1\"]\ntoken = \"x\"\n")
	r := execute(nil, "whoami", "--meta", "127.0.0.1:1")
	require.Equal(t, 2, r.code)
	require.Equal(t, "strato: whoami: "+filepath.Join(dir, "config.toml")+":3: unknown key clusters.a.token\n", r.stderr)

	// The cluster's token file is presented (meta runs --auth none here, so
	// whoami only shows that the token was read).
	addr := startMeta(t).addr
	tokDir := clientFile(t, "[clusters.t]\nmeta = [\""+addr+"\"]\ntoken-file = \"t.token\"\n")
	t.Setenv("STRATO_TOKEN", "")
	r = execute(nil, "whoami", "--cluster", "t")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "cluster t: token-file: open "+filepath.Join(tokDir, "t.token"))
	require.NoError(t, os.WriteFile(filepath.Join(tokDir, "t.token"), []byte("tok\n"), 0o600))
	r = execute(nil, "whoami", "--cluster", "t")
	require.Equal(t, 0, r.code, r.stderr)
}

// TestURIPaths: a path argument may be a strato:// URI as the Hadoop
// connector writes it, naming a cluster of the client's file, meta's
// address, or none; the command works on that cluster, and refuses URIs
// naming two clusters or one the flags contradict.
func TestURIPaths(t *testing.T) {
	addr := startMeta(t).addr
	t.Setenv("STRATO_META", "")
	t.Setenv("STRATO_CLUSTER", "")
	t.Setenv("STRATO_TOKEN", "")
	clientFile(t, `default = "down"

[clusters.test]
meta = ["`+addr+`"]

[clusters.down]
meta = ["127.0.0.1:1"]
`)
	ok := func(args ...string) string {
		t.Helper()
		r := execute(nil, append(args, "--timeout", "5s")...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		return r.stdout
	}
	ok("sh", "volume", "create", "uvol", "--cluster", "test")
	ok("sh", "bucket", "create", "strato://test/uvol/bkt")
	ok("fs", "mkdir", "strato://test/uvol/bkt/d")
	require.Contains(t, ok("fs", "ls", "strato://"+addr+"/uvol/bkt"), "/uvol/bkt/d")
	require.Contains(t, ok("fs", "ls", "strato:///uvol/bkt", "--meta", addr), "/uvol/bkt/d")
	ok("fs", "mv", "strato://test/uvol/bkt/d", "strato://test/uvol/bkt/e")
	require.Contains(t, ok("fs", "ls", "/uvol/bkt", "--cluster", "test"), "/uvol/bkt/e")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fs", "mv", "strato://test/uvol/bkt/e", "strato://down/uvol/bkt/f"}, "strato://test/uvol/bkt/e and strato://down/uvol/bkt/f name different clusters: a command works on one"},
		{[]string{"fs", "ls", "strato://test/uvol/bkt", "--cluster", "down"}, "strato://test/uvol/bkt names cluster test, --cluster down"},
		{[]string{"fs", "ls", "strato://" + addr + "/uvol/bkt", "--meta", "127.0.0.1:1"}, "names meta " + addr + ", --meta 127.0.0.1:1"},
	} {
		r := execute(nil, c.args...)
		require.Equal(t, 2, r.code, "%v: %s", c.args, r.stderr)
		require.Contains(t, r.stderr, c.want)
	}
}
