package consensus

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Membership changes. The leader proposes one ConfChangeV2 at a time, each
// with a single change (raft's simple configuration change, never joint
// consensus): add a learner, promote a learner to voter, remove a member.
// Its context is a stratov1.RaftMembers holding the address of the member
// it adds and a change ID. Every replica applies it on the raft goroutine
// with RawNode.ApplyConfChange and writes the resulting ConfState and the
// new address book in the apply batch; then its transport connects to new
// members and drops removed ones. A replica that applies its own removal
// stops (ErrRemoved).

// Member is one member of the group.
type Member struct {
	ID      uint64
	Addr    string
	Learner bool
	// Match and Active are the leader's view of the member's replication
	// (the last index known to be in its log, and whether it was heard from
	// within an election timeout); zero on other replicas.
	Match  uint64
	Active bool
}

// groupView is the configuration as readers outside the raft goroutine see
// it, replaced whole (copy on write) when the configuration changes.
type groupView struct {
	voters   []uint64
	learners []uint64
	addrs    map[uint64]string // every member's effective address
	removed  []uint64          // IDs removed from the group
	groupID  uint64            // 0: not known yet (waiting to join)
}

func (v *groupView) isVoter(id uint64) bool   { return slices.Contains(v.voters, id) }
func (v *groupView) isLearner(id uint64) bool { return slices.Contains(v.learners, id) }

