package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// clientFile writes the client's config.toml under a new
// $XDG_CONFIG_HOME and returns its directory.
func clientFile(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	dir := filepath.Join(home, "strato")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(content), 0o600))
	return dir
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
	require.Contains(t, r.stderr, "has no [clusters.prod] (it names: down, test)")
}

// TestClientClusterFile: the file is read strictly (errors name the line),
// its relative paths are beside it, and a cluster's token-file is what
// the CLI presents.
func TestClientClusterFile(t *testing.T) {
	dir := clientFile(t, "[clusters.a]\nmeta = [\"m:1\"]\ntls-ca = \"ca.crt\"\ntoken-file = \"/abs/a.token\"\n")
	path, err := clientConfigPath()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "config.toml"), path)
	c, err := readClientConfig(path)
	require.NoError(t, err)
	require.Equal(t, clusterSettings{Meta: []string{"m:1"}, TLSCA: filepath.Join(dir, "ca.crt"), TokenFile: "/abs/a.token"}, c.Clusters["a"])

	for _, bad := range []struct{ file, want string }{
		{"[clusters.a]\nmeta = [\"m:1\"]\ntoken = \"x\"\n", ":3: unknown key clusters.a.token"},
		{"[clusters.a]\nmeta = \"m:1\"\n", ":2: "},
		{"default = \"b\"\n[clusters.a]\n", `default = "b", and there is no [clusters.b]`},
	} {
		path := filepath.Join(clientFile(t, bad.file), "config.toml")
		_, err := readClientConfig(path)
		require.ErrorContains(t, err, bad.want)
	}

	// The cluster's token file is presented (meta runs --auth none here, so
	// whoami only shows that the token was read).
	addr := startMeta(t).addr
	tokDir := clientFile(t, "[clusters.t]\nmeta = [\""+addr+"\"]\ntoken-file = \"t.token\"\n")
	t.Setenv("STRATO_TOKEN", "")
	r := execute(nil, "whoami", "--cluster", "t")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "cluster t: token-file: open "+filepath.Join(tokDir, "t.token"))
	require.NoError(t, os.WriteFile(filepath.Join(tokDir, "t.token"), []byte("tok\n"), 0o600))
	r = execute(nil, "whoami", "--cluster", "t")
	require.Equal(t, 0, r.code, r.stderr)
}
