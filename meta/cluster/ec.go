package cluster

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Erasure coded containers (docs/ec.md). An EC container lives on one EC
// pipeline of d+p distinct datanodes, in member order; the replica on
// member m holds replica index m+1, the m-th block of every block group in
// the container. Its replicas are not copies of one another: each index
// holds other bytes. So an EC container is judged index by index, and the
// replication manager never copies one replica in place of another. A lost
// index is rebuilt from d others on a new datanode
// (ReconstructECContainerCommand); an index only a decommissioning
// datanode holds is copied off it (the push carries the index). An index
// with two good replicas (its old holder came back after the rebuild) has
// the extra one deleted, once every index is good (planECTrim).

// want is how many good copies a container needs: its replication factor,
// or, erasure coded, one replica of each of its d+p indexes.
func want(c *stratov1.ContainerRecord) int {
	if e := c.ErasureCoding; e != nil {
		return int(e.Data + e.Parity)
	}
	return int(c.Replication)
}

// ecIndexes looks at the replicas of EC container c index by index.
// good[i-1]: a good replica holds index i (on a HEALTHY, in-service
// datanode, CLOSED; for a container not closed yet, any state but
// UNHEALTHY). live[i-1]: for a closed container, a CLOSED replica on a
// datanode not DEAD holds it (a STALE one may come back). extra: good
// replicas beyond one per index. Replicas without an index of the
// container (0: not told its index yet) count for nothing.
func (s *state) ecIndexes(c *containerState) (good, live []bool, extra int) {
	n := want(c.info)
	good, live = make([]bool, n), make([]bool, n)
	closed := c.info.State == stratov1.ContainerState_CONTAINER_CLOSED
	for id, r := range c.replicas.all() {
		i := int(r.ReplicaIndex) - 1
		nd := s.nodes[id]
		if i < 0 || i >= n || !nd.alive() {
			continue
		}
		switch {
		case r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY:
			continue
		case closed && r.State != stratov1.ContainerState_CONTAINER_CLOSED:
			continue
		}
		live[i] = true
		if !nd.inService() {
			continue
		}
		if good[i] {
			extra++
		}
		good[i] = true
	}
	return good, live, extra
}

// judgeEC is judge for an EC container: good is the number of
// indexes with a good replica. Closed, it is MISSING when fewer than d
// indexes are live (its data cannot be rebuilt while that lasts), and
// UNDER_REPLICATED when an index has no good replica.
func (s *state) judgeEC(c *containerState, racks int) (int, stratov1.ContainerProblem) {
	good, live, extra := s.ecIndexes(c)
	nGood, nLive := count(good), count(live)
	unhealthy := c.info.State == stratov1.ContainerState_CONTAINER_UNHEALTHY
	for _, r := range c.replicas.all() {
		if r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
			unhealthy = true
		}
	}
	closed := c.info.State == stratov1.ContainerState_CONTAINER_CLOSED
	switch {
	case closed && nLive < int(c.info.ErasureCoding.Data):
		return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING
	case closed && nGood < len(good):
		return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED
	case unhealthy:
		return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNHEALTHY
	case closed && extra > 0:
		return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED
	case s.misReplicated(c, racks):
		return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_MIS_REPLICATED
	}
	return nGood, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED
}

// missingIndexes lists the indexes (1 to d+p) of EC container c that
// no good replica holds; nil for a replicated container.
func (s *state) missingIndexes(c *containerState) []int32 {
	if c.info.ErasureCoding == nil {
		return nil
	}
	good, _, _ := s.ecIndexes(c)
	var out []int32
	for i, ok := range good {
		if !ok {
			out = append(out, int32(i+1))
		}
	}
	return out
}

// MissingIndexes returns the replica indexes of container id that no good
// replica holds (a good replica: on a HEALTHY, in-service datanode, CLOSED
// once the container is closed, and not UNHEALTHY before), in order; nil
// when every index has one, or for a replicated container.
func (m *Manager) MissingIndexes(id uint64) ([]int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.s.containers[id]
	if c == nil {
		return nil, fmt.Errorf("%w: container %d", ErrNotFound, id)
	}
	return m.s.missingIndexes(c), nil
}

