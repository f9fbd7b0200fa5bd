package consensus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
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
	loopErr   error // set before donec is closed
	closeErr  error

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
	readsByCtx  map[uint64][]*readRequest
	readsWait   []readWait
	staged      *incomingSnapshot
	lastCompact uint64
	logBatch    *pebble.Batch
	answered    uint64 // proposals answered, for the loop to notice
	// answeredAtPropose is answered when the last batch was proposed: the
	// proposers answered since are the ones a linger waits for.
	answeredAtPropose uint64
	confWait          *confWaiter
	confPending       uint64 // index of the last configuration change appended
	// confProposed: a change was just proposed; the next appended entries
	// hold it.
	confProposed bool
	confChanged  bool // the apply batch holds a configuration change
}

type proposal struct {
	cmd    []byte
	term   uint64
	seq    uint64
	result any
	err    error
	done   chan struct{}
}

var proposalPool = sync.Pool{New: func() any { return &proposal{done: make(chan struct{}, 1)} }}

type readRequest struct {
	done chan error
}

type readWait struct {
	index uint64
	reqs  []*readRequest
}

type incomingSnapshot struct {
	msg   *pb.Message
	batch *pebble.Batch // the state range's deletion, then the snapshot's pairs
	// highKeys are the snapshot's keys at or past stateRangeEnd, which the
	// range deletion does not cover.
	highKeys map[string]struct{}
	done     chan error
}

