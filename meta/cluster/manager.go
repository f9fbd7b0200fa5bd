package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

var (
	// ErrNotFound: no such datanode, pipeline or container.
	ErrNotFound = errors.New("cluster: not found")
	// ErrUnknownNode: a heartbeat from a datanode that has not registered
	// (it is told to register again).
	ErrUnknownNode = errors.New("cluster: datanode not registered")
	// ErrNoPipeline: not enough healthy datanodes for the replication asked.
	ErrNoPipeline = errors.New("cluster: no pipeline available")
	// ErrSafeMode: block allocation is refused until safe mode ends.
	ErrSafeMode = errors.New("cluster: in safe mode")
	// ErrBadTransition: a container state change the state machine forbids.
	ErrBadTransition = errors.New("cluster: invalid container state transition")
	// ErrCorrupt: a stored record cannot be decoded.
	ErrCorrupt = errors.New("cluster: corrupt record")
	// ErrInvalid: a malformed request (empty datanode ID, bad replication).
	ErrInvalid = errors.New("cluster: invalid argument")
	// ErrOtherCluster: a datanode that belongs to another cluster.
	ErrOtherCluster = errors.New("cluster: datanode of another cluster")
)

// Proposer persists a cluster command through consensus and returns the
// result of Manager.Apply once the command has been applied on this node.
type Proposer func(ctx context.Context, cmd *stratov1.ClusterCommand) (proto.Message, error)

type nodeState struct {
	details  *stratov1.DatanodeDetails
	stats    *stratov1.NodeStats
	lastSeen time.Time
	health   stratov1.NodeHealth
	opState  stratov1.NodeOpState
	// containers maps the containers this node reported to the report
	// generation that last listed them.
	containers map[uint64]uint64
	reportGen  uint64
	// lastFull: when it last sent a full report (registering is one).
	lastFull time.Time
	commands []*stratov1.DatanodeCommand
}

type containerState struct {
	info *stratov1.ContainerRecord
	// replicas by datanode ID (soft).
	replicas map[string]*stratov1.ContainerReplica
	// allocated bytes since the leader started (soft).
	allocated int64
	// fullAt: when allocations reached the close threshold (soft; zero
	// while the container takes blocks).
	fullAt time.Time
	// bad: datanodes whose replica a client found bad (soft). It stays
	// UNHEALTHY whatever the datanode reports until the replica is gone.
	bad map[string]bool
	// copyFailed: the target of the last copy a source reported failed,
	// avoided while another target exists until copyFailedUntil (soft).
	copyFailed      string
	copyFailedUntil time.Time
	// closeSent: when close commands for this CLOSING container were last
	// queued (soft): they are sent again to live holders that have not
	// closed their replica after StaleAfter (a restarted datanode forgets
	// the commands it had not carried out).
	closeSent time.Time
	// unreportedSince: when the replication pass first found this CLOSED
	// container with no replica reported (soft; zero once one is).
	unreportedSince time.Time
}

// Manager holds the cluster state. See the package documentation.
type Manager struct {
	opts    Options
	propose Proposer

	allocMu sync.Mutex // serializes Allocate and pipeline/container creation
	idNext  uint64     // reserved block local IDs [idNext, idEnd); under allocMu
	idEnd   uint64
	rr      uint64 // round-robin cursor over pipelines; under allocMu

	mu sync.Mutex
	// clusterID is the durable cluster identity ("" until the first leader
	// set it): a datanode that registers with another one is refused.
	clusterID string
	// opStates: the datanodes not in service (durable: a mirror of the
	// C o records), whether or not they are registered.
	opStates map[string]stratov1.NodeOpState
	nodes    map[string]*nodeState
	// open indexes the OPEN containers of each pipeline, by ascending ID.
	open map[uint64][]uint64
	// pipelinesDirty: nodes came or went since pipelines were last topped up.
	pipelinesDirty bool
	pipelines      map[uint64]*stratov1.PipelineRecord
	containers     map[uint64]*containerState
	nextCmdID      uint64
	safeMode       bool
	safeForced     bool
	// replicating: copies and rebuilds in flight, by container and
	// replica index (0 for a replicated container's copy).
	replicating map[copyKey]inflight
	// deleting: replica deletions commanded and not yet seen done (the
	// datanode stops reporting the replica).
	deleting map[deleteKey]bool
	// blockDeletes: deleted-blocks entries in flight (deletion.go).
	blockDeletes blockDeletions
	// settleUntil: the end of the settle period BecomeLeader started.
	settleUntil time.Time
}

