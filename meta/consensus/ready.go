// Handling a raft.Ready: persisting entries and state, sending messages,
// committing and publishing what was applied.

package consensus

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// handleReady handles one Ready in four steps: make it durable (sending
// first what promises nothing), send what waited for that, apply what is
// committed, release the reads whose index is applied.
func (n *Node) handleReady() error {
	rd := n.rn.Ready()
	if rd.SoftState != nil {
		n.setSoftState(rd.SoftState)
	}
	// Messages that promise nothing about this node's log (appends and
	// heartbeats from a leader, votes requests) go out before the fsync, so
	// the leader's disk write overlaps its followers'. Responses (MsgAppResp,
	// MsgVoteResp, MsgPreVoteResp) wait until what they promise is durable.
	n.sendMessages(rd.Messages, false)

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
	ahead, err := n.persist(rd)
	if err != nil {
		return err
	}

	// 2. Send the responses, now that what they promise is durable.
	n.sendMessages(rd.Messages, true)

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
	n.queueReads(rd.ReadStates)
	n.releaseReads()

	n.rn.Advance(rd)
	n.updatePositions()
	return nil
}

// sendMessages sends the messages that need this Ready durable first
// (durable) or those that do not.
func (n *Node) sendMessages(msgs []*pb.Message, durable bool) {
	for _, m := range msgs {
		if needsDurable(m) == durable {
			n.sendMessage(m)
		}
	}
}

// persist writes the Ready's snapshot, entries and hard state in one batch,
// fsynced when raft asks, and installs them in memory. A sole voter's own
// entries are applied during the fsync: the result comes back, to be
// published once the caller has sent what waited for durability.
func (n *Node) persist(rd raft.Ready) (*appliedBatch, error) {
	b := n.logBatch
	snapApplied := false
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.installSnapshot(rd.Snapshot, rd.HardState); err != nil {
			return nil, err
		}
		snapApplied = true
	}
	if err := n.store.writeEntries(b, rd.Entries); err != nil {
		return nil, err
	}
	n.noteConfEntries(rd.Entries)
	if rd.HardState != nil {
		if err := b.Set(keyHardState, encodeHardState(rd.HardState), nil); err != nil {
			return nil, err
		}
	}
	var ahead *appliedBatch
	if !b.Empty() {
		var err error
		if ahead, err = n.commitLog(b, rd, rd.MustSync || snapApplied); err != nil {
			return nil, err
		}
	}
	b.Reset()
	n.store.commitEntries(rd.Entries)
	if rd.HardState != nil {
		n.store.hard = rd.HardState
	}
	if snapApplied {
		if err := n.afterSnapshot(rd.Snapshot); err != nil {
			return nil, err
		}
	}
	if n.staged != nil {
		// A staged snapshot is for the Ready right after its MsgSnap was
		// stepped; raft did not want it.
		n.staged.stage.discard()
		n.staged = nil
	}
	return ahead, nil
}

// commitLog commits the log batch b, with an fsync when sync.
func (n *Node) commitLog(b *pebble.Batch, rd raft.Ready, sync bool) (ahead *appliedBatch, err error) {
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
		if o := n.opts.Observers.LogSync; o != nil {
			start := time.Now()
			defer func() { o.Observe(time.Since(start).Seconds()) }()
		}
	}
	if sync && n.canApplyAhead(rd) {
		// A sole voter's own entries commit as soon as they are durable:
		// apply them while the fsync runs, and publish the result (and
		// answer their proposers) once it is done.
		if err := n.db.ApplyNoSyncWait(b, opt); err != nil {
			return nil, fmt.Errorf("consensus: write log: %w", err)
		}
		var aerr error
		ahead, aerr = n.applyEntries(rd.Entries)
		if err := b.SyncWait(); err != nil {
			ahead.discard()
			return nil, fmt.Errorf("%w: write log: %w", ErrStorage, err)
		}
		if aerr != nil {
			return nil, aerr
		}
		if ahead != nil {
			n.metrics.appliedInSync.Add(uint64(ahead.applied))
		}
	} else if err := b.Commit(opt); err != nil {
		return nil, fmt.Errorf("consensus: write log: %w", err)
	}
	if sync {
		n.metrics.fsyncs.Add(1)
	}
	if len(rd.Entries) > 0 {
		n.metrics.logAppends.Add(1)
		n.metrics.entriesAppended.Add(uint64(len(rd.Entries)))
	}
	return ahead, nil
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
	old := n.leaderID.Swap(ss.Lead)
	leaderChanged := old != ss.Lead
	if leaderChanged {
		n.metrics.leaderChanges.Add(1)
		n.log.Info("consensus: leader changed", "id", n.id, "leader", ss.Lead, "term", n.metrics.term.Load())
	}
	n.role.Store(ss.RaftState)
	if ss.RaftState == raft.StateLeader {
		n.leaderTerm.Store(n.rn.BasicStatus().GetTerm())
	}
	wasLeader := n.isLeader.Swap(ss.RaftState == raft.StateLeader)
	if (wasLeader || leaderChanged) && ss.RaftState != raft.StateLeader {
		// Read indexes not yet granted never will be: by this node, which
		// no longer leads, or by the leader a follower asked, which no
		// longer does.
		n.failUngrantedReads(n.notLeader())
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
