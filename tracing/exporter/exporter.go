// Package exporter makes the OpenTelemetry tracer providers of strato's
// servers: Start's, which sends spans over OTLP/gRPC to a collector, and
// NewProvider's over any span processor (a test's in-memory exporter).
// Clients and libraries take a trace.TracerProvider and need none of it.
package exporter

import (
	"context"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// EndpointEnv is the standard environment variable of the OTLP endpoint,
// used when no endpoint is given.
const EndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

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