type deleteKey struct {
	container uint64
	datanode  string
}

// copyKey names a copy in flight: a replicated container's (index 0), or
// one index of an erasure coded container's (copied or rebuilt).
type copyKey struct {
	container uint64
	index     int32
}

type inflight struct {
	// source pushes the copy ("" for a reconstruction, which target
	// runs, reading from d other indexes).
	source, target string
	since          time.Time
	cmdID          uint64 // the command's ID
}

// commanded is the datanode the command of fl went to (and that reports
// its failure).
func (fl inflight) commanded() string {
	if fl.source == "" {
		return fl.target
	}
	return fl.source
}

// New returns a manager with no state; call Load to read the durable state.
// propose is how the manager persists its decisions (nil: read-only, for
// followers and tools).
func New(opts Options, propose Proposer) (*Manager, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Manager{
		opts:        opts,
		propose:     propose,
		nodes:       map[string]*nodeState{},
		opStates:    map[string]stratov1.NodeOpState{},
		pipelines:   map[uint64]*stratov1.PipelineRecord{},
		containers:  map[uint64]*containerState{},
		open:        map[uint64][]uint64{},
		safeMode:    true,
		replicating: map[copyKey]inflight{},
	}, nil
}

// Options returns the manager's options (with defaults filled in).
func (m *Manager) Options() Options { return m.opts }

// BecomeLeader starts a term of leadership: it drops the soft state (a
// replica that led before kept what it knew then, which is stale now:
// datanodes, health, replicas, bytes allocated, copies, replica and block
// deletions in flight, queued commands), goes back into safe mode, and
// starts the settle period (Options.LeaderSettle) during which the soft
// state is rebuilt from registrations and reports and nothing is decided
// from it (Settling). Datanodes that heartbeat are told to register again,
// with their full container report. The durable state is untouched.
func (m *Manager) BecomeLeader(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nodes = map[string]*nodeState{}
	for _, c := range m.containers {
		c.replicas, c.bad, c.allocated, c.fullAt = nil, nil, 0, time.Time{}
	}
	m.replicating = map[copyKey]inflight{}
	m.deleting = nil
	m.blockDeletes = blockDeletions{}
	m.safeMode, m.safeForced = true, false
	m.pipelinesDirty = true
	m.settleUntil = now.Add(m.opts.LeaderSettle)
}

// opStateLocked is datanode id's operational state as recorded.
func (m *Manager) opStateLocked(id string) stratov1.NodeOpState {
	if st, ok := m.opStates[id]; ok {
		return st
	}
	return stratov1.NodeOpState_NODE_IN_SERVICE
}

// setOpStateLocked mirrors a recorded operational state into memory.
func (m *Manager) setOpStateLocked(id string, st stratov1.NodeOpState) {
	if st == stratov1.NodeOpState_NODE_IN_SERVICE {
		delete(m.opStates, id)
	} else {
		m.opStates[id] = st
	}
	if n := m.nodes[id]; n != nil && n.opState != st {
		n.opState = st
		m.pipelinesDirty = true
	}
}

// Settling reports whether the settle period of the current leadership is
// still running: replication and block deletion must wait.
func (m *Manager) Settling(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return now.Before(m.settleUntil)
}

// ClusterID is the cluster's identity ("" until the first leader set it).
func (m *Manager) ClusterID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clusterID
}

