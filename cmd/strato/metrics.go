package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/telemetry"
)

// serveMetrics serves reg at http://addr/metrics, with /healthz, /readyz
// (always ready) and Go's profiles at /debug/pprof/ (`go tool pprof
// http://addr/debug/pprof/profile?seconds=10`), until the returned function
// is called. An empty addr serves nothing.
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	return serveHTTP(addr, telemetry.Endpoint{Registry: reg, Logger: log})
}

// serveHTTP serves a server's HTTP endpoint (telemetry.Handler) on addr
// until the returned function is called. An empty addr serves nothing.
func serveHTTP(addr string, e telemetry.Endpoint) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	s, err := telemetry.Serve(addr, telemetry.Handler(e), e.Logger)
	if err != nil {
		return nil, err
	}
	e.Logger.Info("http", "metrics", "http://"+s.Addr()+"/metrics", "console", e.Console != nil)
	return func() { _ = s.Close() }, nil
}

// metaTelemetry adds to o what a meta replica is watched with: per-RPC
// metrics and Raft histograms registered with reg, and the audit log when
// auditPath is set (closed by the returned function).
func metaTelemetry(o *meta.Options, reg *prometheus.Registry, auditPath string) (gm *telemetry.GRPCMetrics, closeAudit func(), err error) {
	gm = telemetry.NewGRPCMetrics(reg)
	unary := []grpc.UnaryServerInterceptor{gm.Unary}
	closeAudit = func() {}
	if auditPath != "" {
		w, err := telemetry.OpenAuditLog(auditPath)
		if err != nil {
			return nil, nil, err
		}
		unary = append(unary, telemetry.NewAudit(w).Unary)
		closeAudit = func() { _ = w.Close() }
	}
	o.GRPCServerOptions = append(o.GRPCServerOptions, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(gm.Stream))
	o.Raft.Observers = telemetry.RaftObservers(reg)
	return gm, closeAudit, nil
}

// serveMeta serves a meta replica's HTTP endpoint on addr: its metrics,
// health, readiness and the web console (which calls the replica at
// grpcAddr).
func serveMeta(addr string, reg *prometheus.Registry, srv *meta.Server, grpcAddr string, log *slog.Logger) (stop func(), err error) {
	telemetry.RegisterMeta(reg, srv)
	return serveHTTP(addr, telemetry.Endpoint{Registry: reg, Ready: telemetry.MetaReady(srv), Logger: log})
}
