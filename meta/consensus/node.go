package consensus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/strato-io/strato/walfs"
)

// StateMachine is the replicated state: the metadata server's apply.
type StateMachine interface {
	// Apply applies one committed command into b, an indexed batch of the
	// node's DB (reads through b see earlier writes of the same batch, and
	// of earlier commands in it). It must be deterministic: no clock, no
	// randomness, no I/O but b, and only keys that do not begin with 0x00.
	// The returned value goes back to the proposer if it is waiting on this
	// node; an error is such a result too (e.g. "already exists"), not a
	// failure of the node, and Apply must then have written nothing to b.
	// cmd must not be modified or retained.
	Apply(index uint64, cmd []byte, b *pebble.Batch) (result any, err error)
}

// Restorer is implemented by a StateMachine that keeps state derived from
// the DB in memory. Restore is called by Open, once the DB is open and
// before any command is applied (index is then the stored applied index),
// and on the raft goroutine after a snapshot from the leader replaced the
// whole state range (index is the snapshot's). It is the place to (re)load
// that in-memory state: after Open returns, Apply may already be running.
type Restorer interface {
	Restore(db *pebble.DB, index uint64) error
}

// Committer is implemented by a StateMachine that must know when the
// batches it was given are in the database (e.g. to let readers cache what
// they read again). Committed is called on the apply goroutine after each
// apply batch is committed, before the next Apply.
type Committer interface {
	Committed()
}

// Node is one voter of a raft group. See the package documentation.
type Node struct {
	opts      Options
	id        uint64
	sm        StateMachine
	db        *pebble.DB
	wal       *walfs.FS // the DB's logs' FS, closed after it
	rn        *raft.RawNode
	store     *logStore
	log       *slog.Logger
	transport *transport
	// view is the configuration and the members' addresses for readers;
	// overrides are the addresses Options.Peers gives for members.
	view      atomic.Pointer[groupView]
	overrides map[uint64]string

	propc       chan *proposal
	recvc       chan *pb.Message
	readc       chan *readRequest
	snapRecvc   chan *incomingSnapshot
	snapStatusc chan snapStatus
	unreachc    chan uint64
	opc         chan func()
	removedc    chan uint64 // a peer said this node was removed
	stopc       chan struct{}
	donec       chan struct{}

	closeOnce sync.Once
	// cpMu keeps Close from closing the DB while Checkpoint copies it
	// (dbClosed: it did).
	cpMu     sync.RWMutex
	dbClosed bool
	loopErr  error // set before donec is closed
	closeErr error

	leaderID   atomic.Uint64
	isLeader   atomic.Bool
	leaderTerm atomic.Uint64 // the term this node last became leader in
	role       atomic.Value  // raft.StateType

	metrics metrics

	// changeMu is held for the whole of a membership change (AddMember's
	// learner, catch-up and promotion), changeWhat says which.
	changeMu   sync.Mutex
	changeWhat atomic.Value

	// Owned by the raft goroutine.
	pending     []*proposal // proposed, not yet resolved, in log order
	pendingHead int
	seq         uint64
	propBuf     []*proposal
	replies     []*proposal
	readBuf     []*readRequest
	readSeq     uint64
	readsByCtx  map[uint64]*readGroup // asked of raft, not yet granted
	readsWait   []*readGroup          // granted, waiting for their index to be applied
	staged      *incomingSnapshot
	// fs and pebbleOpts are the DB's filesystem and options, which
	// incoming snapshots are staged with (stage.go).
	fs          vfs.FS
	pebbleOpts  *pebble.Options
	stageSeq    atomic.Uint64 // names concurrent stages apart
	lastCompact uint64
	logBatch    *pebble.Batch
	answered    uint64 // proposals answered, for the loop to notice
	// answeredAtPropose is answered when the last batch was proposed: the
	// proposers answered since are the ones a linger waits for.
	answeredAtPropose uint64
	confWait          *confWaiter
	// confApplied is the waiting change applied in the current batch,
	// answered once the batch is committed and the view refreshed.
	confApplied *confWaiter
	confPending uint64 // index of the last configuration change appended
	// confProposed: a change was just proposed; the next appended entries
	// hold it.
	confProposed bool
	confChanged  bool // the apply batch holds a configuration change
}

