// Package reqid carries a request ID, the one a client names a request by
// (the S3 gateway's x-amz-request-id), from the process that received the
// request to every process that serves a part of it: in a context within
// a process, in gRPC metadata (strato-request-id) to meta, and in the data
// protocol's request context (wire version 6, docs/wire.md §4.1) to the
// datanodes, which log it. docs/observability.md, "Request IDs", tells how
// to follow one request through the logs.
package reqid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// MetadataKey is the gRPC metadata key that carries a request ID.
const MetadataKey = "strato-request-id"

// MaxLen bounds a request ID, in bytes.
const MaxLen = 64

type ctxKey struct{}

// New returns a fresh request ID: 16 upper-case hexadecimal digits, the
// form of S3's x-amz-request-id.
func New() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// Valid reports whether id may be carried: 1 to MaxLen bytes of printable
// ASCII without spaces.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// With returns ctx carrying request ID id (ctx itself when id is not
// Valid).
func With(ctx context.Context, id string) context.Context {
	if !Valid(id) {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the request ID ctx carries, "" when none.
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// outgoing adds ctx's request ID to the outgoing gRPC metadata.
func outgoing(ctx context.Context) context.Context {
	if id := From(ctx); id != "" {
		return metadata.AppendToOutgoingContext(ctx, MetadataKey, id)
	}
	return ctx
}

// UnaryClient is the unary client interceptor that sends the context's
// request ID as gRPC metadata.
func UnaryClient(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(outgoing(ctx), method, req, reply, cc, opts...)
}

// StreamClient is the stream client interceptor that sends the context's
// request ID as gRPC metadata.
func StreamClient(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(outgoing(ctx), desc, cc, method, opts...)
}

// DialOptions are the client interceptors, for grpc.NewClient.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(UnaryClient), grpc.WithChainStreamInterceptor(StreamClient)}
}

// Incoming returns the request ID of a gRPC call's incoming metadata, ""
// when it has none or an invalid one.
func Incoming(ctx context.Context) string {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ""
	}
	v := md.Get(MetadataKey)
	if len(v) == 0 || !Valid(v[0]) {
		return ""
	}
	return v[0]
}

// UnaryServer is the unary server interceptor that puts the call's
// request ID (Incoming) in its context, for the handler's logs and the
// calls it makes.
func UnaryServer(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if id := Incoming(ctx); id != "" {
		ctx = context.WithValue(ctx, ctxKey{}, id)
	}
	return handler(ctx, req)
}

// StreamServer is the stream server interceptor that puts the call's
// request ID in its context.
func StreamServer(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	id := Incoming(ss.Context())
	if id == "" {
		return handler(srv, ss)
	}
	return handler(srv, &stream{ServerStream: ss, ctx: context.WithValue(ss.Context(), ctxKey{}, id)})
}

type stream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *stream) Context() context.Context { return s.ctx }

// ServerOptions are the server interceptors, for grpc.NewServer.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(UnaryServer), grpc.ChainStreamInterceptor(StreamServer)}
}
