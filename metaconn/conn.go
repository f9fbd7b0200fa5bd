// Package metaconn is a connection to a meta Raft group that follows its
// leader: calls go to the replica believed to lead, NotLeader answers are
// followed, and calls certainly not performed (connection refused, closed
// before meta spoke) are sent again elsewhere; retry-safe calls also after
// an attempt that timed out. The client library, the datanodes, the S3
// gateway (through the client) and the console share it.
package metaconn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/internal/reconnect"
	"github.com/strato-io/strato/leader"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// DefaultAttemptTimeout bounds one attempt of a retry-safe call at one
// replica (see RetrySafe). A leader answers in milliseconds; a replica that
// has not answered in this long is paused, cut off or deposed, and the call
// goes to another.
const DefaultAttemptTimeout = 2 * time.Second

// ClusterStubs are the stubs of meta's cluster services on one replica:
// AdminService (operators and tools) and DatanodeService (datanodes).
type ClusterStubs struct {
	stratov1.AdminServiceClient
	stratov1.DatanodeServiceClient
}

// RefusedTimeout is how long a call keeps trying when every meta address
// refuses the connection and none has ever answered this MetaConn: a wrong
// address or a cluster not started fails this fast, with the refusal. Once
// a replica has answered, a refused connection is a restart or an election,
// and calls wait for as long as their context allows.
const RefusedTimeout = 3 * time.Second

// Errors of Do that are not meta's answers.
var (
	// ErrUnavailable: no meta replica answered within RefusedTimeout.
	ErrUnavailable = errors.New("meta unavailable")
	// ErrTLS: the TLS handshake with meta failed.
	ErrTLS = errors.New("TLS handshake failed")
)

// errorDomain is the domain of meta's ErrorInfo details: the API's
// package name.
var errorDomain = string(stratov1.File_strato_v1_namespace_proto.Package())

// Conn is a connection to a meta group that follows its leader.
type Conn struct {
	redirect leader.Redirector
	opts     []grpc.DialOption
	attempt  time.Duration
	classify func(error) error
	// answered: a replica answered a call (anything but a connection
	// refused or closed before meta's preface) since the MetaConn was made.
	answered atomic.Bool
	// follower: SetFollowerReads (followerread.go).
	follower followerReads

	// batchInFlight: SetBatching.
	batchInFlight int

	mu       sync.Mutex
	conns    map[string]*grpc.ClientConn
	batchers []*batcher
}

// Dial returns a connection to the meta replicas at addrs. Connections
// are made lazily; extra dial options are appended to the defaults
// (plaintext). classify, when not nil, maps every error Do returns (the
// client library's Classify).
func Dial(addrs []string, classify func(error) error, opts ...grpc.DialOption) (*Conn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("metaconn: no meta address given")
	}
	if classify == nil {
		classify = func(err error) error { return err }
	}
	m := &Conn{
		redirect: leader.Redirector{Addrs: addrs, Hint: LeaderHint},
		opts:     append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()), reconnect.DialOption()}, opts...),
		attempt:  DefaultAttemptTimeout,
		classify: classify,
		conns:    map[string]*grpc.ClientConn{},

		batchInFlight: DefaultBatchInFlight,
	}
	// Follower reads start their rotation at a random replica, so that
	// many short-lived clients (a CLI command makes one or two reads)
	// spread over the replicas rather than all asking the same one first.
	m.follower.next.Store(rand.Uint64N(uint64(len(addrs))))
	return m, nil
}

// SetAttemptTimeout sets the bound on one attempt of a retry-safe call
// (default DefaultAttemptTimeout; 0: none, an attempt lasts as long as the
// call's context). Set it before the first call.
func (m *Conn) SetAttemptTimeout(d time.Duration) { m.attempt = d }

// SetBatching sets how many batchable calls (Batchable) go to a replica at
// once before the calls made meanwhile wait and go together as one batch
// (BatchService, decision 0105); 0: every call alone. Default
// DefaultBatchInFlight. Set it before the first call.
func (m *Conn) SetBatching(inFlight int) { m.batchInFlight = inFlight }

