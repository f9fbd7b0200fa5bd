package cluster

import (
	"context"
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Exclude lists what a block allocation must avoid: datanodes, containers
// and pipelines a client failed to write to.
type Exclude struct {
	// Datanodes a client could not write to.
	Datanodes []string
	// Containers a client could not write to.
	Containers []uint64
	// Pipelines a client could not write to.
	Pipelines []uint64
}

// Redundancy is how the containers of a pipeline keep their data:
// replicated (Replication ONE or THREE, EC nil) or erasure coded (EC set,
// Replication UNSPECIFIED), as PipelineRecord and ContainerRecord store it.
type Redundancy struct {
	// Replication is ONE or THREE for replicated data, UNSPECIFIED with EC.
	Replication stratov1.ReplicationFactor
	// EC is the erasure code of erasure coded data, nil for replicated.
	EC *stratov1.ErasureCodingRecord
}

// Replicated is the redundancy of replication repl.
func Replicated(repl stratov1.ReplicationFactor) Redundancy { return Redundancy{Replication: repl} }

// ErasureCoded is the redundancy of an erasure coding config.
func ErasureCoded(e *stratov1.ErasureCodingRecord) Redundancy { return Redundancy{EC: e} }

// Members is how many datanodes a pipeline of r has: the replication
// factor, or an erasure code's data plus parity members.
func (r Redundancy) Members() int {
	if r.EC != nil {
		return int(r.EC.Data + r.EC.Parity)
	}
	return int(r.Replication)
}

// String names r as an operator writes it (THREE, rs-3-2-1024k).
func (r Redundancy) String() string {
	if r.EC == nil {
		return r.Replication.String()
	}
	c, err := ecConfig(r.EC)
	if err != nil {
		return fmt.Sprintf("erasure coding %v", r.EC)
	}
	return c.String()
}

func (r Redundancy) validate() error {
	if r.EC == nil {
		if r.Replication != stratov1.ReplicationFactor_REPLICATION_ONE && r.Replication != stratov1.ReplicationFactor_REPLICATION_THREE {
			return fmt.Errorf("%w: replication %s", ErrInvalid, r.Replication)
		}
		return nil
	}
	if r.Replication != stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		return fmt.Errorf("%w: replication %s with erasure coding", ErrInvalid, r.Replication)
	}
	if _, err := ecConfig(r.EC); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// is reports whether p keeps its data with redundancy r (an erasure coded
// pipeline serves one config: codec, members and cell size).
func (r Redundancy) is(p *stratov1.PipelineRecord) bool {
	if p.Replication != r.Replication || (p.ErasureCoding == nil) != (r.EC == nil) {
		return false
	}
	return r.EC == nil || proto.Equal(p.ErasureCoding, r.EC)
}

// ecConfig is the erasure code of a stored config, validated.
func ecConfig(r *stratov1.ErasureCodingRecord) (ec.Config, error) { return ec.FromProto(r) }

// Allocation is a newly allocated block and where to write it.
type Allocation struct {
	// ContainerID and LocalID name the block.
	ContainerID uint64
	LocalID     uint64
	// Pipeline is the pipeline of the block's container.
	Pipeline *stratov1.PipelineRecord
	// Members are the pipeline's datanodes, leader first; erasure coded,
	// in member order (member m holds replica index m+1).
	Members []*stratov1.DatanodeDetails
}

// Allocate allocates one block of redundancy r on an open container of a
// healthy pipeline, avoiding ex. It creates a pipeline or a container when
// none fits (a Raft round each, rare) and reserves block IDs in batches of
// Options.LocalIDBatch. The block reserves size bytes of its container (the
// writer's size hint; see reservation), and the container is closed once
// its reservations reach Options.CloseThreshold of its size.
//
// An erasure coded block is a block group: one block ID, one block on each
// member of an EC pipeline (d+p distinct datanodes). A new EC container is
// given to the members with a CreateContainerCommand each, carrying the
// member's replica index.
//
// It proposes under allocMu, with mu released: each choice is made under
// mu from the state as it is (placement.go), then proposed, and the
// result read back under mu once Apply has recorded it.
func (m *Manager) Allocate(ctx context.Context, now time.Time, r Redundancy, size int64, ex Exclude) (*Allocation, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	if m.propose == nil {
		return nil, fmt.Errorf("cluster: this manager cannot allocate (no proposer)")
	}
	m.allocMu.Lock()
	defer m.allocMu.Unlock()

	p, err := m.choosePipeline(ctx, now, r, ex)
	if err != nil {
		return nil, err
	}
	c, err := m.chooseContainer(ctx, now, r, p, ex)
	if err != nil {
		return nil, err
	}
	if m.idNext == m.idEnd {
		res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_ReserveLocalIds{ReserveLocalIds: m.opts.LocalIDBatch}})
		if err != nil {
			return nil, fmt.Errorf("cluster: reserving block IDs: %w", err)
		}
		r := res.(*stratov1.IDRange)
		m.idNext, m.idEnd = r.First, r.First+r.Count
	}
	localID := m.idNext
	m.idNext++

	m.mu.Lock()
	defer m.mu.Unlock()
	c.allocated += m.reservation(size)
	if float64(c.allocated) >= m.opts.CloseThreshold*float64(m.opts.ContainerSize) && c.fullAt.IsZero() {
		c.fullAt = now // no more blocks; Tick closes it after FullCloseDelay
	}
	members := make([]*stratov1.DatanodeDetails, 0, len(p.Members))
	for _, id := range p.Members {
		if n := m.s.nodes[id]; n != nil {
			members = append(members, n.details)
		}
	}
	return &Allocation{ContainerID: c.info.Id, LocalID: localID, Pipeline: p, Members: members}, nil
}

