package meta

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestNewLeadershipRebuildsDatanodeState: datanodes heartbeat the leader
// only (a follower answers NotLeader), and every new leadership — also a
// replica that led before and leads again — starts from no datanode state:
// the datanodes are told to register again with their full reports, and
// the leader waits out the settle period before it acts on them.
func TestNewLeadershipRebuildsDatanodeState(t *testing.T) {
	servers := group(t)
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
	reg := &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1", DataAddr: "127.0.0.1:1"},
		Stats: &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}}
	hb := &stratov1.HeartbeatRequest{DatanodeId: "dn1"}
	heartbeat := func(s *Server) *stratov1.HeartbeatResponse {
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

// TestReadsAreLinearizable: with several voters, every read RPC of the
// Namespace service and the listings of durable cluster state pass a
// ReadIndex round on the leader; a follower answers NotLeader rather than
// serve its possibly stale copy.
func TestReadsAreLinearizable(t *testing.T) {
	servers := group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := leaderOf(t, servers)
	_, err := l.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = l.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_FSO})
	require.NoError(t, err)
	reads := map[string]func(s *Server) error{
		"GetVolume": func(s *Server) error {
			_, err := s.GetVolume(ctx, &stratov1.GetVolumeRequest{Name: "vol"})
			return err
		},
		"ListVolumes": func(s *Server) error { _, err := s.ListVolumes(ctx, &stratov1.ListVolumesRequest{}); return err },
		"GetBucket": func(s *Server) error {
			_, err := s.GetBucket(ctx, &stratov1.GetBucketRequest{Volume: "vol", Name: "bkt"})
			return err
		},
		"ListBuckets": func(s *Server) error {
			_, err := s.ListBuckets(ctx, &stratov1.ListBucketsRequest{Volume: "vol"})
			return err
		},
		"ListStatus": func(s *Server) error {
			_, err := s.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: "vol", Bucket: "bkt"})
			return err
		},
		"ListPipelines":  func(s *Server) error { _, err := s.ListPipelines(ctx, &stratov1.ListPipelinesRequest{}); return err },
		"ListContainers": func(s *Server) error { _, err := s.ListContainers(ctx, &stratov1.ListContainersRequest{}); return err },
	}
	for name, read := range reads {
		before := l.node.Metrics().ReadIndexes
		require.NoError(t, read(l), name)
		require.Greater(t, l.node.Metrics().ReadIndexes, before, "%s passes a ReadIndex", name)
		for _, s := range servers {
			if s != l {
				requireCode(t, codes.Unavailable, read(s))
			}
		}
	}
}
