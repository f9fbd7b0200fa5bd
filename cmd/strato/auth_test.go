package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
)

// authCluster starts meta alone with token authentication.
func authCluster(t *testing.T) *minicluster.Cluster {
	t.Helper()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, Auth: true,
		TickInterval: 50 * time.Millisecond, ConfigureMeta: func(_ int, o *meta.Options) {
			o.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// fieldsOf parses "Name: value" lines.
func fieldsOf(t *testing.T, out string) map[string]string {
	t.Helper()
	fields := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		require.True(t, ok, out)
		fields[k] = strings.TrimSpace(v)
	}
	return fields
}

// Users and tokens on the command line, and the login, whoami, logout
// round trip with the token file.
func TestLoginWhoAmILogout(t *testing.T) {
	c := authCluster(t)
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	t.Setenv(client.TokenEnv, "")
	adminTok, err := c.AdminToken()
	require.NoError(t, err)

	// No token: refused, with what to do.
	line := h.fail(1, "sh", "volume", "list")
	require.Contains(t, line, "not authenticated")
	require.Contains(t, line, "no token (strato login)")
	require.Contains(t, h.fail(1, "whoami"), "no token (strato login)")
	require.Contains(t, h.fail(1, "sh", "volume", "list", "--token", "strato1.0123456789abcdef.AAAA"), "unknown token")

	// The administrator, by --token and by the environment.
	require.Contains(t, h.ok("admin", "user", "create", "dave", "--group", "dev", "--group", "ops", "--token", adminTok), "dave: created")
	t.Setenv(client.TokenEnv, adminTok)
	list := h.ok("admin", "user", "list")
	require.Contains(t, list, "admin")
	require.Contains(t, list, "dev,ops")
	issued := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "dave", "--expires", "1h"))
	tok := issued["Token"]
	require.True(t, strings.HasPrefix(tok, "strato1."+issued["ID"]+"."), tok)
	require.Equal(t, "dave", issued["User"])
	toks := h.ok("admin", "token", "list", "--user", "dave")
	require.Contains(t, toks, issued["ID"])
	require.NotContains(t, toks, tok, "a listing shows no token")
	t.Setenv(client.TokenEnv, "")

	// login --token - (standard input), then every command presents it.
	r := execute(strings.NewReader(tok+"\n"), "login", "--token", "-", "--meta", h.addr)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "logged in as dave")
	path := filepath.Join(cfg, "strato", "token")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, tok, strings.TrimSpace(string(b)))
	who := fieldsOf(t, h.ok("whoami"))
	require.Equal(t, "dave", who["User"])
	require.Equal(t, "false", who["Admin"])
	require.Equal(t, "dev,ops", who["Groups"])
	require.Equal(t, issued["ID"], who["Token"])
	// Creating volumes is for administrators (docs/security.md, "ACLs").
	require.Contains(t, h.fail(1, "sh", "volume", "create", "davesvol"), "user dave lacks CREATE on /")
	h.ok("sh", "volume", "list")
	require.Contains(t, h.fail(1, "admin", "user", "list"), "permission denied")
	require.Contains(t, h.fail(1, "admin", "datanode", "list"), "permission denied")
	// An S3 key without --user is the caller's, whatever the login name.
	t.Setenv("USER", "someone-else")
	require.Equal(t, "dave", fieldsOf(t, h.ok("admin", "s3", "key", "create"))["User"])

	// A bad token is not stored.
	require.Contains(t, h.fail(1, "login", "--token", "nonsense"), "no token (strato login)")
	require.Contains(t, h.fail(2, "login"), "--token is required")
	b, _ = os.ReadFile(path)
	require.Equal(t, tok, strings.TrimSpace(string(b)))

	require.Contains(t, h.ok("logout"), "logged out")
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, h.fail(1, "whoami"), "no token (strato login)")
	require.Contains(t, h.ok("logout"), "not logged in")

	// Revoked: refused, saying so.
	require.Contains(t, h.ok("admin", "token", "revoke", issued["ID"], "--token", adminTok), "revoked")
	require.Contains(t, h.fail(1, "whoami", "--token", tok), "revoked")
	require.Contains(t, h.ok("admin", "user", "delete", "dave", "--token", adminTok), "dave: deleted")
}

// The S3 gateway's calls to meta present its token (strato s3 --token):
// with one it serves, without one it cannot start.
func TestS3GatewayWithToken(t *testing.T) {
	c := authCluster(t)
	ctx := t.Context()
	adminTok, err := c.AdminToken()
	require.NoError(t, err)

	none, err := client.New(client.Options{Meta: c.MetaAddrs(), NoToken: true})
	require.NoError(t, err)
	defer none.Close()
	_, err = s3.New(ctx, s3.Options{Client: none, Credentials: s3.StaticCredentials{}, CleanupInterval: -1})
	require.ErrorIs(t, err, client.ErrUnauthenticated)

	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), Token: adminTok})
	require.NoError(t, err)
	defer cl.Close()
	k, secret, err := cl.CreateS3Key(ctx, "", "", "")
	require.NoError(t, err)
	require.Equal(t, meta.AdminUser, k.GetUser())
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: cl})
	require.NoError(t, err)
	gw, err := s3.New(ctx, s3.Options{Client: cl, Credentials: mc, CleanupInterval: -1})
	require.NoError(t, err)
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/bucket1", nil)
	require.NoError(t, err)
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", empty)
	require.NoError(t, v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: k.GetAccessKey(), SecretAccessKey: secret}, req, empty, "s3", "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	_, err = cl.GetBucket(ctx, "s3v", "bucket1")
	require.NoError(t, err)
}
