package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/minicluster"
)

func TestAdminCA(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ca")
	r := execute(nil, "admin", "ca", "init", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, filepath.Join(dir, "ca.crt"))
	line := requireFailure(t, execute(nil, "admin", "ca", "init", "--dir", dir), 1, []string{"admin ca init"})
	require.Contains(t, line, "already exists")

	out := t.TempDir()
	r = execute(nil, "admin", "ca", "issue", "--dir", dir, "--name", "dn1", "--host", "10.0.0.5", "--host", "dn1.example", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	pair, err := tls.LoadX509KeyPair(filepath.Join(out, "dn1.crt"), filepath.Join(out, "dn1.key"))
	require.NoError(t, err)
	require.NoError(t, pair.Leaf.VerifyHostname("10.0.0.5"))
	require.NoError(t, pair.Leaf.VerifyHostname("dn1.example"))
	require.NoError(t, pair.Leaf.VerifyHostname("127.0.0.1"))
	// Without --out the files go next to the CA.
	r = execute(nil, "admin", "ca", "issue", "--dir", dir, "--name", "meta1")
	require.Equal(t, 0, r.code, r.stderr)
	require.FileExists(t, filepath.Join(dir, "meta1.key"))

	requireFailure(t, execute(nil, "admin", "ca", "issue", "--dir", dir), 1, []string{"admin ca issue"})
	line = requireFailure(t, execute(nil, "admin", "ca", "issue", "--dir", t.TempDir(), "--name", "x"), 1, []string{"admin ca issue"})
	require.Contains(t, line, "load CA")
}

// TestCLITLS: the CLI talks to a TLS cluster with --tls-ca or
// $STRATO_TLS_CA, and without the CA fails at once saying why.
func TestCLITLS(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, TLS: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	require.Empty(t, h.ok("sh", "volume", "create", "vol1", "--tls-ca", c.CAFile()))
	require.Contains(t, h.ok("admin", "meta", "status", "--tls-ca", c.CAFile()), "leader")

	start := time.Now()
	line := h.fail(1, "sh", "volume", "list")
	require.Contains(t, line, "TLS")
	other := filepath.Join(t.TempDir(), "other")
	require.NoError(t, certs.InitCA(other))
	line = h.fail(1, "sh", "volume", "list", "--tls-ca", filepath.Join(other, certs.CACert))
	require.Contains(t, line, "certificate")
	require.Less(t, time.Since(start), 10*time.Second)
	line = h.fail(1, "sh", "volume", "list", "--tls-ca", filepath.Join(other, "missing.crt"))
	require.Contains(t, line, "--tls-ca")

	t.Setenv(tlsCAEnv, c.CAFile())
	require.Contains(t, h.ok("sh", "volume", "list"), "vol1")
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runDev starts `strato dev ARGS...` and waits for its ready line; stop
// stops it and returns its whole output.
func runDev(t *testing.T, args ...string) (out string, stop func() string) {
	t.Helper()
	root := newRootCmd()
	var buf syncBuffer
	root.SetArgs(append([]string{"dev", "--meta-addr", "127.0.0.1:0", "--s3-addr", "127.0.0.1:0", "--http", "", "--datanodes", "1"}, args...))
	root.SetOut(&buf)
	root.SetErr(&buf)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		return strings.Contains(buf.String(), "strato dev: ready")
	}, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, buf.String(), "strato dev: ready", buf.String())
	var once sync.Once
	stop = func() string {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
		return buf.String()
	}
	t.Cleanup(func() { stop() })
	return buf.String(), stop
}

var (
	devMetaLine  = regexp.MustCompile(`(?m)^  meta      (\S+)`)
	devTokenLine = regexp.MustCompile(`(?m)^  auth .* token (strato1\.\S+)`)
)

func TestDevSecure(t *testing.T) {
	dir := t.TempDir()
	out, stop := runDev(t, "--data", dir, "--secure", "--http", "127.0.0.1:0")
	ca := filepath.Join(dir, minicluster.TLSDir, certs.CACert)
	require.Contains(t, out, "export STRATO_TLS_CA="+ca)
	require.Contains(t, out, "s3        https://")
	// The console is HTTPS with meta's certificate, on the port it got.
	console := regexp.MustCompile(`console   (https://127\.0\.0\.1:[1-9][0-9]*/)`).FindStringSubmatch(out)
	require.NotNil(t, console, out)
	caTLS, err := certs.ClientConfig(ca, "", "")
	require.NoError(t, err)
	resp, err := (&http.Client{Transport: &http.Transport{TLSClientConfig: caTLS}, Timeout: 20 * time.Second}).Get(console[1] + "login")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotContains(t, out, "unauthenticated")
	// Tokens too: dev prints the administrator's and the login line.
	tok := devTokenLine.FindStringSubmatch(out)
	require.NotNil(t, tok, out)
	require.Contains(t, out, "strato login --tls-ca "+ca+" --token "+tok[1])
	addr := devMetaLine.FindStringSubmatch(out)[1]
	h := &cliHarness{t: t, addr: addr}
	require.Contains(t, h.fail(1, "sh", "volume", "list", "--tls-ca", ca, "--token", "strato1.0123456789abcdef.AAAA"), "unknown token")
	require.Empty(t, h.ok("sh", "volume", "create", "vol1", "--tls-ca", ca, "--token", tok[1]))
	require.Contains(t, h.fail(1, "sh", "volume", "list"), "TLS")
	stop()
	before, err := os.ReadFile(ca)
	require.NoError(t, err)

	// A restart reuses the CA and the administrator's token: the same
	// --tls-ca and --token still work.
	out, stop = runDev(t, "--data", dir, "--secure")
	require.Contains(t, out, tok[1])
	addr = devMetaLine.FindStringSubmatch(out)[1]
	h = &cliHarness{t: t, addr: addr}
	require.Contains(t, h.ok("sh", "volume", "list", "--tls-ca", ca, "--token", tok[1]), "vol1")
	after, err := os.ReadFile(ca)
	require.NoError(t, err)
	require.Equal(t, before, after)
	stop()

	// Without --secure, dev says what it is.
	out, _ = runDev(t, "--data", t.TempDir())
	require.Contains(t, out, "unauthenticated and unencrypted")
}

