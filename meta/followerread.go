// Follower reads (docs/decisions/0087-follower-reads.md): a read RPC a
// client marks with FollowerReadMetadata is served by a follower, after a
// linearizable read point (consensus.Node.FollowerRead), instead of being
// refused with NotLeader.

package meta

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// FollowerReadMetadata is the gRPC metadata (value "1") by which a client
// asks a follower to serve a read RPC itself (a linearizable ReadIndex read)
// rather than answer NotLeader. Only the reads of the Namespace service
// (and AdminService's listings served the same way) honour it; writes always
// go to the leader. A server with Options.NoFollowerReads ignores it.
const FollowerReadMetadata = "strato-follower-read"

// followerReadAsked reports whether the caller asked for a follower read.
func followerReadAsked(ctx context.Context) bool {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return false
	}
	v := md.Get(FollowerReadMetadata)
	return len(v) == 1 && v[0] == "1"
}

// followerReadCall reports whether this replica serves the call as a
// follower read: it does not lead, serves follower reads, and the caller
// asked for one.
func (s *Server) followerReadCall(ctx context.Context) bool {
	return !s.opts.NoFollowerReads && !s.node.IsLeader() && followerReadAsked(ctx)
}

// catchUp returns once this replica's state holds every change
// acknowledged before the call: a read barrier on the leader, a follower
// read point on a follower (even with Options.NoFollowerReads: it serves
// nothing by itself).
func (s *Server) catchUp(ctx context.Context) error {
	if s.node.IsLeader() {
		return s.node.ReadBarrier(ctx)
	}
	return s.node.FollowerRead(ctx)
}

// readPoint makes the reads that follow linearizable: a read barrier on the
// leader; on a follower, for a caller that asked for it, a follower read
// point, after which this replica's state holds every write acknowledged
// before the call. It returns the context the read runs with: on a
// follower, the caller authenticated again against that state.
func (s *Server) readPoint(ctx context.Context) (context.Context, error) {
	if !s.followerReadCall(ctx) {
		return ctx, s.readBarrier(ctx)
	}
	if s.closed.Load() {
		return ctx, toStatus(ErrClosed)
	}
	if err := s.node.FollowerRead(ctx); err != nil {
		return ctx, toStatus(err)
	}
	s.followerReads.Add(1)
	if s.auth == nil || IdentityFromContext(ctx) == nil {
		return ctx, nil
	}
	// The token was checked when the call came in, against this replica's
	// state then, which may lag the leader's: check it again now that every
	// change acknowledged before the call is applied here, so that a token
	// revoked (or a user changed) before the call is refused as the leader
	// would refuse it. (A token this replica did not know yet was looked
	// up again after catching up: authenticator.check.)
	id, err := s.auth.authenticate(ctx)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}
