package client

import (
	"context"

	"google.golang.org/grpc"

	"github.com/strato-io/strato/metaconn"
)

// MetaConn is a connection to a meta group that follows its leader
// (metaconn.Conn); the client's make every error Do returns classified
// (Classify: errors.Is with ErrNotFound, ErrBucketNotFound, ...).
type MetaConn = metaconn.Conn

// ClusterStubs are the stubs of meta's cluster services on one replica
// (metaconn.ClusterStubs).
type ClusterStubs = metaconn.ClusterStubs

// DefaultAttemptTimeout bounds one attempt of a retry-safe call at one
// replica (metaconn.DefaultAttemptTimeout).
const DefaultAttemptTimeout = metaconn.DefaultAttemptTimeout

// RefusedTimeout is how long a call keeps trying when every meta address
// refuses the connection and none has ever answered
// (metaconn.RefusedTimeout).
const RefusedTimeout = metaconn.RefusedTimeout

// DialMeta returns a connection to the meta replicas at addrs whose errors
// are classified. Connections are made lazily; extra dial options are
// appended to the defaults (plaintext).
func DialMeta(addrs []string, opts ...grpc.DialOption) (*MetaConn, error) {
	return metaconn.Dial(addrs, Classify, opts...)
}

// RetrySafe marks ctx: the calls made with it may be sent again to another
// replica (metaconn.RetrySafe).
func RetrySafe(ctx context.Context) context.Context { return metaconn.RetrySafe(ctx) }

// LeaderHint classifies a meta error for a leader.Redirector
// (metaconn.LeaderHint).
func LeaderHint(err error) (leaderAddr string, retry bool) { return metaconn.LeaderHint(err) }

// FromLeader marks ctx: its calls go to the meta leader even when the
// client has follower reads on (metaconn.FromLeader).
func FromLeader(ctx context.Context) context.Context { return metaconn.FromLeader(ctx) }
