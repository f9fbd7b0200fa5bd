package cluster

import (
	"cmp"
	"slices"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Rack rules (decision 0072). A closed container's good copies must
// spread over the racks that have an in-service datanode:
//
//   - replicated, factor two or more: over at least two racks (HDFS's
//     and Ozone's rule: a rack's loss leaves a copy);
//   - erasure coded, d+p members: over as many racks as there are, up to
//     d+p, with no rack holding more than ceil((d+p)/racks) of them
//     (Ozone's rack-scatter rule), so a rack's loss costs the fewest
//     indexes.
//
// With one rack (no topology configured) every placement satisfies them.
// A container that has all the copies it needs but breaks its rule is
// MIS_REPLICATED: the replication pass copies one of its replicas to a
// rack that mends the spread, after its under-replicated work and within
// the same per-datanode limits, and the copy it no longer needs is then
// trimmed from the most crowded rack.

// rackRule is what a container's placement must satisfy.
type rackRule struct {
	minRacks   int // racks its good copies span, at least
	maxPerRack int // good copies in one rack, at most
}

// rackRuleFor is the rule for container c when racks racks have an
// in-service datanode.
func rackRuleFor(c *stratov1.ContainerRecord, racks int) rackRule {
	racks = max(racks, 1)
	if e := c.ErasureCoding; e != nil {
		n := int(e.Data + e.Parity)
		return rackRule{minRacks: min(n, racks), maxPerRack: (n + racks - 1) / racks}
	}
	n := int(c.Replication)
	return rackRule{minRacks: min(n, 2, racks), maxPerRack: n}
}

// rackCount is one rack's share of a container's copies.
type rackCount struct {
	rack string
	n    int
}

// spread counts the racks of the datanodes ids into buf (reset), in the
// order the racks are first met.
func (s *state) spread(buf []rackCount, ids []string) []rackCount {
	buf = buf[:0]
	for _, id := range ids {
		buf = addRack(buf, rackOf(s.nodes[id].details))
	}
	return buf
}

// addRack counts one more copy on rack.
func addRack(counts []rackCount, rack string) []rackCount {
	for i := range counts {
		if counts[i].rack == rack {
			counts[i].n++
			return counts
		}
	}
	return append(counts, rackCount{rack, 1})
}

// countOn is the copies counts has on rack.
func countOn(counts []rackCount, rack string) int {
	for _, c := range counts {
		if c.rack == rack {
			return c.n
		}
	}
	return 0
}

// satisfied says whether counts meet the rule.
func (rr rackRule) satisfied(counts []rackCount) bool {
	if len(counts) < rr.minRacks {
		return false
	}
	for _, c := range counts {
		if c.n > rr.maxPerRack {
			return false
		}
	}
	return true
}

// serviceRacks counts the racks with an in-service datanode: those a
// copy may go to.
func (s *state) serviceRacks() int {
	key := [2]uint64{s.nodesGen, s.leaderGen}
	if s.racks.ok && s.racks.key == key {
		return s.racks.n
	}
	seen := map[string]bool{}
	for _, n := range s.nodes {
		if n.inService() {
			seen[rackOf(n.details)] = true
		}
	}
	s.racks.key, s.racks.n, s.racks.ok = key, len(seen), true
	return len(seen)
}

// goodHolders lists the datanodes holding a good copy of closed container
// c (a CLOSED replica on a HEALTHY, in-service datanode), by ID; for an
// erasure coded container, one per index (the first by ID).
func (s *state) goodHolders(c *containerState) []string {
	return s.appendGoodHolders(make([]string, 0, len(c.replicas)), c)
}

// appendGoodHolders is goodHolders appended to out.
func (s *state) appendGoodHolders(out []string, c *containerState) []string {
	var indexes []int32
	for id, r := range c.replicas.all() {
		if r.State != stratov1.ContainerState_CONTAINER_CLOSED || !s.nodes[id].inService() {
			continue
		}
		out = append(out, id)
	}
	slices.Sort(out)
	if c.info.ErasureCoding == nil {
		return out
	}
	return slices.DeleteFunc(out, func(id string) bool {
		i := c.replicas.get(id).ReplicaIndex
		if i <= 0 || slices.Contains(indexes, i) {
			return true
		}
		indexes = append(indexes, i)
		return false
	})
}

// misReplicated says whether closed container c, with every copy it
// needs, breaks its rack rule when racks racks have an in-service
// datanode.
func (s *state) misReplicated(c *containerState, racks int) bool {
	if racks < 2 || c.info.State != stratov1.ContainerState_CONTAINER_CLOSED {
		return false
	}
	// On the stack: the replication pass judges every container.
	var buf [8]string
	return s.breaksRackRule(c, s.appendGoodHolders(buf[:0], c), racks)
}

// breaksRackRule says whether holders, c's good copies, break c's rack
// rule when racks racks have an in-service datanode.
func (s *state) breaksRackRule(c *containerState, holders []string, racks int) bool {
	var buf [16]rackCount
	return !rackRuleFor(c.info, racks).satisfied(s.spread(buf[:0], holders))
}

// fixMisplaced plans, for each mis-replicated container the pass found,
// a copy of one of its replicas to a datanode on a rack that mends its
// spread: for a replicated container a rack it is not on, for an erasure
// coded one the index on its most crowded rack goes to the least used
// rack. The extra copy is trimmed once it lands (trim, planECTrim).
// Copies take the same per-datanode limits as re-replication, and come
// after it in the pass. A container whose replicas changed since it was
// found (the pass releases the lock between its steps) is judged again.
func (r *replicationPass) fixMisplaced() {
	var buf []rackCount
	for _, c := range r.misplaced {
		holders := r.s.goodHolders(c)
		if r.busy(c) || !r.s.breaksRackRule(c, holders, r.racks) {
			continue
		}
		buf = r.s.spread(buf, holders)
		src, index := r.misplacedSource(c, holders, buf)
		if src == "" {
			r.rep.BlockedByLimits++
			continue
		}
		target := r.chooseTarget(c, nil)
		switch {
		case target == "":
			if r.s.spareNode(c) {
				r.rep.BlockedByLimits++ // every datanode that could take it is at its limit
			}
			continue
		case !mends(c, buf, rackOf(r.s.nodes[src].details), rackOf(r.s.nodes[target].details)):
			continue // no rack with room would do better (racks of few datanodes)
		}
		r.copy(copyKey{c.info.Id, index}, src, target)
	}
}

// misplacedSource picks the replica of mis-replicated container c to
// copy: one on its most crowded rack (counts), the least busy there
// (a replicated container: any good holder). index is its replica index
// (0 for a replicated container). "" when every holder is at its limit.
func (r *replicationPass) misplacedSource(c *containerState, holders []string, counts []rackCount) (src string, index int32) {
	if c.info.ErasureCoding == nil {
		return r.leastBusy(holders), 0
	}
	crowded := slices.MaxFunc(counts, func(a, b rackCount) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(b.rack, a.rack)) })
	var onRack []string
	for _, id := range holders {
		if rackOf(r.s.nodes[id].details) == crowded.rack {
			onRack = append(onRack, id)
		}
	}
	src = r.leastBusy(onRack)
	if src == "" {
		return "", 0
	}
	return src, c.replicas.get(src).ReplicaIndex
}

