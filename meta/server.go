package meta

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/tracing"
)

// ErrClosed is returned by a server that has been closed.
var ErrClosed = errors.New("meta: server closed")

// Server is a meta replica. See the package documentation.
type Server struct {
	stratov1.UnimplementedNamespaceServiceServer
	stratov1.UnimplementedAdminServiceServer
	stratov1.UnimplementedDatanodeServiceServer
	stratov1.UnimplementedBatchServiceServer

	opts Options
	node *consensus.Node
	db   *pebble.DB
	ns   *namespace.Namespace
	cl   *cluster.Manager
	grpc *grpc.Server
	// unary: every unary call's interceptors, chained (New); batch: the
	// calls a batch may carry (batch.go).
	unary        grpc.UnaryServerInterceptor
	batch        map[string]batchMethod
	batchWorkers *batchWorkers

	stop chan struct{}
	wg   sync.WaitGroup

	auth          *authenticator  // nil without Options.Auth "token"
	btKeys        blockTokenKeys  // block token keys (blocktoken.go)
	btRotateMu    sync.Mutex      // one new key at a time
	dtMu          sync.Mutex      // one delegation token issued at a time (delegation.go)
	dtSeq         uint64          // the last sequence number this leader proposed
	dtPurgedAt    time.Time       // when the background tick last purged expired delegation tokens
	blockDel      blockDeletion   // block deletion driver (blockdeletion.go)
	trash         trashRounds     // the trash checkpoint driver (trash.go)
	lifecycle     lifecycleRounds // the lifecycle rules' driver (lifecycle.go)
	dw            *deferredWrites // the leader's deferred write tokens (deferredwrite.go)
	replMu        sync.Mutex
	lastRepl      cluster.ReplicationReport
	lastReplAt    time.Time       // when the leader's last replication pass ran (background goroutine only)
	lastReplGen   uint64          // cluster.Manager.RepairGen as that pass began (background goroutine only)
	missing       map[uint64]bool // containers reported with no good replica
	replScheduled uint64
	replDeletes   uint64
	replPasses    uint64
	replTook      time.Duration // the last replication pass, from its start to its end
	closed        atomic.Bool
	// diskLow and diskAvail: the last sample of the data directory's free
	// space (resource.go).
	diskLow   atomic.Bool
	diskAvail atomic.Int64
	// leaderTerm is the term the cluster manager's soft state was last
	// reset for (leading).
	leaderMu   sync.Mutex
	leaderTerm atomic.Uint64
	// backupSeq names BackupMeta's checkpoint directories (backup.go).
	backupSeq atomic.Uint64
	// followerReads counts the reads served as a follower
	// (followerread.go).
	followerReads atomic.Uint64
	// batches and batchedCalls count the BatchService calls served and
	// the calls they carried (batch.go).
	batches, batchedCalls atomic.Uint64
}