type snapStatus struct {
	id     uint64
	status raft.SnapshotStatus
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
	po.FS = opts.FS
	po.FormatMajorVersion = pebble.FormatNewest
	po.Logger = pebbleLogger{raftLogger{opts.Logger.With("component", "pebble")}}
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		return nil, fmt.Errorf("consensus: open %s: %w", opts.Dir, err)
	}
	store, err := loadLogStore(db, opts.Peers, opts.Join)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	members := confMembers(store.conf)
	if _, closer, err := db.Get(keyRemoved); err == nil {
		_ = closer.Close()
		members = slices.DeleteFunc(members, func(id uint64) bool { return id == opts.ID })
	}
	if len(members) > 0 && !slices.Contains(members, opts.ID) {
		_ = db.Close()
		return nil, fmt.Errorf("%w: node %d is not among the members %v of the group in %s; start a new replica on an empty directory with Join",
			ErrRemoved, opts.ID, members, opts.Dir)
	}
	if !opts.Join && len(members) > 0 && !slices.Equal(members, slices.Sorted(maps.Keys(opts.Peers))) {
		opts.Logger.Info("consensus: the stored membership differs from Peers and wins", "id", opts.ID,
			"members", members, "peers", slices.Sorted(maps.Keys(opts.Peers)))
	}
	if r, ok := sm.(Restorer); ok {
		if err := r.Restore(db, store.appliedIndex); err != nil {
			_ = db.Close()
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
		_ = db.Close()
		return nil, err
	}
	n := &Node{
		opts:        opts,
		id:          opts.ID,
		sm:          sm,
		db:          db,
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
		readsByCtx:  map[uint64][]*readRequest{},
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
				_ = db.Close()
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
// after applying them. Followers return a *NotLeaderError.
func (n *Node) ReadBarrier(ctx context.Context) error {
	if n.isLeader.Load() && n.soleVoter() {
		return nil
	}
	if !n.isLeader.Load() {
		return n.notLeader()
	}
	r := &readRequest{done: make(chan error, 1)}
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
		n.closeErr = n.db.Close()
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

// run is the raft goroutine: it owns the RawNode, the log store and the
// state machine.
func (n *Node) run() {
	ticker := time.NewTicker(n.opts.TickInterval)
	defer ticker.Stop()
	err := guard(func() error { return n.loop(ticker.C) })
	if err != nil && !errors.Is(err, ErrRemoved) {
		n.log.Error("consensus: raft goroutine stopped", "err", err)
	}
	n.loopErr = err
	n.shutdown()
	close(n.donec)
}

func (n *Node) loop(tick <-chan time.Time) error {
	for {
		if !n.rn.HasReady() && len(n.propBuf) == 0 && len(n.readBuf) == 0 {
			select {
			case <-n.stopc:
				return nil
			case <-tick:
				n.rn.Tick()
			case p := <-n.propc:
				n.propBuf = append(n.propBuf, p)
			case m := <-n.recvc:
				n.step(m)
			case r := <-n.readc:
				n.readBuf = append(n.readBuf, r)
			case s := <-n.snapRecvc:
				n.stepSnapshot(s)
			case st := <-n.snapStatusc:
				n.rn.ReportSnapshot(st.id, st.status)
			case id := <-n.unreachc:
				n.rn.ReportUnreachable(id)
			case f := <-n.opc:
				f()
			case from := <-n.removedc:
				return n.stopRemoved(from)
			}
		}
		select {
		case <-n.stopc:
			return nil
		default:
		}
		n.drain(tick)
		// First let raft hand out what it already has, committed entries in
		// particular: their proposers, once answered, propose again in time
		// to join the next log append instead of waiting a whole fsync.
		for n.rn.HasReady() {
			if err := n.handleReady(); err != nil {
				return err
			}
		}
		if n.answered != n.answeredAtPropose {
			n.linger(int(n.answered - n.answeredAtPropose))
			n.answeredAtPropose = n.answered
		}
		n.proposeBatch()
		n.readIndexBatch()
		if n.rn.HasReady() {
			if err := n.handleReady(); err != nil {
				return err
			}
		}
	}
}

// drain takes, without blocking, everything already waiting for the raft
// goroutine, so that one Ready (one fsync) covers it all.
func (n *Node) drain(tick <-chan time.Time) {
	for range 4096 {
		select {
		case m := <-n.recvc:
			n.step(m)
			continue
		default:
		}
		break
	}
	n.drainProposals()
	for {
		select {
		case r := <-n.readc:
			n.readBuf = append(n.readBuf, r)
			continue
		case <-tick:
			n.rn.Tick()
			continue
		case s := <-n.snapRecvc:
			n.stepSnapshot(s)
			continue
		case st := <-n.snapStatusc:
			n.rn.ReportSnapshot(st.id, st.status)
			continue
		case id := <-n.unreachc:
			n.rn.ReportUnreachable(id)
			continue
		case f := <-n.opc:
			f()
			continue
		default:
		}
		return
	}
}

// linger gives the proposers just answered a moment to propose again, so
// that their next writes join this log append (Options.ProposalLinger):
// until as many proposals wait as were answered, or the linger is over.
func (n *Node) linger(answered int) {
	runtime.Gosched()
	n.drainProposals()
	if n.opts.ProposalLinger <= 0 || !n.isLeader.Load() {
		return
	}
	want := min(answered, n.opts.MaxProposalBatch)
	deadline := time.Now().Add(n.opts.ProposalLinger)
	for len(n.propBuf) < want && time.Now().Before(deadline) {
		runtime.Gosched()
		n.drainProposals()
	}
}

func (n *Node) drainProposals() {
	for len(n.propBuf) < n.opts.MaxProposalBatch {
		select {
		case p := <-n.propc:
			n.propBuf = append(n.propBuf, p)
			continue
		default:
		}
		return
	}
}

func (n *Node) step(m *pb.Message) {
	n.metrics.messagesRecv.Add(1)
	if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		n.log.Debug("consensus: step", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
}

func (n *Node) stepSnapshot(s *incomingSnapshot) {
	if n.staged != nil {
		_ = n.staged.batch.Close()
	}
	n.staged = s
	n.metrics.messagesRecv.Add(1)
	s.done <- n.rn.Step(s.msg)
}

// proposeBatch hands every waiting proposal to raft as one MsgProp.
func (n *Node) proposeBatch() {
	batch := n.propBuf
	if len(batch) == 0 {
		return
	}
	n.propBuf = n.propBuf[:0]
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		n.failProposals(batch, n.notLeader())
		return
	}
	size := 0
	for _, p := range batch {
		size += proposalHeaderLen + len(p.cmd)
	}
	buf := make([]byte, 0, size)
	ents := make([]*pb.Entry, len(batch))
	entBuf := make([]pb.Entry, len(batch))
	for i, p := range batch {
		n.seq++
		p.term, p.seq = st.GetTerm(), n.seq
		start := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, p.seq)
		buf = append(buf, p.cmd...)
		p.cmd = nil
		entBuf[i].Data = buf[start:len(buf):len(buf)]
		ents[i] = &entBuf[i]
	}
	err := n.rn.Step(&pb.Message{Type: pb.MsgProp.Enum(), From: new(n.id), Entries: ents})
	if err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			err = ErrProposalDropped
		}
		n.failProposals(batch, err)
		return
	}
	n.pending = append(n.pending, batch...)
	n.metrics.proposals.Add(uint64(len(batch)))
}

