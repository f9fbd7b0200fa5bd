package cluster

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Exclude lists what a block allocation must avoid: datanodes, containers
// and pipelines a client failed to write to.
type Exclude struct {
	Datanodes  []string
	Containers []uint64
	Pipelines  []uint64
}

// Redundancy is how the containers of a pipeline keep their data:
// replicated (Replication ONE or THREE, EC nil) or erasure coded (EC set,
// Replication UNSPECIFIED), as PipelineRecord and ContainerRecord store it.
type Redundancy struct {
	Replication stratov1.ReplicationFactor
	EC          *stratov1.ErasureCodingRecord
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
func ecConfig(r *stratov1.ErasureCodingRecord) (ec.Config, error) {
	c := ec.Config{Data: int(r.GetData()), Parity: int(r.GetParity()), CellSize: int(r.GetCellSize())}
	switch r.GetCodec() {
	case stratov1.ErasureCodec_ERASURE_CODEC_RS:
		c.Codec = ec.RS
	case stratov1.ErasureCodec_ERASURE_CODEC_XOR:
		c.Codec = ec.XOR
	}
	return c, c.Validate()
}

// Allocation is a newly allocated block and where to write it.
type Allocation struct {
	ContainerID uint64
	LocalID     uint64
	Pipeline    *stratov1.PipelineRecord
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
func (m *Manager) Allocate(ctx context.Context, now time.Time, r Redundancy, size int64, ex Exclude) (*Allocation, error) {
	if err := r.validate(); err != nil {
		return nil, err
	}
	if m.propose == nil {
		return nil, fmt.Errorf("cluster: this manager cannot allocate (no proposer)")
	}
	m.allocMu.Lock()
	defer m.allocMu.Unlock()

	m.mu.Lock()
	if m.safeMode {
		s := m.safeModeStatusLocked()
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: %d of %d datanodes healthy, %.0f%% of containers reported (need %.0f%%)",
			ErrSafeMode, s.HealthyDatanodes, s.RequiredDatanodes, 100*s.ReplicaFraction, 100*s.RequiredFraction)
	}
	dirty := m.pipelinesDirty
	m.pipelinesDirty = false
	m.mu.Unlock()
	if dirty {
		if err := m.ensurePipelines(ctx, now); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	pipes := m.candidatePipelinesLocked(r, ex)
	m.mu.Unlock()

	if len(pipes) == 0 && r.EC != nil {
		// EC pipelines are made when a config is first written, spread
		// as replicated ones are (Options.PipelinesPerNode).
		if err := m.topUpPipelines(ctx, now, r, m.opts.PipelinesPerNode); err != nil {
			return nil, err
		}
		m.mu.Lock()
		pipes = m.candidatePipelinesLocked(r, ex)
		m.mu.Unlock()
	}
	if len(pipes) == 0 {
		p, err := m.createPipeline(ctx, now, r, ex)
		if err != nil {
			return nil, err
		}
		pipes = []*stratov1.PipelineRecord{p}
	}
	m.rr++
	p := pipes[m.rr%uint64(len(pipes))]

	m.mu.Lock()
	open := m.openContainersLocked(p.Id, ex)
	m.mu.Unlock()
	var c *containerState
	if len(open) < m.opts.OpenContainersPerPipeline {
		res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddContainer{
			AddContainer: &stratov1.ContainerRecord{PipelineId: p.Id, Replication: r.Replication, ErasureCoding: r.EC}}})
		if err != nil {
			return nil, fmt.Errorf("cluster: creating a container: %w", err)
		}
		m.mu.Lock()
		c = m.containers[res.(*stratov1.ContainerRecord).Id]
		if r.EC != nil {
			m.placeIndexesLocked(p, c.info.Id)
		}
		m.mu.Unlock()
	} else {
		c = open[m.rr%uint64(len(open))]
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
	c.allocated += m.reservation(size)
	full := float64(c.allocated) >= m.opts.CloseThreshold*float64(m.opts.ContainerSize)
	members := make([]*stratov1.DatanodeDetails, 0, len(p.Members))
	for _, id := range p.Members {
		if n := m.nodes[id]; n != nil {
			members = append(members, n.details)
		}
	}
	if full && c.fullAt.IsZero() {
		c.fullAt = now // no more blocks; Tick closes it after FullCloseDelay
	}
	m.mu.Unlock()
	return &Allocation{ContainerID: c.info.Id, LocalID: localID, Pipeline: p, Members: members}, nil
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

// placeIndexesLocked queues for each member of EC pipeline p the command
// that gives its replica of container cid the member's replica index.
// (The datanode creates the container if no write did first.)
func (m *Manager) placeIndexesLocked(p *stratov1.PipelineRecord, cid uint64) {
	for i, id := range p.Members {
		m.placeIndexLocked(p, cid, id, i+1)
	}
}

func (m *Manager) placeIndexLocked(p *stratov1.PipelineRecord, cid uint64, node string, index int) {
	m.queueLocked(node, &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_CreateContainer{
		CreateContainer: &stratov1.CreateContainerCommand{ContainerId: cid, Pipeline: PipelineInfo(p), ReplicaIndex: int32(index)}}})
}

// candidatePipelinesLocked: open pipelines of the redundancy asked whose
// members are all usable and none excluded.
func (m *Manager) candidatePipelinesLocked(r Redundancy, ex Exclude) []*stratov1.PipelineRecord {
	var out []*stratov1.PipelineRecord
	for _, p := range m.sortedPipelinesLocked() {
		if p.State != stratov1.PipelineState_PIPELINE_OPEN || !r.is(p) || slices.Contains(ex.Pipelines, p.Id) {
			continue
		}
		if !m.pipelineUsableLocked(p) || slices.ContainsFunc(p.Members, func(id string) bool { return slices.Contains(ex.Datanodes, id) }) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (m *Manager) openContainersLocked(pipeline uint64, ex Exclude) []*containerState {
	var out []*containerState
	for _, id := range m.open[pipeline] {
		if !slices.Contains(ex.Containers, id) && m.containers[id].fullAt.IsZero() {
			out = append(out, m.containers[id])
		}
	}
	return out
}

// ensurePipelines tops up pipelines while healthy datanodes have room, as
// Ozone's background pipeline creator does: for replication THREE each
// datanode takes part in up to Options.PipelinesPerNode open pipelines; for
// ONE each has its own.
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

// topUpPipelines adds pipelines of r while healthy datanodes in fewer than
// limit open pipelines of r are enough for one, never two on the same
// datanodes.
func (m *Manager) topUpPipelines(ctx context.Context, now time.Time, r Redundancy, limit int) error {
	for {
		m.mu.Lock()
		cands := m.pipelineCandidatesLocked(r, Exclude{})
		m.mu.Unlock()
		members, err := ChooseMembers(cands, r.Members(), limit)
		if err != nil {
			return nil // every datanode that can take one more has its share
		}
		m.mu.Lock()
		dup := m.samePipelineLocked(r, members)
		m.mu.Unlock()
		if dup {
			return nil // no two open pipelines on the same datanodes
		}
		if _, err := m.addPipeline(ctx, now, r, members); err != nil {
			return err
		}
	}
}

// createPipeline chooses members avoiding ex and proposes a new pipeline.
// The per-datanode limit does not apply: a writer that excluded failed
// nodes needs a pipeline of the others, even busy ones.
func (m *Manager) createPipeline(ctx context.Context, now time.Time, r Redundancy, ex Exclude) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	cands := m.pipelineCandidatesLocked(r, ex)
	m.mu.Unlock()
	members, err := ChooseMembers(cands, r.Members(), math.MaxInt)
	if err != nil {
		return nil, fmt.Errorf("%w for replication %s: %w", ErrNoPipeline, r, err)
	}
	return m.addPipeline(ctx, now, r, members)
}

// samePipelineLocked: an open pipeline of r has exactly these members.
func (m *Manager) samePipelineLocked(r Redundancy, members []string) bool {
	want := slices.Sorted(slices.Values(members))
	for _, p := range m.pipelines {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN && r.is(p) &&
			slices.Equal(want, slices.Sorted(slices.Values(p.Members))) {
			return true
		}
	}
	return false
}

// addPipeline proposes a pipeline of r on members, in the order given
// (for an erasure code, member order).
func (m *Manager) addPipeline(ctx context.Context, now time.Time, r Redundancy, members []string) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	var maxID uint64
	for id := range m.pipelines {
		maxID = max(maxID, id)
	}
	m.mu.Unlock()
	res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddPipeline{
		AddPipeline: &stratov1.PipelineRecord{Id: maxID + 1, Replication: r.Replication, ErasureCoding: r.EC, Members: members}}})
	if err != nil {
		return nil, fmt.Errorf("cluster: creating a pipeline: %w", err)
	}
	return res.(*stratov1.PipelineRecord), nil
}

