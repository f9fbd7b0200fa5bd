package telemetry

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// LatencyBuckets are the histogram buckets of request latencies, in
// seconds: 100 µs to about 6 s, ×2.5 each (a loopback metadata read is a
// few hundred µs; an fsynced Raft write a few ms; a 4 MiB chunk through a
// three-replica pipeline tens of ms).
var LatencyBuckets = prometheus.ExponentialBuckets(0.0001, 2.5, 13)

// GRPCMetrics counts a gRPC server's calls, as go-grpc-prometheus does,
// under strato's prefix:
//
//	strato_grpc_server_started_total{grpc_service,grpc_method,grpc_type}
//	strato_grpc_server_handled_total{grpc_service,grpc_method,grpc_type,grpc_code}
//	strato_grpc_server_handling_seconds{grpc_service,grpc_method,grpc_type} (histogram)
//
// grpc_service is the short name (NamespaceService, AdminService, ...);
// grpc_type is unary, client_stream, server_stream or bidi_stream. Started
// minus handled is the number of calls in flight.
type GRPCMetrics struct {
	started  *prometheus.CounterVec
	handled  *prometheus.CounterVec
	handling *prometheus.HistogramVec
}

// NewGRPCMetrics makes the metrics and registers them with reg.
func NewGRPCMetrics(reg prometheus.Registerer) *GRPCMetrics {
	labels := []string{"grpc_service", "grpc_method", "grpc_type"}
	m := &GRPCMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strato_grpc_server_started_total",
			Help: "gRPC calls started on the server."}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "strato_grpc_server_handled_total",
			Help: "gRPC calls completed on the server, by status code."}, append(labels, "grpc_code")),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "strato_grpc_server_handling_seconds",
			Help: "Time from a gRPC call's start to its status, on the server.", Buckets: LatencyBuckets}, labels),
	}
	reg.MustRegister(m.started, m.handled, m.handling)
	return m
}

// ServerOptions are the interceptors to give grpc.NewServer. Several sets
// of interceptors (metrics, audit) combine with grpc.ChainUnaryInterceptor;
// use Unary and Stream for that.
func (m *GRPCMetrics) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(m.Unary), grpc.ChainStreamInterceptor(m.Stream)}
}

// Unary is the unary server interceptor.
func (m *GRPCMetrics) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	svc, method := SplitMethod(info.FullMethod)
	m.started.WithLabelValues(svc, method, "unary").Inc()
	start := time.Now()
	resp, err := handler(ctx, req)
	m.done(svc, method, "unary", start, err)
	return resp, err
}

// Stream is the stream server interceptor.
func (m *GRPCMetrics) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	svc, method := SplitMethod(info.FullMethod)
	typ := streamType(info.IsClientStream, info.IsServerStream)
	m.started.WithLabelValues(svc, method, typ).Inc()
	start := time.Now()
	err := handler(srv, ss)
	m.done(svc, method, typ, start, err)
	return err
}

func (m *GRPCMetrics) done(svc, method, typ string, start time.Time, err error) {
	m.handled.WithLabelValues(svc, method, typ, status.Code(err).String()).Inc()
	m.handling.WithLabelValues(svc, method, typ).Observe(time.Since(start).Seconds())
}

// Initialize makes every method of the services registered on srv appear
// with zero counts, so that a rate or an alert on a method that was never
// called reads 0 rather than nothing (Prometheus' advice). Call it after
// registering the services.
func (m *GRPCMetrics) Initialize(srv *grpc.Server) {
	for name, info := range srv.GetServiceInfo() {
		svc := shortService(name)
		for _, mi := range info.Methods {
			typ := streamType(mi.IsClientStream, mi.IsServerStream)
			m.started.WithLabelValues(svc, mi.Name, typ)
			m.handled.WithLabelValues(svc, mi.Name, typ, "OK")
			m.handling.WithLabelValues(svc, mi.Name, typ)
		}
	}
}

func streamType(client, server bool) string {
	switch {
	case client && server:
		return "bidi_stream"
	case client:
		return "client_stream"
	case server:
		return "server_stream"
	}
	return "unary"
}

// SplitMethod splits a gRPC full method name, "/strato.v1.NamespaceService/ListKeys",
// into the service's short name and the method: ("NamespaceService", "ListKeys").
func SplitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	service, method, ok := strings.Cut(full, "/")
	if !ok {
		return "unknown", full
	}
	return shortService(service), method
}

func shortService(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}
