package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
)

// strato admin token delegation get, renew, cancel and list, with their
// exit codes, --out in both formats and --json.
func TestDelegationTokenCommands(t *testing.T) {
	c := authCluster(t)
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	t.Setenv(client.TokenEnv, adminTok)
	h.ok("admin", "user", "create", "rm")
	rmTok := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "rm"))["Token"]

	got := fieldsOf(t, h.ok("admin", "token", "delegation", "get", "--renewer", "rm/host@REALM"))
	require.Equal(t, "admin", got["Owner"])
	require.Equal(t, "rm", got["Renewer"])
	dt := got["Token"]
	require.True(t, strings.HasPrefix(dt, "strato1."+got["ID"]+"."), dt)
	require.Equal(t, "admin", fieldsOf(t, h.ok("whoami", "--token", dt))["User"])
	require.Contains(t, h.fail(1, "admin", "token", "delegation", "get", "--token", dt), "real credential")

	// renew: the renewer only, from the token or a file.
	require.Contains(t, h.fail(1, "admin", "token", "delegation", "renew", dt), "only its renewer (rm)")
	file := filepath.Join(t.TempDir(), "dt")
	require.NoError(t, os.WriteFile(file, []byte(dt+"\n"), 0o600))
	require.Contains(t, h.ok("admin", "token", "delegation", "renew", file, "--token", rmTok), "renewed: expires")
	require.Contains(t, h.fail(2, "admin", "token", "delegation", "renew", filepath.Join(t.TempDir(), "none")), "neither a token")
	require.Contains(t, h.fail(2, "admin", "token", "delegation", "get", "--format", "xml"), "--format")

	// list (administrators), --json.
	require.Contains(t, h.ok("admin", "token", "delegation", "list"), got["ID"])
	require.Contains(t, h.fail(1, "admin", "token", "delegation", "list", "--token", rmTok), "permission denied")
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("admin", "token", "delegation", "list", "--json")), &listed))
	require.Len(t, listed, 1)
	require.Equal(t, "rm", listed[0]["renewer"])

	// --out: the token alone, or a Hadoop token storage file.
	out := filepath.Join(t.TempDir(), "tok")
	h.ok("admin", "token", "delegation", "get", "--out", out)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(b), meta.TokenPrefix+".dt"), string(b))
	hout := filepath.Join(t.TempDir(), "hadoop.tok")
	var resp map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("admin", "token", "delegation", "get", "--out", hout, "--format", "hadoop", "--json")), &resp))
	require.Empty(t, resp["token"], "--json with --out prints no secret")
	require.Empty(t, resp["password"])
	hb, err := os.ReadFile(hout)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(hb, []byte("HDTS\x00\x01")), "%q", hb)
	require.True(t, bytes.Contains(hb, []byte(meta.DelegationTokenKind)))
	require.True(t, bytes.Contains(hb, []byte("strato:"+c.MetaAddr())))

	// cancel: the renewer (or the owner); then refused.
	require.Contains(t, h.ok("admin", "token", "delegation", "cancel", dt, "--token", rmTok), got["ID"]+": cancelled")
	require.Contains(t, h.fail(1, "whoami", "--token", dt), "cancelled")
	require.Contains(t, h.fail(1, "admin", "token", "delegation", "cancel", out, "--token", rmTok), "only its owner (admin) or renewer (admin)")
	require.Contains(t, h.ok("admin", "token", "delegation", "cancel", out), "cancelled")
}