// members lists the view's members by ID.
func (v *groupView) members() []Member {
	out := make([]Member, 0, len(v.voters)+len(v.learners))
	for _, id := range v.voters {
		out = append(out, Member{ID: id, Addr: v.addrs[id]})
	}
	for _, id := range v.learners {
		out = append(out, Member{ID: id, Addr: v.addrs[id], Learner: true})
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// confMembers lists every node of cs (voters and learners, incoming and
// outgoing), sorted, without duplicates.
func confMembers(cs *pb.ConfState) []uint64 {
	var ids []uint64
	ids = append(ids, cs.GetVoters()...)
	ids = append(ids, cs.GetLearners()...)
	ids = append(ids, cs.GetVotersOutgoing()...)
	ids = append(ids, cs.GetLearnersNext()...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// addressBook is the encoded form of stratov1.RaftMembers: the members'
// addresses, the removed IDs, the group's ID, and (in a change's context)
// the change ID.
type addressBook struct {
	addrs    map[uint64]string
	removed  []uint64
	groupID  uint64
	changeID uint64
}

func (ab addressBook) encode() []byte {
	m := &stratov1.RaftMembers{ChangeId: ab.changeID, Removed: ab.removed, GroupId: ab.groupID}
	for _, id := range slices.Sorted(maps.Keys(ab.addrs)) {
		m.Members = append(m.Members, &stratov1.RaftMember{Id: id, Addr: ab.addrs[id]})
	}
	b, err := proto.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("consensus: marshal address book: %v", err))
	}
	return b
}

func decodeBook(v []byte) (addressBook, error) {
	var m stratov1.RaftMembers
	if err := proto.Unmarshal(v, &m); err != nil {
		return addressBook{}, fmt.Errorf("%w: address book: %w", ErrCorrupt, err)
	}
	ab := addressBook{addrs: make(map[uint64]string, len(m.GetMembers())), removed: m.GetRemoved(),
		groupID: m.GetGroupId(), changeID: m.GetChangeId()}
	for _, mem := range m.GetMembers() {
		ab.addrs[mem.GetId()] = mem.GetAddr()
	}
	return ab, nil
}

// groupIDOf is the ID of a group created with voters: a hash of their IDs
// (not their addresses, which replicas may spell differently), never 0.
func groupIDOf(voters []uint64) uint64 {
	h := fnv.New64a()
	for _, id := range slices.Sorted(slices.Values(voters)) {
		_ = binary.Write(h, binary.BigEndian, id)
	}
	return h.Sum64() | 1
}

// refreshView publishes the store's configuration and address book (with
// this node's address overrides) to readers and to the transport. Raft
// goroutine (or Open) only.
func (n *Node) refreshView() {
	s := n.store
	addrs := make(map[uint64]string, len(s.book))
	for id, a := range s.book {
		if o, ok := n.overrides[id]; ok && o != "" {
			a = o
		}
		addrs[id] = a
	}
	v := &groupView{
		voters:   slices.Sorted(slices.Values(append(slices.Clone(s.conf.GetVoters()), s.conf.GetVotersOutgoing()...))),
		learners: slices.Sorted(slices.Values(append(slices.Clone(s.conf.GetLearners()), s.conf.GetLearnersNext()...))),
		addrs:    addrs,
		removed:  slices.Clone(s.removed),
		groupID:  s.groupID,
	}
	v.voters, v.learners = slices.Compact(v.voters), slices.Compact(v.learners)
	n.view.Store(v)
	if n.transport != nil {
		n.transport.sync(addrs)
	}
}

// addrOf is the address of member id, or of a node this one heard from
// while it waited to join; "" when unknown.
func (n *Node) addrOf(id uint64) string {
	if a, ok := n.view.Load().addrs[id]; ok {
		return a
	}
	if id == n.id {
		return n.opts.Peers[id]
	}
	if n.transport != nil {
		return n.transport.learnedAddr(id)
	}
	return ""
}

// soleVoter reports whether this node is the group's only voter.
func (n *Node) soleVoter() bool {
	v := n.view.Load()
	return len(v.voters) == 1 && v.voters[0] == n.id
}

// applyConfChange applies a committed configuration change at index
// (raft goroutine): raft's configuration, the new address book in b, and
// the answer to the proposer waiting on this node.
func (n *Node) applyConfChange(index, term uint64, cc *pb.ConfChangeV2, b *pebble.Batch) error {
	var ctxBook addressBook
	if len(cc.GetContext()) > 0 {
		var err error
		if ctxBook, err = decodeBook(cc.GetContext()); err != nil {
			return fmt.Errorf("conf change at %d: %w", index, err)
		}
	}
	added, changeID := ctxBook.addrs, ctxBook.changeID
	s := n.store
	cs := n.rn.ApplyConfChange(cc)
	book := map[uint64]string{}
	for _, id := range confMembers(cs) {
		if a, ok := added[id]; ok {
			book[id] = a
		} else {
			book[id] = s.book[id]
		}
	}
	removed := slices.Clone(s.removed)
	for id := range s.book {
		if _, ok := book[id]; !ok && !slices.Contains(removed, id) {
			removed = append(removed, id)
		}
	}
	if err := s.setConf(cs); err != nil {
		return err
	}
	s.setBook(addressBook{addrs: book, removed: removed, groupID: s.groupID})
	if err := b.Set(keyMembers, s.bookBytes, nil); err != nil {
		return err
	}
	n.confChanged = true
	n.log.Info("consensus: configuration changed", "id", n.id, "index", index, "voters", cs.GetVoters(),
		"learners", cs.GetLearners())
	if w := n.confWait; w != nil && changeID != 0 && w.id == changeID {
		// Answered by afterConfChange, once the batch is committed and the
		// view shows the change: the proposer reads the members next.
		n.confApplied = w
		n.confWait = nil
	}
	n.dropConfWait(index, term)
	return nil
}

// dropConfWait fails the waiting configuration change once an entry that
// rules it out is applied: an entry of a later term, or another entry at
// its index.
func (n *Node) dropConfWait(index, term uint64) {
	w := n.confWait
	if w == nil || (term <= w.term && (w.index == 0 || index < w.index)) {
		return
	}
	w.done <- ErrProposalDropped
	n.confWait = nil
}

// noteConfEntries records the index of configuration changes appended to
// the log, so that no second one is proposed before they are applied.
func (n *Node) noteConfEntries(ents []*pb.Entry) {
	proposed := n.confProposed
	if len(ents) > 0 {
		n.confProposed = false
	}
	seen := false
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryConfChange, pb.EntryConfChangeV2:
		default:
			continue
		}
		seen = true
		n.confPending = e.GetIndex()
		if w := n.confWait; w != nil && w.index == 0 && w.term == e.GetTerm() {
			w.index = e.GetIndex()
		}
	}
	if proposed && len(ents) > 0 && !seen {
		// Raft appended the change as an empty entry (it refuses a change
		// while another is pending, which startConfChange checks first).
		n.confPending = 0
		if w := n.confWait; w != nil && w.index == 0 {
			w.done <- ErrProposalDropped
			n.confWait = nil
		}
	}
}

