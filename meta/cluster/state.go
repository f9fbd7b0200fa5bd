package cluster

import (
	"cmp"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// state is everything the Manager guards with mu: the mirror of the durable
// records (written only by Apply and Load) and the leader's soft state. The
// planners read it (they are passed the locked state and never write
// through it); the Manager's ...Locked methods and Apply write it.
type state struct {
	// clusterID is the durable cluster identity ("" until the first leader
	// set it): a datanode that registers with another one is refused.
	clusterID string
	// opStates: the datanodes not in service (durable: a mirror of the
	// C o records), whether or not they are registered.
	opStates map[string]stratov1.NodeOpState
	// maintenanceEnd: when the maintenance of the datanodes in it ends by
	// itself (durable, from their C o records; none: when it is ended).
	maintenanceEnd map[string]time.Time
	// pipelines and containers mirror the C p and C c records; a
	// container's soft state rides along (containerState).
	pipelines  map[uint64]*stratov1.PipelineRecord
	containers map[uint64]*containerState
	// pipesSorted caches the pipelines by ID (sortedPipelines; nil: to
	// be made).
	pipesSorted []*stratov1.PipelineRecord
	// usable caches the usable pipelines of each redundancy
	// (candidatePipelines) as of usableGen, which every change of a
	// pipeline, or of a datanode's health or state, moves on.
	usable    map[string]usablePipelines
	usableGen uint64
	// nodesGen moves on with every registration and every change of a
	// datanode's health or operational state; leaderGen with every
	// leadership (BecomeLeader). A replication pass, which releases mu
	// between its steps, reads them to learn what changed meanwhile.
	nodesGen, leaderGen uint64
	// racks is serviceRacks' last answer, good while nodesGen and
	// leaderGen (key) have not moved: the tick, the pass and the listings
	// ask for it, and at 10,000 datanodes it is milliseconds to count.
	racks struct {
		key [2]uint64
		n   int
		ok  bool
	}
	// lossGen moves on with every replica gone from its datanode or newly
	// reported UNHEALTHY (applyReportLocked, dropReplicaLocked): with
	// nodesGen, what RepairGen reads.
	lossGen uint64
	// candCounts is pipelineCandidates' scratch map, kept between calls.
	candCounts map[string]int
	// sorted caches the containers by ID, added those added since
	// (sortedContainers).
	sorted, added []*containerState
	// byState counts the containers by state (addContainer,
	// setContainerState, Load): the summary reads it, not every
	// container.
	byState map[stratov1.ContainerState]int64
	// closedReported counts the CLOSED containers with a replica
	// reported: with byState, what safe mode waits on, kept as replicas
	// come and go (applyReportLocked, dropReplicaLocked) and containers
	// change state, not counted over every container at each report of
	// 10,000 datanodes registering again.
	closedReported int64
	// open indexes the OPEN containers of each pipeline, by ascending ID;
	// closing, the CLOSING containers. The tick reads these, not every
	// container.
	open    map[uint64][]uint64
	closing map[uint64]bool

	// Soft state, from here on.
	nodes map[string]*nodeState
	// nodeIDs caches the IDs of nodes, sorted (sortedNodeIDs; nil: to be
	// made).
	nodeIDs []string
	// pipelinesDirty: nodes came or went since pipelines were last topped up.
	pipelinesDirty bool
	nextCmdID      uint64
	safeMode       bool
	// safeCheckedAt: when the reported containers were last counted
	// (updateSafeModeLocked).
	safeCheckedAt time.Time
	safeForced    bool
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
	// maintenanceMin is Options.MaintenanceMinReplicas, which judge
	// needs.
	maintenanceMin int
	// bal: the container balancer's record (durable) and its moves and
	// iteration (soft; balancer.go).
	bal balancerState
	// judged: what the last replication pass to finish in this
	// leadership found, for the summary (nil: none has yet).
	judged *passJudgement
}

func newState() state {
	return state{
		nodes:          map[string]*nodeState{},
		opStates:       map[string]stratov1.NodeOpState{},
		maintenanceEnd: map[string]time.Time{},
		pipelines:      map[uint64]*stratov1.PipelineRecord{},
		containers:     map[uint64]*containerState{},
		byState:        map[stratov1.ContainerState]int64{},
		open:           map[uint64][]uint64{},
		closing:        map[uint64]bool{},
		safeMode:       true,
		replicating:    map[copyKey]inflight{},
	}
}

// nodeState is the leader's view of one registered datanode (soft).
//
// A quiet heartbeat (Heartbeat's fast path) reaches it without mu, so
// its fields are guarded three ways:
//
//   - seen and stats are atomics: quiet heartbeats store them, the
//     holders of mu (the tick's health pass, the planners, the listings)
//     load them.
//   - health and dropped are written holding both mu and hb, and read
//     holding either: the tick's health pass and a quiet heartbeat are
//     ordered by hb, so a heartbeat never refreshes a node the tick has
//     just held STALE or DEAD (it takes the slow path, which revives it
//     under mu, as every heartbeat did before).
//   - commands is guarded by hb alone.
//
// Everything else is guarded by mu, as the rest of state.
type nodeState struct {
	details *stratov1.DatanodeDetails
	// seen: the time of the last heartbeat (or registration), in Unix
	// nanoseconds (lastSeen); stats: the last stats sent.
	seen    atomic.Int64
	stats   atomic.Pointer[stratov1.NodeStats]
	health  stratov1.NodeHealth
	opState stratov1.NodeOpState
	// containers maps the containers this node reported to the report
	// generation that last listed them. It is the index of the replica
	// map by datanode: its keys are exactly the containers c whose
	// c.replicas holds this node (applyReportLocked and dropReplicaLocked
	// change both; BecomeLeader drops both; Load drops the entries of
	// containers gone), so that a datanode's containers are found
	// without reading every container (ListContainers, the balancer,
	// the summary). It holds IDs only: 24 to 38 bytes a replica (a Go
	// map of uint64 to uint64, by how full its table is), some 100 MB
	// at a million containers of three replicas.
	containers map[uint64]uint64
	reportGen  uint64
	// reported sums up what it reported of the replicas the map holds
	// for it, as digestOf does a report, kept as its reports change them:
	// a full report with the same digest changes nothing
	// (applyReportLocked). It is known (ok) once a full report has been
	// read, and until a reload or a replica whose index must be placed.
	reported reportDigest
	// lastFull: when it last sent a full report (registering is one).
	lastFull time.Time

	// hb guards commands, and with mu health and dropped. Lock order: mu
	// before hb (hb is taken holding mu, never mu holding hb).
	hb       sync.Mutex
	commands []*stratov1.DatanodeCommand
	// dropped: BecomeLeader forgot this node; a quiet heartbeat that
	// found it before then takes the slow path (and is told to register).
	dropped bool
}

// lastSeen is the time of the node's last heartbeat or registration.
func (n *nodeState) lastSeen() time.Time { return time.Unix(0, n.seen.Load()) }

// takeCommands hands out the commands queued for the node: they are
// forgotten here, and sent again only if a planner queues them again.
func (n *nodeState) takeCommands() []*stratov1.DatanodeCommand {
	n.hb.Lock()
	defer n.hb.Unlock()
	return n.takeCommandsLocked()
}

// takeCommandsLocked is takeCommands for a holder of hb.
func (n *nodeState) takeCommandsLocked() []*stratov1.DatanodeCommand {
	cmds := n.commands
	n.commands = nil
	return cmds
}

// queued reports whether a command queued for the node satisfies f.
func (n *nodeState) queued(f func(*stratov1.DatanodeCommand) bool) bool {
	n.hb.Lock()
	defer n.hb.Unlock()
	return slices.ContainsFunc(n.commands, f)
}

// healthy: HEALTHY (a STALE node is probably down, a DEAD one is).
func (n *nodeState) healthy() bool {
	return n != nil && n.health == stratov1.NodeHealth_NODE_HEALTHY
}

// alive: registered and not DEAD (a STALE node may come back).
func (n *nodeState) alive() bool {
	return n != nil && n.health != stratov1.NodeHealth_NODE_DEAD
}

// inService: HEALTHY and in service: it may take writes, copies and
// rebuilds, and its replicas count as good copies.
func (n *nodeState) inService() bool {
	return n.healthy() && n.opState == stratov1.NodeOpState_NODE_IN_SERVICE
}

// inMaintenance: registered and entering or in maintenance, whatever its
// health.
func (n *nodeState) inMaintenance() bool {
	return n != nil && maintenance(n.opState)
}

// maintenance: st is one of the maintenance states.
func maintenance(st stratov1.NodeOpState) bool {
	return st == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE || st == stratov1.NodeOpState_NODE_IN_MAINTENANCE
}

// containerState is a container's record with the leader's soft state.
type containerState struct {
	info *stratov1.ContainerRecord
	// replicas by datanode ID (soft).
	replicas replicaSet
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

// deleteKey names a replica deletion under way.
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

// sortedNodeIDs returns the registered datanodes' IDs, sorted. The slice
// is kept until a datanode registers for the first time and must not be
// changed.
func (s *state) sortedNodeIDs() []string {
	if s.nodeIDs == nil {
		s.nodeIDs = slices.Sorted(maps.Keys(s.nodes))
	}
	return s.nodeIDs
}

// nodeChanged notes a registration, or a change of a datanode's health
// or operational state.
func (s *state) nodeChanged() {
	s.usableGen++
	s.nodesGen++
}

// opState is datanode id's operational state as recorded.
func (s *state) opState(id string) stratov1.NodeOpState {
	if st, ok := s.opStates[id]; ok {
		return st
	}
	return stratov1.NodeOpState_NODE_IN_SERVICE
}

func (s *state) settling(now time.Time) bool { return now.Before(s.settleUntil) }

// sortedPipelines returns the pipelines by ID. The slice is kept until a
// pipeline is added or changed (s.pipesSorted) and must not be changed.
func (s *state) sortedPipelines() []*stratov1.PipelineRecord {
	if s.pipesSorted != nil {
		return s.pipesSorted
	}
	ps := make([]*stratov1.PipelineRecord, 0, len(s.pipelines))
	for _, p := range s.pipelines {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *stratov1.PipelineRecord) int { return cmp.Compare(a.Id, b.Id) })
	s.pipesSorted = ps
	return ps
}

// putPipeline records pipeline p (new or changed).
func (s *state) putPipeline(p *stratov1.PipelineRecord) {
	s.pipelines[p.Id] = p
	s.pipesSorted = nil
	s.usableGen++
}

// sortedContainers returns the containers by ID. The slice is kept
// (s.sorted) and must not be changed: containers are only ever added, and
// a container with a higher ID than every other, as new ones have, is
// appended to it; anything else sorts them all again.
func (s *state) sortedContainers() []*containerState {
	if len(s.sorted) == len(s.containers) {
		return s.sorted
	}
	if len(s.sorted)+len(s.added) == len(s.containers) {
		slices.SortFunc(s.added, compareContainers)
		if len(s.sorted) == 0 || len(s.added) == 0 || s.added[0].info.Id > s.sorted[len(s.sorted)-1].info.Id {
			s.sorted, s.added = append(s.sorted, s.added...), nil
			return s.sorted
		}
	}
	cs := make([]*containerState, 0, len(s.containers))
	for _, c := range s.containers {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, compareContainers)
	s.sorted, s.added = cs, nil
	return cs
}

// addContainer adds container c, new to s.
func (s *state) addContainer(c *containerState) {
	s.containers[c.info.Id] = c
	s.added = append(s.added, c)
	s.byState[c.info.State]++
}

// countReported adds d to closedReported if c is CLOSED.
func (s *state) countReported(c *containerState, d int64) {
	if c.info.State == stratov1.ContainerState_CONTAINER_CLOSED {
		s.closedReported += d
	}
}

// setContainerState moves container c to state st, counted.
func (s *state) setContainerState(c *containerState, st stratov1.ContainerState) {
	s.byState[c.info.State]--
	s.byState[st]++
	if len(c.replicas) > 0 {
		s.countReported(c, -1)
		defer s.countReported(c, 1)
	}
	c.info.State = st
}

// setState records container c's new state in the indexes.
func (s *state) setState(c *stratov1.ContainerRecord) {
	if c.State != stratov1.ContainerState_CONTAINER_OPEN {
		s.open[c.PipelineId] = slices.DeleteFunc(s.open[c.PipelineId], func(x uint64) bool { return x == c.Id })
	}
	if c.State == stratov1.ContainerState_CONTAINER_CLOSING {
		s.closing[c.Id] = true
	} else {
		delete(s.closing, c.Id)
	}
}

func compareContainers(a, b *containerState) int { return cmp.Compare(a.info.Id, b.info.Id) }

// pipelineUsable: every member is registered, HEALTHY and in service.
func (s *state) pipelineUsable(p *stratov1.PipelineRecord) bool {
	for _, id := range p.Members {
		if !s.nodes[id].inService() {
			return false
		}
	}
	return true
}

// unregisteredMember: a member of p has not registered with this leader.
func (s *state) unregisteredMember(p *stratov1.PipelineRecord) bool {
	for _, id := range p.Members {
		if s.nodes[id] == nil {
			return true
		}
	}
	return false
}
