package reconnect

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// downFor keeps calling a server whose connections are refused for down,
// then lets them through and returns how many connections were attempted
// while it was down and how long the first call took to succeed after.
func downFor(t *testing.T, down time.Duration, opts ...grpc.DialOption) (attempts int64, recovered time.Duration) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)

	var refusing atomic.Bool
	var dials atomic.Int64
	refusing.Store(true)
	dialer := func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		if refusing.Load() {
			return nil, errors.New("connection refused (injected)")
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	opts = append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer)}, opts...)
	cc, err := grpc.NewClient(l.Addr().String(), opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	hc := healthpb.NewHealthClient(cc)
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	for end := time.Now().Add(down); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		require.Error(t, call())
	}
	attempts = dials.Load()
	refusing.Store(false)
	start := time.Now()
	for call() != nil {
		require.Less(t, time.Since(start), time.Minute, "the server was never reached again")
		time.Sleep(10 * time.Millisecond)
	}
	return attempts, time.Since(start)
}

// A client with DialOption keeps trying a refused server every MaxDelay
// or sooner, and reaches it within about MaxDelay of its return; gRPC's
// default has backed off to seconds by then (which is what the test
// would see without the option).
func TestRetriesWithinMaxDelay(t *testing.T) {
	const down = 6 * time.Second
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		attempts, recovered := downFor(t, down)
		t.Logf("%d attempts while down, reached %v after", attempts, recovered)
		// 1 s, then ×1.6 ±20%: at most 5 attempts in 6 s.
		require.LessOrEqual(t, attempts, int64(5), "gRPC's default backoff")
	})
	t.Run("reconnect", func(t *testing.T) {
		t.Parallel()
		attempts, recovered := downFor(t, down, DialOption())
		t.Logf("%d attempts while down, reached %v after", attempts, recovered)
		// 0.1 s ×1.6 to 1 s: ten or so in 6 s.
		require.GreaterOrEqual(t, attempts, int64(7))
		require.Less(t, recovered, MaxDelay*6/5+time.Second, "reached within MaxDelay (+20%% jitter, +1 s slack) of its return")
	})
}