// afterConfChange runs once the batch of a configuration change is
// committed (or a snapshot installed): the view and the transport follow,
// and a node no longer in the group stops.
func (n *Node) afterConfChange() error {
	n.confChanged = false
	n.refreshView()
	if w := n.confApplied; w != nil {
		w.done <- nil
		n.confApplied = nil
	}
	members := confMembers(n.store.conf)
	if len(members) > 0 && !slices.Contains(members, n.id) {
		n.log.Info("consensus: this node was removed from the group; stopping", "id", n.id)
		// The apply batch was committed without sync: make the removal
		// durable, so that a restart refuses to serve.
		if err := n.db.LogData(nil, pebble.Sync); err != nil {
			return fmt.Errorf("%w: %w", ErrStorage, err)
		}
		return ErrRemoved
	}
	return nil
}

// stopRemoved stops a node that a peer says was removed from the group: it
// usually never applies its own removal, since the leader stops sending to
// it once the removal is committed. Its next campaign or message reaches a
// member, which refuses it.
func (n *Node) stopRemoved(by uint64) error {
	n.log.Info("consensus: a member says this node was removed from the group; stopping", "id", n.id, "by", by)
	if err := n.db.Set(keyRemoved, binary.BigEndian.AppendUint64(nil, by), pebble.Sync); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	return ErrRemoved
}

type confWaiter struct {
	id    uint64 // the change ID in the proposal's context
	term  uint64 // the term it was proposed in
	index uint64 // its log index, once appended
	done  chan error
}

// do runs f on the raft goroutine and returns once it has run.
func (n *Node) do(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case n.opc <- func() { f(); close(done) }:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.donec:
		return n.closedErr()
	}
	<-done
	return nil
}

// beginChange takes the node's membership-change slot, or says what holds it.
func (n *Node) beginChange(what string) error {
	if !n.changeMu.TryLock() {
		cur, _ := n.changeWhat.Load().(string)
		return fmt.Errorf("%w (%s); retry when it completes", ErrChangeInProgress, cur)
	}
	n.changeWhat.Store(what)
	return nil
}

func (n *Node) endChange() {
	n.changeWhat.Store("")
	n.changeMu.Unlock()
}

// AddMember adds node id, serving its Raft service at addr, to the group:
// first as a learner, which catches up from the log or a snapshot without
// counting for quorum, then, once its log is within Options.PromoteMaxLag
// entries of the leader's commit index, as a voter (unless learnerOnly).
// The node must have been started with Options.Join (or hold a copy of the
// group's state). Called again for a learner at the same address, it goes
// straight to the promotion; for a voter at the same address it does
// nothing. Leader only; one change at a time (ErrChangeInProgress).
func (n *Node) AddMember(ctx context.Context, id uint64, addr string, learnerOnly bool) error {
	if id == 0 || addr == "" {
		return fmt.Errorf("%w: a member needs a non-zero ID and an address", ErrInvalidMember)
	}
	if err := n.beginChange(fmt.Sprintf("adding %d at %s", id, addr)); err != nil {
		return err
	}
	defer n.endChange()
	v, err := n.settledView(ctx)
	if err != nil {
		return err
	}
	switch {
	case (v.isVoter(id) || v.isLearner(id)) && v.addrs[id] != addr:
		return fmt.Errorf("%w: %d is already a member, at %s", ErrInvalidMember, id, v.addrs[id])
	case v.isVoter(id):
		return nil
	case !v.isLearner(id):
		if err := n.refreshOwnAddress(ctx); err != nil {
			return err
		}
		cc := &pb.ConfChangeSingle{Type: pb.ConfChangeType_ConfChangeAddLearnerNode.Enum(), NodeId: new(id)}
		if err := n.proposeConfChange(ctx, cc, addr); err != nil {
			return err
		}
	}
	if learnerOnly {
		return nil
	}
	if err := n.waitCaughtUp(ctx, id); err != nil {
		return err
	}
	return n.proposeConfChange(ctx, &pb.ConfChangeSingle{Type: pb.ConfChangeType_ConfChangeAddNode.Enum(), NodeId: new(id)}, "")
}

