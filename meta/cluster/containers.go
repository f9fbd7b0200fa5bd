package cluster

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Containers and their replicas: the close logic (full containers, the
// containers of failed pipelines, CLOSING to CLOSED once the replicas
// closed), bad replicas, and where to read a container.

// planTick is Tick's judgement, with node health already updated: the copies
// in flight past ReplicationTimeout are forgotten, full containers are
// closed, closing ones whose live replicas all closed become CLOSED (their
// laggards sent the close again every StaleAfter), pipelines a member of
// which is gone are closed with their open containers, and maintenances
// past their end are ended.
func planTick(s *state, o *Options, now time.Time) plan {
	var p plan
	for k, fl := range s.replicating {
		if now.Sub(fl.since) >= o.ReplicationTimeout {
			p.forget = append(p.forget, k)
		}
	}
	planFullContainers(s, o, now, &p)
	planMaintenanceEnd(s, now, &p)
	for _, cid := range closingStep(s.closing, o.ClosingStep) {
		planClosed(s, o, now, s.containers[cid], &p)
	}
	settling := s.settling(now)
	racks, respread := s.serviceRacks(), false
	for _, pl := range s.sortedPipelines() {
		if pl.State != stratov1.PipelineState_PIPELINE_OPEN {
			// A leader that closed the pipeline and lost its leadership
			// before its containers' closes committed leaves them open
			// on a closed pipeline: close them now.
			for _, cid := range s.open[pl.Id] {
				p.propose = append(p.propose, closing(now, cid))
				p.closeCommands(s, pl, cid)
			}
			continue
		}
		if s.pipelineUsable(pl) {
			if !settling && !respread && s.pipelineMisplaced(pl, racks, pipelineLimit(o, pl)) {
				// Made before racks joined (or over racks since
				// emptied): closed, one a tick, for a pipeline that
				// spans them; its containers are mended once closed.
				respread = true
				planClosePipeline(s, now, pl, &p)
			}
			continue
		}
		if settling && s.unregisteredMember(pl) {
			continue // it may not have heard of this leader yet
		}
		// A member is gone: close the pipeline and its open containers.
		planClosePipeline(s, now, pl, &p)
	}
	return p
}

// closingStep is the CLOSING containers a tick judges, in ID order: all of
// them, or step of them taken at random (a map's iteration starts at a
// random place) when there are more.
func closingStep(closing map[uint64]bool, step int) []uint64 {
	if len(closing) <= step {
		return slices.Sorted(maps.Keys(closing))
	}
	ids := make([]uint64, 0, step)
	for cid := range closing {
		ids = append(ids, cid)
		if len(ids) == step {
			break
		}
	}
	slices.Sort(ids)
	return ids
}

// Closing counts the CLOSING containers.
func (m *Manager) Closing() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.s.closing)
}

// planFullContainers closes the full containers once their writers had
// time to finish (FullCloseDelay), or once a replica is that full.
func planFullContainers(s *state, o *Options, now time.Time, p *plan) {
	var full []*containerState
	for _, ids := range s.open {
		for _, cid := range ids {
			c := s.containers[cid]
			if c.fullAt.IsZero() && !reportedFull(o, c) {
				continue
			}
			if !c.fullAt.IsZero() && now.Sub(c.fullAt) < o.FullCloseDelay && !reportedFull(o, c) {
				continue
			}
			full = append(full, c)
		}
	}
	slices.SortFunc(full, compareContainers)
	for _, c := range full {
		p.propose = append(p.propose, closing(now, c.info.Id))
		if pl := s.pipelines[c.info.PipelineId]; pl != nil {
			p.closeCommands(s, pl, c.info.Id)
		}
		p.unfull = append(p.unfull, c.info.Id)
	}
}