// Register records a datanode (again) with its full container report. It
// refuses a datanode that belongs to another cluster (ErrOtherCluster); the
// server sets the cluster's ID before the first registration.
func (m *Manager) Register(now time.Time, req *stratov1.RegisterRequest) error {
	d := req.GetDetails()
	if d.GetId() == "" || d.GetDataAddr() == "" {
		return fmt.Errorf("%w: a datanode registers with an ID and a data address", ErrInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.GetClusterId() != "" && m.clusterID != "" && req.GetClusterId() != m.clusterID {
		return fmt.Errorf("%w: datanode %s belongs to cluster %s, this is cluster %s (a volume of another cluster, or a meta address reused)",
			ErrOtherCluster, d.Id, req.GetClusterId(), m.clusterID)
	}
	n := m.nodes[d.Id]
	if n == nil {
		n = &nodeState{containers: map[uint64]uint64{}, opState: m.opStateLocked(d.Id)}
		m.nodes[d.Id] = n
	}
	n.details = proto.Clone(d).(*stratov1.DatanodeDetails)
	m.pipelinesDirty = true
	n.stats = req.GetStats()
	n.lastSeen = now
	n.health = stratov1.NodeHealth_NODE_HEALTHY
	report := req.GetReport()
	if report == nil {
		report = &stratov1.ContainerReport{}
	}
	report.Full = true
	n.lastFull = now
	m.applyReportLocked(d.Id, n, report)
	m.updateSafeModeLocked()
	return nil
}

// Heartbeat records a datanode's liveness, stats and (optional) report, and
// returns the commands queued for it. An unknown datanode gets
// ErrUnknownNode: it must register again.
func (m *Manager) Heartbeat(now time.Time, req *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[req.GetDatanodeId()]
	if n == nil {
		return &stratov1.HeartbeatResponse{Reregister: true}, fmt.Errorf("%w: %q", ErrUnknownNode, req.GetDatanodeId())
	}
	n.lastSeen = now
	if n.health != stratov1.NodeHealth_NODE_HEALTHY {
		n.health = stratov1.NodeHealth_NODE_HEALTHY
		m.pipelinesDirty = true
	}
	if req.Stats != nil {
		n.stats = req.Stats
	}
	if req.Report != nil {
		if req.Report.Full {
			n.lastFull = now
		}
		m.applyReportLocked(req.DatanodeId, n, req.Report)
		m.updateSafeModeLocked()
	}
	m.ackDeletedBlocksLocked(req.DatanodeId, req.DeletedBlocksAcks)
	m.commandsFailedLocked(now, req.DatanodeId, req.FailedCommands)
	cmds := n.commands
	n.commands = nil
	return &stratov1.HeartbeatResponse{Commands: cmds}, nil
}

// applyReportLocked folds a container report into the replica map. A full
// report updates what it lists in place and then sweeps what it no longer
// lists, so that a report that changes nothing allocates nothing.
func (m *Manager) applyReportLocked(id string, n *nodeState, r *stratov1.ContainerReport) {
	n.reportGen++
	gen := n.reportGen
	defer func() {
		if !r.Full {
			return
		}
		for cid, g := range n.containers {
			if g != gen {
				delete(n.containers, cid)
				if c := m.containers[cid]; c != nil {
					delete(c.replicas, id)
					delete(c.bad, id)
				}
				delete(m.deleting, deleteKey{cid, id})
			}
		}
	}()
	for _, cid := range r.Deleted {
		delete(n.containers, cid)
		if c := m.containers[cid]; c != nil {
			delete(c.replicas, id)
			delete(c.bad, id)
		}
		delete(m.deleting, deleteKey{cid, id})
	}
	for _, rep := range r.Replicas {
		c := m.containers[rep.ContainerId]
		if c == nil {
			continue // unknown to meta: the replication manager decides (issue of orphan replicas)
		}
		if c.replicas == nil {
			c.replicas = map[string]*stratov1.ContainerReplica{}
		}
		if c.bad[id] && rep.State != stratov1.ContainerState_CONTAINER_UNHEALTHY {
			rep = proto.Clone(rep).(*stratov1.ContainerReplica)
			rep.State = stratov1.ContainerState_CONTAINER_UNHEALTHY
		}
		c.replicas[id] = rep
		m.placeMissingIndexLocked(c, id, rep)
		n.containers[rep.ContainerId] = gen
		k := copyKey{rep.ContainerId, rep.ReplicaIndex}
		if fl, ok := m.replicating[k]; ok && fl.target == id {
			delete(m.replicating, k)
		}
	}
}

// queueLocked adds a command for a datanode's next heartbeat reply and
// returns its ID (0 for an unknown datanode).
func (m *Manager) queueLocked(node string, cmd *stratov1.DatanodeCommand) uint64 {
	n := m.nodes[node]
	if n == nil {
		return 0
	}
	m.nextCmdID++
	cmd.Id = m.nextCmdID
	n.commands = append(n.commands, cmd)
	return cmd.Id
}

// commandsFailedLocked forgets the copies a source reports failed (and
// the reconstructions a target reports failed), so that the next
// ReplicationWork plans them again (away from the failed target while
// another exists) instead of waiting ReplicationTimeout. (Meta's heartbeat
// handler logs every failure with its reason.)
func (m *Manager) commandsFailedLocked(now time.Time, node string, failed []*stratov1.CommandFailure) {
	for _, f := range failed {
		for k, fl := range m.replicating {
			if k.container != f.ContainerId || fl.commanded() != node || fl.cmdID != f.CommandId {
				continue
			}
			delete(m.replicating, k)
			if c := m.containers[f.ContainerId]; c != nil {
				c.copyFailed, c.copyFailedUntil = fl.target, now.Add(m.opts.ReplicationTimeout)
			}
		}
	}
}

// Tick updates node health from the time of their last heartbeat and
// returns the durable changes that follow (pipelines of dead or stale nodes
// closed, their open containers set to CLOSING), for the caller to propose.
// It queues the matching close commands for the surviving members.
func (m *Manager) Tick(now time.Time) []*stratov1.ClusterCommand {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range m.nodes {
		age := now.Sub(n.lastSeen)
		switch {
		case age >= m.opts.DeadAfter:
			n.health = stratov1.NodeHealth_NODE_DEAD
		case age >= m.opts.StaleAfter:
			n.health = stratov1.NodeHealth_NODE_STALE
		default:
			n.health = stratov1.NodeHealth_NODE_HEALTHY
		}
	}
	for cid, fl := range m.replicating {
		if now.Sub(fl.since) >= m.opts.ReplicationTimeout {
			delete(m.replicating, cid)
		}
	}
	var out []*stratov1.ClusterCommand
	// Full containers close once their writers had time to finish, or once
	// a replica is that full.
	for _, c := range m.sortedContainersLocked() {
		if c.fullAt.IsZero() && !m.reportedFullLocked(c) || c.info.State != stratov1.ContainerState_CONTAINER_OPEN {
			continue
		}
		if !c.fullAt.IsZero() && now.Sub(c.fullAt) < m.opts.FullCloseDelay && !m.reportedFullLocked(c) {
			continue
		}
		out = append(out, closing(now, c.info.Id))
		if p := m.pipelines[c.info.PipelineId]; p != nil {
			m.queueCloseLocked(p, c.info.Id)
		}
		c.fullAt = time.Time{}
	}
	// A closing container whose good replicas on datanodes not DEAD are all
	// CLOSED (at least one) is CLOSED. Live holders still OPEN or CLOSING
	// are sent the close command again every StaleAfter. An erasure coded
	// container also waits for the live members of its pipeline that have
	// not reported their replica (each holds its own index).
	for _, c := range m.sortedContainersLocked() {
		if c.info.State != stratov1.ContainerState_CONTAINER_CLOSING || len(c.replicas) == 0 {
			continue
		}
		closed := 0
		var pending []string
		if p := m.pipelines[c.info.PipelineId]; p != nil && c.info.ErasureCoding != nil {
			for _, id := range p.Members {
				if n := m.nodes[id]; n != nil && n.health != stratov1.NodeHealth_NODE_DEAD && c.replicas[id] == nil {
					pending = append(pending, id)
				}
			}
		}
		for id, r := range c.replicas {
			if n := m.nodes[id]; n == nil || n.health == stratov1.NodeHealth_NODE_DEAD {
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
			out = append(out, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetContainerState{
				SetContainerState: &stratov1.ContainerStateChange{ContainerId: c.info.Id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
		case len(pending) > 0 && c.closeSent.IsZero():
			c.closeSent = now // the transition to CLOSING queued them
		case len(pending) > 0 && now.Sub(c.closeSent) >= m.opts.StaleAfter:
			c.closeSent = now
			slices.Sort(pending)
			for _, id := range pending {
				m.queueLocked(id, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CloseContainer{
					CloseContainer: &stratov1.CloseContainerCommand{ContainerId: c.info.Id, PipelineId: c.info.PipelineId}}})
			}
		}
	}
	settling := now.Before(m.settleUntil)
	for _, p := range m.sortedPipelinesLocked() {
		if p.State != stratov1.PipelineState_PIPELINE_OPEN || m.pipelineUsableLocked(p) {
			continue
		}
		if settling && m.unregisteredMemberLocked(p) {
			continue // it may not have heard of this leader yet
		}
		// A member is gone: close the pipeline and its open containers.
		m.pipelinesDirty = true
		out = append(out, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ClosePipeline{ClosePipeline: p.Id}})
		for _, cid := range m.open[p.Id] {
			out = append(out, closing(now, cid))
			m.queueCloseLocked(p, cid)
		}
	}
	return out
}

func closing(now time.Time, id uint64) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_SetContainerState{
		SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSING}}}
}

func (m *Manager) queueCloseLocked(p *stratov1.PipelineRecord, cid uint64) {
	for _, member := range p.Members {
		if n := m.nodes[member]; n != nil && n.health != stratov1.NodeHealth_NODE_DEAD {
			m.queueLocked(member, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CloseContainer{
				CloseContainer: &stratov1.CloseContainerCommand{ContainerId: cid, PipelineId: p.Id}}})
		}
	}
}

