package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/tracing/otlptest"
)

// jsonLines are the JSON objects of a file of JSON lines (a process's
// output: the harness's own "====" lines aside); a line that is not JSON
// fails the test.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("==== ")) {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "%s: a line that is not JSON: %s", path, sc.Text())
		out = append(out, m)
	}
	return out
}

// TestRequestAcrossProcesses: real meta, three datanodes and an S3 gateway,
// each sending its spans to a collector on loopback (--otlp-endpoint), the
// datanodes logging JSON at debug level, meta its audit log, the gateway
// its access log. One S3 PUT is found by its x-amz-request-id in the
// access log, meta's audit log and the three datanodes' logs, and its
// trace has spans from the gateway, meta and the three datanodes.
func TestRequestAcrossProcesses(t *testing.T) {
	col, err := otlptest.Start()
	require.NoError(t, err)
	defer col.Close()
	root := t.TempDir()
	addr := freeAddr(t)
	audit, access := filepath.Join(root, "audit.log"), filepath.Join(root, "access.log")
	m := startMeta(t, filepath.Join(root, "meta"), addr, "--audit-log", audit, "--otlp-endpoint", col.Addr)
	servers := []*proc{m}
	for i := range 3 {
		servers = append(servers, startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), addr, "--heartbeat-interval", "200ms",
			"--log-level", "debug", "--log-format", "json", "--otlp-endpoint", col.Addr))
	}
	waitReady(t, addr, servers...)
	const accessKey, secretKey = "AKREQUESTID", "request-id-secret"
	creds := filepath.Join(root, "s3.credentials")
	require.NoError(t, os.WriteFile(creds, []byte(accessKey+" "+secretKey+"\n"), 0o600))
	s3Addr := freeAddr(t)
	gw := startProc(t, "s3", "s3", "--meta", addr, "--listen", s3Addr, "--credentials", creds, "--access-log", access,
		"--otlp-endpoint", col.Addr)
	require.Eventually(t, func() bool { code, _, _ := httpGet("http://" + s3Addr + "/"); return code == http.StatusForbidden },
		30*time.Second, 50*time.Millisecond, "the gateway serving")

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(accessKey, secretKey, "")))
	require.NoError(t, err)
	cl := awss3.NewFromConfig(cfg, func(o *awss3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String("http://"+s3Addr), true })
	_, err = cl.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("followed")})
	require.NoError(t, err)
	put, err := cl.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("followed"), Key: aws.String("obj"),
		Body: bytes.NewReader(bytes.Repeat([]byte("strato"), 50_000))})
	require.NoError(t, err)
	id, ok := awsmiddleware.GetRequestIDMetadata(put.ResultMetadata)
	require.True(t, ok)
	// SIGTERM: every server sends the spans it still holds as it stops.
	require.NoError(t, gw.Stop(30*time.Second))
	for _, p := range servers {
		require.NoError(t, p.Stop(30*time.Second), p.Name)
	}

	var traceID string
	for _, l := range jsonLines(t, access) {
		if l["request_id"] == id {
			require.Equal(t, "PutObject", l["op"])
			require.Equal(t, 200.0, l["status"])
			traceID, _ = l["trace_id"].(string)
		}
	}
	require.NotEmpty(t, traceID, "the PUT's access log line, traced")
	var commits int
	for _, l := range jsonLines(t, audit) {
		if l["request_id"] == id && l["method"] == "NamespaceService/CommitKey" {
			require.Equal(t, traceID, l["trace_id"])
			commits++
		}
	}
	require.Equal(t, 1, commits, "the PUT's commit in meta's audit log")
	for _, dn := range servers[1:] {
		var n int
		for _, l := range jsonLines(t, dn.Log) {
			if l["msg"] == "datanode: request" && l["request_id"] == id {
				n++
			}
		}
		require.Positive(t, n, "the PUT in %s's log", dn.Name)
	}

	// The trace: the gateway's root span, meta's, and the three datanodes'.
	services := map[string]bool{}
	var roots int
	for _, s := range col.Spans() {
		if s.TraceID != traceID {
			continue
		}
		services[s.Service+" "+s.Instance] = true
		if s.Parent == "" {
			require.Equal(t, "S3 PutObject", s.Name)
			require.Equal(t, "strato-s3", s.Service)
			roots++
		}
	}
	require.Equal(t, 1, roots)
	want := map[string]bool{"strato-s3 " + s3Addr: true, "strato-meta " + addr: true}
	for k := range services {
		if len(k) > len("strato-datanode ") && k[:len("strato-datanode ")] == "strato-datanode " {
			want[k] = true
		}
	}
	require.Equal(t, want, services)
	require.Len(t, services, 5, "spans of the gateway, meta and three datanodes: %v", services)
}
