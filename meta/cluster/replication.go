package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Decommission starts (or, with recommission, undoes) taking a datanode out
// of service, through consensus: the state is durable, and a new leader
// carries on. A DECOMMISSIONING datanode still serves reads and is a
// source for copies, but its replicas no longer count; once every
// container it holds has enough copies elsewhere ReplicationWork reports
// it, and the server records it DECOMMISSIONED (Decommissioned). The
// datanode must be registered, or have a recorded state (one that left
// after its decommission may be recommissioned).
func (m *Manager) Decommission(ctx context.Context, now time.Time, id string, recommission bool) error {
	m.mu.Lock()
	_, registered := m.nodes[id]
	_, recorded := m.opStates[id]
	m.mu.Unlock()
	if !registered && !recorded {
		return fmt.Errorf("%w: datanode %q", ErrNotFound, id)
	}
	to := stratov1.NodeOpState_NODE_IN_SERVICE
	if !recommission {
		if recorded {
			return nil // decommissioning or decommissioned already
		}
		to = stratov1.NodeOpState_NODE_DECOMMISSIONING
	} else if !recorded {
		return nil // in service
	}
	_, err := m.propose(ctx, setNodeOpState(now, id, to))
	return err
}

// Decommissioned is the command that records datanode id DECOMMISSIONED,
// for the server to propose when ReplicationWork reports it done.
func Decommissioned(now time.Time, id string) *stratov1.ClusterCommand {
	return setNodeOpState(now, id, stratov1.NodeOpState_NODE_DECOMMISSIONED)
}

func setNodeOpState(now time.Time, id string, st stratov1.NodeOpState) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetNodeOpState{
		SetNodeOpState: &stratov1.NodeOpStateChange{DatanodeId: id, OpState: st}}}
}

// ReplicationReport is the outcome of one pass of ReplicationWork.
type ReplicationReport struct {
	Containers      int // containers examined
	UnderReplicated int
	Missing         []uint64 // no good replica anywhere: data at risk
	Scheduled       int      // replicate commands queued in this pass
	InFlight        int      // replications in flight after this pass
	Decommissioned  []string // datanodes that finished decommissioning: the server records them (Decommissioned)
	BlockedByLimits int      // under-replicated but no source or target had room
	OverReplicated  int
	Deletes         int // delete commands queued for extra or unhealthy copies
}