// refreshOwnAddress records, before a sole voter adds a member, the
// address it was started with (Options.Peers) in the replicated address
// book when the book holds another: its directory was made where it
// listened elsewhere (a benchmark's in-process meta on port 0, a host
// renamed). The others reach the members at the book's addresses, so a
// new member would never reach it. With more voters the book is left
// alone: their Peers may spell one address differently.
func (n *Node) refreshOwnAddress(ctx context.Context) error {
	var (
		stale, own string
		refresh    bool
	)
	if err := n.do(ctx, func() {
		own, stale = n.overrides[n.id], n.store.book[n.id]
		refresh = own != "" && n.soleVoter() && stale != own
	}); err != nil {
		return err
	}
	if !refresh {
		return nil
	}
	n.log.Info("consensus: recording this sole voter's address", "id", n.id, "was", stale, "addr", own)
	return n.proposeConfChange(ctx, &pb.ConfChangeSingle{Type: pb.ConfChangeType_ConfChangeUpdateNode.Enum(), NodeId: new(n.id)}, own)
}

// leaderStatus is raft's status, with every follower's progress, on the
// leader; a *NotLeaderError elsewhere.
func (n *Node) leaderStatus(ctx context.Context) (raft.Status, error) {
	var (
		st  raft.Status
		err error
	)
	if derr := n.do(ctx, func() {
		if !n.isLeader.Load() {
			err = n.notLeader()
			return
		}
		st = n.rn.Status()
	}); derr != nil {
		return st, derr
	}
	return st, err
}

// waitCaughtUp waits until learner id's log is within PromoteMaxLag entries
// of the commit index, as the leader tracks it.
func (n *Node) waitCaughtUp(ctx context.Context, id uint64) error {
	var match, commit uint64
	notCaughtUp := func(err error) error {
		return fmt.Errorf("learner %d has not caught up (log at %d, commit %d; it stays a learner, add it again to promote it): %w",
			id, match, commit, err)
	}
	for {
		st, err := n.leaderStatus(ctx)
		if err != nil {
			if ctx.Err() != nil {
				// The time ran out while asking the raft loop.
				return notCaughtUp(err)
			}
			return err
		}
		pr, found := st.Progress[id]
		switch v := n.view.Load(); {
		case found:
			match, commit = pr.Match, st.GetCommit()
			if pr.State == tracker.StateReplicate && pr.RecentActive && match+n.opts.PromoteMaxLag >= commit {
				return nil
			}
		case v.isLearner(id) || v.isVoter(id):
			// Applied, not yet tracked: a new leader catching up.
		default:
			// The addition did not survive a change of leader (this node
			// leads again, or still believes it leads): it was never
			// committed.
			return fmt.Errorf("%w: the addition of %d was lost in a change of leader; add it again", ErrProposalDropped, id)
		}
		select {
		case <-ctx.Done():
			return notCaughtUp(ctx.Err())
		case <-time.After(n.opts.TickInterval):
		}
	}
}

// RemoveMember removes node id from the group. Removing the leader itself
// first hands leadership to the most up-to-date other voter and returns a
// *NotLeaderError naming it: send the call again there. Removing the last
// voter is refused. Leader only; one change at a time.
func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	if err := n.beginChange(fmt.Sprintf("removing %d", id)); err != nil {
		return err
	}
	defer n.endChange()
	v, err := n.settledView(ctx)
	if err != nil {
		return err
	}
	if !v.isVoter(id) && !v.isLearner(id) {
		return fmt.Errorf("%w: %d is not a member", ErrInvalidMember, id)
	}
	if v.isVoter(id) && len(v.voters) == 1 {
		return fmt.Errorf("%w: %d is the last voter", ErrInvalidMember, id)
	}
	if id == n.id {
		to, err := n.bestOtherVoter(ctx)
		if err != nil {
			return err
		}
		if err := n.transfer(ctx, to); err != nil {
			return err
		}
		return n.notLeader()
	}
	return n.proposeConfChange(ctx, &pb.ConfChangeSingle{Type: pb.ConfChangeType_ConfChangeRemoveNode.Enum(), NodeId: new(id)}, "")
}

// TransferLeadership makes voter id the leader and waits until it is (at
// most two election timeouts, or ctx). Leader only; it counts as a
// membership change (one at a time).
func (n *Node) TransferLeadership(ctx context.Context, id uint64) error {
	if err := n.beginChange(fmt.Sprintf("moving leadership to %d", id)); err != nil {
		return err
	}
	defer n.endChange()
	if !n.view.Load().isVoter(id) {
		return fmt.Errorf("%w: %d is not a voter", ErrInvalidMember, id)
	}
	if id == n.id && n.isLeader.Load() {
		return nil
	}
	return n.transfer(ctx, id)
}

