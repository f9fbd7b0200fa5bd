package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
)

// writeConfig writes the client's file under a new $XDG_CONFIG_HOME and
// returns its directory.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", home)
	dir := filepath.Join(home, "strato")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "config.toml"), []byte(content), 0o600))
	return dir
}

// TestReadConfig: the file is read strictly, errors name the line, and
// its relative paths are beside it.
func TestReadConfig(t *testing.T) {
	dir := writeConfig(t, "[clusters.a]\nmeta = [\"m:1\"]\ntls-ca = \"ca.crt\"\ntoken-file = \"/abs/a.token\"\n")
	path, err := ConfigFile()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "config.toml"), path)
	c, err := ReadConfig(path)
	require.NoError(t, err)
	require.Equal(t, ClusterConfig{Meta: []string{"m:1"}, TLSCA: filepath.Join(dir, "ca.crt"), TokenFile: "/abs/a.token"}, c.Clusters["a"])
	_, ok, err := c.Lookup("")
	require.NoError(t, err)
	require.False(t, ok, "no default")
	_, _, err = c.Lookup("b")
	require.ErrorIs(t, err, ErrNoCluster)
	require.ErrorContains(t, err, `"b" (the file names: a)`)

	for _, bad := range []struct{ file, want string }{
		{"[clusters.a]\nmeta = [\"m:1\"]\ntoken = \"x\"\n", ":3: unknown key clusters.a.token"},
		{"[clusters.a]\nmeta = \"m:1\"\n", ":2: "},
		{"default = \"b\"\n[clusters.a]\n", `: default = "b", and there is no [clusters.b]`},
		{"[clusters.a\n", ":1: "},
	} {
		path := filepath.Join(writeConfig(t, bad.file), "config.toml")
		_, err := ReadConfig(path)
		require.ErrorContains(t, err, path+bad.want)
	}
	c, err = ReadConfig(filepath.Join(t.TempDir(), "none.toml"))
	require.NoError(t, err)
	require.Empty(t, c.Clusters)
}

// TestClusterOptions: a cluster of the file gives New its meta addresses,
// TLS trusting its CA and the token of its token file.
func TestClusterOptions(t *testing.T) {
	dir := writeConfig(t, `default = "prod"

[clusters.prod]
meta = ["m1:9860", "m2:9860"]
tls-ca = "ca/ca.crt"
token-file = "prod.token"

[clusters.dev]
meta = ["127.0.0.1:9860"]
`)
	require.NoError(t, certs.InitCA(filepath.Join(dir, "ca")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prod.token"), []byte("tok-prod\n"), 0o600))
	t.Setenv(TokenEnv, "tok-env")
	o, err := ClusterOptions("")
	require.NoError(t, err)
	require.Equal(t, []string{"m1:9860", "m2:9860"}, o.Meta)
	require.NotNil(t, o.TLS)
	require.Equal(t, "tok-prod", o.Token)
	o, err = ClusterOptions("dev")
	require.NoError(t, err)
	require.Nil(t, o.TLS)
	require.Equal(t, "tok-env", o.Token, "no token file: FindToken's")
	_, err = ClusterOptions("test")
	require.ErrorIs(t, err, ErrNoCluster)
}
