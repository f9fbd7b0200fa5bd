package s3

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// AccessEntry is one line of the access log (Options.AccessLog): one JSON
// object a request, written when its response is, in the order of
// docs/s3.md, "Access log".
type AccessEntry struct {
	// Time is when the request arrived, UTC, RFC 3339 with nanoseconds.
	Time time.Time `json:"time"`
	// RequestID is the x-amz-request-id the gateway answered with; meta's
	// audit log and the datanodes' request log name the request by it.
	RequestID string `json:"request_id"`
	// Remote is the client's address.
	Remote string `json:"remote"`
	// AccessKey is the access key that signed the request ("" unsigned).
	AccessKey string `json:"access_key"`
	// User is the strato user of the access key ("" when unknown).
	User string `json:"user"`
	// Method is the HTTP method.
	Method string `json:"method"`
	// Op is the S3 operation (PutObject, ...; "Auth" for a request refused
	// before it named one, "" for one that named none).
	Op string `json:"op"`
	// Bucket and Key are what the request addressed.
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	// Status is the HTTP status answered; Error the S3 error code of an
	// error response.
	Status int    `json:"status"`
	Error  string `json:"error,omitempty"`
	// BytesIn and BytesOut are the bytes of the request and response
	// bodies.
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
	// Ms is the latency, from the request's arrival to its response, in
	// milliseconds.
	Ms float64 `json:"ms"`
	// TraceID is the request's trace, when traced.
	TraceID string `json:"trace_id,omitempty"`
}

// accessLog writes access log lines whole, one at a time.
type accessLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *accessLog) write(e *AccessEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	_, _ = l.w.Write(b)
	l.mu.Unlock()
}

// finish records the request done at end: its access log line, and its
// span's name and attributes when it is traced.
func (g *Gateway) finish(rq *request, start, end time.Time, errCode string) {
	span := trace.SpanFromContext(rq.r.Context())
	traced := span.IsRecording()
	if traced {
		span.SetName("S3 " + rq.op)
		span.SetAttributes(attribute.String("s3.request_id", rq.id), attribute.String("s3.operation", rq.op),
			attribute.String("s3.bucket", rq.bucket), attribute.String("s3.key", rq.key))
		if errCode != "" {
			span.SetStatus(codes.Error, errCode)
		}
	}
	if g.access == nil {
		return
	}
	e := &AccessEntry{Time: start.UTC(), RequestID: rq.id, Remote: rq.r.RemoteAddr, User: rq.user, Method: rq.r.Method,
		Op: rq.op, Bucket: rq.bucket, Key: rq.key, Status: rq.status, Error: errCode, BytesOut: rq.out,
		Ms: float64(end.Sub(start).Microseconds()) / 1000}
	if rq.auth != nil {
		e.AccessKey = rq.auth.accessKey
	}
	if rq.body != nil {
		e.BytesIn = rq.body.n
	}
	if traced {
		e.TraceID = span.SpanContext().TraceID().String()
	}
	g.access.write(e)
}