// Open opens (creating if needed) the node's DB in opts.Dir and starts its
// raft goroutine. The state machine sees every command committed after the
// DB's applied index again (commands applied but not yet durable are
// re-applied after a crash).
func Open(opts Options, sm StateMachine) (*Node, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.Peers = maps.Clone(opts.Peers)
	po := &pebble.Options{}
	if opts.Pebble != nil {
		po = opts.Pebble.Clone()
	}
	// The raft log's fsyncs are the group commit's cycle: let them write
	// over zeros instead of growing the log (package walfs).
	wal := walfs.New(opts.FS, po.MemTableSize)
	po.FS = wal
	po.FormatMajorVersion = pebble.FormatNewest
	po.EnsureDefaults() // kept for the snapshot stage's sstable writers
	if err := removeStaging(po.FS, opts.Dir); err != nil {
		return nil, fmt.Errorf("consensus: remove staged snapshots in %s: %w", opts.Dir, err)
	}
	po.Logger = pebbleLogger{raftLogger{opts.Logger.With("component", "pebble")}}
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		_ = wal.Close()
		return nil, fmt.Errorf("consensus: open %s: %w", opts.Dir, err)
	}
	closeDB := func() { _ = db.Close(); _ = wal.Close() }
	store, err := loadLogStore(db, opts.Peers, opts.Join)
	if store != nil {
		store.cacheMaxBytes = opts.LogCacheBytes
	}
	if err != nil {
		closeDB()
		return nil, err
	}
	members := confMembers(store.conf)
	if _, closer, err := db.Get(keyRemoved); err == nil {
		_ = closer.Close()
		members = slices.DeleteFunc(members, func(id uint64) bool { return id == opts.ID })
	}
	if len(members) > 0 && !slices.Contains(members, opts.ID) {
		closeDB()
		return nil, fmt.Errorf("%w: node %d is not among the members %v of the group in %s; start a new replica on an empty directory with Join",
			ErrRemoved, opts.ID, members, opts.Dir)
	}
	if !opts.Join && len(members) > 0 && !slices.Equal(members, slices.Sorted(maps.Keys(opts.Peers))) {
		opts.Logger.Info("consensus: the stored membership differs from Peers and wins", "id", opts.ID,
			"members", members, "peers", slices.Sorted(maps.Keys(opts.Peers)))
	}
	if r, ok := sm.(Restorer); ok {
		if err := r.Restore(db, store.appliedIndex); err != nil {
			closeDB()
			return nil, fmt.Errorf("consensus: load state machine at %d: %w", store.appliedIndex, err)
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        opts.ID,
		ElectionTick:              opts.ElectionTicks,
		HeartbeatTick:             opts.HeartbeatTicks,
		Storage:                   store,
		Applied:                   store.appliedIndex,
		MaxSizePerMsg:             opts.MaxSizePerMsg,
		MaxCommittedSizePerReady:  64 << 20,
		MaxUncommittedEntriesSize: opts.MaxUncommittedBytes,
		MaxInflightMsgs:           opts.MaxInflightMsgs,
		CheckQuorum:               true,
		PreVote:                   true,
		ReadOnlyOption:            raft.ReadOnlySafe,
		Logger:                    raftLogger{opts.Logger.With("component", "raft")},
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
	})
	if err != nil {
		closeDB()
		return nil, err
	}
	n := &Node{
		opts:        opts,
		id:          opts.ID,
		sm:          sm,
		db:          db,
		wal:         wal,
		fs:          po.FS,
		pebbleOpts:  po,
		rn:          rn,
		store:       store,
		log:         opts.Logger,
		overrides:   map[uint64]string{},
		propc:       make(chan *proposal, 4096),
		recvc:       make(chan *pb.Message, 4096),
		readc:       make(chan *readRequest, 1024),
		snapRecvc:   make(chan *incomingSnapshot),
		snapStatusc: make(chan snapStatus, 16),
		unreachc:    make(chan uint64, 64),
		opc:         make(chan func()),
		removedc:    make(chan uint64, 1),
		stopc:       make(chan struct{}),
		donec:       make(chan struct{}),
		readsByCtx:  map[uint64]*readGroup{},
		lastCompact: store.truncIndex,
		logBatch:    db.NewBatch(),
	}
	n.role.Store(raft.StateFollower)
	n.changeWhat.Store("")
	for id, a := range opts.Peers {
		if a != "" {
			n.overrides[id] = a
		}
	}
	n.updatePositions()
	n.transport = newTransport(n)
	n.refreshView()
	if n.soleVoter() {
		// Nobody else could be leader: do not wait for an election timeout.
		// A single voter wins in a few Ready cycles (its votes for itself
		// must be durable), run here so that Open returns a leader. It goes
		// on until its whole log is applied (the new term's empty entry
		// commits everything before it): ReadBarrier's single-voter fast
		// path relies on every committed entry being applied, so a read
		// right after a restart sees every write acknowledged before it.
		_ = rn.Campaign()
		for i := 0; i < 64 && rn.HasReady() && (!n.isLeader.Load() || n.store.appliedIndex < n.store.last); i++ {
			if err := guard(n.handleReady); err != nil {
				n.transport.close()
				n.shutdown()
				closeDB()
				return nil, err
			}
		}
	}
	go n.run()
	return n, nil
}