func (n *Node) failProposals(ps []*proposal, err error) {
	for i, p := range ps {
		p.cmd, p.err = nil, err
		p.done <- struct{}{}
		ps[i] = nil
	}
}

// readIndexBatch asks raft for one read index covering every waiting
// ReadBarrier.
func (n *Node) readIndexBatch() {
	if len(n.readBuf) == 0 {
		return
	}
	reqs := slices.Clone(n.readBuf)
	clear(n.readBuf)
	n.readBuf = n.readBuf[:0]
	if !n.isLeader.Load() {
		err := n.notLeader()
		for _, r := range reqs {
			r.done <- err
		}
		return
	}
	n.readSeq++
	n.readsByCtx[n.readSeq] = reqs
	n.rn.ReadIndex(binary.BigEndian.AppendUint64(nil, n.readSeq))
	n.metrics.readIndexes.Add(1)
}

func (n *Node) handleReady() error {
	rd := n.rn.Ready()
	if rd.SoftState != nil {
		n.setSoftState(rd.SoftState)
	}
	// Messages that promise nothing about this node's log (appends and
	// heartbeats from a leader, votes requests) go out before the fsync, so
	// the leader's disk write overlaps its followers'. Responses (MsgAppResp,
	// MsgVoteResp, MsgPreVoteResp) wait until what they promise is durable.
	for _, m := range rd.Messages {
		if !needsDurable(m) {
			n.sendMessage(m)
		}
	}

	// Committed entries that are already in the durable log are applied
	// before this Ready's fsync, so their proposers need not wait for it.
	// Entries committed as they arrive (a follower told the commit index
	// with the entries) are applied only after they are durable here.
	ents := rd.CommittedEntries
	applyFirst := len(ents) > 0 && ents[len(ents)-1].GetIndex() <= n.store.last && raft.IsEmptySnap(rd.Snapshot)
	if applyFirst {
		if err := n.apply(ents); err != nil {
			return err
		}
	}

	// 1. Make the log, hard state and any snapshot durable: one batch, one fsync.
	b := n.logBatch
	snapApplied := false
	if !raft.IsEmptySnap(rd.Snapshot) {
		var err error
		if b, err = n.writeSnapshot(rd.Snapshot); err != nil {
			return err
		}
		snapApplied = true
	}
	if err := n.store.writeEntries(b, rd.Entries); err != nil {
		return err
	}
	n.noteConfEntries(rd.Entries)
	if rd.HardState != nil {
		if err := b.Set(keyHardState, encodeHardState(rd.HardState), nil); err != nil {
			return err
		}
	}
	var ahead *appliedBatch
	if !b.Empty() {
		sync := rd.MustSync || snapApplied
		opt := pebble.NoSync
		if sync {
			opt = pebble.Sync
		}
		if sync && n.canApplyAhead(rd) {
			// A sole voter's own entries commit as soon as they are durable:
			// apply them while the fsync runs, and publish the result (and
			// answer their proposers) once it is done.
			if err := n.db.ApplyNoSyncWait(b, opt); err != nil {
				return fmt.Errorf("consensus: write log: %w", err)
			}
			var aerr error
			ahead, aerr = n.applyEntries(rd.Entries)
			if err := b.SyncWait(); err != nil {
				ahead.discard()
				return fmt.Errorf("%w: write log: %w", ErrStorage, err)
			}
			if aerr != nil {
				return aerr
			}
			if ahead != nil {
				n.metrics.appliedInSync.Add(uint64(ahead.applied))
			}
		} else if err := b.Commit(opt); err != nil {
			return fmt.Errorf("consensus: write log: %w", err)
		}
		if sync {
			n.metrics.fsyncs.Add(1)
		}
		if len(rd.Entries) > 0 {
			n.metrics.logAppends.Add(1)
			n.metrics.entriesAppended.Add(uint64(len(rd.Entries)))
		}
	}
	if snapApplied {
		_ = b.Close()
	} else {
		b.Reset()
	}
	n.store.commitEntries(rd.Entries)
	if rd.HardState != nil {
		n.store.hard = rd.HardState
	}
	if snapApplied {
		if err := n.afterSnapshot(rd.Snapshot); err != nil {
			return err
		}
	}
	if n.staged != nil {
		// A staged snapshot is for the Ready right after its MsgSnap was
		// stepped; raft did not want it.
		_ = n.staged.batch.Close()
		n.staged = nil
	}

	// 2. Send the responses, now that what they promise is durable.
	for _, m := range rd.Messages {
		if needsDurable(m) {
			n.sendMessage(m)
		}
	}

	// 3. Apply what is committed: one batch, no fsync (the log is durable).
	if ahead != nil {
		if err := n.publishApplied(ahead); err != nil {
			return err
		}
	}
	if !applyFirst {
		if err := n.apply(ents); err != nil {
			return err
		}
	}

	// 4. Read indexes.
	for _, rs := range rd.ReadStates {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		seq := binary.BigEndian.Uint64(rs.RequestCtx)
		reqs, ok := n.readsByCtx[seq]
		if !ok {
			continue
		}
		delete(n.readsByCtx, seq)
		n.readsWait = append(n.readsWait, readWait{index: rs.Index, reqs: reqs})
	}
	n.releaseReads()

	n.rn.Advance(rd)
	n.updatePositions()
	return nil
}

