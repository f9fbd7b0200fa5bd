package meta

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/consensus"
)

// The white-box tests of package meta (block deletion driven tick by tick,
// the soft state a new leadership rebuilds) reach into the server's
// cluster manager and consensus node, so they live in the package; and a
// test of package meta cannot import minicluster, which imports meta. They
// start their replicas with this starter; every other test of meta's RPCs
// is in package meta_test on a minicluster (server_test.go).

// fastRaft makes elections quick in tests.
var fastRaft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}

// startServer opens a replica on o.Dir and serves it on lis.
func startServer(t *testing.T, o Options, lis net.Listener) *Server {
	t.Helper()
	o.Raft = fastRaft
	o.Listen = lis.Addr().String()
	s, err := Open(o)
	require.NoError(t, err)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func listen(t *testing.T) net.Listener {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return lis
}

// group starts a three-voter meta group on loopback.
func group(t *testing.T) []*Server {
	var lis []net.Listener
	peers := map[uint64]string{}
	for i := 1; i <= 3; i++ {
		l := listen(t)
		lis = append(lis, l)
		peers[uint64(i)] = l.Addr().String()
	}
	var servers []*Server
	for i := 1; i <= 3; i++ {
		servers = append(servers, startServer(t, Options{Dir: t.TempDir(), ID: uint64(i), Peers: peers}, lis[i-1]))
	}
	return servers
}

func leaderOf(t *testing.T, servers []*Server) *Server {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range servers {
			if !s.closed.Load() && s.node.IsLeader() {
				return s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader elected")
	return nil
}

func requireCode(t *testing.T, want codes.Code, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, status.Code(err), "error: %v", err)
}