// choosePipeline picks the pipeline of redundancy r for the next block,
// round robin over the usable ones not excluded, after topping up the
// pipelines when datanodes came or went; it creates one when none fits.
// Under allocMu.
func (m *Manager) choosePipeline(ctx context.Context, now time.Time, r Redundancy, ex Exclude) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	if m.s.safeMode {
		st := m.s.safeModeStatus(&m.opts)
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: %d of %d datanodes healthy, %.0f%% of containers reported (need %.0f%%)",
			ErrSafeMode, st.HealthyDatanodes, st.RequiredDatanodes, 100*st.ReplicaFraction, 100*st.RequiredFraction)
	}
	dirty := m.s.pipelinesDirty
	m.s.pipelinesDirty = false
	m.mu.Unlock()
	if dirty {
		if err := m.ensurePipelines(ctx, now); err != nil {
			return nil, err
		}
	}
	pipes := m.candidatePipelines(r, ex)
	if len(pipes) == 0 && r.EC != nil {
		// EC pipelines are made when a config is first written, spread
		// as replicated ones are (Options.PipelinesPerNode).
		if err := m.topUpPipelines(ctx, now, r, m.opts.PipelinesPerNode); err != nil {
			return nil, err
		}
		pipes = m.candidatePipelines(r, ex)
	}
	if len(pipes) == 0 {
		p, err := m.createPipeline(ctx, now, r, ex)
		if err != nil {
			return nil, err
		}
		pipes = []*stratov1.PipelineRecord{p}
	}
	m.rr++
	return pipes[m.rr%uint64(len(pipes))], nil
}

func (m *Manager) candidatePipelines(r Redundancy, ex Exclude) []*stratov1.PipelineRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.candidatePipelines(r, ex)
}

