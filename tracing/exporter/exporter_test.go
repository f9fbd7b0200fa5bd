package exporter

import (
	"context"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// collector is an OTLP/gRPC trace collector that keeps the span names it
// receives.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.Resource.Attributes {
			if a.Key == "service.name" {
				c.names = append(c.names, "service "+a.Value.GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.names = append(c.names, s.Name)
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// TestStart: no endpoint, no tracing; with one (the flag's, or the
// environment's), the spans reach the collector there, by Shutdown.
func TestStart(t *testing.T) {
	t.Setenv(EndpointEnv, "")
	tp, err := Start(context.Background(), "", "strato-test", "")
	require.NoError(t, err)
	require.Nil(t, tp, "tracing off without an endpoint")

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	c := &collector{}
	collectortrace.RegisterTraceServiceServer(srv, c)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	for _, tc := range []struct{ flag, env, span string }{
		{lis.Addr().String(), "", "by the flag"},
		{"", "http://" + lis.Addr().String(), "by the environment"},
	} {
		t.Setenv(EndpointEnv, tc.env)
		tp, err := Start(context.Background(), tc.flag, "strato-test", "127.0.0.1:1")
		require.NoError(t, err)
		require.NotNil(t, tp)
		_, span := tp.Tracer("test").Start(context.Background(), tc.span)
		span.End()
		require.NoError(t, tp.Shutdown(context.Background()))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	require.Equal(t, []string{"service strato-test", "by the flag", "service strato-test", "by the environment"}, c.names)
}