// Candidate is a datanode that may join a new pipeline.
type Candidate struct {
	ID        string
	Pipelines int   // open pipelines it is in
	Free      int64 // bytes
}

// pipelineCandidatesLocked lists the healthy in-service datanodes not in
// ex, with how many open pipelines of redundancy r each is in.
func (m *Manager) pipelineCandidatesLocked(r Redundancy, ex Exclude) []Candidate {
	var out []Candidate
	for id, n := range m.nodes {
		if n.health != stratov1.NodeHealth_NODE_HEALTHY || n.opState != stratov1.NodeOpState_NODE_IN_SERVICE || slices.Contains(ex.Datanodes, id) {
			continue
		}
		c := Candidate{ID: id, Free: n.stats.GetRemaining()}
		for _, p := range m.pipelines {
			if p.State == stratov1.PipelineState_PIPELINE_OPEN && r.is(p) && slices.Contains(p.Members, id) {
				c.Pipelines++
			}
		}
		out = append(out, c)
	}
	return out
}

// ChooseMembers picks size distinct datanodes for a new pipeline: those in
// the fewest open pipelines first, then the most free space, then by ID (so
// the choice is deterministic). A datanode already in limit pipelines is not
// used.
func ChooseMembers(cands []Candidate, size, limit int) ([]string, error) {
	pool := slices.DeleteFunc(slices.Clone(cands), func(c Candidate) bool { return c.Pipelines >= limit })
	if len(pool) < size {
		return nil, fmt.Errorf("%d healthy datanodes with room for a pipeline, need %d", len(pool), size)
	}
	slices.SortFunc(pool, func(a, b Candidate) int {
		return cmp.Or(cmp.Compare(a.Pipelines, b.Pipelines), cmp.Compare(b.Free, a.Free), cmp.Compare(a.ID, b.ID))
	})
	out := make([]string, size)
	for i := range out {
		out[i] = pool[i].ID
	}
	return out, nil
}
