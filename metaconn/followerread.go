// Follower reads (docs/decisions/0087-follower-reads.md): with
// SetFollowerReads, the Namespace service's read RPCs go to the meta
// replicas in turn, each asked to serve the read itself (a linearizable
// ReadIndex read on a follower), and fall back to the leader when the
// replica cannot.

package metaconn

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// followerReadMetadata asks a follower to serve a read itself
// (meta.FollowerReadMetadata; the client links no server code).
const followerReadMetadata = "strato-follower-read"

// followerAvoid is how long a replica that could not serve a follower read
// is left out of the rotation.
const followerAvoid = 3 * time.Second

// followerReads is the state of SetFollowerReads.
type followerReads struct {
	on   atomic.Bool
	next atomic.Uint64
	// served counts the reads a replica other than the presumed leader
	// answered, fallbacks those sent to the leader after a replica could
	// not serve them.
	served, fallbacks atomic.Uint64

	mu    sync.Mutex
	avoid map[string]time.Time // replica → until when
}

// SetFollowerReads turns follower reads on or off (default off). On, the
// read RPCs of the Namespace service (GetVolume, ListVolumes, GetBucket,
// ListBuckets, LookupKey, ListKeys, GetFileStatus, ListStatus,
// GetContentSummary, IsFileClosed, GetAcl, ListSnapshots, GetSnapshot,
// SnapshotDiff) go to the replicas in turn, the leader included, each asked
// to serve the read itself; meta makes such a read linearizable (it sees
// every write acknowledged before it was sent, the caller's own
// included). A replica that cannot (cut off from the leader, too slow, or
// run with --follower-reads=false) is left out for a few seconds and the
// read goes to the leader. Writes and every other call go to the leader as
// before. Block locations in a follower's answer are those recorded at
// write time (only the leader knows where replicas moved since).
func (m *Conn) SetFollowerReads(on bool) { m.follower.on.Store(on) }

// FollowerReadStats are the reads a replica other than the leader served,
// and those that fell back to the leader (SetFollowerReads).
func (m *Conn) FollowerReadStats() (served, fallbacks uint64) {
	return m.follower.served.Load(), m.follower.fallbacks.Load()
}

// readReplica is the replica the next follower read goes to: the next in
// turn that is not left out (leader, the presumed leader's address, when
// every other one is).
func (m *Conn) readReplica(leader string) string {
	addrs := m.redirect.Addrs
	now := time.Now()
	m.follower.mu.Lock()
	defer m.follower.mu.Unlock()
	for range addrs {
		a := addrs[int(m.follower.next.Add(1)%uint64(len(addrs)))]
		if until, ok := m.follower.avoid[a]; !ok || now.After(until) {
			return a
		}
	}
	return leader
}

func (m *Conn) avoidReplica(addr string) {
	m.follower.mu.Lock()
	defer m.follower.mu.Unlock()
	if m.follower.avoid == nil {
		m.follower.avoid = map[string]time.Time{}
	}
	m.follower.avoid[addr] = time.Now().Add(followerAvoid)
}

// spreadNS is the Namespace service of the presumed leader, whose reads go
// to the replicas in turn.
type spreadNS struct {
	stratov1.NamespaceServiceClient // the presumed leader's
	m                               *Conn
	leader                          string
}

// spreadRead runs call at the next replica, asked for a follower read, and
// at the presumed leader if that replica cannot serve it. The replica's
// attempt has at most half the time left to the call, so that the leader
// has the rest.
func spreadRead[T any](ctx context.Context, s spreadNS, call func(context.Context, stratov1.NamespaceServiceClient) (T, error)) (T, error) {
	addr := s.m.readReplica(s.leader)
	if addr == s.leader {
		return call(ctx, s.NamespaceServiceClient)
	}
	if c, err := s.m.conn(addr); err == nil {
		actx := metadata.AppendToOutgoingContext(ctx, followerReadMetadata, "1")
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			actx, cancel = context.WithTimeout(actx, time.Until(d)/2)
			defer cancel()
		}
		out, err := call(actx, stratov1.NewNamespaceServiceClient(c))
		if err == nil || ctx.Err() != nil || !followerCannot(err) {
			if err == nil {
				s.m.follower.served.Add(1)
			}
			return out, err
		}
	}
	s.m.avoidReplica(addr)
	s.m.follower.fallbacks.Add(1)
	return call(ctx, s.NamespaceServiceClient)
}