// planClosed: a closing container whose good replicas on datanodes not
// DEAD are all CLOSED (at least one) is CLOSED. Live holders still OPEN or
// CLOSING are sent the close command again every StaleAfter. An erasure
// coded container also waits for the live members of its pipeline that
// have not reported their replica (each holds its own index).
func planClosed(s *state, o *Options, now time.Time, c *containerState, p *plan) {
	if c.info.State != stratov1.ContainerState_CONTAINER_CLOSING || len(c.replicas) == 0 {
		return
	}
	closed := 0
	var pending []string
	if pl := s.pipelines[c.info.PipelineId]; pl != nil && c.info.ErasureCoding != nil {
		for _, id := range pl.Members {
			if s.nodes[id].alive() && !c.replicas.has(id) {
				pending = append(pending, id)
			}
		}
	}
	for id, r := range c.replicas.all() {
		if !s.nodes[id].alive() {
			continue
		}
		switch r.State {
		case stratov1.ContainerState_CONTAINER_CLOSED:
			closed++
		case stratov1.ContainerState_CONTAINER_UNHEALTHY:
		default:
			pending = append(pending, id)
		}
	}
	switch {
	case closed > 0 && len(pending) == 0:
		p.propose = append(p.propose, setContainerState(now, c.info.Id, stratov1.ContainerState_CONTAINER_CLOSED))
	case len(pending) > 0 && c.closeSent.IsZero():
		p.closeSent = append(p.closeSent, c.info.Id) // the transition to CLOSING queued them
	case len(pending) > 0 && now.Sub(c.closeSent) >= o.StaleAfter:
		p.closeSent = append(p.closeSent, c.info.Id)
		slices.Sort(pending)
		for _, id := range pending {
			p.queue(id, closeCommand(c.info.Id, c.info.PipelineId))
		}
	}
}

// planClosePipeline closes pipeline pl and its open containers, telling
// its live members; new pipelines are made from the others.
func planClosePipeline(s *state, now time.Time, pl *stratov1.PipelineRecord, p *plan) {
	p.dirty = true
	p.propose = append(p.propose, closePipeline(now, pl.Id))
	for _, cid := range s.open[pl.Id] {
		p.propose = append(p.propose, closing(now, cid))
		p.closeCommands(s, pl, cid)
	}
}

// reportedFull: a replica reports the close threshold used.
func reportedFull(o *Options, c *containerState) bool {
	for _, r := range c.replicas.all() {
		if float64(r.UsedBytes) >= o.CloseThreshold*float64(o.ContainerSize) {
			return true
		}
	}
	return false
}

// CloseContainer handles a client that could not write to a container: the
// container is closed (CLOSING, with close commands queued for its pipeline's
// members) and, when the client names a datanode that failed, the pipeline is
// closed with all its open containers, so that no new block lands on it; the
// pipelines are topped up again from the healthy datanodes. It returns the
// durable changes for the caller to propose. A container that is not open
// needs nothing.
func (m *Manager) CloseContainer(now time.Time, id uint64, failed string) ([]*stratov1.ClusterCommand, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := planCloseContainer(&m.s, now, id, failed)
	if err != nil {
		return nil, err
	}
	return m.applyLocked(now, &p), nil
}

// ClosePipeline closes pipeline id and its open containers (an operator's
// request), and returns the changes to propose and the containers closed.
func (m *Manager) ClosePipeline(now time.Time, id uint64) ([]*stratov1.ClusterCommand, []uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	pl := m.s.pipelines[id]
	if pl == nil {
		return nil, nil, fmt.Errorf("%w: pipeline %d", ErrNotFound, id)
	}
	if pl.State != stratov1.PipelineState_PIPELINE_OPEN {
		return nil, nil, nil
	}
	open := slices.Clone(m.s.open[id])
	var p plan
	planClosePipeline(&m.s, now, pl, &p)
	return m.applyLocked(now, &p), open, nil
}

// planCloseContainer is CloseContainer's judgement.
func planCloseContainer(s *state, now time.Time, id uint64, failed string) (plan, error) {
	var p plan
	c := s.containers[id]
	if c == nil {
		return p, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	pl := s.pipelines[c.info.PipelineId]
	if failed != "" && pl != nil && pl.State == stratov1.PipelineState_PIPELINE_OPEN && slices.Contains(pl.Members, failed) {
		planClosePipeline(s, now, pl, &p)
		return p, nil
	}
	if c.info.State != stratov1.ContainerState_CONTAINER_OPEN {
		return p, nil
	}
	p.propose = append(p.propose, closing(now, id))
	if pl != nil {
		p.closeCommands(s, pl, id)
	}
	return p, nil
}

// MarkUnhealthy records that a datanode's replica of a container failed a
// read (a checksum mismatch or a missing block): the replica no longer counts
// as a good copy, whatever the datanode reports, until it is gone from the
// datanode (deleted, or replaced by a new copy).
func (m *Manager) MarkUnhealthy(id uint64, datanode string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[id]
	if c == nil {
		return fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	if !c.replicas.has(datanode) {
		return fmt.Errorf("%w: datanode %q holds no replica of container %d", ErrNotFound, datanode, id)
	}
	markBad(c, datanode)
	return nil
}

// ScanContainer queues a ScanContainerCommand for every live datanode that
// reports a CLOSED replica of container id (a replica already UNHEALTHY
// has nothing left to find), and returns them, sorted. The scans' results
// come back as replica states in the datanodes' reports.
func (m *Manager) ScanContainer(id uint64, data bool) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[id]
	if c == nil {
		return nil, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	var out []string
	for _, dn := range c.replicas.ids() {
		if !m.s.nodes[dn].alive() || c.replicas.get(dn).GetState() != stratov1.ContainerState_CONTAINER_CLOSED {
			continue
		}
		m.queueLocked(dn, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_ScanContainer{
			ScanContainer: &stratov1.ScanContainerCommand{ContainerId: id, Data: data}}})
		out = append(out, dn)
	}
	return out, nil
}

// Pipelines lists all pipelines, by ID.
func (m *Manager) Pipelines() []*stratov1.PipelineInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.s.sortedPipelines()
	out := make([]*stratov1.PipelineInfo, len(ps))
	for i, p := range ps {
		out[i] = PipelineInfo(p)
	}
	return out
}

