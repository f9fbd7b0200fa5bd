package test

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMetaMetrics: strato meta --http serves Prometheus metrics.
func TestMetaMetrics(t *testing.T) {
	root := t.TempDir()
	addr, httpAddr := freeAddr(t), freeAddr(t)
	startProc(t, "meta", "meta", "--data", filepath.Join(root, "meta"), "--listen", addr, "--http", httpAddr)
	var body string
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + httpAddr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			body = string(b)
			if strings.Contains(body, "strato_meta_leader 1") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics: %v\n%s", err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range []string{"strato_meta_under_replicated_containers", "strato_meta_missing_containers",
		"strato_meta_replications_in_flight", "strato_meta_replications_scheduled_total", "go_goroutines"} {
		require.Contains(t, body, m)
	}
}
