// Package otlptest is an OTLP/gRPC trace collector for tests: it listens on
// loopback, keeps every span it receives with the service that sent it,
// and answers OK. Servers started with --otlp-endpoint set to its address
// send it their spans.
package otlptest

import (
	"context"
	"encoding/hex"
	"net"
	"sync"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// Span is a span received: its name, the service.name and
// service.instance.id of its resource, and its IDs in hex ("" for no
// parent).
type Span struct {
	Name, Service, Instance string
	TraceID, SpanID, Parent string
}

// Collector is a running collector.
type Collector struct {
	collectortrace.UnimplementedTraceServiceServer
	// Addr is its address, 127.0.0.1:PORT.
	Addr string

	srv   *grpc.Server
	mu    sync.Mutex
	spans []Span
}

// Start starts a collector on a free loopback port.
func Start() (*Collector, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &Collector{Addr: lis.Addr().String(), srv: grpc.NewServer()}
	collectortrace.RegisterTraceServiceServer(c.srv, c)
	go func() { _ = c.srv.Serve(lis) }()
	return c, nil
}

// Close stops the collector.
func (c *Collector) Close() { c.srv.Stop() }

// Spans returns the spans received so far, in the order they came.
func (c *Collector) Spans() []Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Span(nil), c.spans...)
}

// Export implements the OTLP trace service.
func (c *Collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		var service, instance string
		for _, a := range rs.GetResource().GetAttributes() {
			switch a.Key {
			case "service.name":
				service = a.Value.GetStringValue()
			case "service.instance.id":
				instance = a.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.spans = append(c.spans, Span{Name: s.Name, Service: service, Instance: instance,
					TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId), Parent: hex.EncodeToString(s.ParentSpanId)})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}