// unregisteredMemberLocked: a member of p has not registered with this leader.
func (m *Manager) unregisteredMemberLocked(p *stratov1.PipelineRecord) bool {
	for _, id := range p.Members {
		if m.nodes[id] == nil {
			return true
		}
	}
	return false
}

// reportedFullLocked: a replica reports the close threshold used.
func (m *Manager) reportedFullLocked(c *containerState) bool {
	for _, r := range c.replicas {
		if float64(r.UsedBytes) >= m.opts.CloseThreshold*float64(m.opts.ContainerSize) {
			return true
		}
	}
	return false
}

// pipelineUsableLocked: every member is registered, HEALTHY and in service.
func (m *Manager) pipelineUsableLocked(p *stratov1.PipelineRecord) bool {
	for _, id := range p.Members {
		n := m.nodes[id]
		if n == nil || n.health != stratov1.NodeHealth_NODE_HEALTHY || n.opState != stratov1.NodeOpState_NODE_IN_SERVICE {
			return false
		}
	}
	return true
}

func (m *Manager) sortedPipelinesLocked() []*stratov1.PipelineRecord {
	ps := make([]*stratov1.PipelineRecord, 0, len(m.pipelines))
	for _, p := range m.pipelines {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *stratov1.PipelineRecord) int { return cmp.Compare(a.Id, b.Id) })
	return ps
}