// needsDurable reports whether m may only be sent once the Ready it came
// in is durable: raft puts exactly these in its after-append queue.
func needsDurable(m *pb.Message) bool {
	switch m.GetType() {
	case pb.MsgAppResp, pb.MsgVoteResp, pb.MsgPreVoteResp:
		return true
	}
	return false
}

func (n *Node) sendMessage(m *pb.Message) {
	var snap pinnedSnapshot
	if m.GetType() == pb.MsgSnap {
		snap = n.store.takeSnapshot(m.GetSnapshot().GetData())
	}
	n.transport.send(m, snap)
}

func (n *Node) setSoftState(ss *raft.SoftState) {
	if old := n.leaderID.Swap(ss.Lead); old != ss.Lead {
		n.metrics.leaderChanges.Add(1)
		n.log.Info("consensus: leader changed", "id", n.id, "leader", ss.Lead, "term", n.metrics.term.Load())
	}
	n.role.Store(ss.RaftState)
	if ss.RaftState == raft.StateLeader {
		n.leaderTerm.Store(n.rn.BasicStatus().GetTerm())
	}
	wasLeader := n.isLeader.Swap(ss.RaftState == raft.StateLeader)
	if wasLeader && ss.RaftState != raft.StateLeader {
		// Read indexes not yet granted never will be by this node.
		err := n.notLeader()
		for seq, reqs := range n.readsByCtx {
			for _, r := range reqs {
				r.done <- err
			}
			delete(n.readsByCtx, seq)
		}
	}
}