// ReplicationWork examines every closed container, and for each that has
// fewer good copies than its replication factor queues a command for a
// source replica to push the container to a new target. limit bounds the
// commands in flight per datanode (as source or target). A good copy is a
// CLOSED replica on a HEALTHY, IN_SERVICE datanode. Erasure coded
// containers are judged index by index: a missing index held by a
// decommissioning datanode is copied off it, any other is rebuilt from d
// others on a new datanode, and an index with two good replicas has one
// deleted (ecWorkLocked, trimECLocked).
func (m *Manager) ReplicationWork(now time.Time, limit int) ReplicationReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rep ReplicationReport
	// A copy whose source or target is no longer healthy will not land:
	// forget it, so that it is scheduled again elsewhere.
	for k, fl := range m.replicating {
		for _, id := range []string{fl.source, fl.target} {
			if id == "" {
				continue // a reconstruction has no source
			}
			if n := m.nodes[id]; n == nil || n.health != stratov1.NodeHealth_NODE_HEALTHY {
				delete(m.replicating, k)
			}
		}
	}
	// A datanode's pushes and its imports are bounded apart: a push takes
	// one of its replication streams, an import none (it runs on the
	// connection the source opened), so counting both against one limit
	// halved the copies a cluster of holders could run at once.
	pushes, imports := map[string]int{}, map[string]int{}
	for _, fl := range m.replicating {
		if fl.source != "" {
			pushes[fl.source]++
		}
		imports[fl.target]++
	}
	pending := map[string]bool{} // decommissioning nodes still holding needed data
	for _, c := range m.sortedContainersLocked() {
		if c.info.State != stratov1.ContainerState_CONTAINER_CLOSED {
			// An open or closing container is copied once it is closed
			// (its pipeline closes: a decommissioning member makes it
			// unusable); until then its holders are not done.
			if c.info.State == stratov1.ContainerState_CONTAINER_OPEN || c.info.State == stratov1.ContainerState_CONTAINER_CLOSING {
				m.holdDecommissionLocked(c, pending)
			}
			continue
		}
		rep.Containers++
		if c.info.ErasureCoding != nil {
			m.ecWorkLocked(now, c, &rep, pending, pushes, imports, limit)
			continue
		}
		m.markLaggingLocked(c)
		// good copies count; sources (HEALTHY holders, decommissioning ones
		// included) can push; a STALE holder is neither, but the data is
		// not missing while one is not DEAD.
		var good, sources []string
		live := 0
		for id, r := range c.replicas {
			n := m.nodes[id]
			if n == nil || n.health == stratov1.NodeHealth_NODE_DEAD || r.State != stratov1.ContainerState_CONTAINER_CLOSED {
				continue
			}
			live++
			if n.health != stratov1.NodeHealth_NODE_HEALTHY {
				continue
			}
			sources = append(sources, id)
			if n.opState == stratov1.NodeOpState_NODE_IN_SERVICE {
				good = append(good, id)
			}
		}
		need := int(c.info.Replication) - len(good)
		if live == 0 {
			if !m.closingOnLiveNodeLocked(c) && !m.awaitingReportsLocked(c, now) {
				rep.Missing = append(rep.Missing, c.info.Id)
			}
			continue
		}
		if need <= 0 {
			rep.Deletes += m.trimLocked(c, good)
			if need < 0 {
				rep.OverReplicated++
			}
			continue
		}
		rep.UnderReplicated++
		m.holdDecommissionLocked(c, pending)
		if _, busy := m.replicating[copyKey{c.info.Id, 0}]; busy {
			continue
		}
		// The least busy source (ties by ID), so that copies spread over
		// every surviving holder.
		slices.Sort(sources)
		src := ""
		for _, s := range sources {
			if pushes[s] < limit && (src == "" || pushes[s] < pushes[src]) {
				src = s
			}
		}
		target := m.chooseTargetLocked(now, c, imports, limit, nil)
		if src == "" || target == "" {
			rep.BlockedByLimits++
			continue
		}
		pushes[src]++
		imports[target]++
		id := m.queueLocked(src, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_ReplicateContainer{
			ReplicateContainer: &stratov1.ReplicateContainerCommand{ContainerId: c.info.Id, Target: m.nodes[target].details}}})
		m.replicating[copyKey{c.info.Id, 0}] = inflight{source: src, target: target, since: now, cmdID: id}
		rep.Scheduled++
	}
	// Done: registered (its full report is in), and holding nothing
	// another copy still needs. The state changes when the server's
	// proposal of Decommissioned applies.
	for id, n := range m.nodes {
		if n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING && !pending[id] {
			rep.Decommissioned = append(rep.Decommissioned, id)
		}
	}
	slices.Sort(rep.Decommissioned)
	rep.InFlight = len(m.replicating)
	return rep
}

// holdDecommissionLocked marks the decommissioning holders of c pending:
// c still needs them.
func (m *Manager) holdDecommissionLocked(c *containerState, pending map[string]bool) {
	for id := range c.replicas {
		if n := m.nodes[id]; n != nil && n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING {
			pending[id] = true
		}
	}
}

// chooseTargetLocked picks the healthy in-service datanode with the most free
// space that does not hold c (nor is in skip) and receives fewer than limit
// copies; the target of a copy of c that failed lately only when there is
// no other.
func (m *Manager) chooseTargetLocked(now time.Time, c *containerState, imports map[string]int, limit int, skip map[string]bool) string {
	avoid := ""
	if now.Before(c.copyFailedUntil) {
		avoid = c.copyFailed
	}
	best, bestFree, avoided := "", int64(-1), false
	ids := make([]string, 0, len(m.nodes))
	for id := range m.nodes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		n := m.nodes[id]
		if n.health != stratov1.NodeHealth_NODE_HEALTHY || n.opState != stratov1.NodeOpState_NODE_IN_SERVICE || imports[id] >= limit {
			continue
		}
		if _, has := c.replicas[id]; has || skip[id] {
			continue
		}
		if id == avoid {
			avoided = true
			continue
		}
		if free := n.stats.GetRemaining(); cmp.Compare(free, bestFree) > 0 {
			best, bestFree = id, free
		}
	}
	if best == "" && avoided {
		return avoid
	}
	return best
}

