package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/proto/stratopb"
)

// MetaConn is a connection to a meta group that follows its leader.
type MetaConn struct {
	redirect consensus.Redirector
	opts     []grpc.DialOption

	mu    sync.Mutex
	conns map[string]*grpc.ClientConn
}

// DialMeta returns a connection to the meta replicas at addrs. Connections
// are made lazily; extra dial options are appended to the defaults
// (plaintext).
func DialMeta(addrs []string, opts ...grpc.DialOption) (*MetaConn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("client: no meta address given")
	}
	return &MetaConn{
		redirect: consensus.Redirector{Addrs: addrs, Hint: LeaderHint},
		opts:     append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...),
		conns:    map[string]*grpc.ClientConn{},
	}, nil
}

func (m *MetaConn) conn(addr string) (*grpc.ClientConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		return c, nil
	}
	c, err := grpc.NewClient(addr, m.opts...)
	if err != nil {
		return nil, fmt.Errorf("client: meta at %s: %w", addr, err)
	}
	m.conns[addr] = c
	return c, nil
}

// Do calls fn with the clients of the replica believed to lead, following
// NotLeader redirects and retrying calls that were certainly not performed,
// until fn succeeds, fails otherwise, or ctx ends.
func (m *MetaConn) Do(ctx context.Context, fn func(ctx context.Context, ns stratopb.NamespaceClient, cl stratopb.ClusterClient) error) error {
	return m.redirect.Do(ctx, func(ctx context.Context, addr string) error {
		c, err := m.conn(addr)
		if err != nil {
			return err
		}
		return fn(ctx, stratopb.NewNamespaceClient(c), stratopb.NewClusterClient(c))
	})
}

// Close closes every connection.
func (m *MetaConn) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for a, c := range m.conns {
		errs = append(errs, c.Close())
		delete(m.conns, a)
	}
	return errors.Join(errs...)
}

// LeaderHint classifies a meta error for the Redirector: a NotLeader
// status names the leader (retry there); a replica that cannot be reached
// at all is tried again elsewhere. Anything else (including an Unavailable
// whose outcome is unknown) is returned to the caller.
func LeaderHint(err error) (leaderAddr string, retry bool) {
	st, ok := status.FromError(err)
	if !ok {
		return "", false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == stratopb.NotLeaderReason && info.Domain == stratopb.ErrorDomain {
			return info.Metadata["leader"], true
		}
	}
	// A connection that was never established: nothing was sent.
	if st.Code() == codes.Unavailable && isConnectFailure(st.Message()) {
		return "", true
	}
	return "", false
}

// isConnectFailure: the replica refused the connection, so the call was
// never sent.
func isConnectFailure(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "connection refused")
}
