package cluster

import (
	"maps"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Block deletion. The namespace's deleted-blocks table lists blocks no key
// references any more, one entry per seq. The leader's background work reads
// a bounded batch of entries and hands them to DeleteBlocks, which queues a
// DeleteBlocksCommand for every datanode holding a replica of each of their
// containers and returns the seqs that are done: every replica holder of
// every container of the entry acknowledged it (HeartbeatRequest.
// deleted_blocks_acks), or the containers are gone. The caller purges those
// through Raft. What was sent and acknowledged is soft state: a new leader
// starts over, and datanodes treat a block already gone as deleted.
//
// All of a seq's commands for one datanode are queued together, so they
// reach it in one heartbeat reply and its acknowledgement covers them all.
// A datanode that does not acknowledge within Options.DeleteBlocksTimeout
// is sent the seq again; a DEAD one is sent nothing and the entry waits (its
// blocks would otherwise stay on it for good if it came back), as does an
// entry of a container no datanode has reported.

// blockDeletions is the leader's soft state of block deletion.
type blockDeletions struct {
	// pending by seq: entries sent to at least one datanode.
	pending map[uint64]*pendingBlockDeletion
	// ready: seqs acknowledged by every holder since the last TakeDeleted.
	ready []uint64
}

// pendingBlockDeletion is one deleted-blocks entry in flight.
type pendingBlockDeletion struct {
	containers []uint64                     // the entry's containers, ascending
	sent       map[string]sentBlockDeletion // datanode → last send
	acked      map[string]map[uint64]bool   // datanode → containers it deleted
}

type sentBlockDeletion struct {
	at         time.Time
	containers []uint64
}

// DeletionPlan is what one DeleteBlocks call decided.
type DeletionPlan struct {
	// Purge lists the seqs whose blocks are gone from every replica (or
	// whose containers no longer exist): the caller purges them.
	Purge []uint64
	// Commands counts the DeleteBlocksCommands queued, Blocks the block IDs
	// they carry.
	Commands, Blocks int
	// Waiting counts entries still waiting for acknowledgements, for
	// replicas to be reported, or for a DEAD holder.
	Waiting int
}

// DeleteBlocks plans the deletion of a batch of deleted-blocks entries (see
// above; planBlockDeletion) and queues its commands. It is deterministic
// given now, the entries and the manager's state.
func (m *Manager) DeleteBlocks(now time.Time, entries []*stratov1.DeletedBlocks) DeletionPlan {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, dp := planBlockDeletion(&m.s, &m.opts, now, entries)
	m.applyLocked(now, &p)
	return dp
}

// planBlockDeletion is DeleteBlocks' judgement: the DeleteBlocksCommands to
// queue, the entries to track in flight (with when each datanode was
// sent what) or to forget, and the seqs to purge.
func planBlockDeletion(s *state, o *Options, now time.Time, entries []*stratov1.DeletedBlocks) (plan, DeletionPlan) {
	var (
		p  plan
		dp DeletionPlan
	)
	for _, e := range entries {
		if planDeleteEntry(s, o, now, e, &p, &dp) {
			dp.Purge = append(dp.Purge, e.Seq)
		} else {
			dp.Waiting++
		}
	}
	return p, dp
}

// TakeDeleted returns the seqs that became done through acknowledgements
// since the last call, and forgets them.
func (m *Manager) TakeDeleted() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	bd := &m.s.blockDeletes
	var out []uint64
	for _, seq := range bd.ready {
		// Checked again: a replica may have appeared since (a copy made
		// before the deletion), which must be sent the seq too.
		if p := bd.pending[seq]; p != nil && m.s.blocksDeleted(p) {
			delete(bd.pending, seq)
			out = append(out, seq)
		}
	}
	bd.ready = nil
	slices.Sort(out)
	return out
}

// PendingDeletions counts the deleted-blocks entries in flight.
func (m *Manager) PendingDeletions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.s.blockDeletes.pending)
}

