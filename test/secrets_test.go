package test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// httpPaths are the paths a server's --http endpoint is asked for by
// TestHTTPEndpointsCarryNoSecrets: telemetry's, Go's profiles (each
// profile the index names, the command line among them), and the web
// console's pages and APIs.
var httpPaths = []string{
	"/metrics", "/healthz", "/readyz",
	"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/symbol", "/debug/pprof/profile?seconds=1",
	"/debug/pprof/trace?seconds=1", "/debug/pprof/goroutine?debug=1", "/debug/pprof/goroutine?debug=2",
	"/debug/pprof/heap?debug=1", "/debug/pprof/allocs?debug=1", "/debug/pprof/threadcreate?debug=1",
	"/debug/pprof/block?debug=1", "/debug/pprof/mutex?debug=1",
	"/", "/login", "/datanodes", "/pipelines", "/containers", "/ops", "/ns/", "/api/overview", "/api/rates",
}

// TestHTTPEndpointsCarryNoSecrets: meta (with --auth token, its console
// sampling with an administrator's token given on the command line, the
// worst case), a datanode and an S3 gateway (its token and an access key's
// secret given to it) serve their --http endpoints, profiles on; no
// path of any of them, asked without credentials, shows the token or the
// secret. Profiles answer loopback callers; the command line is never
// served. Without --pprof there are no profiles.
func TestHTTPEndpointsCarryNoSecrets(t *testing.T) {
	t.Parallel() // waits on its servers more than it works
	root := t.TempDir()
	metaAddr, metaHTTP := freeAddr(t), freeAddr(t)
	metaArgs, _, token := metaWithToken(t, root, metaAddr)
	m := startProc(t, "meta", append(metaArgs, "--http", metaHTTP, "--pprof", "--console-token", token)...)

	dnHTTP, dnPlainHTTP := freeAddr(t), freeAddr(t)
	startDatanode(t, filepath.Join(root, "dn"), metaAddr, "--http", dnHTTP, "--pprof")
	startDatanode(t, filepath.Join(root, "dn2"), metaAddr, "--http", dnPlainHTTP)

	const accessKey, secretKey = "AKSECRETSTEST", "s3-secret-key-that-must-not-show-0123456789"
	creds := filepath.Join(root, "s3.credentials")
	require.NoError(t, os.WriteFile(creds, []byte(accessKey+" "+secretKey+"\n"), 0o600))
	s3Addr, s3HTTP := freeAddr(t), freeAddr(t)
	s3 := startProc(t, "s3", "s3", "--meta", metaAddr, "--listen", s3Addr, "--http", s3HTTP, "--pprof",
		"--token", token, "--credentials", creds)

	secrets := map[string]string{"the administrator's token": token, "the S3 secret key": secretKey}
	// A token's parts ("strato1.<id>.<secret>") must not show either.
	if parts := strings.Split(token, "."); len(parts) == 3 {
		secrets["the token's secret part"] = parts[2]
	}
	// The servers at once: the CPU profile and the trace take a second each.
	for name, addr := range map[string]string{"meta": metaHTTP, "datanode": dnHTTP, "datanode without --pprof": dnPlainHTTP, "s3": s3HTTP} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Eventually(t, func() bool { code, _, _ := httpGet("http://" + addr + "/healthz"); return code == http.StatusOK },
				20*time.Second, 50*time.Millisecond, "%s's endpoint", name)
			for _, path := range httpPaths {
				code, body, err := httpGet("http://" + addr + path)
				require.NoError(t, err, "%s %s", name, path)
				for what, s := range secrets {
					require.NotContains(t, body, s, "%s %s (%d) shows %s", name, path, code, what)
				}
				switch {
				case path == "/debug/pprof/cmdline":
					require.Equal(t, http.StatusNotFound, code, "%s %s: %s", name, path, body)
				case strings.HasPrefix(path, "/debug/pprof/") && name == "datanode without --pprof":
					require.Equal(t, http.StatusNotFound, code, "%s %s: %s", name, path, body)
				case strings.HasPrefix(path, "/debug/pprof/"):
					require.Equal(t, http.StatusOK, code, "%s %s: %s", name, path, body)
				}
			}
		})
	}
	// The servers run with those secrets (the checks are not passing for
	// lack of them): the console's gRPC calls and the gateway's reach meta
	// with the token.
	t.Cleanup(func() { require.True(t, m.running() && s3.running()) })
}

// TestServerSecretsFromFileAndEnvironment: meta's console token and the
// gateway's token come from a file or the environment; both with a flag
// is a usage error; an empty file is refused.
func TestServerSecretsFromFileAndEnvironment(t *testing.T) {
	t.Parallel() // waits on its servers more than it works
	root := t.TempDir()
	metaAddr, metaHTTP := freeAddr(t), freeAddr(t)
	metaArgs, tokenFile, token := metaWithToken(t, root, metaAddr)

	out, err := run(append(metaArgs, "--console-token", "x", "--console-token-file", tokenFile)...)
	require.Error(t, err)
	require.Contains(t, out, "--console-token and --console-token-file exclude each other")
	empty := filepath.Join(root, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	out, err = run(append(metaArgs, "--console-token-file", empty)...)
	require.Error(t, err)
	require.Contains(t, out, "is empty")

	startProc(t, "meta", append(metaArgs, "--http", metaHTTP, "--console-token-file", tokenFile)...)
	startDatanodes(t, root, metaAddr, 1)
	// The console samples meta with the file's token: its rates API
	// (asked by a signed-in visitor) has samples (none without a token).
	require.Eventually(t, func() bool {
		req, err := http.NewRequest(http.MethodGet, "http://"+metaHTTP+"/api/rates", nil)
		require.NoError(t, err)
		req.AddCookie(&http.Cookie{Name: "strato_token", Value: token})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"t":`)
	}, 30*time.Second, 200*time.Millisecond)

	// The gateway: --token-file, and $STRATO_TOKEN.
	for _, how := range []string{"file", "env"} {
		s3Addr := freeAddr(t)
		args := []string{"s3", "--meta", metaAddr, "--listen", s3Addr}
		p := newProc(t, "s3 "+how, args...)
		if how == "file" {
			p.Args = append(args, "--token-file", tokenFile)
		} else {
			p.Env = []string{"STRATO_TOKEN=" + token}
		}
		p.start()
		// A gateway whose token meta refuses fails to start (it lists
		// the volume's buckets at start): a running, answering gateway
		// has the token.
		require.Eventually(t, func() bool {
			code, _, _ := httpGet("http://" + s3Addr + "/")
			return code == http.StatusForbidden || code == http.StatusOK
		}, 30*time.Second, 100*time.Millisecond, "s3 with the token from its %s", how)
		require.True(t, p.running())
	}
}

// metaWithToken starts a meta with --auth token (without TLS) on
// root/meta once, for it to write the administrator's token, and stops
// it; it returns the meta's arguments, the token's file and the token.
func metaWithToken(t *testing.T, root, addr string) (args []string, tokenFile, token string) {
	dir := filepath.Join(root, "meta")
	args = []string{"meta", "--auth", "token", "--auth-without-tls", "--data", dir, "--listen", addr}
	m := startProc(t, "meta", args...)
	tokenFile = filepath.Join(dir, "admin.token")
	require.Eventually(t, func() bool { _, err := os.Stat(tokenFile); return err == nil }, 20*time.Second, 50*time.Millisecond)
	m.stop()
	b, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	token = strings.TrimSpace(string(b))
	require.NotEmpty(t, token)
	return args, tokenFile, token
}