// DB returns the node's Pebble DB. Readers use it (after ReadBarrier for a
// linearizable read) and must not write keys: every write goes through
// Propose and the StateMachine.
func (n *Node) DB() *pebble.DB { return n.db }

// LogCacheBytes is about what the cache of recent log entries holds, and
// its bound (Options.LogCacheBytes).
func (n *Node) LogCacheBytes() (held, bound int64) {
	return n.store.cacheBytesPub.Load(), n.store.cacheMaxBytes
}

// ID returns this node's raft ID.
func (n *Node) ID() uint64 { return n.id }

// Leader returns the leader's ID and address as last seen by this node; 0
// and "" when no leader is known.
func (n *Node) Leader() (id uint64, addr string) {
	id = n.leaderID.Load()
	if id == 0 {
		return 0, ""
	}
	return id, n.addrOf(id)
}

// IsLeader reports whether this node is the leader.
func (n *Node) IsLeader() bool { return n.isLeader.Load() }

// LeaderTerm is the term this node leads in, 0 when it is not the leader. A
// change tells a new leadership (state kept only by the leader must be
// rebuilt), even when the same node leads again.
func (n *Node) LeaderTerm() uint64 {
	if !n.isLeader.Load() {
		return 0
	}
	return n.leaderTerm.Load()
}

// Status describes a node's place in its group.
type Status struct {
	ID         uint64
	Role       string // "leader", "follower", "candidate", "pre-candidate"
	LeaderID   uint64
	LeaderAddr string
	Term       uint64
	Commit     uint64
	Applied    uint64
	FirstIndex uint64
	LastIndex  uint64
	Voters     []uint64
	Learners   []uint64
	// Members are every member with its address (no replication progress:
	// see Node.Members).
	Members []Member
}

// Status returns the node's current status.
func (n *Node) Status() Status {
	lead, addr := n.Leader()
	role, _ := n.role.Load().(raft.StateType)
	v := n.view.Load()
	return Status{
		ID:         n.id,
		Role:       roleName(role),
		LeaderID:   lead,
		LeaderAddr: addr,
		Term:       n.metrics.term.Load(),
		Commit:     n.metrics.commitIndex.Load(),
		Applied:    n.metrics.appliedIndex.Load(),
		FirstIndex: n.metrics.firstIdx.Load(),
		LastIndex:  n.metrics.lastIndex.Load(),
		Voters:     slices.Clone(v.voters),
		Learners:   slices.Clone(v.learners),
		Members:    v.members(),
	}
}

func roleName(s raft.StateType) string {
	switch s {
	case raft.StateLeader:
		return "leader"
	case raft.StateCandidate:
		return "candidate"
	case raft.StatePreCandidate:
		return "pre-candidate"
	default:
		return "follower"
	}
}

