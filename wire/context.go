package wire

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/reqid"
)

// VersionContext is the first version whose requests may carry a request
// context (FlagContext, docs/wire.md §2.3).
const VersionContext uint8 = 6

// FlagContext marks a request whose typed header starts with a request
// context (version 6).
const FlagContext Flags = 1 << 2

// traceLen is the size of a request context's trace: trace ID (16), span
// ID (8) and trace flags (1), the fields of a W3C traceparent.
const traceLen = 16 + 8 + 1

// RequestContext is what a request carries besides its message from
// version 6 on (docs/wire.md §2.3): the request ID of the request it is a
// part of (reqid) and the span of its caller, so that a datanode logs the
// first and makes its own span a child of the second.
type RequestContext struct {
	// RequestID is the request's ID (reqid.Valid), "" when none.
	RequestID string
	// Trace is the caller's span, invalid when none.
	Trace trace.SpanContext
}

// Empty reports whether c carries nothing.
func (c RequestContext) Empty() bool { return c.RequestID == "" && !c.Trace.IsValid() }

// ContextOf returns the request context of ctx: its request ID (reqid.From)
// and its span (trace.SpanContextFromContext). It allocates nothing.
func ContextOf(ctx context.Context) RequestContext {
	return RequestContext{RequestID: reqid.From(ctx), Trace: trace.SpanContextFromContext(ctx)}
}

// Into returns ctx carrying c's request ID and, as the remote parent of
// the spans started from it, c's trace.
func (c RequestContext) Into(ctx context.Context) context.Context {
	if c.RequestID != "" {
		ctx = reqid.With(ctx, c.RequestID)
	}
	if c.Trace.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, c.Trace)
	}
	return ctx
}

// appendContext appends c's encoding: u8 length and the request ID, u8
// length (0 or 25) and the trace.
func appendContext(dst []byte, c RequestContext) []byte {
	id := c.RequestID
	if !reqid.Valid(id) {
		id = ""
	}
	dst = append(dst, byte(len(id)))
	dst = append(dst, id...)
	if !c.Trace.IsValid() {
		return append(dst, 0)
	}
	t, s := c.Trace.TraceID(), c.Trace.SpanID()
	dst = append(dst, traceLen)
	dst = append(dst, t[:]...)
	dst = append(dst, s[:]...)
	return append(dst, byte(c.Trace.TraceFlags()))
}

// splitContext decodes the request context that starts typed when h has
// FlagContext, and returns it with the rest of typed (the message's
// header); typed as it is without the flag.
func splitContext(h FrameHeader, typed []byte) (RequestContext, []byte, error) {
	if h.Flags&FlagContext == 0 {
		return RequestContext{}, typed, nil
	}
	d := decoder{b: typed}
	var c RequestContext
	if n := int(d.u8("request context")); n > 0 {
		id := d.take(n, "request ID")
		if d.err == nil && !reqid.Valid(string(id)) {
			d.failf("request ID %q is not printable ASCII of at most %d bytes", id, reqid.MaxLen)
		}
		c.RequestID = string(id)
	}
	switch n := int(d.u8("request context")); n {
	case 0:
	case traceLen:
		p := d.take(n, "trace")
		if d.err != nil {
			break
		}
		var cfg trace.SpanContextConfig
		copy(cfg.TraceID[:], p[:16])
		copy(cfg.SpanID[:], p[16:24])
		cfg.TraceFlags, cfg.Remote = trace.TraceFlags(p[24]), true
		if c.Trace = trace.NewSpanContext(cfg); !c.Trace.IsValid() {
			d.failf("trace with a zero trace or span ID")
		}
	default:
		d.failf("trace of %d bytes, want 0 or %d", n, traceLen)
	}
	if d.err == nil && c.Empty() {
		d.failf("CONTEXT flag with an empty request context")
	}
	if d.err != nil {
		return RequestContext{}, nil, d.err
	}
	return c, d.b, nil
}
