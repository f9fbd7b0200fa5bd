package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

// strato sh volume|bucket|key getacl|setacl|addacl|removeacl, with
// authentication: the owner grants, the grantee's rights show in getacl
// and work; bad syntax is a usage error that says what is wrong.
func TestShACLCommands(t *testing.T) {
	c := authCluster(t)
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	t.Setenv(client.TokenEnv, adminTok)
	h.ok("admin", "user", "create", "alice")
	h.ok("admin", "user", "create", "bob", "--group", "dev")
	h.ok("sh", "volume", "create", "vol1", "--owner", "alice")
	aliceTok := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "alice"))["Token"]
	bobTok := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "bob"))["Token"]

	t.Setenv(client.TokenEnv, aliceTok)
	h.ok("sh", "bucket", "create", "/vol1/bk1")
	h.ok("sh", "bucket", "addacl", "/vol1/bk1", "--acl", "user:bob:rl,group:dev:rlc[DEFAULT]")
	out := h.ok("sh", "bucket", "getacl", "/vol1/bk1")
	require.Contains(t, out, "Owner: alice")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, []string{"TYPE", "NAME", "RIGHTS", "SCOPE"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"user", "bob", "rl", "ACCESS"}, strings.Fields(lines[2]))
	require.Equal(t, []string{"group", "dev", "rcl", "DEFAULT"}, strings.Fields(lines[3]))
	file := filepath.Join(t.TempDir(), "acl.txt")
	require.NoError(t, os.WriteFile(file, []byte("user:bob:r\nworld::l\n"), 0o600))
	h.ok("sh", "volume", "setacl", "/vol1", "--acl-file", file)
	require.Contains(t, h.ok("sh", "volume", "getacl", "vol1", "--json"), `"name": "bob"`)
	h.ok("sh", "bucket", "removeacl", "/vol1/bk1", "--acl", "user:bob:l")

	t.Setenv(client.TokenEnv, bobTok)
	require.Contains(t, h.fail(1, "sh", "bucket", "getacl", "/vol1/bk1"), "user bob lacks READ_ACL on /vol1/bk1")
	require.Contains(t, h.fail(1, "sh", "volume", "delete", "vol1"), "user bob lacks DELETE on /vol1")

	require.Contains(t, h.fail(2, "sh", "bucket", "setacl", "/vol1/bk1", "--acl", "user:bob:rz"), "unknown right 'z'")
	require.Contains(t, h.fail(2, "sh", "bucket", "setacl", "/vol1/bk1", "--acl", "robot:x:r"), `type "robot"`)
	require.Contains(t, h.fail(2, "sh", "bucket", "setacl", "/vol1/bk1"), "--acl or --acl-file is required")
	require.Contains(t, h.fail(2, "sh", "key", "getacl", "/vol1/bk1"), "names no key")
}