// Propose replicates cmd and waits until this node has applied it, returning
// the StateMachine's result. On a node that is not the leader it returns a
// *NotLeaderError at once. Retryable(err) tells the errors after which the
// command was certainly not applied; after ctx ends the outcome is unknown.
// cmd must not be modified before Propose returns.
func (n *Node) Propose(ctx context.Context, cmd []byte) (any, error) {
	if !n.isLeader.Load() {
		select {
		case <-n.donec:
			return nil, n.closedErr()
		default:
		}
		return nil, n.notLeader()
	}
	p := proposalPool.Get().(*proposal)
	p.cmd = cmd
	select {
	case n.propc <- p:
	case <-ctx.Done():
		p.cmd = nil
		proposalPool.Put(p)
		return nil, ctx.Err()
	case <-n.donec:
		return nil, n.closedErr()
	}
	select {
	case <-p.done:
		res, err := p.result, p.err
		*p = proposal{done: p.done}
		proposalPool.Put(p)
		return res, err
	case <-ctx.Done():
		// The raft goroutine still holds p; leave it to the collector.
		return nil, ctx.Err()
	case <-n.donec:
		// Everything the raft goroutine held was answered before donec.
		select {
		case <-p.done:
			return p.result, p.err
		default:
			return nil, n.closedErr()
		}
	}
}

// ReadBarrier returns once this node's DB reflects every write acknowledged
// by the group before the call (a linearizable read point, raft's ReadIndex).
// A single voter that is leader answers at once: it acknowledges writes only
// after applying them. Followers return a *NotLeaderError (FollowerRead
// serves them too).
func (n *Node) ReadBarrier(ctx context.Context) error {
	if n.isLeader.Load() && n.soleVoter() {
		return nil
	}
	if !n.isLeader.Load() {
		return n.notLeader()
	}
	return n.awaitRead(ctx, &readRequest{done: make(chan error, 1)})
}

// FollowerRead is ReadBarrier on any member: on the leader it is
// ReadBarrier; on a follower (or learner) it asks the leader for its read
// index (raft forwards the ReadIndex request; the leader confirms its
// leadership with a heartbeat round, as for its own reads) and returns once
// this node has applied that index, so that its DB then reflects every
// write acknowledged by the group before the call. It fails with a
// *NotLeaderError (Retryable) when no leader is known, when the leader
// changes before granting the index, or when the index is not granted and
// applied within Options.FollowerReadTimeout (the error then also wraps
// ErrReadTimeout): the read was not served, send it to the leader.
func (n *Node) FollowerRead(ctx context.Context) error {
	if n.isLeader.Load() {
		return n.ReadBarrier(ctx)
	}
	return n.awaitRead(ctx, &readRequest{done: make(chan error, 1), follower: true})
}

// awaitRead hands r to the raft goroutine and waits for its answer.
func (n *Node) awaitRead(ctx context.Context, r *readRequest) error {
	select {
	case n.readc <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.donec:
		return n.closedErr()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.donec:
		select {
		case err := <-r.done:
			return err
		default:
			return n.closedErr()
		}
	}
}

// Close stops the node, its transport and its DB. It waits for the raft
// goroutine; proposals and reads in flight fail with ErrClosed.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.stopc)
		<-n.donec
		n.transport.close()
		n.cpMu.Lock()
		n.dbClosed = true
		n.closeErr = errors.Join(n.db.Close(), n.wal.Close())
		n.cpMu.Unlock()
	})
	if n.loopErr != nil && !errors.Is(n.loopErr, ErrRemoved) {
		return n.loopErr
	}
	return n.closeErr
}

// Done is closed when the node stops: after Close, after a storage failure,
// or once it has applied its own removal from the group. Err then says
// which.
func (n *Node) Done() <-chan struct{} { return n.donec }

// Err is nil while the node runs and after Close; after it stopped on its
// own, the reason: an error wrapping ErrStorage, or ErrRemoved.
func (n *Node) Err() error {
	select {
	case <-n.donec:
		return n.loopErr
	default:
		return nil
	}
}

func (n *Node) closedErr() error {
	if n.loopErr != nil {
		return fmt.Errorf("%w: %w", ErrClosed, n.loopErr)
	}
	return ErrClosed
}

func (n *Node) notLeader() error {
	id, addr := n.Leader()
	if id == n.id {
		// Stale view while leadership moves.
		id, addr = 0, ""
	}
	return &NotLeaderError{LeaderID: id, LeaderAddr: addr}
}
