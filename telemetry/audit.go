package telemetry

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/reqid"
)

// Audit logs every mutation meta is asked for, one JSON line each, after
// it is answered:
//
//	{"time":"...","level":"INFO","msg":"audit","method":"NamespaceService/CreateBucket",
//	 "peer":"10.0.0.7:51234","client":"9f2c...","request":"12","request_id":"4A2F9C1E0B7D3856",
//	 "trace_id":"0af7...","user":"alice","token":"5be1...","code":"OK","ms":1.8,
//	 "args":{"volume":"vol1","name":"b1"}}
//
// who: the caller's address, the client ID and request number the Go
// client sends (gRPC metadata strato-client and strato-request), the
// request ID of the request the call serves (strato-request-id: an S3
// request's x-amz-request-id, package reqid) and the trace it is part of
// when it has either, and, when
// meta authenticates clients (--auth token), the user and the ID of the
// token the call presented (absent from a call refused for its token);
// what: the method and the request's scalar
// fields (names, paths, IDs, flags; strings cut at 256 bytes; no block
// lists, no data, no secrets); when: the time of the answer and how long it took;
// result: the gRPC status code, and its message when not OK.
//
// A mutation is a call of NamespaceService or AdminService that changes
// something: every method but Get* (GetDelegationToken is audited), List*, Lookup*, MetaStatus,
// ContainerReplicas and WhoAmI. DatanodeService (heartbeats) and the Raft transport
// are not audited.
type Audit struct {
	log *slog.Logger
}

// NewAudit returns an audit log that writes to w.
func NewAudit(w io.Writer) *Audit {
	return &Audit{log: slog.New(slog.NewJSONHandler(w, nil))}
}

// IsMutation reports whether the gRPC method (full name) is audited.
func IsMutation(fullMethod string) bool {
	svc, m := SplitMethod(fullMethod)
	if svc != "NamespaceService" && svc != "AdminService" {
		return false
	}
	if m == "GetDelegationToken" {
		return true // issues a token: a mutation despite its name (Hadoop's)
	}
	for _, p := range []string{"Get", "List", "Lookup"} {
		if strings.HasPrefix(m, p) {
			return false
		}
	}
	return m != "MetaStatus" && m != "ContainerReplicas" && m != "WhoAmI"
}

// Unary is the unary server interceptor that writes the log.
func (a *Audit) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !IsMutation(info.FullMethod) {
		return handler(ctx, req)
	}
	start := time.Now()
	resp, err := handler(ctx, req)
	st := status.Convert(err)
	svc, method := SplitMethod(info.FullMethod)
	attrs := []slog.Attr{slog.String("method", svc+"/"+method)}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		attrs = append(attrs, slog.String("peer", p.Addr.String()))
	}
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("strato-client"); len(v) > 0 {
			attrs = append(attrs, slog.String("client", v[0]))
		}
		if v := md.Get("strato-request"); len(v) > 0 {
			attrs = append(attrs, slog.String("request", v[0]))
		}
	}
	if id := reqid.Incoming(ctx); id != "" {
		attrs = append(attrs, slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs = append(attrs, slog.String("trace_id", sc.TraceID().String()))
	}
	if id := meta.IdentityFromContext(ctx); id != nil {
		attrs = append(attrs, slog.String("user", id.User), slog.String("token", id.TokenID))
	}
	attrs = append(attrs, slog.String("code", st.Code().String()))
	if err != nil {
		attrs = append(attrs, slog.String("error", st.Message()))
	}
	attrs = append(attrs, slog.Float64("ms", float64(time.Since(start).Microseconds())/1000))
	if m, ok := req.(proto.Message); ok {
		attrs = append(attrs, slog.Any("args", args(m.ProtoReflect())))
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
	return resp, err
}

// redacted: the field holds a secret (debug_redact, e.g. an S3 key's).
func redacted(fd protoreflect.FieldDescriptor) bool {
	o, ok := fd.Options().(*descriptorpb.FieldOptions)
	return ok && o.GetDebugRedact()
}

// args are a request's set scalar fields, by their protobuf names, but
// never a field marked debug_redact.
func args(m protoreflect.Message) map[string]any {
	out := map[string]any{}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsList() || fd.IsMap() || redacted(fd) {
			return true
		}
		name := string(fd.Name())
		switch fd.Kind() {
		case protoreflect.StringKind:
			s := v.String()
			if len(s) > 256 {
				s = s[:256] + "..."
			}
			out[name] = s
		case protoreflect.BoolKind:
			out[name] = v.Bool()
		case protoreflect.EnumKind:
			if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
				out[name] = string(ev.Name())
			} else {
				out[name] = int32(v.Enum())
			}
		case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind,
			protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
			out[name] = v.Int()
		case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
			out[name] = v.Uint()
		}
		return true
	})
	return out
}
