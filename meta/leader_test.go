package meta

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/strato-io/strato/proto/stratopb"
)

// TestNewLeadershipRebuildsDatanodeState: datanodes heartbeat the leader
// only (a follower answers NotLeader), and every new leadership — also a
// replica that led before and leads again — starts from no datanode state:
// the datanodes are told to register again with their full reports, and
// the leader waits out the settle period before it acts on them.
func TestNewLeadershipRebuildsDatanodeState(t *testing.T) {
	servers, _ := group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := leaderOf(t, servers)
	var b *Server
	for _, s := range servers {
		if s != a {
			b = s
			break
		}
	}
	reg := &stratopb.RegisterRequest{Details: &stratopb.DatanodeDetails{Id: "dn1", DataAddr: "127.0.0.1:1"},
		Stats: &stratopb.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}}
	hb := &stratopb.HeartbeatRequest{DatanodeId: "dn1"}
	heartbeat := func(s *Server) *stratopb.HeartbeatResponse {
		t.Helper()
		resp, err := s.Heartbeat(ctx, hb)
		require.NoError(t, err)
		return resp
	}
	_, err := b.Heartbeat(ctx, hb)
	requireCode(t, codes.Unavailable, err) // NotLeader

	_, err = a.Register(ctx, reg)
	require.NoError(t, err)
	require.False(t, heartbeat(a).Reregister)
	require.True(t, a.cl.Settling(a.now()))

	moveTo := func(from, to *Server) {
		t.Helper()
		require.NoError(t, from.node.TransferLeadership(ctx, to.ID()))
		require.Eventually(t, func() bool { return to.leading() }, 10*time.Second, 5*time.Millisecond)
	}
	moveTo(a, b)
	require.True(t, heartbeat(b).Reregister, "the new leader never heard of dn1")
	_, err = b.Register(ctx, reg)
	require.NoError(t, err)
	require.False(t, heartbeat(b).Reregister)

	moveTo(b, a)
	require.True(t, heartbeat(a).Reregister, "what a knew from its earlier leadership is dropped")
	require.True(t, a.cl.Settling(a.now()), "and it settles again")
	require.True(t, a.cl.SafeMode().InSafeMode)
}
