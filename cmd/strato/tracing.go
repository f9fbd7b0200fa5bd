package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/tracing/exporter"
)

// addTracingFlag adds --otlp-endpoint, which every server role has.
func addTracingFlag(f *pflag.FlagSet, endpoint *string) {
	f.StringVar(endpoint, "otlp-endpoint", "", "send OpenTelemetry traces over OTLP/gRPC to this collector, host:port (plaintext) or http(s)://host:port "+
		"(default $"+exporter.EndpointEnv+"; none: tracing off)")
}

// startTracing starts the tracing of a server role (service strato-ROLE,
// instance its address) when --otlp-endpoint or $OTEL_EXPORTER_OTLP_ENDPOINT
// names a collector, and returns its provider (nil: tracing off). The
// role's RunE stops it when it returns (attach), sending the spans still
// buffered.
func (rc *roleConfig) startTracing(ctx context.Context, instance string, log *slog.Logger) (trace.TracerProvider, error) {
	tp, err := exporter.Start(ctx, rc.otlp, "strato-"+rc.role, instance)
	if err != nil || tp == nil {
		return nil, err
	}
	log.Info("tracing", "otlp", rc.otlp)
	rc.stopTracing = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("tracing: spans not sent", "err", err)
		}
	}
	return tp, nil
}
