// Package tracing is the OpenTelemetry instrumentation of strato's gRPC
// servers and clients and of the S3 gateway's HTTP handler, which carry a
// trace between processes in W3C trace context (traceparent). The data
// protocol carries it in a request's context (wire.RequestContext).
// Package tracing/exporter makes the tracer providers, and their OTLP
// exporter, that servers give their components.
//
// Tracing is off unless configured: every component takes a
// trace.TracerProvider, and nil means no span, no propagation and no
// instrumentation at all on its paths. docs/observability.md, "Traces",
// shows the spans of one S3 PUT.
package tracing

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// propagator is W3C trace context, whatever the process's global one.
var propagator = propagation.TraceContext{}

// GRPCServer is the server option that makes a span of each call of
// NamespaceService and AdminService (the Raft transport and heartbeats
// are left out: they serve no one request), the child of the caller's.
func GRPCServer(tp trace.TracerProvider) grpc.ServerOption {
	return grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()), otelgrpc.WithFilter(requestRPC)))
}

// GRPCClient is the dial option that makes a span of each call and sends
// the trace to the server.
func GRPCClient(tp trace.TracerProvider) grpc.DialOption {
	return grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()), otelgrpc.WithFilter(requestRPC)))
}

// requestRPC reports whether a call serves a client's request.
func requestRPC(info *stats.RPCTagInfo) bool {
	return strings.Contains(info.FullMethodName, ".NamespaceService/") || strings.Contains(info.FullMethodName, ".AdminService/")
}

// HTTPHandler wraps h with a span per request, named operation until the
// handler renames it, the child of the caller's when the request carries
// a traceparent.
func HTTPHandler(h http.Handler, operation string, tp trace.TracerProvider) http.Handler {
	return otelhttp.NewHandler(h, operation, otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))
}
