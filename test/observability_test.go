package test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// httpGet returns a URL's status and body ("" and the error when it cannot
// be fetched).
func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// sample returns the value of one series of a Prometheus text exposition
// (name with its labels, as printed, e.g. `x_total{a="b"}`); -1 when absent.
func sample(body, series string) float64 {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return v
}

// TestObservabilityUnderLoad: real meta and datanode processes with --http
// answer /healthz and /readyz (meta not ready while in safe mode), and their
// metrics — per-RPC counts and latency histograms on meta, Raft
// histograms, data-protocol requests and latencies and per-volume capacity
// on the datanodes, namespace sizes — exist and move while a client writes
// and reads; meta's audit log records the mutations, with who and the
// result.
func TestObservabilityUnderLoad(t *testing.T) {
	root := t.TempDir()
	addr, metaHTTP := freeAddr(t), freeAddr(t)
	audit := filepath.Join(root, "audit.log")
	m := startMeta(t, filepath.Join(root, "meta"), addr, "--http", metaHTTP, "--audit-log", audit)
	base := "http://" + metaHTTP
	// Before any datanode: alive, not ready (safe mode).
	require.Eventually(t, func() bool {
		code, body, _ := httpGet(base + "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "safe mode")
	}, 20*time.Second, 50*time.Millisecond)
	code, body, err := httpGet(base + "/healthz")
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)

	procs := []*proc{m}
	var dnHTTP []string
	for i := range 3 {
		h := freeAddr(t)
		dnHTTP = append(dnHTTP, h)
		procs = append(procs, startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), addr, "--http", h, "--heartbeat-interval", "200ms"))
	}
	waitReady(t, addr, procs...)
	for _, h := range append([]string{metaHTTP}, dnHTTP...) {
		require.Eventually(t, func() bool {
			code, _, _ := httpGet("http://" + h + "/readyz")
			return code == http.StatusOK
		}, 20*time.Second, 50*time.Millisecond, "%s/readyz", h)
		code, _, err := httpGet("http://" + h + "/healthz")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
	}

	scrape := func(h string) string {
		code, body, err := httpGet("http://" + h + "/metrics")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
		return body
	}
	metaBefore := scrape(metaHTTP)
	dnBefore := make([]string, len(dnHTTP))
	for i, h := range dnHTTP {
		dnBefore[i] = scrape(h)
	}

	// Load: keys written and read back by four writers for a while.
	cl, err := client.New(client.Options{Meta: []string{addr}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	data := bytes.Repeat([]byte("strato"), 50_000) // 300 kB
	const writers, perWriter = 4, 10
	writeAndRead(ctx, t, cl, data, writers, perWriter)

	// Meta: the series exist and moved.
	metaAfter := scrape(metaHTTP)
	moved := func(before, after, series string) {
		t.Helper()
		b, a := sample(before, series), sample(after, series)
		require.GreaterOrEqual(t, a, 0.0, "%s missing:\n%s", series, after)
		require.Greater(t, a, max(b, 0), "%s did not move (%v → %v)", series, b, a)
	}
	for _, s := range []string{
		`strato_grpc_server_handled_total{grpc_code="OK",grpc_method="CommitKey",grpc_service="NamespaceService",grpc_type="unary"}`,
		`strato_grpc_server_started_total{grpc_method="LookupKey",grpc_service="NamespaceService",grpc_type="unary"}`,
		`strato_grpc_server_handling_seconds_count{grpc_method="CommitKey",grpc_service="NamespaceService",grpc_type="unary"}`,
		`strato_grpc_server_handling_seconds_bucket{grpc_method="CommitKey",grpc_service="NamespaceService",grpc_type="unary",le="+Inf"}`,
		`strato_grpc_server_handled_total{grpc_code="OK",grpc_method="Heartbeat",grpc_service="DatanodeService",grpc_type="unary"}`,
		`strato_meta_raft_log_sync_seconds_count`,
		`strato_meta_raft_apply_seconds_count`,
		`strato_meta_raft_proposals_per_append_count`,
		`strato_meta_raft_proposals_total`,
		`strato_meta_raft_fsyncs_total`,
		`strato_meta_raft_applied_index`,
		`strato_meta_namespace_objects`,
		`strato_meta_namespace_bytes`,
	} {
		moved(metaBefore, metaAfter, s)
	}
	// Methods never called are there with zeros.
	require.Equal(t, 0.0, sample(metaAfter, `strato_grpc_server_handled_total{grpc_code="OK",grpc_method="TransferMetaLeader",grpc_service="AdminService",grpc_type="unary"}`))
	require.Equal(t, 1.0, sample(metaAfter, "strato_meta_leader"))
	require.Equal(t, 0.0, sample(metaAfter, "strato_meta_safe_mode"))
	require.Equal(t, 3.0, sample(metaAfter, "strato_meta_datanodes_healthy"))
	require.Equal(t, 2.0, sample(metaAfter, "strato_meta_volumes")) // probe and load
	require.Equal(t, float64(writers*perWriter*len(data)+len("probe")), sample(metaAfter, "strato_meta_namespace_bytes"))
	require.Equal(t, float64(writers*perWriter*len(data)), sample(metaAfter, `strato_meta_volume_used_bytes{volume="load"}`))

	// Datanodes: every one took writes (replication three); reads went to
	// some (READ_LOCAL: the test runs on the datanodes' host).
	var reads float64
	for i, h := range dnHTTP {
		after := scrape(h)
		for _, s := range []string{
			// Keys of one chunk: each is written and committed by one
			// WRITE_COMMIT (docs/wire.md §5.10).
			`strato_datanode_requests_total{code="OK",type="WRITE_COMMIT"}`,
			`strato_datanode_request_duration_seconds_count{type="WRITE_COMMIT"}`,
			`strato_datanode_received_bytes_total`,
		} {
			moved(dnBefore[i], after, s)
		}
		// Over TCP, or (this test's client is on the datanodes' host)
		// from the block files the datanodes hand over.
		reads += max(sample(after, `strato_datanode_request_duration_seconds_count{type="READ_CHUNK"}`), 0)
		local := sample(after, `strato_datanode_local_reads_total`)
		require.GreaterOrEqual(t, local, 0.0, "strato_datanode_local_reads_total served")
		require.Equal(t, local, max(sample(after, `strato_datanode_request_duration_seconds_count{type="READ_LOCAL"}`), 0))
		reads += local
		require.Equal(t, 1.0, sample(after, "strato_datanode_registered"))
		require.Regexp(t, `(?m)^strato_datanode_volume_capacity_bytes\{volume=".+"\} [1-9]`, after)
		require.Regexp(t, `(?m)^strato_datanode_volume_used_bytes\{volume=".+"\} [1-9]`, after)
		require.Equal(t, 1.0, sample(after, `strato_datanode_volumes{state="healthy"}`))
		require.Equal(t, 0.0, sample(after, `strato_datanode_volumes{state="failed"}`))
		require.Regexp(t, `(?m)^strato_datanode_volume_failed\{volume=".+"\} 0$`, after)
	}
	require.GreaterOrEqual(t, reads, float64(writers*perWriter))

	// Every metric the Grafana dashboard and the alerting rules query is
	// served by meta, the datanodes or an S3 gateway (over HTTPS, so that
	// it serves its certificate's expiry), with the build's identity.
	served := metaAfter
	for _, h := range dnHTTP {
		served += scrape(h)
	}
	served += scrape(s3Gateway(t, root, addr))
	require.Regexp(t, `(?m)^strato_build_info\{commit=".+",go_version="go.+",version=".+"\} 1$`, metaAfter)
	for _, f := range []string{"../deploy/grafana/dashboards/strato.json", "../deploy/prometheus/alerts.yml"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		names := regexp.MustCompile(`\b(?:strato|go|process)_[a-z0-9_]+`).FindAllString(string(b), -1)
		require.NotEmpty(t, names, f)
		for _, n := range names {
			// A series, or a histogram's or summary's family.
			require.Regexp(t, `(?m)^(# TYPE )?`+n+`[{ ]`, served, "%s queries %s, which no server serves", f, n)
		}
	}

	// The audit log: the mutations, not the reads or heartbeats.
	checkAuditLog(ctx, t, cl, audit)
}

// s3Gateway starts an S3 gateway of the meta at metaAddr, serving HTTPS
// with a certificate of a CA made in root, has it answer one unsigned
// request (refused: its counters get a series), and returns its --http
// address.
func s3Gateway(t *testing.T, root, metaAddr string) string {
	ca := filepath.Join(root, "ca")
	require.NoError(t, certs.InitCA(ca))
	require.NoError(t, certs.Issue(ca, ca, "s3", nil))
	s3Addr, s3HTTP := freeAddr(t), freeAddr(t)
	startProc(t, "s3", "s3", "--meta", metaAddr, "--listen", s3Addr, "--http", s3HTTP,
		"--tls-cert", filepath.Join(ca, "s3.crt"), "--tls-key", filepath.Join(ca, "s3.key"))
	cfg, err := certs.ClientConfig(filepath.Join(ca, "ca.crt"), "", "")
	require.NoError(t, err)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	require.Eventually(t, func() bool {
		resp, err := hc.Get("https://" + s3Addr + "/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusForbidden
	}, 20*time.Second, 50*time.Millisecond, "the gateway's answer to an unsigned request")
	return s3HTTP
}

// writeAndRead makes volume load, bucket bkt, and has writers goroutines
// each write perWriter keys of data and read each back.
func writeAndRead(ctx context.Context, t *testing.T, cl *client.Client, data []byte, writers, perWriter int) {
	_, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "load"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "load", Name: "bkt"})
	require.NoError(t, err)
	errc := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range perWriter {
				name := fmt.Sprintf("w%d/k%d", w, i)
				kw, err := cl.CreateKey(ctx, "load", "bkt", name, client.WriteOptions{})
				if err == nil {
					_, err = kw.Write(data)
					if cerr := kw.Close(); err == nil {
						err = cerr
					}
				}
				if err == nil {
					var r *client.Reader
					if r, err = cl.OpenKey(ctx, "load", "bkt", name); err == nil {
						_, err = io.Copy(io.Discard, r)
						_ = r.Close()
					}
				}
				if err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	for range writers {
		require.NoError(t, <-errc)
	}
}

// checkAuditLog checks that meta's audit log (the file audit) has the mutations
// with who made them and their result, and not the reads or heartbeats.
func checkAuditLog(ctx context.Context, t *testing.T, cl *client.Client, audit string) {
	b, err := os.ReadFile(audit)
	require.NoError(t, err)
	log := string(b)
	require.Regexp(t, `"method":"NamespaceService/CreateBucket".*"client":"[0-9a-f]+".*"code":"OK".*"args":\{"name":"bkt","owner":"strato","volume":"load"\}`, log)
	require.Contains(t, log, `"method":"NamespaceService/CommitKey"`)
	require.NotContains(t, log, "LookupKey")
	require.NotContains(t, log, "Heartbeat")
	// A refused mutation is there with its code.
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "load", Name: "bkt"})
	require.ErrorIs(t, err, client.ErrExists)
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(audit)
		return strings.Contains(string(b), `"code":"AlreadyExists"`)
	}, 5*time.Second, 20*time.Millisecond)
}