// mends says whether a copy from rack from to rack to improves the spread
// counts of container c: a replicated container gains a rack, an erasure
// coded one moves an index to a rack that then holds fewer than from did.
func mends(c *containerState, counts []rackCount, from, to string) bool {
	if c.info.ErasureCoding == nil {
		return countOn(counts, to) == 0
	}
	return countOn(counts, to)+1 < countOn(counts, from)
}

// pipelineMisplaced says whether open pipeline pl breaks the rack rule of
// its containers when racks racks have an in-service datanode, and a
// pipeline chosen in its place would not: ChooseMembers over the
// in-service datanodes, pl's members counted out of it, each in fewer
// than limit open pipelines of its redundancy (as the top-up chooses).
// Closing it then gets its writes a placement that survives a rack's
// loss; otherwise its replacement would be no better, and it stays.
func (s *state) pipelineMisplaced(pl *stratov1.PipelineRecord, racks, limit int) bool {
	if racks < 2 {
		return false
	}
	rule := rackRuleFor(&stratov1.ContainerRecord{Replication: pl.Replication, ErasureCoding: pl.ErasureCoding}, racks)
	var buf [16]rackCount
	if rule.satisfied(s.spread(buf[:0], pl.Members)) {
		return false
	}
	r := Redundancy{Replication: pl.Replication, EC: pl.ErasureCoding}
	cands := s.pipelineCandidates(r, Exclude{})
	for i := range cands {
		if slices.Contains(pl.Members, cands[i].ID) {
			cands[i].Pipelines--
		}
	}
	members, err := ChooseMembers(cands, r.Members(), limit)
	return err == nil && rule.satisfied(s.spread(buf[:0], members))
}

// spareNode says whether an in-service datanode holds no replica of c.
func (s *state) spareNode(c *containerState) bool {
	for id, n := range s.nodes {
		if !c.replicas.has(id) && n.inService() {
			return true
		}
	}
	return false
}
