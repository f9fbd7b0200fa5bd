package s3_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
	"github.com/strato-io/strato/telemetry"
	"github.com/strato-io/strato/tracing/exporter"
)

// jsonLines are the JSON objects of text, one a line; a line that is not
// JSON fails the test.
func jsonLines(t *testing.T, text string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "a line that is not JSON: %s", sc.Text())
		out = append(out, m)
	}
	return out
}

// TestObservability runs a cluster of meta, three datanodes and the
// gateway, every one traced into one in-memory exporter, with the access
// log, meta's audit log and the nodes' debug logs kept: one S3 PUT has one
// access log line and one trace, whose spans come from the gateway, the
// client, meta and all three datanodes; its request ID is in the audit log
// and in each datanode's request log.
func TestObservability(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := exporter.NewProvider(sdktrace.NewSimpleSpanProcessor(exp), "strato", "")
	defer func() { _ = tp.Shutdown(ctx) }()
	var access, audit, logs syncBuffer
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 8 << 20, ContainerSize: 64 << 20,
		TracerProvider: tp,
		Logger:         slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ConfigureMeta: func(_ int, o *meta.Options) {
			o.UnaryInterceptors = append(o.UnaryInterceptors, telemetry.NewAudit(&audit).Unary)
		},
		S3: &minicluster.S3Options{Credentials: s3.StaticCredentials{testKey: testSecret},
			Gateway: s3.Options{AccessLog: &access, CleanupInterval: -1}}})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.WaitReady(ctx))
	cl := sdkAt(t, c.S3Endpoint())

	_, err = cl.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("traced")})
	require.NoError(t, err)
	data := randomBytes(1<<20, 7)
	put, err := cl.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("traced"), Key: aws.String("dir/obj"), Body: bytes.NewReader(data)})
	require.NoError(t, err)
	putID, ok := awsmiddleware.GetRequestIDMetadata(put.ResultMetadata)
	require.True(t, ok)
	get, err := cl.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String("traced"), Key: aws.String("dir/obj")})
	require.NoError(t, err)
	var got bytes.Buffer
	_, err = got.ReadFrom(get.Body)
	require.NoError(t, err)
	_ = get.Body.Close()
	require.Equal(t, data, got.Bytes())
	_, err = cl.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String("traced"), Key: aws.String("missing")})
	require.Error(t, err)

	// The access log: one line a request, in order, the PUT's under the
	// request ID the client was answered with.
	lines := jsonLines(t, access.String())
	require.Len(t, lines, 4, "one access log line a request")
	ops := []string{"CreateBucket", "PutObject", "GetObject", "HeadObject"}
	status := []float64{200, 200, 200, 404}
	for i, l := range lines {
		require.Equal(t, ops[i], l["op"], "line %d", i)
		require.Equal(t, status[i], l["status"], "line %d", i)
		require.Equal(t, testKey, l["access_key"])
		require.Equal(t, "traced", l["bucket"])
		require.NotEmpty(t, l["request_id"])
		require.NotEmpty(t, l["trace_id"])
		_, err := time.Parse(time.RFC3339Nano, l["time"].(string))
		require.NoError(t, err)
	}
	t.Logf("the access log:\n%s", access.String())
	require.Equal(t, putID, lines[1]["request_id"])
	require.Equal(t, "PUT", lines[1]["method"])
	require.Equal(t, "dir/obj", lines[1]["key"])
	require.Equal(t, float64(len(data)), lines[1]["bytes_in"])
	require.Equal(t, float64(len(data)), lines[2]["bytes_out"])
	require.Equal(t, "NoSuchKey", lines[3]["error"])

	// A datanode ends its span after it has sent the response, so the
	// spans may reach the exporter a little after the requests returned:
	// wait for the GET's datanode read, the last of them.
	getTrace := lines[2]["trace_id"].(string)
	var reads, dnReads int
	require.Eventually(t, func() bool {
		require.NoError(t, tp.ForceFlush(ctx))
		reads, dnReads = 0, 0
		for _, s := range exp.GetSpans() {
			if s.SpanContext.TraceID().String() == getTrace {
				if s.Name == "client.read" {
					reads++
				}
				if strings.HasPrefix(s.Name, "datanode READ") {
					dnReads++
				}
			}
		}
		return dnReads > 0
	}, 5*time.Second, 10*time.Millisecond, "a datanode's read")

	// The PUT's trace: the gateway's span, the client's write, meta's
	// calls and the datanodes' requests, all three datanodes.
	traceID := lines[1]["trace_id"].(string)
	spans := map[trace.SpanID]tracetest.SpanStub{}
	var root tracetest.SpanStub
	datanodes := map[string]bool{}
	var metaSpans, writes int
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() != traceID {
			continue
		}
		spans[s.SpanContext.SpanID()] = s
		switch {
		case s.Name == "S3 PutObject":
			root = s
		case s.Name == "client.write":
			writes++
		case strings.HasPrefix(s.Name, "datanode "):
			for _, a := range s.Attributes {
				if a.Key == "strato.datanode" {
					datanodes[a.Value.AsString()] = true
				}
			}
		case s.SpanKind == trace.SpanKindServer && strings.Contains(s.Name, "NamespaceService/"):
			metaSpans++
		}
	}
	require.Equal(t, "S3 PutObject", root.Name, "the gateway's span")
	require.False(t, root.Parent.IsValid(), "the gateway's span is the root")
	require.Equal(t, 1, writes, "the client's write")
	require.NotZero(t, metaSpans, "meta's spans")
	require.Len(t, datanodes, 3, "spans of the three datanodes")
	for _, s := range spans {
		if s.SpanContext.SpanID() != root.SpanContext.SpanID() {
			_, ok := spans[s.Parent.SpanID()]
			require.True(t, ok, "span %s has its parent in the trace", s.Name)
		}
	}
	t.Logf("the trace of one S3 PUT (%d spans):\n%s", len(spans), spanTree(spans, root, 0))

	// The GET's trace: the client's read and a datanode's (a read over TCP,
	// or of the block's files handed over the local socket), waited for above.
	require.Equal(t, 1, reads, "the client's read")

	// The PUT's request ID in meta's audit log and the datanodes' logs.
	var audited []string
	for _, l := range jsonLines(t, audit.String()) {
		if l["request_id"] == putID {
			b, _ := json.Marshal(l)
			t.Logf("audit: %s", b)
			audited = append(audited, l["method"].(string))
			require.Equal(t, traceID, l["trace_id"])
		}
	}
	require.Contains(t, audited, "NamespaceService/CommitKey", "the PUT's commit in the audit log")
	logged := map[string]bool{}
	for _, l := range jsonLines(t, logs.String()) {
		if l["msg"] == "datanode: request" && l["request_id"] == putID {
			b, _ := json.Marshal(l)
			t.Logf("datanode: %s", b)
			logged[l["node"].(string)] = true
		}
	}
	require.Len(t, logged, 3, "the PUT in each datanode's request log: %v", logged)
}