// strato dev --delegation-token-renew-interval reaches meta: a delegation
// token expires that long after its issue.
func TestDevDelegationTokenRenewInterval(t *testing.T) {
	dir := t.TempDir()
	out, _ := runDev(t, "--data", dir, "--secure", "--delegation-token-renew-interval", "90s")
	ca := filepath.Join(dir, minicluster.TLSDir, certs.CACert)
	tok := devTokenLine.FindStringSubmatch(out)
	require.NotNil(t, tok, out)
	h := &cliHarness{t: t, addr: devMetaLine.FindStringSubmatch(out)[1]}
	h.ok("admin", "token", "delegation", "get", "--renewer", "yarn/host@REALM", "--tls-ca", ca, "--token", tok[1])
	var listed []map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("admin", "token", "delegation", "list", "--json", "--tls-ca", ca, "--token", tok[1])), &listed))
	require.Len(t, listed, 1)
	require.Equal(t, "yarn", listed[0]["renewer"])
	require.InDelta(t, 90_000, listed[0]["expiresUnixMs"].(float64)-listed[0]["issueUnixMs"].(float64), 1)
}

// freePort returns a loopback address that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// startCmd runs `strato ARGS...` until the test ends.
func startCmd(t *testing.T, args ...string) {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done, "strato %s", strings.Join(args, " "))
	})
}

// TestServerTLSFlags: `strato meta` and `strato datanode` with
// --tls-cert/--tls-key/--tls-ca make a TLS cluster (certificates from
// `strato admin ca`) that the CLI uses with --tls-ca.
func TestServerTLSFlags(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca")
	require.Equal(t, 0, execute(nil, "admin", "ca", "init", "--dir", ca).code)
	for _, n := range []string{"meta1", "dn1"} {
		r := execute(nil, "admin", "ca", "issue", "--dir", ca, "--name", n)
		require.Equal(t, 0, r.code, r.stderr)
	}
	caFile := filepath.Join(ca, certs.CACert)
	tlsArgs := func(name string) []string {
		return []string{"--tls-cert", filepath.Join(ca, name+".crt"), "--tls-key", filepath.Join(ca, name+".key"), "--tls-ca", caFile}
	}
	line := requireFailure(t, execute(nil, "datanode", "--data", t.TempDir(), "--tls-cert", filepath.Join(ca, "dn1.crt")), 2, []string{"datanode"})
	require.Contains(t, line, "go together")

	metaAddr := freePort(t)
	// Tokens are TestDevSecure's and minicluster's: here TLS alone.
	startCmd(t, append([]string{"meta", "--auth", "none", "--data", filepath.Join(dir, "meta"), "--listen", metaAddr}, tlsArgs("meta1")...)...)
	startCmd(t, append([]string{"datanode", "--data", filepath.Join(dir, "dn1"), "--meta", metaAddr, "--listen", freePort(t),
		"--heartbeat-interval", "100ms"}, tlsArgs("dn1")...)...)
	h := &cliHarness{t: t, addr: metaAddr}
	require.Eventually(t, func() bool {
		return strings.Contains(h.run("admin", "datanode", "list", "--tls-ca", caFile).stdout, "HEALTHY")
	}, 20*time.Second, 50*time.Millisecond)
	require.Contains(t, h.fail(1, "admin", "datanode", "list"), "TLS")
}

// TestMetaAuthDefault: `strato meta` authenticates its clients unless told
// not to, so without TLS it refuses to start and says what to give.
func TestMetaAuthDefault(t *testing.T) {
	root := newRootCmd()
	var out syncBuffer
	root.SetArgs([]string{"meta", "--data", t.TempDir(), "--listen", "127.0.0.1:0"})
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(t.Context())
	require.Error(t, err)
	require.Contains(t, err.Error(), "--auth token (the default) needs TLS")
	require.Contains(t, err.Error(), "--auth none")
}