// BatchStats returns the batches this Conn sent and the calls they
// carried.
func (m *Conn) BatchStats() (batches, calls uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.batchers {
		batches += b.batches.Load()
		calls += b.calls.Load()
	}
	return batches, calls
}

type retrySafeKey struct{}

// RetrySafe marks ctx: the calls made with it may be sent again, to another
// replica, after an attempt that timed out or whose connection failed
// mid-call — reads, and mutations that carry a request ID (meta applies
// those once). Other calls are sent again only when certainly not
// performed (NotLeader, connection refused).
func RetrySafe(ctx context.Context) context.Context {
	return context.WithValue(ctx, retrySafeKey{}, true)
}

func retrySafe(ctx context.Context) bool {
	v, _ := ctx.Value(retrySafeKey{}).(bool)
	return v
}

// retryElsewhereError is an attempt of a retry-safe call that timed out or
// lost its connection: LeaderHint has the call sent to another replica.
type retryElsewhereError struct{ err error }

func (e *retryElsewhereError) Error() string { return e.err.Error() }
func (e *retryElsewhereError) Unwrap() error { return e.err }

func (m *Conn) conn(addr string) (*grpc.ClientConn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.conns[addr]; c != nil {
		return c, nil
	}
	b := newBatcher(m.batchInFlight)
	c, err := grpc.NewClient(addr, append(m.opts[:len(m.opts):len(m.opts)], grpc.WithChainUnaryInterceptor(b.intercept))...)
	if err != nil {
		return nil, fmt.Errorf("metaconn: meta at %s: %w", addr, err)
	}
	m.conns[addr] = c
	m.batchers = append(m.batchers, b)
	return c, nil
}

// Do calls fn with the clients of the replica believed to lead, following
// NotLeader redirects and retrying calls that were certainly not performed,
// until fn succeeds, fails otherwise, or ctx ends.
//
// A retry-safe call (RetrySafe) is also sent to another replica when an
// attempt times out (SetAttemptTimeout) or fails with Unavailable without a
// leader's answer: a paused or cut-off former leader holds it no longer
// than an attempt.
//
// The error returned is classified (Error: errors.Is with ErrNotFound,
// ErrBucketNotFound, ...).
func (m *Conn) Do(ctx context.Context, fn func(ctx context.Context, ns stratov1.NamespaceServiceClient, cl ClusterStubs) error) error {
	return m.classify(m.do(ctx, func(ctx context.Context, cc grpc.ClientConnInterface) error {
		return fn(ctx, stratov1.NewNamespaceServiceClient(cc), ClusterStubs{stratov1.NewAdminServiceClient(cc), stratov1.NewDatanodeServiceClient(cc)})
	}))
}

// Invoke makes Conn a grpc.ClientConnInterface for unary calls (stubs made
// with it go through Do's leader following and follower reads; errors are
// not classified). Streams are not supported.
func (m *Conn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return m.do(ctx, func(ctx context.Context, cc grpc.ClientConnInterface) error {
		return cc.Invoke(ctx, method, args, reply, opts...)
	})
}

// NewStream fails: Conn carries unary calls only.
func (m *Conn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "metaconn: streams are not supported")
}

// do is Do with the replica's connection, unclassified errors.
func (m *Conn) do(ctx context.Context, fn func(ctx context.Context, cc grpc.ClientConnInterface) error) error {
	safe := retrySafe(ctx)
	start := time.Now()
	return m.redirect.Do(ctx, func(ctx context.Context, addr string) error {
		c, err := m.conn(addr)
		if err != nil {
			return err
		}
		err = m.attemptAt(ctx, addr, c, safe, fn)
		if hint, detail := tlsFailure(err); hint != "" {
			// Not a status either: a handshake that failed fails again.
			return fmt.Errorf("%w with meta at %s (%s): %s", ErrTLS, addr, hint, detail)
		}
		if err == nil || !isRefused(err) {
			m.answered.Store(true)
		} else if !m.answered.Load() && time.Since(start) >= RefusedTimeout {
			// Not a status: the redirector and retryMeta stop here.
			msg := status.Convert(err).Message()
			if isPrefaceFailure(msg) {
				// Closed before it spoke, again and again: how a
				// server that expects TLS hangs up on a plaintext
				// client. (Once, it may be a replica starting or
				// dying.)
				return fmt.Errorf("%w with meta at %s (meta closed the connection before it spoke: does it require TLS? see --tls-ca): %s",
					ErrTLS, addr, grpcDetail(msg))
			}
			return fmt.Errorf("%w: no meta replica answered at %s within %v: %s",
				ErrUnavailable, strings.Join(m.redirect.Addrs, ","), RefusedTimeout, msg)
		}
		return err
	})
}