// spanTree draws the spans under s, one a line, indented by depth, with
// their durations and offsets from the root's start.
func spanTree(spans map[trace.SpanID]tracetest.SpanStub, s tracetest.SpanStub, depth int) string {
	return drawSpan(spans, s, s.StartTime, depth)
}

func drawSpan(spans map[trace.SpanID]tracetest.SpanStub, s tracetest.SpanStub, t0 time.Time, depth int) string {
	var b strings.Builder
	name := s.Name
	for _, a := range s.Attributes {
		if a.Key == "strato.datanode" {
			name += " (" + a.Value.AsString() + ")"
		}
	}
	fmt.Fprintf(&b, "%s%-*s +%7.2fms %7.2fms\n", strings.Repeat("  ", depth), 48-2*depth, name,
		float64(s.StartTime.Sub(t0).Microseconds())/1000, float64(s.EndTime.Sub(s.StartTime).Microseconds())/1000)
	var kids []tracetest.SpanStub
	for _, k := range spans {
		if k.Parent.SpanID() == s.SpanContext.SpanID() {
			kids = append(kids, k)
		}
	}
	sort.Slice(kids, func(i, j int) bool { return kids[i].StartTime.Before(kids[j].StartTime) })
	for _, k := range kids {
		b.WriteString(drawSpan(spans, k, t0, depth+1))
	}
	return b.String()
}
