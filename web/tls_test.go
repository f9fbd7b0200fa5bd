package web_test

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/telemetry"
	"github.com/strato-io/strato/web"
)

// TestConsoleTLS: on a cluster with TLS the console reaches meta over TLS
// and is served over HTTPS with meta's certificate; a browser that trusts
// the cluster CA gets the pages, plain HTTP gets nothing.
func TestConsoleTLS(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), TLS: true, Datanodes: 1,
		HeartbeatInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	con, err := web.New(web.Options{Meta: c.MetaAddr(), TLS: c.ClientTLS(), Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = con.Close() })
	serverTLS, err := c.MetaServerTLS(0)
	require.NoError(t, err)
	srv, err := telemetry.ServeTLS("127.0.0.1:0", telemetry.Handler(telemetry.Endpoint{Registry: telemetry.NewRegistry(), Console: con}),
		serverTLS, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })

	browser := &http.Client{Transport: &http.Transport{TLSClientConfig: c.ClientTLS()}, Timeout: 20 * time.Second}
	for _, path := range []string{"/", "/datanodes", "/metrics", "/healthz"} {
		resp, err := browser.Get("https://" + srv.Addr() + path)
		require.NoError(t, err, path)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
		if path == "/datanodes" {
			require.Contains(t, string(body), c.DatanodeAddrs()[0], "the console read meta over TLS")
		}
	}

	// Plain HTTP, and HTTPS without the CA, are refused.
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + srv.Addr() + "/")
	if err == nil {
		_ = resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to an HTTPS endpoint")
	}
	resp, err = (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS13}}, Timeout: 5 * time.Second}).
		Get("https://" + srv.Addr() + "/")
	if err == nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "certificate"), err.Error())
}