// closingOnLiveNodeLocked: a replica of c on a datanode not DEAD is still
// OPEN or CLOSING. Such a replica holds the data; meta has closed the
// container and sends the close again until the replica reports CLOSED, a
// heartbeat or two later. A container in that state is not missing (every
// container that fills up passes through it), nor can it be copied yet.
func (m *Manager) closingOnLiveNodeLocked(c *containerState) bool {
	for id, r := range c.replicas {
		n := m.nodes[id]
		if n == nil || n.health == stratov1.NodeHealth_NODE_DEAD {
			continue
		}
		if r.State == stratov1.ContainerState_CONTAINER_OPEN || r.State == stratov1.ContainerState_CONTAINER_CLOSING {
			return true
		}
	}
	return false
}

// awaitingReportsLocked: no datanode has reported a replica of c, and none
// of its pipeline's members has sent a full report since that was first
// seen. A container imported CLOSED (offline generation, into stopped
// datanodes) is known to meta before its holders report it, which they do
// when they start; until one of them has reported in full without it, its
// absence says nothing. (Without its pipeline, DeadAfter is the wait.)
func (m *Manager) awaitingReportsLocked(c *containerState, now time.Time) bool {
	if len(c.replicas) > 0 {
		c.unreportedSince = time.Time{}
		return false
	}
	if c.unreportedSince.IsZero() {
		c.unreportedSince = now
	}
	p := m.pipelines[c.info.PipelineId]
	if p == nil {
		return now.Sub(c.unreportedSince) < m.opts.DeadAfter
	}
	for _, id := range p.Members {
		if n := m.nodes[id]; n != nil && n.lastFull.After(c.unreportedSince) {
			return false
		}
	}
	return true
}

// trimLocked deletes the copies a container with enough good ones does not
// need: good copies beyond its replication factor (on the datanodes with the
// least free space, never below the factor) and replicas on healthy nodes
// that are UNHEALTHY. It returns the delete commands queued. A container
// with a copy in flight is left alone until the copy lands.
func (m *Manager) trimLocked(c *containerState, good []string) int {
	if _, busy := m.replicating[copyKey{c.info.Id, 0}]; busy {
		return 0
	}
	queued := 0
	del := func(id string) {
		if m.deleteReplicaLocked(c.info.Id, id) {
			queued++
		}
	}
	if extra := len(good) - int(c.info.Replication); extra > 0 {
		byFree := slices.Clone(good)
		slices.SortFunc(byFree, func(a, b string) int {
			if r := cmp.Compare(m.nodes[a].stats.GetRemaining(), m.nodes[b].stats.GetRemaining()); r != 0 {
				return r
			}
			return cmp.Compare(b, a)
		})
		for _, id := range byFree[:extra] {
			del(id)
		}
	}
	for id, r := range c.replicas {
		n := m.nodes[id]
		if r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY && n != nil && n.health == stratov1.NodeHealth_NODE_HEALTHY {
			del(id)
		}
	}
	return queued
}

// deleteReplicaLocked queues a DeleteContainerCommand for datanode id's
// replica of container cid, unless one is under way (until the datanode
// stops reporting the replica); it says whether it queued one.
func (m *Manager) deleteReplicaLocked(cid uint64, id string) bool {
	if m.deleting[deleteKey{cid, id}] {
		return false
	}
	if m.deleting == nil {
		m.deleting = map[deleteKey]bool{}
	}
	m.deleting[deleteKey{cid, id}] = true
	m.queueLocked(id, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DeleteContainer{
		DeleteContainer: &stratov1.DeleteContainerCommand{ContainerId: cid, Force: true}}})
	return true
}
