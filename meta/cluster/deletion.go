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
// above). It is deterministic given now, the entries and the manager's state.
func (m *Manager) DeleteBlocks(now time.Time, entries []*stratov1.DeletedBlocks) DeletionPlan {
	m.mu.Lock()
	defer m.mu.Unlock()
	var plan DeletionPlan
	for _, e := range entries {
		if m.deleteEntryLocked(now, e, &plan) {
			plan.Purge = append(plan.Purge, e.Seq)
		} else {
			plan.Waiting++
		}
	}
	return plan
}

// TakeDeleted returns the seqs that became done through acknowledgements
// since the last call, and forgets them.
func (m *Manager) TakeDeleted() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []uint64
	for _, seq := range m.blockDeletes.ready {
		// Checked again: a replica may have appeared since (a copy made
		// before the deletion), which must be sent the seq too.
		if p := m.blockDeletes.pending[seq]; p != nil && m.doneLocked(p) {
			delete(m.blockDeletes.pending, seq)
			out = append(out, seq)
		}
	}
	m.blockDeletes.ready = nil
	slices.Sort(out)
	return out
}

// PendingDeletions counts the deleted-blocks entries in flight.
func (m *Manager) PendingDeletions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blockDeletes.pending)
}

func (m *Manager) deleteEntryLocked(now time.Time, e *stratov1.DeletedBlocks, plan *DeletionPlan) bool {
	byContainer := map[uint64][]uint64{}
	for _, b := range e.Blocks {
		byContainer[b.GetContainerId()] = append(byContainer[b.GetContainerId()], b.GetLocalId())
	}
	p := m.blockDeletes.pending[e.Seq]
	if p == nil {
		p = &pendingBlockDeletion{containers: slices.Sorted(maps.Keys(byContainer))}
	}
	need, wait := m.undeletedLocked(p)
	switch {
	case need == nil && !wait:
		delete(m.blockDeletes.pending, e.Seq)
		return true
	case wait:
		return false
	}
	for _, dn := range slices.Sorted(maps.Keys(need)) {
		n := m.nodes[dn]
		if n == nil || n.health == stratov1.NodeHealth_NODE_DEAD {
			continue
		}
		// In flight: wait for the acknowledgement, unless the node now
		// holds a container it was not sent (a replica appeared), in which
		// case it is sent all of its containers of the seq again.
		if s, ok := p.sent[dn]; ok && now.Sub(s.at) < m.opts.DeleteBlocksTimeout && subset(need[dn], s.containers) {
			continue
		}
		for _, cid := range need[dn] {
			ids := byContainer[cid]
			m.queueLocked(dn, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DeleteBlocks{
				DeleteBlocks: &stratov1.DeleteBlocksCommand{ContainerId: cid, LocalIds: ids, Seq: e.Seq}}})
			plan.Commands++
			plan.Blocks += len(ids)
		}
		if p.sent == nil {
			p.sent = map[string]sentBlockDeletion{}
		}
		p.sent[dn] = sentBlockDeletion{at: now, containers: need[dn]}
	}
	if len(p.sent) > 0 {
		if m.blockDeletes.pending == nil {
			m.blockDeletes.pending = map[uint64]*pendingBlockDeletion{}
		}
		m.blockDeletes.pending[e.Seq] = p
	}
	return false
}

// undeletedLocked maps each datanode to the containers of p it holds a
// replica of and has not acknowledged; nil when there are none. A container
// unknown to the cluster or DELETED has nothing left to delete. wait is true
// when a container that exists has no reported replica: nothing is sent for
// the entry until it has, so that a datanode gets all of a seq's containers
// it holds at once.
func (m *Manager) undeletedLocked(p *pendingBlockDeletion) (need map[string][]uint64, wait bool) {
	for _, cid := range p.containers {
		c := m.containers[cid]
		if c == nil || c.info.State == stratov1.ContainerState_CONTAINER_DELETED {
			continue
		}
		if len(c.replicas) == 0 {
			wait = true
		}
		for dn := range c.replicas {
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
	for _, seq := range seqs {
		p := m.blockDeletes.pending[seq]
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
		queued := map[uint64]bool{}
		if n := m.nodes[dn]; n != nil {
			for _, c := range n.commands {
				if d := c.GetDeleteBlocks(); d != nil && d.Seq == seq {
					queued[d.ContainerId] = true
				}
			}
		}
		for _, cid := range s.containers {
			if !queued[cid] {
				p.acked[dn][cid] = true
			}
		}
		if m.doneLocked(p) && !slices.Contains(m.blockDeletes.ready, seq) {
			m.blockDeletes.ready = append(m.blockDeletes.ready, seq)
		}
	}
}

// doneLocked: every replica of every container of p that still exists
// acknowledged, and each such container has a replica.
func (m *Manager) doneLocked(p *pendingBlockDeletion) bool {
	need, wait := m.undeletedLocked(p)
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