// planEC is the replication pass over closed EC container c: it is
// counted (missing, under- or over-replicated), a decommissioning holder
// of it is held back while an index lacks a good replica, and each index
// without a good replica and no work in flight is scheduled:
//
//   - held by a decommissioning datanode (HEALTHY, its replica CLOSED):
//     copied off it whole to a new target (ReplicateContainerCommand; the
//     push carries the index), as a replicated container's copy;
//   - otherwise, with at least d indexes held by HEALTHY datanodes:
//     rebuilt by a new target from them (ReconstructECContainerCommand).
//
// A target is a HEALTHY in-service datanode holding no replica of c (of
// any index) nor receiving another index of it, within the same per-node
// limits as copies (a rebuild counts as an import of its target). A
// container with every index good has its extra replicas trimmed
// (planECTrim).
func (r *replicationPass) planEC(c *containerState) {
	good, _, _ := r.s.ecIndexes(c)
	_, problem := r.s.judgeEC(c, 1) // racks are checkRacks' to judge
	switch problem {
	case stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING:
		r.rep.Missing = append(r.rep.Missing, c.info.Id)
	case stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED:
		r.rep.UnderReplicated++
	case stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED:
		r.rep.OverReplicated++
	}
	if problem != stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING && problem != stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED {
		deletes := r.planECTrim(c)
		r.rep.Deletes += deletes
		if deletes == 0 && problem == stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED {
			r.checkRacks(c, nil)
		}
		return
	}
	r.holdDecommission(c)
	// Sources: per index, the HEALTHY datanodes holding a CLOSED replica
	// of it (decommissioning ones included: they still serve reads).
	holders := r.s.ecHolders(c, len(good), func(n *nodeState, _ string) bool { return n.healthy() })
	// Targets of this container's work in flight are taken.
	busy := map[string]bool{}
	for i := range len(good) + 1 {
		if fl, ok := r.inflight[copyKey{c.info.Id, int32(i)}]; ok {
			busy[fl.target] = true
		}
	}
	for i, ok := range good {
		key := copyKey{c.info.Id, int32(i + 1)}
		if _, inFlight := r.inflight[key]; ok || inFlight {
			continue
		}
		if len(holders[i]) > 0 {
			// Copy the index off a holder that is leaving (its replica is
			// not good only because its datanode is not in service).
			src := r.leastBusy(holders[i])
			target := r.chooseTarget(c, busy)
			if src == "" || target == "" {
				r.rep.BlockedByLimits++
				continue
			}
			busy[target] = true
			r.copy(key, src, target)
			continue
		}
		r.planRebuild(c, key, holders, busy)
	}
}

// planRebuild plans the rebuild of index key.index of EC container c from
// every other index held by a healthy datanode (holders), on a target not
// in busy.
func (r *replicationPass) planRebuild(c *containerState, key copyKey, holders [][]string, busy map[string]bool) {
	var sources []*stratov1.ECSource
	for j, hs := range holders {
		if int32(j+1) != key.index && len(hs) > 0 {
			sources = append(sources, &stratov1.ECSource{ReplicaIndex: int32(j + 1), Datanode: r.s.nodes[hs[0]].details})
		}
	}
	if len(sources) < int(c.info.ErasureCoding.Data) {
		return // not rebuildable while that lasts (counted as missing)
	}
	target := r.chooseTarget(c, busy)
	if target == "" {
		r.rep.BlockedByLimits++
		return
	}
	r.imports[target]++
	busy[target] = true
	r.plan.send = append(r.plan.send, send{node: target,
		cmd: &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_ReconstructEcContainer{
			ReconstructEcContainer: &stratov1.ReconstructECContainerCommand{ContainerId: c.info.Id, ReplicaIndex: key.index,
				ErasureCoding: ErasureCoding(c.info.ErasureCoding), Sources: sources}}},
		copy: &inflightCopy{key: key, target: target}})
	r.inflight[key] = inflight{target: target, since: r.now}
	r.rep.Scheduled++
}

// ecHolders lists, per index of EC container c (n of them), the datanodes
// holding a CLOSED replica of it that ok accepts, by ID.
func (s *state) ecHolders(c *containerState, n int, ok func(*nodeState, string) bool) [][]string {
	holders := make([][]string, n)
	for _, id := range c.replicas.ids() {
		r, nd := c.replicas.get(id), s.nodes[id]
		i := int(r.ReplicaIndex) - 1
		if i < 0 || i >= n || nd == nil || r.State != stratov1.ContainerState_CONTAINER_CLOSED || !ok(nd, id) {
			continue
		}
		holders[i] = append(holders[i], id)
	}
	return holders
}

