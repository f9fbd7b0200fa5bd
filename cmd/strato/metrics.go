package main

import (
	"crypto/tls"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/telemetry"
	"github.com/strato-io/strato/web"
)

// serveMetrics serves reg at http://addr/metrics, with /healthz, /readyz
// (always ready) and, with pprof, Go's profiles at /debug/pprof/ to
// loopback callers (`go tool pprof
// http://addr/debug/pprof/profile?seconds=10`), until the returned function
// is called. An empty addr serves nothing.
func serveMetrics(addr string, reg *telemetry.Registry, pprof bool, log *slog.Logger) (stop func(), err error) {
	stop, _, err = serveHTTP(addr, telemetry.Endpoint{Registry: reg, Pprof: pprof, Logger: log})
	return stop, err
}

// serveHTTP serves a server's HTTP endpoint (telemetry.Handler) on addr
// until the returned function is called, and returns the address it got
// (addr with its port when addr ends in ":0"). An empty addr serves
// nothing.
func serveHTTP(addr string, e telemetry.Endpoint) (stop func(), bound string, err error) {
	if addr == "" {
		return func() {}, "", nil
	}
	s, err := telemetry.ServeTLS(addr, telemetry.Handler(e), e.TLS, e.Logger)
	if err != nil {
		return nil, "", err
	}
	e.Logger.Info("http", "metrics", httpScheme(e.TLS)+s.Addr()+"/metrics", "console", e.Console != nil, "pprof", e.Pprof)
	return func() { _ = s.Close() }, s.Addr(), nil
}

// metaTelemetry adds to o what a meta replica is watched with: per-RPC
// metrics and Raft histograms registered with reg, and the audit log when
// auditPath is set (closed by the returned function).
func metaTelemetry(o *meta.Options, reg *telemetry.Registry, auditPath string) (gm *telemetry.GRPCMetrics, closeAudit func(), err error) {
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
	o.UnaryInterceptors = append(o.UnaryInterceptors, unary...)
	o.GRPCServerOptions = append(o.GRPCServerOptions, grpc.ChainStreamInterceptor(gm.Stream))
	o.Raft.Observers = telemetry.RaftObservers(reg)
	return gm, closeAudit, nil
}

// serveMeta serves a meta replica's HTTP endpoint on addr: its metrics,
// health, readiness and the web console (which calls the replica at
// grpcAddr), and returns the address it got. With TLS (serverTLS, meta's
// own certificate) the endpoint is HTTPS and the console reaches meta over
// TLS with clientTLS.
//
// With login (a meta that authenticates clients), visitors of the console
// sign in with their own token; token is then what the console's live
// charts sample meta with (an administrator's; none: no charts).
func serveMeta(addr string, reg *telemetry.Registry, srv *meta.Server, grpcAddr string, serverTLS, clientTLS *tls.Config, login bool, token string, pprof bool, log *slog.Logger) (stop func(), bound string, err error) {
	telemetry.RegisterMeta(reg, srv)
	if addr == "" {
		return func() {}, "", nil
	}
	console, err := web.New(web.Options{Meta: grpcAddr, TLS: clientTLS, Login: login, Token: token, Queues: metaQueues(srv), Logger: log.With("component", "console")})
	if err != nil {
		return nil, "", err
	}
	stopHTTP, bound, err := serveHTTP(addr, telemetry.Endpoint{Registry: reg, Ready: telemetry.MetaReady(srv), Console: console, TLS: serverTLS, Pprof: pprof, Logger: log})
	if err != nil {
		_ = console.Close()
		return nil, "", err
	}
	return func() { stopHTTP(); _ = console.Close() }, bound, nil
}

// httpScheme is the URL scheme of an endpoint served with cfg.
func httpScheme(cfg *tls.Config) string {
	if cfg != nil {
		return "https://"
	}
	return "http://"
}

// metaQueues reports a meta leader's work queues for the console's
// operations page (nil on a follower).
func metaQueues(srv *meta.Server) func() []web.Queue {
	return func() []web.Queue {
		m := srv.Metrics()
		if !m.Leader {
			return nil
		}
		d := srv.BlockDeletionStats()
		return []web.Queue{
			{Name: "under-replicated containers", Value: int64(m.UnderReplicated), Help: "closed containers short of good copies, at the last replication pass"},
			{Name: "missing containers", Value: int64(m.Missing), Help: "closed containers with no good copy anywhere"},
			{Name: "mis-replicated containers", Value: int64(m.MisReplicated), Help: "closed containers not spread over the racks as the rack rules want"},
			{Name: "container copies in flight", Value: int64(m.ReplicationsInFlight), Help: "copies commanded and not yet reported done"},
			{Name: "container copies scheduled", Value: int64(m.ReplicationsScheduled), Help: "since this replica became leader"},
			{Name: "extra replicas deleted", Value: int64(m.ReplicaDeletes), Help: "since this replica became leader"},
			{Name: "block deletions in flight", Value: int64(d.InFlight), Help: "deleted-blocks entries sent and not yet acknowledged by every holder"},
			{Name: "block deletions purged", Value: int64(d.Purged), Help: "entries done on every holder, since this replica became leader"},
		}
	}
}
