// Package tracing is strato's OpenTelemetry tracing: the OTLP exporter a
// server sends its spans to (Start), and the instrumentation of its gRPC
// servers and clients and of the S3 gateway's HTTP handler, which carry a
// trace between processes in W3C trace context (traceparent). The data
// protocol carries it in a request's context (wire.RequestContext).
//
// Tracing is off unless configured: every component takes a
// trace.TracerProvider, and nil means no span, no propagation and no
// instrumentation at all on its paths. docs/observability.md, "Traces",
// shows the spans of one S3 PUT.
package tracing

import (
	"context"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
)

// EndpointEnv is the standard environment variable of the OTLP endpoint,
// used when no endpoint is given.
const EndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

// propagator is W3C trace context, whatever the process's global one.
var propagator = propagation.TraceContext{}

// Start returns the tracer provider of a server that exports its spans
// over OTLP/gRPC to endpoint ("host:port", plaintext, or a URL:
// "http://host:port", "https://host:port"), or to $OTEL_EXPORTER_OTLP_ENDPOINT
// when endpoint is "". Its spans name service (strato-meta, ...) and
// instance. It returns nil, tracing off, when neither is set. The caller
// calls Shutdown on the provider when it stops, which sends the spans
// still buffered.
func Start(ctx context.Context, endpoint, service, instance string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracegrpc.Option
	switch {
	case endpoint == "" && os.Getenv(EndpointEnv) == "":
		return nil, nil
	case endpoint == "":
		// otlptracegrpc reads the OTEL_EXPORTER_OTLP_* variables.
	case strings.Contains(endpoint, "://"):
		opts = append(opts, otlptracegrpc.WithEndpointURL(endpoint))
	default:
		opts = append(opts, otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	return NewProvider(sdktrace.NewBatchSpanProcessor(exp), service, instance), nil
}

// NewProvider returns a tracer provider that samples every span (or the
// children of sampled remote parents) and hands them to sp: Start's
// exporter, or a test's in-memory one.
func NewProvider(sp sdktrace.SpanProcessor, service, instance string) *sdktrace.TracerProvider {
	attrs := []attribute.KeyValue{attribute.String("service.name", service)}
	if instance != "" {
		attrs = append(attrs, attribute.String("service.instance.id", instance))
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
}

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