// chooseContainer picks the open container of pipeline p for the next
// block, round robin, or proposes a new one while p has fewer than
// Options.OpenContainersPerPipeline. A new EC container's members are
// told their replica indexes. Under allocMu.
func (m *Manager) chooseContainer(ctx context.Context, now time.Time, r Redundancy, p *stratov1.PipelineRecord, ex Exclude) (*containerState, error) {
	m.mu.Lock()
	open := m.s.openContainers(p.Id, ex)
	m.mu.Unlock()
	if len(open) >= m.opts.OpenContainersPerPipeline {
		return open[m.rr%uint64(len(open))], nil
	}
	res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddContainer{
		AddContainer: &stratov1.ContainerRecord{PipelineId: p.Id, Replication: r.Replication, ErasureCoding: r.EC}}})
	if err != nil {
		return nil, fmt.Errorf("cluster: creating a container: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[res.(*stratov1.ContainerRecord).Id]
	if r.EC != nil {
		for i, id := range p.Members {
			m.placeIndexLocked(p, c.info.Id, id, i+1)
		}
	}
	return c, nil
}

// reservation is what a block a writer means to put size bytes in takes of
// its container: size, but no more than Options.BlockSize (a block holds no
// more) and no less than Options.MinBlockReservation, so that a container
// of small objects holds a bounded number of blocks; a writer that gives no
// size (0 or less) reserves a whole block. A writer that writes more than
// it said fills the container sooner than reserved: the datanodes' reports
// of the bytes used close it then (Heartbeat).
func (m *Manager) reservation(size int64) int64 {
	if size <= 0 {
		return m.opts.BlockSize
	}
	return min(max(size, m.opts.MinBlockReservation), m.opts.BlockSize)
}

// placeIndexLocked queues for member node of EC pipeline p the command
// that gives its replica of container cid the replica index index. (The
// datanode creates the container if no write did first.)
func (m *Manager) placeIndexLocked(p *stratov1.PipelineRecord, cid uint64, node string, index int) {
	m.queueLocked(node, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CreateContainer{
		CreateContainer: &stratov1.CreateContainerCommand{ContainerId: cid, Pipeline: PipelineInfo(p), ReplicaIndex: int32(index)}}})
}

// ensurePipelines tops up pipelines while healthy datanodes have room: for
// replication THREE each datanode takes part in up to
// Options.PipelinesPerNode open pipelines; for ONE each has its own.
func (m *Manager) ensurePipelines(ctx context.Context, now time.Time) error {
	for _, repl := range []stratov1.ReplicationFactor{stratov1.ReplicationFactor_REPLICATION_THREE, stratov1.ReplicationFactor_REPLICATION_ONE} {
		limit := m.opts.PipelinesPerNode
		if repl == stratov1.ReplicationFactor_REPLICATION_ONE {
			limit = 1
		}
		if err := m.topUpPipelines(ctx, now, Replicated(repl), limit); err != nil {
			return err
		}
	}
	return nil
}

// topUpPipelines proposes pipelines of r, one at a time, while
// state.topUpMembers finds members for one more.
//
// The candidates and the open pipelines' member sets are read once, then
// kept up to date with what this top-up adds: a cluster of N datanodes
// gets its first pipelines (about N of each kind) in O(N) choices of
// O(N) each, rather than reading every pipeline again for each.
func (m *Manager) topUpPipelines(ctx context.Context, now time.Time, r Redundancy, limit int) error {
	m.mu.Lock()
	cands := m.s.pipelineCandidates(r, Exclude{})
	open := m.s.openMemberSets(r)
	m.mu.Unlock()
	at := make(map[string]int, len(cands))
	for i, c := range cands {
		at[c.ID] = i
	}
	for {
		members, err := ChooseMembers(cands, r.Members(), limit)
		if err != nil {
			return nil // every datanode that can take one more has its share
		}
		key := memberSet(members)
		if open[key] {
			return nil // no two open pipelines on the same datanodes
		}
		if _, err := m.addPipeline(ctx, now, r, members); err != nil {
			return err
		}
		open[key] = true
		for _, id := range members {
			cands[at[id]].Pipelines++
		}
	}
}

// createPipeline chooses members avoiding ex and proposes a new pipeline.
// The per-datanode limit does not apply: a writer that excluded failed
// nodes needs a pipeline of the others, even busy ones.
func (m *Manager) createPipeline(ctx context.Context, now time.Time, r Redundancy, ex Exclude) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	cands := m.s.pipelineCandidates(r, ex)
	m.mu.Unlock()
	members, err := ChooseMembers(cands, r.Members(), math.MaxInt)
	if err != nil {
		return nil, fmt.Errorf("%w for replication %s: %w", ErrNoPipeline, r, err)
	}
	return m.addPipeline(ctx, now, r, members)
}

// addPipeline proposes a pipeline of r on members, in the order given
// (for an erasure code, member order).
func (m *Manager) addPipeline(ctx context.Context, now time.Time, r Redundancy, members []string) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	id := m.s.nextPipelineID()
	m.mu.Unlock()
	res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddPipeline{
		AddPipeline: &stratov1.PipelineRecord{Id: id, Replication: r.Replication, ErasureCoding: r.EC, Members: members}}})
	if err != nil {
		return nil, fmt.Errorf("cluster: creating a pipeline: %w", err)
	}
	return res.(*stratov1.PipelineRecord), nil
}