// planDeleteEntry plans one entry; it reports whether the entry is done.
func planDeleteEntry(s *state, o *Options, now time.Time, e *stratov1.DeletedBlocks, p *plan, dp *DeletionPlan) bool {
	byContainer := map[uint64][]uint64{}
	for _, b := range e.Blocks {
		byContainer[b.GetContainerId()] = append(byContainer[b.GetContainerId()], b.GetLocalId())
	}
	pb := s.blockDeletes.pending[e.Seq]
	if pb == nil {
		pb = &pendingBlockDeletion{containers: slices.Sorted(maps.Keys(byContainer))}
	}
	need, wait := s.undeleted(pb)
	switch {
	case need == nil && !wait:
		p.untrack = append(p.untrack, e.Seq)
		return true
	case wait:
		return false
	}
	var sent map[string]sentBlockDeletion // pb.sent, once this plan sends more
	for _, dn := range slices.Sorted(maps.Keys(need)) {
		if !s.nodes[dn].alive() {
			continue
		}
		// In flight: wait for the acknowledgement, unless the node now
		// holds a container it was not sent (a replica appeared), in which
		// case it is sent all of its containers of the seq again.
		if last, ok := pb.sent[dn]; ok && now.Sub(last.at) < o.DeleteBlocksTimeout && subset(need[dn], last.containers) {
			continue
		}
		for _, cid := range need[dn] {
			ids := byContainer[cid]
			p.queue(dn, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DeleteBlocks{
				DeleteBlocks: &stratov1.DeleteBlocksCommand{ContainerId: cid, LocalIds: ids, Seq: e.Seq}}})
			dp.Commands++
			dp.Blocks += len(ids)
		}
		if sent == nil {
			sent = maps.Clone(pb.sent)
			if sent == nil {
				sent = map[string]sentBlockDeletion{}
			}
		}
		sent[dn] = sentBlockDeletion{at: now, containers: need[dn]}
	}
	if sent != nil {
		if p.track == nil {
			p.track = map[uint64]*pendingBlockDeletion{}
		}
		p.track[e.Seq] = &pendingBlockDeletion{containers: pb.containers, sent: sent, acked: pb.acked}
	}
	return false
}

// undeleted maps each datanode to the containers of p it holds a
// replica of and has not acknowledged; nil when there are none. A container
// unknown to the cluster or DELETED has nothing left to delete. wait is true
// when a container that exists has no reported replica: nothing is sent for
// the entry until it has, so that a datanode gets all of a seq's containers
// it holds at once.
func (s *state) undeleted(p *pendingBlockDeletion) (need map[string][]uint64, wait bool) {
	for _, cid := range p.containers {
		c := s.containers[cid]
		if c == nil || c.info.State == stratov1.ContainerState_CONTAINER_DELETED {
			continue
		}
		if len(c.replicas) == 0 {
			wait = true
		}
		for dn := range c.replicas.all() {
			if !p.acked[dn][cid] {
				if need == nil {
					need = map[string][]uint64{}
				}
				need[dn] = append(need[dn], cid)
			}
		}
	}
	return need, wait
}

// ackDeletedBlocksLocked records a datanode's acknowledgements: the containers
// last sent to it for each seq are deleted there. A seq this leader did not
// send (a previous leader's) is ignored: it is sent again.
func (m *Manager) ackDeletedBlocksLocked(dn string, seqs []uint64) {
	bd := &m.s.blockDeletes
	for _, seq := range seqs {
		p := bd.pending[seq]
		if p == nil {
			continue
		}
		s, ok := p.sent[dn]
		if !ok {
			continue
		}
		if p.acked == nil {
			p.acked = map[string]map[uint64]bool{}
		}
		if p.acked[dn] == nil {
			p.acked[dn] = map[uint64]bool{}
		}
		// Commands of the seq still queued for the node (a resend, not
		// delivered yet) are not covered by this acknowledgement.
		n := m.s.nodes[dn]
		for _, cid := range s.containers {
			if n == nil || !n.queued(func(c *stratov1.DatanodeCommand) bool {
				d := c.GetDeleteBlocks()
				return d != nil && d.Seq == seq && d.ContainerId == cid
			}) {
				p.acked[dn][cid] = true
			}
		}
		if m.s.blocksDeleted(p) && !slices.Contains(bd.ready, seq) {
			bd.ready = append(bd.ready, seq)
		}
	}
}

// blocksDeleted: every replica of every container of p that still exists
// acknowledged, and each such container has a replica.
func (s *state) blocksDeleted(p *pendingBlockDeletion) bool {
	need, wait := s.undeleted(p)
	return need == nil && !wait
}

// subset: every element of a is in b.
func subset(a, b []uint64) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