// followerCannot: the replica did not serve the read (it is not the leader
// and would not or could not, is unreachable, or took too long); any other
// answer is the read's.
func followerCannot(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

func (s spreadNS) GetVolume(ctx context.Context, in *stratov1.GetVolumeRequest, opts ...grpc.CallOption) (*stratov1.VolumeInfo, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.VolumeInfo, error) {
		return n.GetVolume(ctx, in, opts...)
	})
}

func (s spreadNS) ListVolumes(ctx context.Context, in *stratov1.ListVolumesRequest, opts ...grpc.CallOption) (*stratov1.ListVolumesResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListVolumesResponse, error) {
		return n.ListVolumes(ctx, in, opts...)
	})
}

func (s spreadNS) GetBucket(ctx context.Context, in *stratov1.GetBucketRequest, opts ...grpc.CallOption) (*stratov1.BucketInfo, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.BucketInfo, error) {
		return n.GetBucket(ctx, in, opts...)
	})
}

func (s spreadNS) ListBuckets(ctx context.Context, in *stratov1.ListBucketsRequest, opts ...grpc.CallOption) (*stratov1.ListBucketsResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListBucketsResponse, error) {
		return n.ListBuckets(ctx, in, opts...)
	})
}

func (s spreadNS) LookupKey(ctx context.Context, in *stratov1.LookupKeyRequest, opts ...grpc.CallOption) (*stratov1.LookupKeyResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.LookupKeyResponse, error) {
		return n.LookupKey(ctx, in, opts...)
	})
}

func (s spreadNS) ListKeys(ctx context.Context, in *stratov1.ListKeysRequest, opts ...grpc.CallOption) (*stratov1.ListKeysResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListKeysResponse, error) {
		return n.ListKeys(ctx, in, opts...)
	})
}

func (s spreadNS) GetFileStatus(ctx context.Context, in *stratov1.GetFileStatusRequest, opts ...grpc.CallOption) (*stratov1.GetFileStatusResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetFileStatusResponse, error) {
		return n.GetFileStatus(ctx, in, opts...)
	})
}

func (s spreadNS) ListStatus(ctx context.Context, in *stratov1.ListStatusRequest, opts ...grpc.CallOption) (*stratov1.ListStatusResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListStatusResponse, error) {
		return n.ListStatus(ctx, in, opts...)
	})
}

func (s spreadNS) GetContentSummary(ctx context.Context, in *stratov1.GetContentSummaryRequest, opts ...grpc.CallOption) (*stratov1.GetContentSummaryResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetContentSummaryResponse, error) {
		return n.GetContentSummary(ctx, in, opts...)
	})
}

func (s spreadNS) IsFileClosed(ctx context.Context, in *stratov1.IsFileClosedRequest, opts ...grpc.CallOption) (*stratov1.IsFileClosedResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.IsFileClosedResponse, error) {
		return n.IsFileClosed(ctx, in, opts...)
	})
}

func (s spreadNS) GetAcl(ctx context.Context, in *stratov1.GetAclRequest, opts ...grpc.CallOption) (*stratov1.GetAclResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.GetAclResponse, error) {
		return n.GetAcl(ctx, in, opts...)
	})
}

func (s spreadNS) ListSnapshots(ctx context.Context, in *stratov1.ListSnapshotsRequest, opts ...grpc.CallOption) (*stratov1.ListSnapshotsResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListSnapshotsResponse, error) {
		return n.ListSnapshots(ctx, in, opts...)
	})
}

func (s spreadNS) GetSnapshot(ctx context.Context, in *stratov1.GetSnapshotRequest, opts ...grpc.CallOption) (*stratov1.SnapshotInfo, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SnapshotInfo, error) {
		return n.GetSnapshot(ctx, in, opts...)
	})
}

func (s spreadNS) SnapshotDiff(ctx context.Context, in *stratov1.SnapshotDiffRequest, opts ...grpc.CallOption) (*stratov1.SnapshotDiffResponse, error) {
	return spreadRead(ctx, s, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SnapshotDiffResponse, error) {
		return n.SnapshotDiff(ctx, in, opts...)
	})
}