// transfer asks raft to hand leadership to id, up to three times: raft
// drops a transfer that has not completed within an election timeout
// (e.g. the target was busy catching up with the last entries).
func (n *Node) transfer(ctx context.Context, id uint64) error {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = n.transferOnce(ctx, id); !errors.Is(err, ErrTransferFailed) {
			return err
		}
		n.log.Info("consensus: leadership transfer did not complete", "to", id, "attempt", attempt)
	}
	return err
}

func (n *Node) transferOnce(ctx context.Context, id uint64) error {
	var err error
	if derr := n.do(ctx, func() {
		if !n.isLeader.Load() {
			err = n.notLeader()
			return
		}
		n.rn.TransferLeader(id)
	}); derr != nil {
		return derr
	}
	if err != nil {
		return err
	}
	deadline := time.Now().Add(2 * time.Duration(n.opts.ElectionTicks) * n.opts.TickInterval)
	for n.leaderID.Load() != id {
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: leadership did not move to %d (is it up and caught up?)", ErrTransferFailed, id)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.donec:
			return n.closedErr()
		case <-time.After(n.opts.TickInterval / 4):
		}
	}
	return nil
}

// bestOtherVoter is the voter other than this node with the highest match
// among those recently active. With check-quorum raft clears every
// follower's activity at each election timeout and sets it again on the
// next reply, so an empty answer is asked again for up to an election
// timeout before it is believed.
func (n *Node) bestOtherVoter(ctx context.Context) (uint64, error) {
	deadline := time.Now().Add(time.Duration(n.opts.ElectionTicks) * n.opts.TickInterval)
	for {
		id, err := n.activeOtherVoter(ctx)
		if !errors.Is(err, ErrTransferFailed) || time.Now().After(deadline) {
			return id, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-n.donec:
			return 0, n.closedErr()
		case <-time.After(n.opts.TickInterval / 2):
		}
	}
}

func (n *Node) activeOtherVoter(ctx context.Context) (uint64, error) {
	st, err := n.leaderStatus(ctx)
	if err != nil {
		return 0, err
	}
	var best, match uint64
	for _, id := range n.view.Load().voters {
		pr, ok := st.Progress[id]
		if id == n.id || !ok || !pr.RecentActive {
			continue
		}
		if best == 0 || pr.Match > match {
			best, match = id, pr.Match
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("%w: no other voter is active to take over leadership", ErrTransferFailed)
	}
	return best, nil
}

// proposeConfChange proposes one change and waits until it is applied on
// this node. addr is the address of the node an addition adds.
func (n *Node) proposeConfChange(ctx context.Context, change *pb.ConfChangeSingle, addr string) error {
	w := &confWaiter{id: rand.Uint64() | 1, done: make(chan error, 1)}
	// A new leader that has not applied its log yet, a change committed
	// but not yet applied, or a leadership transfer are over within an
	// election timeout or two: wait for them rather than fail.
	deadline := time.Now().Add(2 * time.Duration(n.opts.ElectionTicks) * n.opts.TickInterval)
	for {
		var (
			err       error
			transient bool
		)
		if derr := n.do(ctx, func() { transient, err = n.startConfChange(w, change, addr) }); derr != nil {
			return derr
		}
		if err == nil {
			break
		}
		if !transient || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(n.opts.TickInterval):
		}
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrResultUnknown, ctx.Err())
	case <-n.donec:
		select {
		case err := <-w.done:
			return err
		default:
			return n.closedErr()
		}
	}
}

// startConfChange checks and proposes a change (raft goroutine). Raft
// itself would turn a second change proposed before the first is applied
// into an empty entry, silently: the checks here refuse it instead.
// transient is true for a refusal that should clear by itself shortly.
func (n *Node) startConfChange(w *confWaiter, change *pb.ConfChangeSingle, addr string) (transient bool, err error) {
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		return false, n.notLeader()
	}
	if err := n.unsettled(st); err != nil {
		return true, err
	}
	return false, n.proposeConfChangeLocked(w, change, addr)
}

