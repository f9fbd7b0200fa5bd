package cluster

import (
	"cmp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// judge is the replication manager's view of one container: its good
// copies (CLOSED replicas on HEALTHY, in-service datanodes) and what is
// wrong with it. A closed container with no CLOSED replica on a datanode
// that is not DEAD is MISSING (a STALE holder may come back); with fewer
// good copies than its replication (less its holders in maintenance, not
// below the maintenance minimum: maintenanceNeed), UNDER_REPLICATED; an UNHEALTHY
// container or replica is UNHEALTHY; more good copies than needed,
// OVER_REPLICATED; with what it needs but against its rack rule when
// racks racks have an in-service datanode (racks.go), MIS_REPLICATED. An
// erasure coded container is judged by its indexes (judgeEC).
func (s *state) judge(c *containerState, racks int) (good int, problem stratov1.ContainerProblem) {
	if c.info.ErasureCoding != nil {
		return s.judgeEC(c, racks)
	}
	live := 0
	unhealthy := c.info.State == stratov1.ContainerState_CONTAINER_UNHEALTHY
	for id, r := range c.replicas.all() {
		if r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
			unhealthy = true
		}
		n := s.nodes[id]
		if !n.alive() || r.State != stratov1.ContainerState_CONTAINER_CLOSED {
			continue
		}
		live++
		if n.inService() {
			good++
		}
	}
	closed := c.info.State == stratov1.ContainerState_CONTAINER_CLOSED
	want := s.maintenanceNeed(c, c.replicas)
	switch {
	case closed && live == 0:
		return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING
	case closed && good < want:
		return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED
	case unhealthy:
		return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY
	case closed && good > int(c.info.Replication):
		return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED
	case s.misReplicated(c, racks):
		return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED
	}
	return good, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED
}

// ContainerFilter selects containers for ListContainers; every field set
// must hold.
type ContainerFilter struct {
	States   []stratov1.ContainerState
	Datanode string                      // a replica reported by this datanode
	Problems []stratov1.ContainerProblem // any of these
}

func (f ContainerFilter) match(c *containerState, info *stratov1.ContainerInfo) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, c.info.State) {
		return false
	}
	if f.Datanode != "" {
		if !c.replicas.has(f.Datanode) {
			return false
		}
	}
	return len(f.Problems) == 0 || slices.Contains(f.Problems, info.Problem)
}

// walkStep is how many containers a listing or the summary reads per hold
// of mu (about a millisecond of judging them), so that at a million
// containers neither keeps heartbeats waiting for the whole walk.
const walkStep = 2000

// walkContainers calls fn on the containers with IDs from from on, in ID
// order, with the racks that have an in-service datanode (judge's racks),
// under mu, which it releases every walkStep containers, until fn returns
// false. fn may see the state change between two calls (what the
// walk reads is not a snapshot), never during one.
func (m *Manager) walkContainers(from uint64, fn func(c *containerState, racks int) bool) {
	for more := true; more; {
		m.mu.Lock()
		cs := m.s.sortedContainers()
		i, _ := slices.BinarySearchFunc(cs, from, func(c *containerState, id uint64) int { return cmp.Compare(c.info.Id, id) })
		end := min(len(cs), i+walkStep)
		more = end < len(cs)
		racks := m.s.serviceRacks()
		for ; i < end; i++ {
			if !fn(cs[i], racks) {
				more = false
				break
			}
		}
		if i > 0 {
			from = cs[i-1].info.Id + 1
		}
		m.mu.Unlock()
	}
}

// ListContainers lists up to limit containers with IDs above startAfter
// that match f, with their replicas when withReplicas (same order). With
// f.Datanode it reads that datanode's containers alone, from the index of
// the replica map (nodeState.containers), not every container.
func (m *Manager) ListContainers(startAfter uint64, limit int, f ContainerFilter, withReplicas bool) ([]*stratov1.ContainerInfo, []*stratov1.ContainerReplicasResponse) {
	var (
		out  []*stratov1.ContainerInfo
		reps []*stratov1.ContainerReplicasResponse
	)
	list := func(c *containerState, racks int) bool {
		if limit > 0 && len(out) == limit {
			return false
		}
		info := m.s.info(c, racks)
		if !f.match(c, info) {
			return true
		}
		out = append(out, info)
		if withReplicas {
			reps = append(reps, &stratov1.ContainerReplicasResponse{Container: info, Replicas: c.replicas.protos(c.info.Id)})
		}
		return true
	}
	if f.Datanode != "" {
		m.walkIDs(m.heldBy(f.Datanode, startAfter), list)
	} else {
		m.walkContainers(startAfter+1, list)
	}
	return out, reps
}

// heldBy lists the containers with IDs above startAfter that datanode id
// holds a replica of, by ID: collected under mu from the index, sorted
// once mu is released.
func (m *Manager) heldBy(id string, startAfter uint64) []uint64 {
	m.mu.Lock()
	var ids []uint64
	if n := m.s.nodes[id]; n != nil {
		ids = make([]uint64, 0, len(n.containers))
		for cid := range n.containers {
			if cid > startAfter {
				ids = append(ids, cid)
			}
		}
	}
	m.mu.Unlock()
	slices.Sort(ids)
	return ids
}

// walkIDs is walkContainers over the containers ids (in their order) alone,
// those no longer recorded skipped: under mu, which it releases every
// walkStep containers, until fn returns false.
func (m *Manager) walkIDs(ids []uint64, fn func(c *containerState, racks int) bool) {
	for more := true; more && len(ids) > 0; {
		step := ids[:min(len(ids), walkStep)]
		ids = ids[len(step):]
		more = m.walkIDsLocked(step, fn)
	}
}

