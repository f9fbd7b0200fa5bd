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

type fromLeaderKey struct{}

// FromLeader marks ctx: its calls go to the leader even with follower reads
// on (a reader asking where a block's replicas are now: only the leader
// knows).
func FromLeader(ctx context.Context) context.Context {
	return context.WithValue(ctx, fromLeaderKey{}, true)
}

func fromLeader(ctx context.Context) bool {
	v, _ := ctx.Value(fromLeaderKey{}).(bool)
	return v
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

// readMethods are the calls SetFollowerReads spreads: the Namespace
// service's reads that meta serves on a follower asked to.
var readMethods = map[string]bool{
	stratov1.NamespaceService_GetVolume_FullMethodName:         true,
	stratov1.NamespaceService_ListVolumes_FullMethodName:       true,
	stratov1.NamespaceService_GetBucket_FullMethodName:         true,
	stratov1.NamespaceService_ListBuckets_FullMethodName:       true,
	stratov1.NamespaceService_LookupKey_FullMethodName:         true,
	stratov1.NamespaceService_ListKeys_FullMethodName:          true,
	stratov1.NamespaceService_GetFileStatus_FullMethodName:     true,
	stratov1.NamespaceService_ListStatus_FullMethodName:        true,
	stratov1.NamespaceService_GetContentSummary_FullMethodName: true,
	stratov1.NamespaceService_IsFileClosed_FullMethodName:      true,
	stratov1.NamespaceService_GetAcl_FullMethodName:            true,
	stratov1.NamespaceService_ListSnapshots_FullMethodName:     true,
	stratov1.NamespaceService_GetSnapshot_FullMethodName:       true,
	stratov1.NamespaceService_SnapshotDiff_FullMethodName:      true,
}

// spreadConn is the connection to the presumed leader, whose read calls go
// to the replicas in turn.
type spreadConn struct {
	*grpc.ClientConn // the presumed leader's: every call but the reads
	m                *Conn
	leader           string
}

// Invoke sends a read to the next replica, asked for a follower read, and
// to the presumed leader if that replica cannot serve it; every other call
// to the presumed leader.
func (s spreadConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if !readMethods[method] || fromLeader(ctx) {
		return s.ClientConn.Invoke(ctx, method, args, reply, opts...)
	}
	addr := s.m.readReplica(s.leader)
	if addr == s.leader {
		return s.ClientConn.Invoke(ctx, method, args, reply, opts...)
	}
	if c, err := s.m.conn(addr); err == nil {
		actx := metadata.AppendToOutgoingContext(ctx, followerReadMetadata, "1")
		// Half the time left to the call, so that the leader has the
		// rest; without a deadline, half an attempt (a paused replica
		// never answers).
		bound := DefaultAttemptTimeout / 2
		if d, ok := ctx.Deadline(); ok {
			bound = time.Until(d) / 2
		} else if s.m.attempt > 0 {
			bound = s.m.attempt / 2
		}
		actx, cancel := context.WithTimeout(actx, bound)
		defer cancel()
		err := c.Invoke(actx, method, args, reply, opts...)
		if err == nil || ctx.Err() != nil || !followerCannot(err) {
			if err == nil {
				s.m.follower.served.Add(1)
			}
			return err
		}
	}
	s.m.avoidReplica(addr)
	s.m.follower.fallbacks.Add(1)
	return s.ClientConn.Invoke(ctx, method, args, reply, opts...)
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
