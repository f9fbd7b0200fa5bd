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

// TestMetrics: strato meta --http and strato datanode --http serve
// Prometheus metrics, and with --pprof Go's profiles.
func TestMetrics(t *testing.T) {
	root := t.TempDir()
	addr, httpAddr, dnHTTP := freeAddr(t), freeAddr(t), freeAddr(t)
	startMeta(t, filepath.Join(root, "meta"), addr, "--http", httpAddr, "--pprof")
	startDatanode(t, filepath.Join(root, "dn"), addr, "--http", dnHTTP)
	scrape := func(url, want string) string {
		var body string
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := http.Get(url)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				body = string(b)
				if strings.Contains(body, want) {
					return body
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q at %s: %v\n%s", want, url, err, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	body := scrape("http://"+httpAddr+"/metrics", "strato_meta_datanodes_healthy 1")
	for _, m := range []string{"strato_meta_leader 1", "strato_meta_under_replicated_containers", "strato_meta_missing_containers",
		"strato_meta_replications_in_flight", "strato_meta_replications_scheduled_total", "strato_meta_balancer_running 0",
		"strato_meta_balancer_moves_in_flight 0", "strato_meta_balancer_spread", "go_goroutines"} {
		require.Contains(t, body, m)
	}
	// Go's profiles beside the metrics.
	scrape("http://"+httpAddr+"/debug/pprof/", "goroutine")
	scrape("http://"+httpAddr+"/debug/pprof/goroutine?debug=1", "meta")
	body = scrape("http://"+dnHTTP+"/metrics", "strato_datanode_replication_bytes_out_total 0")
	for _, m := range []string{"strato_datanode_replication_bytes_in_total", "strato_datanode_replication_pushes_in_flight",
		"strato_datanode_replication_pushes_failed_total", "strato_datanode_replication_imports_completed_total",
		"strato_datanode_replication_gave_way_seconds_total",
		"strato_datanode_scan_meta_containers_total 0", "strato_datanode_scan_data_containers_total 0", "strato_datanode_scan_bytes_total 0",
		"strato_datanode_scan_corruptions_total 0", "strato_datanode_scan_in_progress 0", "strato_datanode_scan_last_data_pass_timestamp_seconds 0",
		"strato_datanode_scan_disabled 0"} {
		require.Contains(t, body, m)
	}
}