func (n *Node) updatePositions() {
	m := &n.metrics
	m.appliedIndex.Store(n.store.appliedIndex)
	m.commitIndex.Store(n.store.hard.GetCommit())
	m.term.Store(n.store.hard.GetTerm())
	m.lastIndex.Store(n.store.last)
	m.firstIdx.Store(n.store.truncIndex + 1)
}

// apply applies committed entries in one indexed batch, records the applied
// index in it, compacts the log when due, and answers local proposers.
func (n *Node) apply(ents []*pb.Entry) error {
	a, err := n.applyEntries(ents)
	if err != nil {
		a.discard()
		return err
	}
	return n.publishApplied(a)
}

// appliedBatch is what applyEntries made of a run of entries: their writes
// and the applied index, in a batch not yet committed, and the log
// compaction due with them.
type appliedBatch struct {
	b           *pebble.Batch
	applied     int
	compactTo   uint64
	compactTerm uint64
}

func (a *appliedBatch) discard() {
	if a != nil && a.b != nil {
		_ = a.b.Close()
		a.b = nil
	}
}

// applyEntries runs the StateMachine over ents into one indexed batch,
// without committing it: nothing shows in the DB, and nobody is answered,
// until publishApplied. It returns nil when every entry was applied before.
func (n *Node) applyEntries(ents []*pb.Entry) (*appliedBatch, error) {
	if len(ents) == 0 || ents[len(ents)-1].GetIndex() <= n.store.appliedIndex {
		return nil, nil
	}
	s := n.store
	a := &appliedBatch{b: n.db.NewIndexedBatch()}
	b := a.b
	for _, e := range ents {
		idx := e.GetIndex()
		if idx <= s.appliedIndex {
			continue
		}
		switch e.GetType() {
		case pb.EntryNormal:
			if len(e.Data) >= proposalHeaderLen {
				seq := binary.BigEndian.Uint64(e.Data)
				res, err := n.sm.Apply(idx, e.Data[proposalHeaderLen:], b)
				n.resolve(e.GetTerm(), seq, res, err)
			} else {
				n.resolve(e.GetTerm(), 0, nil, nil)
			}
		case pb.EntryConfChange:
			var cc pb.ConfChange
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return a, fmt.Errorf("%w: conf change at %d: %w", ErrCorrupt, idx, err)
			}
			if err := n.applyConfChange(idx, e.GetTerm(), cc.AsV2(), b); err != nil {
				return a, err
			}
			n.resolve(e.GetTerm(), 0, nil, nil)
		case pb.EntryConfChangeV2:
			var cc pb.ConfChangeV2
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return a, fmt.Errorf("%w: conf change at %d: %w", ErrCorrupt, idx, err)
			}
			if err := n.applyConfChange(idx, e.GetTerm(), &cc, b); err != nil {
				return a, err
			}
			n.resolve(e.GetTerm(), 0, nil, nil)
		}
		n.dropConfWait(idx, e.GetTerm())
		s.appliedIndex, s.appliedTerm = idx, e.GetTerm()
		a.applied++
	}
	if err := b.Set(keyApplied, encodeApplied(s.appliedIndex, s.appliedTerm, s.confBytes), nil); err != nil {
		return a, err
	}
	if s.appliedIndex-n.lastCompact >= n.opts.CompactEvery && s.appliedIndex > n.opts.KeepEntries {
		compactTo := s.appliedIndex - n.opts.KeepEntries
		if compactTo > s.truncIndex {
			term, err := s.Term(compactTo)
			if err != nil {
				return a, err
			}
			if err := s.writeCompaction(b, compactTo, term); err != nil {
				return a, err
			}
			a.compactTo, a.compactTerm = compactTo, term
		}
	}
	return a, nil
}