func (m *Manager) sortedContainersLocked() []*containerState {
	cs := make([]*containerState, 0, len(m.containers))
	for _, c := range m.containers {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b *containerState) int { return cmp.Compare(a.info.Id, b.info.Id) })
	return cs
}

// ---- Safe mode ---------------------------------------------------------------

func (m *Manager) safeModeStatusLocked() *stratov1.SafeModeStatus {
	healthy := 0
	for _, n := range m.nodes {
		if n.health == stratov1.NodeHealth_NODE_HEALTHY {
			healthy++
		}
	}
	// Only CLOSED containers are waited for (as in Ozone's container
	// safe-mode rule): a datanode makes a container at its first write, so
	// an open container allocated and never written is on no datanode, and
	// one closed before its first write (its pipeline failed) never
	// reaches CLOSED. Neither would ever be reported.
	total, reported := 0, 0
	for _, c := range m.containers {
		if c.info.State != stratov1.ContainerState_CONTAINER_CLOSED {
			continue
		}
		total++
		if len(c.replicas) > 0 {
			reported++
		}
	}
	frac := 1.0
	if total > 0 {
		frac = float64(reported) / float64(total)
	}
	return &stratov1.SafeModeStatus{
		InSafeMode:        m.safeMode,
		HealthyDatanodes:  int32(healthy),
		RequiredDatanodes: int32(m.opts.SafeModeMinDatanodes),
		ReplicaFraction:   frac,
		RequiredFraction:  m.opts.SafeModeReplicaFraction,
	}
}

func (m *Manager) updateSafeModeLocked() {
	if !m.safeMode {
		return
	}
	s := m.safeModeStatusLocked()
	if int(s.HealthyDatanodes) >= m.opts.SafeModeMinDatanodes && s.ReplicaFraction >= s.RequiredFraction {
		m.safeMode = false
	}
}

// SafeMode reports the safe-mode state and the figures it depends on.
func (m *Manager) SafeMode() *stratov1.SafeModeStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.safeModeStatusLocked()
}

// ExitSafeMode leaves safe mode now, whatever has reported (an admin's call).
func (m *Manager) ExitSafeMode() *stratov1.SafeModeStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.safeMode = false
	m.safeForced = true
	return m.safeModeStatusLocked()
}