// Open opens (or creates) the replica's data directory, replays its log
// and joins its Raft group. It does not listen: call Serve.
func Open(opts Options) (*Server, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, stop: make(chan struct{}), dw: newDeferredWrites(opts.DeferredWriteMemory, opts.DeferredWriteTTL)}
	var err error
	if s.ns, err = namespace.New(opts.Namespace); err != nil {
		return nil, err
	}
	if s.cl, err = cluster.New(opts.Cluster, s.proposeCluster); err != nil {
		return nil, err
	}
	raft := opts.Raft
	if raft.Pebble == nil {
		raft.Pebble = &pebble.Options{CacheSize: opts.CacheSize, MemTableSize: uint64(opts.MemTableSize)}
		namespace.ConfigurePebble(raft.Pebble)
	}
	raft.ID, raft.Peers, raft.FS, raft.Dir, raft.Logger = opts.ID, opts.Peers, opts.FS, opts.Dir, opts.Logger
	raft.Join = opts.Join
	if opts.PeerTLS != nil {
		raft.DialOptions = append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(opts.PeerTLS))}, raft.DialOptions...)
	}
	s.node, err = consensus.Open(raft, (*stateMachine)(s))
	if err != nil {
		return nil, fmt.Errorf("meta: %w", err)
	}
	// consensus called Restore (which loads the cluster state) before any
	// apply.
	s.db = s.node.DB()
	// Checkpoints of backups a crash interrupted (backup.go).
	_ = opts.FS.RemoveAll(opts.FS.PathJoin(opts.Dir, backupTmpDir))
	serverOpts, tlsUnary := serverTLS(opts.TLS, grpc.NumStreamWorkers(streamWorkers()))
	if opts.TracerProvider != nil {
		serverOpts = append(serverOpts, tracing.GRPCServer(opts.TracerProvider))
	}
	// Every unary call's interceptors, outermost first: the node-only
	// check, the identity's slot, Options.UnaryInterceptors (metrics,
	// audit), authentication, block tokens. The calls of a batch go
	// through them each (batch.go).
	var unary []grpc.UnaryServerInterceptor
	var authStream []grpc.ServerOption // inside GRPCServerOptions' stream interceptors
	if tlsUnary != nil {
		unary = append(unary, tlsUnary)
	}
	if opts.Auth == AuthToken {
		s.auth = &authenticator{s: s}
		outer, inner, stream := s.auth.authOptions()
		unary = append(append(append(unary, outer), opts.UnaryInterceptors...), inner)
		// Block tokens for the BlockLocations of NamespaceService
		// replies, inside the authentication (which names the user).
		unary = append(unary, s.blockTokenInterceptor)
		authStream = append(authStream, stream)
	} else {
		unary = append(unary, opts.UnaryInterceptors...)
	}
	s.unary = chainUnary(unary)
	s.batch, s.batchWorkers = batchMethods(), newBatchWorkers()
	serverOpts = append(append(append(serverOpts, grpc.ChainUnaryInterceptor(s.intercept)), opts.GRPCServerOptions...), authStream...)
	s.grpc = grpc.NewServer(serverOpts...)
	stratov1.RegisterNamespaceServiceServer(s.grpc, s)
	stratov1.RegisterAdminServiceServer(s.grpc, s)
	stratov1.RegisterDatanodeServiceServer(s.grpc, s)
	stratov1.RegisterBatchServiceServer(s.grpc, s)
	s.node.RegisterGRPC(s.grpc)
	s.checkDisk()
	s.wg.Add(2)
	go s.background()
	go s.watchDisk()
	if s.auth != nil {
		s.wg.Add(1)
		go s.bootstrapAuth()
	}
	return s, nil
}

// Serve serves gRPC (clients, datanodes, Raft peers) on lis until Close.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// GRPCServer is the server the replica's services are registered on
// (telemetry.GRPCMetrics.Initialize lists them from it).
func (s *Server) GRPCServer() *grpc.Server { return s.grpc }

// ID is this replica's Raft ID.
func (s *Server) ID() uint64 { return s.opts.ID }

// Node is the replica's consensus node (status, metrics).
func (s *Server) Node() *consensus.Node { return s.node }

// Done is closed when the replica's consensus node stops on its own: its
// disk failed, or it was removed from the group (Err says which). The
// server then answers every call as a non-leader; close it.
func (s *Server) Done() <-chan struct{} { return s.node.Done() }

// Err is why Done was closed (consensus.ErrRemoved, or a storage error).
func (s *Server) Err() error { return s.node.Err() }

// WaitReady waits until this replica knows a leader.
func (s *Server) WaitReady(ctx context.Context) error {
	for {
		if id, _ := s.node.Leader(); id != 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Close stops serving and background work and closes the database. It is
// safe to call more than once.
func (s *Server) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	s.grpc.Stop()
	return s.node.Close()
}

func (s *Server) now() time.Time { return s.opts.Clock.Now() }

// leading reports whether this replica leads. The first time it finds a
// new leadership (a new term, even if this replica led before), it resets
// the cluster manager's soft state, which starts its settle period: the
// datanodes register again with their reports before the leader acts on
// them.
func (s *Server) leading() bool {
	term := s.node.LeaderTerm()
	if term == 0 {
		return false
	}
	if s.leaderTerm.Load() == term {
		return true
	}
	s.leaderMu.Lock()
	defer s.leaderMu.Unlock()
	if s.leaderTerm.Load() != term {
		s.cl.BecomeLeader(s.now())
		s.replMu.Lock()
		s.lastRepl = cluster.ReplicationReport{}
		s.missing = nil
		s.replMu.Unlock()
		s.opts.Logger.Info("meta: leading; datanode state is rebuilt from their reports before replication and deletion decisions",
			"term", term, "settle", s.cl.Options().LeaderSettle)
		s.leaderTerm.Store(term)
	}
	return true
}

// leaderOnly refuses calls that need the leader's soft state.
func (s *Server) leaderOnly() error {
	if s.closed.Load() {
		return toStatus(ErrClosed)
	}
	if !s.leading() {
		id, addr := s.node.Leader()
		return toStatus(&consensus.NotLeaderError{LeaderID: id, LeaderAddr: addr})
	}
	return nil
}

// readBarrier makes the reads that follow linearizable.
func (s *Server) readBarrier(ctx context.Context) error {
	if s.closed.Load() {
		return toStatus(ErrClosed)
	}
	return toStatus(s.node.ReadBarrier(ctx))
}

func (s *Server) propose(ctx context.Context, cmd *stratov1.MetaCommand) (proto.Message, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, err
	}
	res, err := s.node.Propose(ctx, data)
	if err != nil {
		return nil, err
	}
	m, _ := res.(proto.Message)
	return m, nil
}