// publishApplied commits what applyEntries made, then answers the local
// proposers and the reads waiting for it.
func (n *Node) publishApplied(a *appliedBatch) error {
	if a == nil {
		return nil
	}
	defer a.discard()
	s := n.store
	if err := a.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("consensus: apply: %w", err)
	}
	if c, ok := n.sm.(Committer); ok {
		c.Committed()
	}
	if a.compactTo > 0 {
		s.commitCompaction(a.compactTo, a.compactTerm)
		n.lastCompact = s.appliedIndex
		n.metrics.compactions.Add(1)
	}
	n.metrics.applyBatches.Add(1)
	n.metrics.entriesApplied.Add(uint64(a.applied))
	n.answered += uint64(len(n.replies))
	for i, p := range n.replies {
		p.done <- struct{}{}
		n.replies[i] = nil
	}
	n.replies = n.replies[:0]
	n.releaseReads()
	if n.confChanged {
		return n.afterConfChange()
	}
	return nil
}

// canApplyAhead reports whether rd's new entries may be applied while their
// fsync runs: this node is the group's only voter and leader, with no
// learner (a snapshot sent to one would hold entries not yet durable), every
// earlier entry is applied, and the new ones change no configuration.
func (n *Node) canApplyAhead(rd raft.Ready) bool {
	if n.opts.ApplyAfterSync || len(rd.Entries) == 0 || !n.isLeader.Load() || !raft.IsEmptySnap(rd.Snapshot) {
		return false
	}
	v := n.view.Load()
	if len(v.voters) != 1 || v.voters[0] != n.id || len(v.learners) > 0 {
		return false
	}
	if rd.Entries[0].GetIndex() != n.store.appliedIndex+1 {
		return false
	}
	for _, e := range rd.Entries {
		if e.GetType() != pb.EntryNormal {
			return false
		}
	}
	return true
}

// resolve matches an applied entry (term, seq) against the local proposals
// waiting in log order. Proposals of an older term, or of the same term and
// an older sequence, can no longer be applied: raft's log holds one term's
// entries in proposal order and never an older term after a newer one.
func (n *Node) resolve(term, seq uint64, res any, err error) {
	for n.pendingHead < len(n.pending) {
		p := n.pending[n.pendingHead]
		if p.term > term || (p.term == term && p.seq > seq) {
			return
		}
		n.pending[n.pendingHead] = nil
		n.pendingHead++
		if p.term == term && p.seq == seq {
			p.result, p.err = res, err
		} else {
			p.err = ErrProposalDropped
			if !n.isLeader.Load() {
				p.err = fmt.Errorf("%w: %w", ErrProposalDropped, n.notLeader())
			}
		}
		n.replies = append(n.replies, p)
		if n.pendingHead == len(n.pending) {
			n.pending, n.pendingHead = n.pending[:0], 0
		} else if n.pendingHead > 1024 && n.pendingHead > len(n.pending)/2 {
			k := copy(n.pending, n.pending[n.pendingHead:])
			clear(n.pending[k:])
			n.pending, n.pendingHead = n.pending[:k], 0
		}
		if p.term == term && p.seq == seq {
			return
		}
	}
}

func (n *Node) releaseReads() {
	if len(n.readsWait) == 0 {
		return
	}
	applied := n.store.appliedIndex
	k := 0
	for _, w := range n.readsWait {
		if w.index <= applied {
			for _, r := range w.reqs {
				r.done <- nil
			}
			continue
		}
		n.readsWait[k] = w
		k++
	}
	clear(n.readsWait[k:])
	n.readsWait = n.readsWait[:k]
}

// shutdown fails everything still waiting on the raft goroutine.
func (n *Node) shutdown() {
	err := n.closedErr()
	n.failProposals(n.propBuf, err)
	n.failProposals(n.pending[n.pendingHead:], err)
	n.failProposals(n.replies, err)
	for _, r := range n.readBuf {
		r.done <- err
	}
	for _, reqs := range n.readsByCtx {
		for _, r := range reqs {
			r.done <- err
		}
	}
	for _, w := range n.readsWait {
		for _, r := range w.reqs {
			r.done <- err
		}
	}
	if n.staged != nil {
		_ = n.staged.batch.Close()
	}
	if n.confWait != nil {
		n.confWait.done <- err
		n.confWait = nil
	}
	n.store.closeSnapshots()
	_ = n.logBatch.Close()
}
