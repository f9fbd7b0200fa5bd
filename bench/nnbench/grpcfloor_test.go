package nnbench

import (
	"net"
	"runtime"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// BenchmarkGRPCEmptyUnary is the floor under remote `bench meta`: an empty
// unary call (gRPC's health service) over one loopback connection, with 16
// callers as NNThroughputBenchmark's threads, client and server in this
// process. No remote metadata call can run faster on the same machine.
func BenchmarkGRPCEmptyUnary(b *testing.B) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := grpc.NewServer()
	healthpb.RegisterHealthServer(s, health.NewServer())
	go func() { _ = s.Serve(lis) }()
	defer s.Stop()
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer cc.Close()
	c := healthpb.NewHealthClient(cc)
	b.SetParallelism(max(16/runtime.GOMAXPROCS(0), 1)) // 16 callers
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Check(b.Context(), &healthpb.HealthCheckRequest{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