func (s *Server) proposeCluster(ctx context.Context, cmd *stratov1.ClusterCommand) (proto.Message, error) {
	return s.propose(ctx, &stratov1.MetaCommand{Op: &stratov1.MetaCommand_Cluster{Cluster: cmd}})
}

func (s *Server) proposeNamespace(ctx context.Context, cmd *stratov1.NamespaceCommand) (proto.Message, error) {
	return s.propose(ctx, &stratov1.MetaCommand{Op: &stratov1.MetaCommand_Namespace{Namespace: cmd}})
}

// stateMachine is the Server as consensus sees it.
type stateMachine Server

// Apply decodes one log entry and applies it to the namespace or the
// cluster state.
func (sm *stateMachine) Apply(index uint64, data []byte, b *pebble.Batch) (any, error) {
	var cmd stratov1.MetaCommand
	if err := proto.Unmarshal(data, &cmd); err != nil {
		return nil, fmt.Errorf("meta: undecodable log entry %d: %w", index, err)
	}
	var (
		res proto.Message
		err error
	)
	switch op := cmd.Op.(type) {
	case *stratov1.MetaCommand_Namespace:
		if sm.auth != nil && changesAuth(op.Namespace) {
			sm.auth.dirty.Store(true)
		}
		res, err = sm.ns.Apply(op.Namespace, b)
		if err != nil && namespace.Class(err) == nil {
			sm.fatal(index, err)
		}
	case *stratov1.MetaCommand_BlockTokenKey:
		if err := sm.btKeys.apply(op.BlockTokenKey, b); err != nil {
			sm.fatal(index, err)
		}
	case *stratov1.MetaCommand_Cluster:
		res, err = sm.cl.Apply(op.Cluster, b)
		if err != nil && !errors.Is(err, cluster.ErrNotFound) && !errors.Is(err, cluster.ErrBadTransition) && !errors.Is(err, cluster.ErrInvalid) {
			sm.fatal(index, err)
		}
	default:
		return nil, fmt.Errorf("meta: log entry %d has no command", index)
	}
	return res, err
}

// fatal stops the process: an apply that failed for a reason other than the
// request itself (a storage error, a corrupt record) may have left a
// partial batch, and this replica's state can no longer be trusted to match
// the others'. Restarting replays the log from the last committed state.
func (sm *stateMachine) fatal(index uint64, err error) {
	sm.opts.Logger.Error("meta: applying a log entry failed; stopping", "index", index, "err", err)
	panic(fmt.Sprintf("meta: applying log entry %d: %v", index, err))
}

// Committed tells the namespace that the batches it applied are in the
// database, so that readers may cache directory entries again.
func (sm *stateMachine) Committed() {
	sm.ns.Committed()
	if sm.auth != nil && sm.auth.dirty.Swap(false) {
		sm.auth.invalidate()
	}
}

// changesAuth: the command changes a user or a token.
func changesAuth(c *stratov1.NamespaceCommand) bool {
	switch c.Op.(type) {
	case *stratov1.NamespaceCommand_CreateUser, *stratov1.NamespaceCommand_DeleteUser,
		*stratov1.NamespaceCommand_IssueToken, *stratov1.NamespaceCommand_RevokeToken,
		*stratov1.NamespaceCommand_RenewToken, *stratov1.NamespaceCommand_PurgeTokens:
		return true
	}
	return false
}

// Restore reloads what the server keeps in memory after consensus replaced
// the database's state with a snapshot from the leader.
func (sm *stateMachine) Restore(db *pebble.DB, index uint64) error {
	sm.ns.ResetCache()
	if sm.auth != nil {
		sm.auth.invalidate()
	}
	if err := sm.btKeys.load(db); err != nil {
		return err
	}
	return sm.cl.Load(db)
}

// streamWorkers is how many goroutines serve gRPC streams. A request that
// finds every worker busy gets a goroutine of its own, which starts with a
// small stack and grows it by copying (runtime.copystack was 16% of the
// server's CPU under 16 concurrent GetFileStatus calls with one worker per
// CPU); a worker keeps its grown stack. Enough for the concurrent requests
// of a busy cluster; an idle worker costs a parked goroutine.
func streamWorkers() uint32 {
	return uint32(max(64, 16*runtime.GOMAXPROCS(0)))
}
