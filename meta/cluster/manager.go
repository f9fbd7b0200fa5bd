package cluster

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
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
	// ErrBadTransition: a container or datanode state change the state
	// machine forbids.
	ErrBadTransition = errors.New("cluster: invalid state transition")
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

// Manager holds the cluster state. See the package documentation.
type Manager struct {
	opts    Options
	propose Proposer

	// allocMu serializes the methods that propose as they go (Allocate,
	// ImportContainer): pipeline and container creation, ID reservation.
	allocMu sync.Mutex
	idNext  uint64 // reserved block local IDs [idNext, idEnd); under allocMu
	idEnd   uint64
	rr      uint64 // round-robin cursor over pipelines; under allocMu

	// passMu serializes replication passes (ReplicationWork), which
	// release mu between their steps.
	passMu sync.Mutex

	// mu guards s (but what a quiet heartbeat touches: see nodeState;
	// lock order mu, then a nodeState's hb). It is never held across a
	// proposal: Apply takes it.
	mu sync.Mutex
	s  state

	// hbNodes maps a registered datanode's ID to its *nodeState, the one
	// in s.nodes, for the heartbeats served without mu (quietHeartbeat).
	// It is written under mu (Register, BecomeLeader) and read without.
	hbNodes sync.Map

	// fullReports counts the full container reports handled (with
	// registrations), repeatedReports those of them not read, for they
	// said only what the map held (applyReportLocked).
	fullReports, repeatedReports atomic.Uint64
}

// FullReports counts the full container reports this manager handled
// (registrations among them) and, of those, the ones that said only what
// the replica map already held, and so were not read.
func (m *Manager) FullReports() (all, repeated uint64) {
	return m.fullReports.Load(), m.repeatedReports.Load()
}

// New returns a manager with no state; call Load to read the durable state.
// propose is how the manager persists its decisions (nil: read-only, for
// followers and tools).
func New(opts Options, propose Proposer) (*Manager, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts, propose: propose, s: newState()}
	m.s.maintenanceMin = opts.MaintenanceMinReplicas
	return m, nil
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
	s := &m.s
	for _, n := range s.nodes {
		n.hb.Lock()
		n.dropped, n.commands = true, nil
		n.hb.Unlock()
	}
	m.hbNodes.Clear()
	s.nodes, s.nodeIDs = map[string]*nodeState{}, nil
	for _, c := range s.containers {
		c.replicas, c.bad, c.allocated, c.fullAt = nil, nil, 0, time.Time{}
	}
	s.closedReported = 0
	s.replicating = map[copyKey]inflight{}
	s.bal = balancerState{rec: s.bal.rec}
	s.deleting = nil
	s.blockDeletes = blockDeletions{}
	s.judged = nil
	s.safeMode, s.safeForced = true, false
	s.pipelinesDirty = true
	s.usableGen++
	s.leaderGen++
	s.settleUntil = now.Add(m.opts.LeaderSettle)
}

// RepairGen moves on with every change that may leave a container short
// of good copies: a registration, a change of a datanode's health or
// operational state, a replica gone or reported UNHEALTHY. The leader
// runs a replication pass at its next tick when it moved since the last
// pass began, however long its idle interval.
func (m *Manager) RepairGen() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.nodesGen + m.s.lossGen
}

// Settling reports whether the settle period of the current leadership is
// still running: replication and block deletion must wait.
func (m *Manager) Settling(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.settling(now)
}

// ClusterID is the cluster's identity ("" until the first leader set it).
func (m *Manager) ClusterID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.clusterID
}

// Tick updates node health from the time of their last heartbeat, forgets
// the copies in flight for longer than Options.ReplicationTimeout, and
// returns the durable changes that follow (planTick: full containers and
// the pipelines of dead or stale nodes closed, closing containers whose
// replicas closed CLOSED), for the caller to propose. It queues the
// matching close commands for the live members.
func (m *Manager) Tick(now time.Time) []*stratov1.ClusterCommand {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.updateHealthLocked(now)
	m.updateSafeModeLocked(now, true)
	p := planTick(&m.s, &m.opts, now)
	return m.applyLocked(now, &p)
}