// unsettled says why the leader's configuration may still change by
// itself (raft goroutine): its log not yet applied in its own term, a
// change committed but not applied, a leadership transfer. Nil when the
// applied configuration is the group's.
func (n *Node) unsettled(st raft.BasicStatus) error {
	s := n.store
	switch {
	case s.appliedTerm != st.GetTerm():
		return fmt.Errorf("%w (the new leader has not applied its log yet)", ErrChangeInProgress)
	case n.confPending > s.appliedIndex:
		return fmt.Errorf("%w (the change at index %d is not applied yet)", ErrChangeInProgress, n.confPending)
	case st.LeadTransferee != 0:
		return fmt.Errorf("%w (leadership is moving to %d)", ErrChangeInProgress, st.LeadTransferee)
	}
	return nil
}

// settledView waits until the leader's applied configuration is the
// group's (see unsettled), within an election timeout or two, and returns
// it. A new leader that has not applied the change its predecessor made
// would otherwise decide on a configuration that is about to change.
func (n *Node) settledView(ctx context.Context) (*groupView, error) {
	deadline := time.Now().Add(2 * time.Duration(n.opts.ElectionTicks) * n.opts.TickInterval)
	for {
		var err error
		if derr := n.do(ctx, func() {
			st := n.rn.BasicStatus()
			if st.RaftState != raft.StateLeader {
				err = n.notLeader()
				return
			}
			err = n.unsettled(st)
		}); derr != nil {
			return nil, derr
		}
		var nle *NotLeaderError
		if err == nil || errors.As(err, &nle) || time.Now().After(deadline) {
			return n.view.Load(), err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(n.opts.TickInterval):
		}
	}
}

// proposeConfChangeLocked checks change against the configuration and
// proposes it (raft goroutine).
func (n *Node) proposeConfChangeLocked(w *confWaiter, change *pb.ConfChangeSingle, addr string) error {
	s := n.store
	st := n.rn.BasicStatus()
	id := change.GetNodeId()
	voter, learner := slices.Contains(s.conf.GetVoters(), id), slices.Contains(s.conf.GetLearners(), id)
	switch change.GetType() {
	case pb.ConfChangeType_ConfChangeAddLearnerNode:
		if voter || learner {
			return fmt.Errorf("%w: %d is already a member", ErrInvalidMember, id)
		}
		if slices.Contains(s.removed, id) {
			return fmt.Errorf("%w: %d was removed from the group, and IDs are never used again", ErrInvalidMember, id)
		}
	case pb.ConfChangeType_ConfChangeAddNode:
		if !learner {
			return fmt.Errorf("%w: %d is not a learner", ErrInvalidMember, id)
		}
	case pb.ConfChangeType_ConfChangeRemoveNode:
		if !voter && !learner {
			return fmt.Errorf("%w: %d is not a member", ErrInvalidMember, id)
		}
		if voter && len(s.conf.GetVoters()) == 1 {
			return fmt.Errorf("%w: %d is the last voter", ErrInvalidMember, id)
		}
	}
	book := map[uint64]string{}
	if addr != "" {
		book[id] = addr
	}
	cc := &pb.ConfChangeV2{Changes: []*pb.ConfChangeSingle{change}, Context: addressBook{addrs: book, changeID: w.id}.encode()}
	data, err := proto.Marshal(cc)
	if err != nil {
		return err
	}
	ent := &pb.Entry{Type: pb.EntryConfChangeV2.Enum(), Data: data}
	if err := n.rn.Step(&pb.Message{Type: pb.MsgProp.Enum(), From: new(n.id), Entries: []*pb.Entry{ent}}); err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			return ErrProposalDropped
		}
		return err
	}
	// Until the entry shows in a Ready (which records its index), no other
	// change may start.
	n.confPending, n.confProposed = ^uint64(0), true
	w.term = st.GetTerm()
	if n.confWait != nil {
		n.confWait.done <- ErrProposalDropped
	}
	n.confWait = w
	n.log.Info("consensus: configuration change proposed", "id", n.id, "change", change.GetType().String(), "node", id, "addr", addr)
	return nil
}

// Members returns the group's members. On the leader each carries its
// replication progress.
func (n *Node) Members(ctx context.Context) ([]Member, error) {
	ms := n.view.Load().members()
	if !n.isLeader.Load() {
		return ms, nil
	}
	st, err := n.leaderStatus(ctx)
	var nle *NotLeaderError
	if errors.As(err, &nle) {
		return ms, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if pr, ok := st.Progress[ms[i].ID]; ok {
			ms[i].Match, ms[i].Active = pr.Match, pr.RecentActive || ms[i].ID == n.id
		}
	}
	return ms, nil
}