// walkIDsLocked is one step of walkIDs; false once fn returned false.
func (m *Manager) walkIDsLocked(ids []uint64, fn func(c *containerState, racks int) bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	racks := m.s.serviceRacks()
	for _, id := range ids {
		if c := m.s.containers[id]; c != nil && !fn(c, racks) {
			return false
		}
	}
	return true
}

// summaryProblems are the keys of ClusterSummary.containers_by_problem.
var summaryProblems = []stratov1.ContainerProblem{
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED, stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY, stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED,
	stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED,
}

// Summary counts the cluster for GetClusterSummary. The datanodes,
// pipelines and containers by state are counted as they are now; the
// containers' problems and the decommissioning datanodes' progress are
// the last finished replication pass's (passJudgement, its start in
// ProblemsAsOfUnixMs), which judged every container: the summary reads
// no container for them. A datanode that started decommissioning since
// is judged here, its containers alone (from the index). Until a pass
// has finished in this leadership (passes wait for safe mode and the
// settle period to end), Summary judges every container itself, a step
// at a time (walkContainers), and ProblemsAsOfUnixMs is 0: a small
// cluster, or a test, gets exact answers before its first pass.
func (m *Manager) Summary() *stratov1.ClusterSummary {
	s := &stratov1.ClusterSummary{
		DatanodesByHealth:   map[string]int32{},
		DatanodesByOpState:  map[string]int32{},
		ContainersByState:   map[string]int64{},
		ContainersByProblem: map[string]int64{},
		PipelinesByState:    map[string]int32{},
	}
	for _, p := range summaryProblems {
		s.ContainersByProblem[ProblemName(p)] = 0
	}
	leaving, judged := m.summarizeState(s)
	if !judged {
		m.judgeAll(s, leaving)
	}
	for id, d := range leaving {
		if d == nil {
			d = &stratov1.DecommissionProgress{DatanodeId: id}
			m.judgeHeld(d)
		}
		s.Decommissioning = append(s.Decommissioning, d)
	}
	slices.SortFunc(s.Decommissioning, func(a, b *stratov1.DecommissionProgress) int {
		return strings.Compare(a.DatanodeId, b.DatanodeId)
	})
	return s
}

// summarizeState counts the datanodes, pipelines, containers by state
// and what is in flight into s, and, when a replication pass has finished
// in this leadership (judged), the containers' problems it found. It
// returns the decommissioning datanodes with their progress: the pass's,
// nil for those it did not see decommissioning (to judge), and for all of
// them when no pass has finished.
func (m *Manager) summarizeState(s *stratov1.ClusterSummary) (leaving map[string]*stratov1.DecommissionProgress, judged bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.CopiesInFlight, s.DeletesInFlight = int32(len(m.s.replicating)), int32(len(m.s.deleting))
	leaving = map[string]*stratov1.DecommissionProgress{}
	for id, n := range m.s.nodes {
		s.Datanodes++
		s.DatanodesByHealth[strings.TrimPrefix(n.health.String(), "NODE_")]++
		s.DatanodesByOpState[strings.TrimPrefix(n.opState.String(), "NODE_")]++
		st := n.stats.Load()
		s.Capacity += st.GetCapacity()
		s.Used += st.GetUsed()
		s.Remaining += st.GetRemaining()
		if n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING {
			leaving[id] = nil
		}
	}
	for _, p := range m.s.pipelines {
		s.PipelinesByState[strings.TrimPrefix(p.State.String(), "PIPELINE_")]++
	}
	s.Containers = int64(len(m.s.containers))
	for st, n := range m.s.byState {
		if n > 0 {
			s.ContainersByState[strings.TrimPrefix(st.String(), "CONTAINER_")] = n
		}
	}
	j := m.s.judged
	if j == nil {
		return leaving, false
	}
	s.ProblemsAsOfUnixMs = j.at.UnixMilli()
	for p, n := range j.problems {
		s.ContainersByProblem[ProblemName(p)] = n
	}
	for id := range leaving {
		if d := j.leaving[id]; d != nil {
			leaving[id] = proto.Clone(d).(*stratov1.DecommissionProgress)
		}
	}
	return leaving, true
}

// judgeAll counts every container's problem into s, and the progress of
// the decommissioning datanodes leaving (all of them judged here), a step
// at a time (walkContainers), so that the counts are each container's as
// it was read: a replication pass's judgement (passJudgement.count) made
// by the summary.
func (m *Manager) judgeAll(s *stratov1.ClusterSummary, leaving map[string]*stratov1.DecommissionProgress) {
	j := passJudgement{problems: map[stratov1.ContainerProblem]int64{}, leaving: leaving}
	for id := range leaving {
		leaving[id] = &stratov1.DecommissionProgress{DatanodeId: id}
	}
	m.walkContainers(0, func(c *containerState, racks int) bool {
		j.count(&m.s, c, racks)
		return true
	})
	for p, n := range j.problems {
		s.ContainersByProblem[ProblemName(p)] = n
	}
}

// judgeHeld counts d's datanode's replicas, and those of containers short
// of good copies, from its containers alone (the index).
func (m *Manager) judgeHeld(d *stratov1.DecommissionProgress) {
	j := passJudgement{problems: map[stratov1.ContainerProblem]int64{}, leaving: map[string]*stratov1.DecommissionProgress{d.DatanodeId: d}}
	m.walkIDs(m.heldBy(d.DatanodeId, 0), func(c *containerState, racks int) bool {
		j.count(&m.s, c, racks)
		return true
	})
}

// ProblemName is a problem's enum name without its prefix
// (UNDER_REPLICATED, ...), the key of ClusterSummary.containers_by_problem.
func ProblemName(p stratov1.ContainerProblem) string {
	return strings.TrimPrefix(p.String(), "CONTAINER_PROBLEM_")
}