// ---- Listing -------------------------------------------------------------------

// Datanodes lists the registered datanodes, by ID.
func (m *Manager) Datanodes() []*stratov1.DatanodeInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*stratov1.DatanodeInfo, 0, len(m.nodes))
	for _, n := range m.nodes {
		pipes := 0
		for _, p := range m.pipelines {
			if p.State == stratov1.PipelineState_PIPELINE_OPEN && slices.Contains(p.Members, n.details.Id) {
				pipes++
			}
		}
		out = append(out, &stratov1.DatanodeInfo{
			Details: n.details, Stats: n.stats, Health: n.health, OpState: n.opState,
			LastHeartbeatUnixMs: n.lastSeen.UnixMilli(), Containers: int32(len(n.containers)), Pipelines: int32(pipes),
		})
	}
	slices.SortFunc(out, func(a, b *stratov1.DatanodeInfo) int { return cmp.Compare(a.Details.Id, b.Details.Id) })
	return out
}

// Pipelines lists all pipelines, by ID.
func (m *Manager) Pipelines() []*stratov1.PipelineInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.sortedPipelinesLocked()
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
	c := m.containers[id]
	if c == nil {
		return nil, nil, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	reps := make(map[string]*stratov1.ContainerReplica, len(c.replicas))
	for k, v := range c.replicas {
		reps[k] = v // replaced, never changed in place
	}
	// The record is changed in place by Apply: callers get a copy.
	return m.infoLocked(c), reps, nil
}

// Node returns one datanode's details, or false.
func (m *Manager) Node(id string) (*stratov1.DatanodeDetails, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n := m.nodes[id]; n != nil {
		return n.details, true
	}
	return nil, false
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
	c := m.containers[id]
	if c == nil {
		return nil, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	p := m.pipelines[c.info.PipelineId]
	var out []*stratov1.ClusterCommand
	if failed != "" && p != nil && p.State == stratov1.PipelineState_PIPELINE_OPEN && slices.Contains(p.Members, failed) {
		m.pipelinesDirty = true
		out = append(out, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ClosePipeline{ClosePipeline: p.Id}})
		for _, cid := range m.open[p.Id] {
			out = append(out, closing(now, cid))
			m.queueCloseLocked(p, cid)
		}
		return out, nil
	}
	if c.info.State != stratov1.ContainerState_CONTAINER_OPEN {
		return nil, nil
	}
	out = append(out, closing(now, id))
	if p != nil {
		m.queueCloseLocked(p, id)
	}
	return out, nil
}

// MarkUnhealthy records that a datanode's replica of a container failed a
// read (a checksum mismatch or a missing block): the replica no longer counts
// as a good copy, whatever the datanode reports, until it is gone from the
// datanode (deleted, or replaced by a new copy).
func (m *Manager) MarkUnhealthy(id uint64, datanode string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.containers[id]
	if c == nil {
		return fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	rep := c.replicas[datanode]
	if rep == nil {
		return fmt.Errorf("%w: datanode %q holds no replica of container %d", ErrNotFound, datanode, id)
	}
	rep = proto.Clone(rep).(*stratov1.ContainerReplica)
	rep.State = stratov1.ContainerState_CONTAINER_UNHEALTHY
	c.replicas[datanode] = rep
	if c.bad == nil {
		c.bad = map[string]bool{}
	}
	c.bad[datanode] = true
	return nil
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
	c := m.containers[cid]
	if c == nil || len(c.replicas) == 0 {
		return stored
	}
	if c.info.ErasureCoding != nil {
		return m.ecLocations(c, stored)
	}
	// A member of stored counts unless its node is dead or its replica
	// known bad (a replica not reported yet is most likely being reported:
	// the container was just created); another datanode counts once it
	// reports a usable replica.
	inStored := map[string]bool{}
	for _, d := range stored {
		inStored[d.GetId()] = true
	}
	usable := func(id string) *stratov1.DatanodeDetails {
		r, n := c.replicas[id], m.nodes[id]
		if n == nil || n.health == stratov1.NodeHealth_NODE_DEAD || (r == nil && !inStored[id]) ||
			(r != nil && r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY) {
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
	for id := range c.replicas {
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
		case m.nodes[id].health != stratov1.NodeHealth_NODE_HEALTHY:
			stale = append(stale, nd)
		case c.replicas[id] == nil:
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
