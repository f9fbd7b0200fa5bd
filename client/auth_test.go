package client

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The token a client presents: Options.Token, else $STRATO_TOKEN, else the
// token file of strato login ($XDG_CONFIG_HOME/strato/token, else
// ~/.config/strato/token).
func TestFindTokenOrder(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv(TokenEnv, "")

	got, err := FindToken("")
	require.NoError(t, err)
	require.Equal(t, "", got, "nothing anywhere: no token")

	write := func(dir, tok string) string {
		p := filepath.Join(dir, "strato", "token")
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(tok+"\n"), 0o600))
		return p
	}
	write(filepath.Join(home, ".config"), "from-home")
	p, err := TokenFile()
	require.NoError(t, err)
	require.Equal(t, filepath.Join(home, ".config", "strato", "token"), p)
	got, _ = FindToken("")
	require.Equal(t, "from-home", got)

	t.Setenv("XDG_CONFIG_HOME", xdg)
	got, _ = FindToken("")
	require.Equal(t, "", got, "XDG_CONFIG_HOME set: ~/.config is not read")
	write(xdg, "from-xdg")
	got, _ = FindToken("")
	require.Equal(t, "from-xdg", got)

	t.Setenv(TokenEnv, "from-env")
	got, _ = FindToken("")
	require.Equal(t, "from-env", got)

	got, _ = FindToken("from-options")
	require.Equal(t, "from-options", got)

	// NoToken: none, whatever is found.
	c, err := New(Options{Meta: []string{"127.0.0.1:1"}, NoToken: true})
	require.NoError(t, err)
	require.Equal(t, "", c.opts.Token)
	_ = c.Close()
	c, err = New(Options{Meta: []string{"127.0.0.1:1"}})
	require.NoError(t, err)
	require.Equal(t, "from-env", c.opts.Token)
	_ = c.Close()
}