// tlsFailure says why err is a TLS failure ("" if it is not one) and
// gRPC's words for it: a handshake that failed because a server or client
// certificate is not trusted, or one end speaks TLS and the other does not.
// (A plaintext client at a server that expects TLS sees the connection
// closed before the server's preface: Do says so once that has lasted
// RefusedTimeout, as a replica starting or dying may do it once.)
func tlsFailure(err error) (hint, detail string) {
	var gs interface{ GRPCStatus() *status.Status }
	if err == nil || !errors.As(err, &gs) || gs.GRPCStatus().Code() != codes.Unavailable {
		return "", ""
	}
	detail = grpcDetail(gs.GRPCStatus().Message())
	if strings.Contains(detail, "authentication handshake failed") &&
		(strings.Contains(detail, "x509:") || strings.Contains(detail, "tls:")) {
		// A handshake cut short (a timeout, a reset) says neither, and
		// may succeed when tried again.
		return "does the client trust the cluster's CA? see --tls-ca", detail
	}
	return "", ""
}

// grpcDetail: of `connection error: desc = "transport: ..."`, the part in
// quotes.
func grpcDetail(msg string) string {
	if _, d, ok := strings.Cut(msg, `desc = "`); ok {
		return strings.TrimSuffix(d, `"`)
	}
	return msg
}

// isRefused: the call's connection was refused or closed before meta's
// preface (nothing was sent).
func isRefused(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable && isConnectFailure(st.Message())
}

// attemptAt makes one attempt of fn at the replica behind c.
func (m *Conn) attemptAt(ctx context.Context, addr string, c *grpc.ClientConn, safe bool, fn func(ctx context.Context, cc grpc.ClientConnInterface) error) error {
	actx := ctx
	if safe && m.attempt > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, m.attempt)
		defer cancel()
	}
	var cc grpc.ClientConnInterface = c
	if m.follower.on.Load() {
		cc = spreadConn{ClientConn: c, m: m, leader: addr}
	}
	err := fn(actx, cc)
	if err == nil || !safe || ctx.Err() != nil {
		return err
	}
	if leader, _ := LeaderHint(err); leader != "" {
		return err
	}
	// The attempt's deadline also travels to the replica, whose copy
	// may fire first: a DeadlineExceeded while the call's own context
	// is alive is this attempt's timeout too.
	if actx.Err() != nil || status.Code(err) == codes.Unavailable || (actx != ctx && status.Code(err) == codes.DeadlineExceeded) {
		return &retryElsewhereError{err: err}
	}
	return err
}

// Close closes every connection.
func (m *Conn) Close() error {
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
	var re *retryElsewhereError
	if errors.As(err, &re) {
		return "", true
	}
	st, ok := status.FromError(err)
	if !ok {
		return "", false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Reason == stratov1.ErrorReason_NOT_LEADER.String() && info.Domain == errorDomain {
			return info.Metadata["leader"], true
		}
	}
	// A connection that was never established: nothing was sent.
	if st.Code() == codes.Unavailable && isConnectFailure(st.Message()) {
		return "", true
	}
	return "", false
}

// isConnectFailure: the replica refused the connection, or closed it
// before its HTTP/2 preface (gRPC sends no call on a connection before
// then), so the call was never sent.
func isConnectFailure(msg string) bool {
	return strings.Contains(strings.ToLower(msg), "connection refused") || isPrefaceFailure(msg)
}

// isPrefaceFailure: the connection ended before the server's preface: a
// replica starting or stopping, or a server that expects TLS.
func isPrefaceFailure(msg string) bool {
	return strings.Contains(msg, "error reading server preface")
}