// planECTrim deletes the extra replicas of closed EC container c: when
// an index has more than one good replica (a CLOSED replica on a HEALTHY,
// in-service datanode: an old holder came back after its index was
// rebuilt elsewhere), one is kept and the others get a
// DeleteContainerCommand, the path that trims replicated containers. The
// one kept is the one on the rack with the fewest of the container's
// other indexes (racks.go: a copy made to mend the container's spread is
// kept), then the replica in the container's recorded place for that
// index (the pipeline member m holds index m+1: block locations name it,
// so readers go to it first), then the one on the datanode with the most
// free space (ties by ID). Only good replicas are counted or deleted, so
// an index never loses its last good replica, and a replica is never
// deleted in favour of one that is not CLOSED on a healthy datanode yet
// (a returning holder's OPEN or CLOSING replica, a STALE target's). A
// replica whose deletion is already under way is not counted as kept, so
// a later pass never deletes the other one too. Nothing is trimmed while
// an index of c lacks a good replica or while a copy or rebuild of c is
// in flight (its sources must stay). It returns the delete commands
// planned.
func (r *replicationPass) planECTrim(c *containerState) int {
	if r.busy(c) {
		return 0
	}
	good, _, extra := r.s.ecIndexes(c)
	if extra == 0 || count(good) < len(good) {
		return 0
	}
	var place []string
	if p := r.s.pipelines[c.info.PipelineId]; p != nil {
		place = p.Members
	}
	holders := r.s.ecHolders(c, len(good), func(n *nodeState, id string) bool {
		return n.inService() && !r.s.deleting[deleteKey{c.info.Id, id}]
	})
	// The racks of the indexes with one holder, and of those kept.
	var counts []rackCount
	for _, hs := range holders {
		if len(hs) == 1 {
			counts = addRack(counts, rackOf(r.s.nodes[hs[0]].details))
		}
	}
	queued := 0
	for i, hs := range holders {
		if len(hs) < 2 {
			continue
		}
		keep := r.movedTo(c, i, hs)
		if keep == "" {
			keep = slices.MinFunc(hs, func(a, b string) int {
				na, nb := r.s.nodes[a], r.s.nodes[b]
				return cmp.Or(cmp.Compare(countOn(counts, rackOf(na.details)), countOn(counts, rackOf(nb.details))),
					compareBool(b == placeOf(place, i), a == placeOf(place, i)),
					cmp.Compare(nb.stats.Load().GetRemaining(), na.stats.Load().GetRemaining()), cmp.Compare(a, b))
			})
		}
		counts = addRack(counts, rackOf(r.s.nodes[keep].details))
		for _, id := range hs {
			if id != keep && r.deleteReplica(c.info.Id, id) {
				queued++
			}
		}
	}
	return queued
}

// placeOf is the datanode of member i in place, "" if there is none.
func placeOf(place []string, i int) string {
	if i < len(place) {
		return place[i]
	}
	return ""
}

// placeMissingIndexLocked: a member of EC container c's pipeline reported
// its replica without an index (a write created it before the command
// that gives the index arrived, or a new leader dropped that command):
// the command is queued again, unless it is already. It reports whether
// the index was missing, queued or not.
func (m *Manager) placeMissingIndexLocked(c *containerState, node string, rep *replica) bool {
	p := m.s.pipelines[c.info.PipelineId]
	if c.info.ErasureCoding == nil || rep.ReplicaIndex != 0 || p == nil || rep.State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
		return false
	}
	i := slices.Index(p.Members, node)
	if i < 0 {
		return false
	}
	if !m.s.nodes[node].queued(func(cmd *stratov1.DatanodeCommand) bool {
		cc := cmd.GetCreateContainer()
		return cc != nil && cc.ContainerId == c.info.Id
	}) {
		m.placeIndexLocked(p, c.info.Id, node, i+1)
	}
	return true
}

// ecLocations is Locations for EC container c: the members of stored in
// member order, each kept in its place (the place says which index it
// holds), replaced by another datanode that reports a good replica of that
// index when the member's is gone or bad (DEAD, UNHEALTHY: any HEALTHY
// holder of the index will do) or its datanode is out of service (a
// decommissioned member: an in-service holder, the copy, is preferred),
// or when the member reports none (its replica was moved to another rack,
// racks.go) and another in-service datanode holds the index.
func (s *state) ecLocations(c *containerState, stored []*stratov1.DatanodeDetails) []*stratov1.DatanodeDetails {
	out := slices.Clone(stored)
	for i, d := range stored {
		r, n := c.replicas.get(d.GetId()), s.nodes[d.GetId()]
		alive := n.alive() && (r == nil || r.State != stratov1.ContainerState_CONTAINER_UNHEALTHY)
		if alive && n.opState == stratov1.NodeOpState_NODE_IN_SERVICE && r != nil {
			continue
		}
		best := ""
		for _, id := range c.replicas.ids() {
			r, n := c.replicas.get(id), s.nodes[id]
			if id == d.GetId() || int(r.ReplicaIndex) != i+1 || !n.healthy() ||
				r.State == stratov1.ContainerState_CONTAINER_UNHEALTHY {
				continue
			}
			if n.opState == stratov1.NodeOpState_NODE_IN_SERVICE {
				best = id
				break
			}
			if best == "" && !alive {
				best = id
			}
		}
		if best != "" {
			out[i] = s.nodes[best].details
		}
	}
	return out
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func count(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
