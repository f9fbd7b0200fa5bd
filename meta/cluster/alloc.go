package cluster

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Exclude lists what a block allocation must avoid: datanodes, containers
// and pipelines a client failed to write to.
type Exclude struct {
	Datanodes  []string
	Containers []uint64
	Pipelines  []uint64
}

// Allocation is a newly allocated block and where to write it.
type Allocation struct {
	ContainerID uint64
	LocalID     uint64
	Pipeline    *stratov1.PipelineRecord
	// Members are the pipeline's datanodes, leader first.
	Members []*stratov1.DatanodeDetails
}

// Allocate allocates one block of replication repl on an open container of a
// healthy pipeline, avoiding ex. It creates a pipeline or a container when
// none fits (a Raft round each, rare) and reserves block IDs in batches of
// Options.LocalIDBatch. The container the block lands in is closed once its
// allocations reach Options.CloseThreshold of its size.
func (m *Manager) Allocate(ctx context.Context, now time.Time, repl stratov1.ReplicationFactor, ex Exclude) (*Allocation, error) {
	size := int(repl)
	if repl != stratov1.ReplicationFactor_REPLICATION_ONE && repl != stratov1.ReplicationFactor_REPLICATION_THREE {
		return nil, fmt.Errorf("%w: replication %s", ErrInvalid, repl)
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
	pipes := m.candidatePipelinesLocked(repl, ex)
	m.mu.Unlock()

	if len(pipes) == 0 {
		p, err := m.createPipeline(ctx, now, repl, ex)
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
			AddContainer: &stratov1.ContainerRecord{PipelineId: p.Id, Replication: repl}}})
		if err != nil {
			return nil, fmt.Errorf("cluster: creating a container: %w", err)
		}
		m.mu.Lock()
		c = m.containers[res.(*stratov1.ContainerRecord).Id]
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
	c.allocated += m.opts.BlockSize
	full := float64(c.allocated) >= m.opts.CloseThreshold*float64(m.opts.ContainerSize)
	members := make([]*stratov1.DatanodeDetails, 0, size)
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

// candidatePipelinesLocked: open pipelines of the replication asked whose
// members are all usable and none excluded.
func (m *Manager) candidatePipelinesLocked(repl stratov1.ReplicationFactor, ex Exclude) []*stratov1.PipelineRecord {
	var out []*stratov1.PipelineRecord
	for _, p := range m.sortedPipelinesLocked() {
		if p.State != stratov1.PipelineState_PIPELINE_OPEN || p.Replication != repl || slices.Contains(ex.Pipelines, p.Id) {
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
		for {
			m.mu.Lock()
			cands := m.pipelineCandidatesLocked(repl, Exclude{})
			m.mu.Unlock()
			members, err := ChooseMembers(cands, int(repl), limit)
			if err != nil {
				break // every datanode that can take one more has its share
			}
			m.mu.Lock()
			dup := m.samePipelineLocked(repl, members)
			m.mu.Unlock()
			if dup {
				break // no two open pipelines on the same datanodes
			}
			if _, err := m.addPipeline(ctx, now, repl, members); err != nil {
				return err
			}
		}
	}
	return nil
}

// createPipeline chooses members avoiding ex and proposes a new pipeline.
// The per-datanode limit does not apply: a writer that excluded failed
// nodes needs a pipeline of the others, even busy ones.
func (m *Manager) createPipeline(ctx context.Context, now time.Time, repl stratov1.ReplicationFactor, ex Exclude) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	cands := m.pipelineCandidatesLocked(repl, ex)
	m.mu.Unlock()
	members, err := ChooseMembers(cands, int(repl), math.MaxInt)
	if err != nil {
		return nil, fmt.Errorf("%w for replication %s: %w", ErrNoPipeline, repl, err)
	}
	return m.addPipeline(ctx, now, repl, members)
}

// samePipelineLocked: an open pipeline of repl has exactly these members.
func (m *Manager) samePipelineLocked(repl stratov1.ReplicationFactor, members []string) bool {
	want := slices.Sorted(slices.Values(members))
	for _, p := range m.pipelines {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN && p.Replication == repl &&
			slices.Equal(want, slices.Sorted(slices.Values(p.Members))) {
			return true
		}
	}
	return false
}

func (m *Manager) addPipeline(ctx context.Context, now time.Time, repl stratov1.ReplicationFactor, members []string) (*stratov1.PipelineRecord, error) {
	m.mu.Lock()
	var maxID uint64
	for id := range m.pipelines {
		maxID = max(maxID, id)
	}
	m.mu.Unlock()
	res, err := m.propose(ctx, &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_AddPipeline{
		AddPipeline: &stratov1.PipelineRecord{Id: maxID + 1, Replication: repl, Members: members}}})
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
// ex, with how many open pipelines of replication repl each is in.
func (m *Manager) pipelineCandidatesLocked(repl stratov1.ReplicationFactor, ex Exclude) []Candidate {
	var out []Candidate
	for id, n := range m.nodes {
		if n.health != stratov1.NodeHealth_NODE_HEALTHY || n.opState != stratov1.NodeOpState_NODE_IN_SERVICE || slices.Contains(ex.Datanodes, id) {
			continue
		}
		c := Candidate{ID: id, Free: n.stats.GetRemaining()}
		for _, p := range m.pipelines {
			if p.State == stratov1.PipelineState_PIPELINE_OPEN && p.Replication == repl && slices.Contains(p.Members, id) {
				c.Pipelines++
			}
		}
		out = append(out, c)
	}
	return out
}

// ChooseMembers picks size datanodes for a new pipeline: those in the fewest
// open pipelines first, then the most free space, then by ID (so the choice
// is deterministic). A datanode already in limit pipelines is not used.
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
