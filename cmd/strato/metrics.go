package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/meta"
)

// serveMetrics serves reg at http://addr/metrics, and Go's profiles at
// /debug/pprof/ (CPU, heap, goroutines: `go tool pprof
// http://addr/debug/pprof/profile?seconds=10`), until the returned function
// is called. An empty addr serves nothing.
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("metrics server stopped", "err", err)
		}
	}()
	log.Info("metrics", "url", "http://"+lis.Addr().String()+"/metrics")
	return func() { _ = srv.Close() }, nil
}

// gauge and counter register a metric read from a snapshot function.
func gauge(reg *prometheus.Registry, name, help string, f func() float64) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

func counter(reg *prometheus.Registry, name, help string, f func() float64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// metaMetrics exports a meta server's snapshot.
func metaMetrics(reg *prometheus.Registry, srv *meta.Server) {
	snap := func(f func(meta.Metrics) float64) func() float64 {
		return func() float64 { return f(srv.Metrics()) }
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	gauge(reg, "strato_meta_leader", "1 if this replica leads its Raft group", snap(func(m meta.Metrics) float64 { return b(m.Leader) }))
	gauge(reg, "strato_meta_datanodes", "datanodes registered", snap(func(m meta.Metrics) float64 { return float64(m.Datanodes) }))
	gauge(reg, "strato_meta_datanodes_healthy", "datanodes HEALTHY", snap(func(m meta.Metrics) float64 { return float64(m.HealthyDatanodes) }))
	gauge(reg, "strato_meta_closed_containers", "closed containers examined by the last replication pass", snap(func(m meta.Metrics) float64 { return float64(m.Containers) }))
	gauge(reg, "strato_meta_under_replicated_containers", "closed containers with fewer good copies than their replication", snap(func(m meta.Metrics) float64 { return float64(m.UnderReplicated) }))
	gauge(reg, "strato_meta_missing_containers", "closed containers with no good copy anywhere", snap(func(m meta.Metrics) float64 { return float64(m.Missing) }))
	gauge(reg, "strato_meta_replications_in_flight", "container copies commanded and not yet reported", snap(func(m meta.Metrics) float64 { return float64(m.ReplicationsInFlight) }))
	counter(reg, "strato_meta_replications_scheduled_total", "container copies commanded", snap(func(m meta.Metrics) float64 { return float64(m.ReplicationsScheduled) }))
	counter(reg, "strato_meta_replica_deletes_total", "extra or unhealthy replicas deleted", snap(func(m meta.Metrics) float64 { return float64(m.ReplicaDeletes) }))
	gauge(reg, "strato_meta_raft_term", "Raft term", snap(func(m meta.Metrics) float64 { return float64(m.Consensus.Term) }))
	gauge(reg, "strato_meta_raft_applied_index", "Raft applied index", snap(func(m meta.Metrics) float64 { return float64(m.Consensus.Applied) }))
}

// datanodeMetrics exports a datanode's replication counters.
func datanodeMetrics(reg *prometheus.Registry, dn *datanode.Datanode) {
	snap := func(f func(replication.MetricsSnapshot) int64) func() float64 {
		return func() float64 { return float64(f(dn.ReplicationMetrics())) }
	}
	counter(reg, "strato_datanode_replication_bytes_out_total", "block bytes sent by container pushes", snap(func(m replication.MetricsSnapshot) int64 { return m.BytesOut }))
	counter(reg, "strato_datanode_replication_bytes_in_total", "block bytes received by container imports", snap(func(m replication.MetricsSnapshot) int64 { return m.BytesIn }))
	gauge(reg, "strato_datanode_replication_pushes_in_flight", "container pushes running or waiting for a stream", snap(func(m replication.MetricsSnapshot) int64 { return m.PushesInFlight }))
	counter(reg, "strato_datanode_replication_pushes_completed_total", "container pushes completed", snap(func(m replication.MetricsSnapshot) int64 { return m.PushesCompleted }))
	counter(reg, "strato_datanode_replication_pushes_failed_total", "container pushes failed", snap(func(m replication.MetricsSnapshot) int64 { return m.PushesFailed }))
	gauge(reg, "strato_datanode_replication_imports_in_flight", "container imports running", snap(func(m replication.MetricsSnapshot) int64 { return m.ImportsInFlight }))
	counter(reg, "strato_datanode_replication_imports_completed_total", "container imports completed", snap(func(m replication.MetricsSnapshot) int64 { return m.ImportsCompleted }))
	counter(reg, "strato_datanode_replication_imports_failed_total", "container imports failed or aborted", snap(func(m replication.MetricsSnapshot) int64 { return m.ImportsFailed }))
}