// Containers lists up to limit containers with IDs above startAfter.
func (m *Manager) Containers(startAfter uint64, limit int) []*stratov1.ContainerInfo {
	out, _ := m.ListContainers(startAfter, limit, ContainerFilter{}, false)
	return out
}

// Replicas returns a container's record and its reported replicas.
func (m *Manager) Replicas(id uint64) (*stratov1.ContainerInfo, map[string]*stratov1.ContainerReplica, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[id]
	if c == nil {
		return nil, nil, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	// The record is changed in place by Apply: callers get a copy.
	return m.s.info(c, m.s.serviceRacks()), c.replicas.protos(id), nil
}

// Locations returns where a container's data can be read now: the datanodes
// of stored (a block's pipeline when it was allocated), in that order, then
// the other holders (copies made since), skipping dead datanodes and
// unhealthy replicas, and putting stale ones last. With no replica reported
// yet (a leader just elected), stored is returned as it is. An erasure coded
// container's members keep their places (ecLocations).
func (m *Manager) Locations(cid uint64, stored []*stratov1.DatanodeDetails) []*stratov1.DatanodeDetails {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[cid]
	if c == nil || len(c.replicas) == 0 {
		return stored
	}
	if c.info.ErasureCoding != nil {
		return m.s.ecLocations(c, stored)
	}
	return m.s.locations(c, stored)
}

// locations is Locations for a replicated container c.
func (s *state) locations(c *containerState, stored []*stratov1.DatanodeDetails) []*stratov1.DatanodeDetails {
	// A member of stored counts unless its node is dead or its replica
	// known bad (a replica not reported yet is most likely being reported:
	// the container was just created); another datanode counts once it
	// reports a usable replica.
	inStored := map[string]bool{}
	for _, d := range stored {
		inStored[d.GetId()] = true
	}
	usable := func(id string) *stratov1.DatanodeDetails {
		r, n := c.replicas.get(id), s.nodes[id]
		if !n.alive() || (r == nil && !inStored[id]) || (r != nil && r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY) {
			return nil
		}
		return n.details
	}
	var order []string
	seen := map[string]bool{}
	for _, d := range stored {
		if !seen[d.GetId()] {
			order = append(order, d.GetId())
			seen[d.GetId()] = true
		}
	}
	extra := make([]string, 0, len(c.replicas))
	for id := range c.replicas.all() {
		if !seen[id] {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	order = append(order, extra...)
	// HEALTHY nodes that reported the replica first, then HEALTHY members
	// of stored that have not (yet), then STALE ones (probably down).
	var out, unreported, stale []*stratov1.DatanodeDetails
	for _, id := range order {
		nd := usable(id)
		switch {
		case nd == nil:
		case !s.nodes[id].healthy():
			stale = append(stale, nd)
		case !c.replicas.has(id):
			unreported = append(unreported, nd)
		default:
			out = append(out, nd)
		}
	}
	out = append(append(out, unreported...), stale...)
	if len(out) == 0 {
		return stored
	}
	return out
}

// info is the API view of a container, with its soft state.
// racks counts the racks with an in-service datanode (serviceRacks).
func (s *state) info(c *containerState, racks int) *stratov1.ContainerInfo {
	info := ContainerInfo(c.info)
	info.AllocatedBytes = c.allocated
	good, problem := s.judge(c, racks)
	info.GoodCopies, info.Problem = int32(good), problem
	info.MissingIndexes = s.missingIndexes(c)
	return info
}

// pipelineLimit is the open pipelines of pl's redundancy a datanode takes
// part in at most (ensurePipelines, Allocate).
func pipelineLimit(o *Options, pl *stratov1.PipelineRecord) int {
	if pl.ErasureCoding == nil && pl.Replication == stratov1.ReplicationFactor_REPLICATION_ONE {
		return 1
	}
	return o.PipelinesPerNode
}
