package cluster

import (
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// A plan is what a planner decided from the locked state: the commands to
// queue for datanodes (in order), the soft-state changes that go with them,
// and the durable changes to propose. Planners (planTick, planCloseContainer,
// planReplication, planBlockDeletion) only read the state; the Manager
// applies the soft part of their plan under mu (applyLocked) and hands the
// proposals to its caller, which proposes them once mu is released.
type plan struct {
	// propose: durable changes, in order, for the caller to propose.
	propose []*stratov1.ClusterCommand
	// send: commands for datanodes' next heartbeat replies, in order.
	send []send
	// forget: copies and rebuilds in flight given up (timed out, or a
	// source or target no longer healthy).
	forget []copyKey
	// bad: replicas to hold UNHEALTHY until they are gone (lagging ones).
	bad []deleteKey
	// unreported: containers whose unreportedSince changes (zero: clears).
	unreported map[uint64]time.Time
	// closeSent: containers whose close commands are (re)sent now.
	closeSent []uint64
	// unfull: containers whose fullAt clears (they are closing).
	unfull []uint64
	// dirty: the pipelines are to be topped up at the next allocation.
	dirty bool
	// track, untrack: deleted-blocks entries in flight, by seq, to record
	// (new or updated) or forget.
	track   map[uint64]*pendingBlockDeletion
	untrack []uint64
	// bal: the balancer's moves and iteration (balancer.go).
	bal balancerPlan
}

// send is one command for a datanode. A copy or a rebuild (copy set) is in
// flight from the moment it is queued, with the command's ID; a replica
// deletion (deletes) is under way.
type send struct {
	node string
	cmd  *stratov1.DatanodeCommand
	copy *inflightCopy
	// deletes: the command deletes node's replica of its container.
	deletes bool
}

// inflightCopy is a copy or rebuild a send starts.
type inflightCopy struct {
	key            copyKey
	source, target string
}

func (p *plan) queue(node string, cmd *stratov1.DatanodeCommand) {
	p.send = append(p.send, send{node: node, cmd: cmd})
}

// closeCommands queues a close of container cid for every live member of p.
func (p *plan) closeCommands(s *state, pl *stratov1.PipelineRecord, cid uint64) {
	for _, member := range pl.Members {
		if s.nodes[member].alive() {
			p.queue(member, closeCommand(cid, pl.Id))
		}
	}
}

// applyLocked makes the soft part of p so, as of now, and returns the
// proposals for the caller. Under mu.
func (m *Manager) applyLocked(now time.Time, p *plan) []*stratov1.ClusterCommand {
	s := &m.s
	for _, k := range p.forget {
		delete(s.replicating, k)
	}
	for _, r := range p.bad {
		if c := s.containers[r.container]; c != nil && c.replicas.has(r.datanode) {
			markBad(c, r.datanode)
		}
	}
	for cid, at := range p.unreported {
		if c := s.containers[cid]; c != nil {
			c.unreportedSince = at
		}
	}
	for _, cid := range p.closeSent {
		if c := s.containers[cid]; c != nil {
			c.closeSent = now
		}
	}
	for _, cid := range p.unfull {
		if c := s.containers[cid]; c != nil {
			c.fullAt = time.Time{}
		}
	}
	if p.dirty {
		s.pipelinesDirty = true
	}
	for seq, pb := range p.track {
		if s.blockDeletes.pending == nil {
			s.blockDeletes.pending = map[uint64]*pendingBlockDeletion{}
		}
		s.blockDeletes.pending[seq] = pb
	}
	for _, seq := range p.untrack {
		delete(s.blockDeletes.pending, seq)
	}
	m.applyBalancerLocked(now, &p.bal)
	for _, sn := range p.send {
		id := m.queueLocked(sn.node, sn.cmd)
		if fl := sn.copy; fl != nil {
			s.replicating[fl.key] = inflight{source: fl.source, target: fl.target, since: now, cmdID: id}
		}
		if sn.deletes {
			if s.deleting == nil {
				s.deleting = map[deleteKey]bool{}
			}
			s.deleting[deleteKey{sn.cmd.GetDeleteContainer().GetContainerId(), sn.node}] = true
		}
	}
	return p.propose
}

// queueLocked adds a command for a datanode's next heartbeat reply and
// returns its ID (0 for an unknown datanode).
func (m *Manager) queueLocked(node string, cmd *stratov1.DatanodeCommand) uint64 {
	n := m.s.nodes[node]
	if n == nil {
		return 0
	}
	m.s.nextCmdID++
	cmd.Id = m.s.nextCmdID
	n.hb.Lock()
	n.commands = append(n.commands, cmd)
	n.hb.Unlock()
	return cmd.Id
}

// markBad holds datanode id's replica of c UNHEALTHY until it is gone.
func markBad(c *containerState, id string) {
	if c.bad == nil {
		c.bad = map[string]bool{}
	}
	c.bad[id] = true
	if r := c.replicas.get(id); r != nil {
		r.State = stratov1.ContainerState_CONTAINER_UNHEALTHY
	}
}

// Commands and proposals, as the planners build them.

func closeCommand(cid, pipeline uint64) *stratov1.DatanodeCommand {
	return &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CloseContainer{
		CloseContainer: &stratov1.CloseContainerCommand{ContainerId: cid, PipelineId: pipeline}}}
}

func setContainerState(now time.Time, id uint64, st stratov1.ContainerState) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetContainerState{
		SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: st}}}
}

func closing(now time.Time, id uint64) *stratov1.ClusterCommand {
	return setContainerState(now, id, stratov1.ContainerState_CONTAINER_CLOSING)
}

func closePipeline(now time.Time, id uint64) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ClosePipeline{ClosePipeline: id}}
}
