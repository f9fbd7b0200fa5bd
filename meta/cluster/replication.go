package cluster

import (
	"cmp"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// ReplicationReport is the outcome of one pass of ReplicationWork.
type ReplicationReport struct {
	// Containers counts the closed containers examined.
	Containers int
	// UnderReplicated counts those with fewer good copies than they need.
	UnderReplicated int
	// Missing lists those with no good replica anywhere: data at risk.
	Missing []uint64
	// Scheduled counts the copies and rebuilds queued in this pass.
	Scheduled int
	// InFlight counts the copies and rebuilds in flight after this pass.
	InFlight int
	// Decommissioned lists the datanodes that finished decommissioning:
	// the server records them (Decommissioned).
	Decommissioned []string
	// InMaintenance lists the datanodes entering maintenance whose
	// containers all have their minimum of copies elsewhere: the server
	// records them (InMaintenance).
	InMaintenance []string
	// BlockedByLimits counts the under-replicated containers for which no
	// source or target had room.
	BlockedByLimits int
	// OverReplicated counts those with more good copies than they need.
	OverReplicated int
	// Deletes counts the delete commands queued for extra or unhealthy
	// copies.
	Deletes int
	// MisReplicated counts the containers with the copies they need that
	// break their rack rule (racks.go).
	MisReplicated int
	// BalancerMoves counts the balancer's moves started in this pass.
	BalancerMoves int
	// Propose: durable changes for the server to propose (the balancer's
	// progress and its stop).
	Propose []*stratov1.ClusterCommand
}

// ReplicationWork examines every closed container, and for each that has
// fewer good copies than its replication factor queues a command for a
// source replica to push the container to a new target. limit bounds the
// commands in flight per datanode (as source or target). A good copy is a
// CLOSED replica on a HEALTHY, IN_SERVICE datanode. Erasure coded
// containers are judged index by index: a missing index held by a
// decommissioning datanode is copied off it, any other is rebuilt from d
// others on a new datanode, and an index with two good replicas has one
// deleted (planEC, planECTrim). The judgement is the replicationPass's;
// this queues its commands and records what is in flight.
//
// The pass holds mu one step at a time (Options.ReplicationStep), queuing
// each step's commands before it lets heartbeats in: at a million
// containers a pass is most of a second of work, and a heartbeat waiting
// for all of it would wait that long. What may change between steps, and
// why the plan stays sound:
//
//   - containers are added (the pass reads them in ID order from a
//     cursor, and new ones, which have the highest IDs, are still ahead
//     of it) and their replicas change (those behind the cursor are
//     judged again next pass, as a change just after a whole pass is);
//   - copies land or fail, and leave s.replicating: the pass keeps
//     counting them against the per-datanode limits until it ends, so
//     that the limits hold however the steps interleave (its counts are
//     never below what is in flight);
//   - datanodes register, die or change state: the steps after read their
//     new health; whether a decommission or an entry into maintenance is
//     done is answered only by a pass during which no datanode changed
//     (nodesGen), since the containers judged before the change may need
//     the datanode now;
//   - another leadership starts (leaderGen): the pass stops, its copies
//     in flight forgotten with the rest of the soft state.
//
// passMu keeps a second pass (an administrator's, beside the leader's
// tick) from starting before this one ends, which would count neither's
// copies against the limits of the other.
//
// A pass that finishes records its judgement of every container
// (passJudgement: the containers by problem, the decommissioning
// datanodes' progress), which Summary reports instead of judging a
// million containers again; an interrupted one records nothing.
func (m *Manager) ReplicationWork(now time.Time, limit int) ReplicationReport {
	m.passMu.Lock()
	defer m.passMu.Unlock()
	r := m.startPass(now, limit)
	for m.passStep(r) {
		// Let the heartbeats that queued on mu in while this step ran.
		runtime.Gosched()
	}
	return r.rep
}

// startPass starts a pass: the copies in flight whose source or target is
// no longer healthy are forgotten (replicationPass.start).
func (m *Manager) startPass(now time.Time, limit int) *replicationPass {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := newReplicationPass(&m.s, &m.opts, now, limit)
	m.applyStepLocked(r)
	return r
}

// passStep runs the next step of pass r under mu and applies what it
// planned; false once the pass is over.
func (m *Manager) passStep(r *replicationPass) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.s.leaderGen != r.leaderGen {
		r.rep = ReplicationReport{Containers: r.rep.Containers}
		return false
	}
	more := r.step(m.opts.ReplicationStep)
	m.applyStepLocked(r)
	if !more {
		r.rep.InFlight = len(m.s.replicating)
		m.s.judged = &r.judged
	}
	return more
}

// applyStepLocked applies what pass r planned since it was last applied.
func (m *Manager) applyStepLocked(r *replicationPass) {
	r.rep.Propose = append(r.rep.Propose, m.applyLocked(r.now, &r.plan)...)
	r.plan = plan{}
}

// replicationPass is one replication pass: what it reads, where it is
// (from), and what it has decided so far, which its later decisions take
// into account. Its methods read the locked state.
type replicationPass struct {
	s     *state
	o     *Options
	now   time.Time
	limit int
	// from is the lowest container ID not yet examined; walked: every
	// container was; finished: and what follows them too (finish).
	from             uint64
	walked, finished bool
	// work counts what the current step did (Options.ReplicationStep).
	work int
	// leaderGen and nodesGen are the state's as the pass started.
	leaderGen, nodesGen uint64
	// inflight: the copies in flight that survive this pass, and those
	// it plans.
	inflight map[copyKey]inflight
	// deleting: the replica deletions this pass plans.
	deleting map[deleteKey]bool
	// A datanode's pushes and its imports are bounded apart: a push takes
	// one of its replication streams, an import none (it runs on the
	// connection the source opened), so counting both against one limit
	// halved the copies a cluster of holders could run at once.
	pushes, imports map[string]int
	// pending: decommissioning datanodes, and those entering
	// maintenance, still holding needed data.
	pending map[string]bool
	// racks counts the racks with an in-service datanode.
	racks int
	// misplaced: the mis-replicated containers, mended after the rest.
	misplaced []*containerState
	// good, sources: planReplicated's scratch slices, reused from one
	// container to the next (a pass made six small allocations a
	// container without them, and the collector's work slowed the
	// heartbeats).
	good, sources []string
	// plan: what the pass decided and the Manager has not applied yet.
	plan plan
	rep  ReplicationReport
	// judged: every container's judgement, counted for the summary.
	judged passJudgement
}

// passJudgement is what a replication pass found, counted as the summary
// counts it (judge, as the listings judge a container): the summary
// reports the last finished pass's instead of judging every container
// again, as Ozone's ReplicationManager report does.
type passJudgement struct {
	// at: when the pass started.
	at time.Time
	// problems counts the containers with each problem.
	problems map[stratov1.ContainerProblem]int64
	// leaving: the datanodes decommissioning as the pass started, with
	// their replicas and, of those, the replicas of containers short of
	// good copies (waiting).
	leaving map[string]*stratov1.DecommissionProgress
}

// newPassJudgement starts the count of a pass over s that starts at now.
func newPassJudgement(s *state, now time.Time) passJudgement {
	j := passJudgement{at: now, problems: map[stratov1.ContainerProblem]int64{}, leaving: map[string]*stratov1.DecommissionProgress{}}
	for id, n := range s.nodes {
		if n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING {
			j.leaving[id] = &stratov1.DecommissionProgress{DatanodeId: id}
		}
	}
	return j
}

// count adds container c, judged with racks racks in service, to j.
func (j *passJudgement) count(s *state, c *containerState, racks int) {
	good, problem := s.judge(c, racks)
	if problem != stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED {
		j.problems[problem]++
	}
	if len(j.leaving) == 0 {
		return
	}
	for id := range c.replicas.all() {
		if d := j.leaving[id]; d != nil {
			d.Replicas++
			if good < want(c.info) {
				d.Waiting++
			}
		}
	}
}

// newReplicationPass starts a pass over s. A copy whose source or target
// is no longer healthy will not land: it is forgotten (in the pass's
// plan), so that it is scheduled again elsewhere.
func newReplicationPass(s *state, o *Options, now time.Time, limit int) *replicationPass {
	r := &replicationPass{s: s, o: o, now: now, limit: limit,
		leaderGen: s.leaderGen, nodesGen: s.nodesGen,
		inflight: make(map[copyKey]inflight, len(s.replicating)),
		deleting: map[deleteKey]bool{},
		pushes:   map[string]int{}, imports: map[string]int{}, pending: map[string]bool{},
		racks: s.serviceRacks(), judged: newPassJudgement(s, now)}
	for _, k := range slices.SortedFunc(maps.Keys(s.replicating), compareCopyKeys) {
		fl := s.replicating[k]
		if (fl.source != "" && !s.nodes[fl.source].healthy()) || !s.nodes[fl.target].healthy() {
			r.plan.forget = append(r.plan.forget, k)
			continue
		}
		r.inflight[k] = fl
		if fl.source != "" {
			r.pushes[fl.source]++
		}
		r.imports[fl.target]++
	}
	return r
}

// planReplication is a whole pass in one step (for benchmarks and tests
// of the judgement alone): the commands to queue (copies, rebuilds and
// deletions), the soft-state changes, and the report.
func planReplication(s *state, o *Options, now time.Time, limit int) (plan, ReplicationReport) {
	r := newReplicationPass(s, o, now, limit)
	for r.step(0) {
	}
	return r.plan, r.rep
}

// stepTime bounds a step of the pass in time as well as in work: at a
// million containers, whose records no CPU cache holds, 1,000 of them
// took some 3 ms, and the heartbeats with a report queued behind each
// step. The clock is read every stepClockEvery containers.
const (
	stepTime       = 500 * time.Microsecond
	stepClockEvery = 64
)

// step examines the containers from r.from on until budget is spent or
// stepTime has passed (budget 0: no bound); the step after the last
// container finishes the pass. It reports whether there is more to do.
func (r *replicationPass) step(budget int) bool {
	if r.finished {
		return false
	}
	r.work = 0
	start := time.Now()
	cs := r.s.sortedContainers()
	i, _ := slices.BinarySearchFunc(cs, r.from, func(c *containerState, id uint64) int { return cmp.Compare(c.info.Id, id) })
	for n := 0; i < len(cs); i, n = i+1, n+1 {
		if budget > 0 && r.work >= budget {
			return true
		}
		if budget > 0 && n%stepClockEvery == stepClockEvery-1 && time.Since(start) >= stepTime {
			return true
		}
		r.work++
		r.examine(cs[i])
		r.from = cs[i].info.Id + 1
	}
	if !r.walked {
		// The finish takes a step of its own, after this one's plan is
		// applied.
		r.walked = true
		return true
	}
	r.finish()
	return false
}

// examine is the pass over container c.
//
// Every container is judged for the summary (passJudgement) but one that
// planReplicated found sound: every replica CLOSED on a HEALTHY,
// in-service datanode, as many as its replication, its racks checked.
// judge finds no problem in such a container, and at a million
// containers judging each again tripled the pass's time.
func (r *replicationPass) examine(c *containerState) {
	sound := false
	defer func() {
		if !sound || len(r.judged.leaving) > 0 {
			r.judged.count(r.s, c, r.racks)
		}
	}()
	switch c.info.State {
	case stratov1.ContainerState_CONTAINER_CLOSED:
	case stratov1.ContainerState_CONTAINER_OPEN, stratov1.ContainerState_CONTAINER_CLOSING:
		// An open or closing container is copied once it is closed
		// (its pipeline closes: a decommissioning member makes it
		// unusable); until then its holders are not done.
		r.holdDecommission(c)
		return
	default:
		return
	}
	r.rep.Containers++
	if c.info.ErasureCoding != nil {
		r.planEC(c)
	} else {
		sound = r.planReplicated(c)
	}
}

// finish ends the pass once every container was examined: the rack
// mending, the balancer, and the datanodes done decommissioning or ready
// for maintenance (registered, their full report in, and holding nothing
// another copy still needs; their state changes when the server's
// proposal applies). Verdicts on those wait for a pass during which no
// datanode changed (see ReplicationWork).
func (r *replicationPass) finish() {
	r.finished = true
	r.fixMisplaced()
	r.balance()
	if r.s.nodesGen != r.nodesGen {
		return
	}
	for id, n := range r.s.nodes {
		switch {
		case r.pending[id]:
		case n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING:
			r.rep.Decommissioned = append(r.rep.Decommissioned, id)
		case n.opState == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE:
			r.rep.InMaintenance = append(r.rep.InMaintenance, id)
		}
	}
	slices.Sort(r.rep.Decommissioned)
	slices.Sort(r.rep.InMaintenance)
}

// chooseTarget is the state's chooseTarget for container c, its work
// counted against the step.
func (r *replicationPass) chooseTarget(c *containerState, skip map[string]bool) string {
	// A choice reads every datanode, or a sample of a big cluster's.
	if n := len(r.s.nodes); n > targetScanMax {
		r.work += targetSample / 32
	} else {
		r.work += n / 32
	}
	return r.s.chooseTarget(r.now, c, r.imports, r.limit, skip)
}

func compareCopyKeys(a, b copyKey) int {
	return cmp.Or(cmp.Compare(a.container, b.container), cmp.Compare(a.index, b.index))
}

// planReplicated is the pass over closed replicated container c. Good
// copies count; sources (HEALTHY holders, decommissioning ones and those
// in maintenance included) can push; a STALE holder is neither, but the
// data is not missing while one is not DEAD. Holders in maintenance lower
// the copies c needs (maintenanceNeed).
func (r *replicationPass) planReplicated(c *containerState) (sound bool) {
	reps := r.withoutLagging(c)
	// The scratch slices are the pass's, for one container at a time:
	// nothing kept from here holds them (trim clones what it keeps).
	good, sources := r.good[:0], r.sources[:0]
	defer func() { r.good, r.sources = good[:0], sources[:0] }()
	live := 0
	for id, rp := range reps.all() {
		n := r.s.nodes[id]
		if !n.alive() || rp.State != stratov1.ContainerState_CONTAINER_CLOSED {
			continue
		}
		live++
		if !n.healthy() {
			continue
		}
		sources = append(sources, id)
		if n.opState == stratov1.NodeOpState_NODE_IN_SERVICE {
			good = append(good, id)
		}
	}
	need := r.s.maintenanceNeed(c, reps) - len(good)
	if live == 0 {
		if !r.s.closingOnLiveNode(reps) && !r.awaitingReports(c) {
			r.rep.Missing = append(r.rep.Missing, c.info.Id)
		}
		return false
	}
	if need <= 0 {
		deletes := r.trim(c, reps, good)
		r.rep.Deletes += deletes
		if len(good) > int(c.info.Replication) {
			r.rep.OverReplicated++
		}
		if deletes == 0 && len(good) == int(c.info.Replication) {
			kept := r.checkRacks(c, good)
			// Every replica CLOSED, on a live, healthy, in-service
			// datanode (a lagging one is UNHEALTHY in reps), as many as
			// it needs: sound, if its racks keep their rule.
			return kept && live == len(reps) && len(good) == live
		}
		return false
	}
	r.rep.UnderReplicated++
	r.holdDecommission(c)
	key := copyKey{c.info.Id, 0}
	if _, busy := r.inflight[key]; busy {
		return false
	}
	// The least busy source (ties by ID), so that copies spread over
	// every surviving holder.
	slices.Sort(sources)
	src := r.leastBusy(sources)
	if src == "" {
		// Every holder is at its limit: no target is looked for (a
		// search reads every datanode).
		r.rep.BlockedByLimits++
		return false
	}
	target := r.chooseTarget(c, nil)
	if target == "" {
		// Every datanode that could take a copy may already hold one
		// UNHEALTHY (three datanodes, one replica rotten): trim would
		// never delete it, for want of good copies, and no copy could
		// land while it is there. With a good source to copy from, delete
		// the bad replicas now; their datanodes are targets next pass.
		r.rep.Deletes += r.dropUnhealthy(c, reps)
	}
	if target == "" {
		r.rep.BlockedByLimits++
		return false
	}
	r.copy(key, src, target)
	return false
}

// dropUnhealthy plans the deletion of c's UNHEALTHY replicas on healthy,
// in-service datanodes and returns how many it planned.
func (r *replicationPass) dropUnhealthy(c *containerState, reps replicaSet) int {
	n := 0
	for _, id := range reps.ids() {
		if reps.get(id).State == stratov1.ContainerState_CONTAINER_UNHEALTHY && r.s.nodes[id].healthy() && r.s.nodes[id].inService() &&
			r.deleteReplica(c.info.Id, id) {
			n++
		}
	}
	return n
}

// withoutLagging is c's replica map with its lagging replicas UNHEALTHY,
// as they are from this pass on (they are marked bad when it is applied).
func (r *replicationPass) withoutLagging(c *containerState) replicaSet {
	lagging := laggingReplicas(c.replicas)
	if len(lagging) == 0 {
		return c.replicas
	}
	reps := c.replicas.clone()
	for _, id := range lagging {
		reps.get(id).State = stratov1.ContainerState_CONTAINER_UNHEALTHY
		r.plan.bad = append(r.plan.bad, deleteKey{c.info.Id, id})
	}
	return reps
}

// leastBusy is the source among sources with the fewest pushes under
// the limit (the first of those tied), "" if all are at the limit.
func (r *replicationPass) leastBusy(sources []string) string {
	src := ""
	for _, s := range sources {
		if r.pushes[s] < r.limit && (src == "" || r.pushes[s] < r.pushes[src]) {
			src = s
		}
	}
	return src
}

// copy plans a copy of key's container pushed by src to target.
func (r *replicationPass) copy(key copyKey, src, target string) {
	r.pushes[src]++
	r.imports[target]++
	r.plan.send = append(r.plan.send, send{node: src,
		cmd: &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_ReplicateContainer{
			ReplicateContainer: &stratov1.ReplicateContainerCommand{ContainerId: key.container, Target: r.s.nodes[target].details}}},
		copy: &inflightCopy{key: key, source: src, target: target}})
	r.inflight[key] = inflight{source: src, target: target, since: r.now}
	r.rep.Scheduled++
}

// holdDecommission marks the holders of c decommissioning or entering
// maintenance pending: c still needs them.
func (r *replicationPass) holdDecommission(c *containerState) {
	for id := range c.replicas.all() {
		if n := r.s.nodes[id]; n != nil && (n.opState == stratov1.NodeOpState_NODE_DECOMMISSIONING ||
			n.opState == stratov1.NodeOpState_NODE_ENTERING_MAINTENANCE) {
			r.pending[id] = true
		}
	}
}

// closingOnLiveNode: a replica in reps on a datanode not DEAD is still
// OPEN or CLOSING. Such a replica holds the data; meta has closed the
// container and sends the close again until the replica reports CLOSED, a
// heartbeat or two later. A container in that state is not missing (every
// container that fills up passes through it), nor can it be copied yet.
func (s *state) closingOnLiveNode(reps replicaSet) bool {
	for id, r := range reps.all() {
		if !s.nodes[id].alive() {
			continue
		}
		if r.State == stratov1.ContainerState_CONTAINER_OPEN || r.State == stratov1.ContainerState_CONTAINER_CLOSING {
			return true
		}
	}
	return false
}

// awaitingReports: no datanode has reported a replica of c, and none of
// its pipeline's members has sent a full report since that was first
// seen. A container imported CLOSED (offline generation, into stopped
// datanodes) is known to meta before its holders report it, which they do
// when they start; until one of them has reported in full without it, its
// absence says nothing. (Without its pipeline, DeadAfter is the wait.)
// The plan records when it was first seen so (c.unreportedSince).
func (r *replicationPass) awaitingReports(c *containerState) bool {
	if len(c.replicas) > 0 {
		if !c.unreportedSince.IsZero() {
			r.unreported(c.info.Id, time.Time{})
		}
		return false
	}
	since := c.unreportedSince
	if since.IsZero() {
		since = r.now
		r.unreported(c.info.Id, since)
	}
	p := r.s.pipelines[c.info.PipelineId]
	if p == nil {
		return r.now.Sub(since) < r.o.DeadAfter
	}
	for _, id := range p.Members {
		if n := r.s.nodes[id]; n != nil && n.lastFull.After(since) {
			return false
		}
	}
	return true
}

func (r *replicationPass) unreported(cid uint64, since time.Time) {
	if r.plan.unreported == nil {
		r.plan.unreported = map[uint64]time.Time{}
	}
	r.plan.unreported[cid] = since
}

// trim deletes the copies a container with enough good ones does not
// need: good copies beyond its replication factor (trimVictim's, never
// below the factor) and replicas on healthy nodes that are UNHEALTHY. It returns the delete commands planned. A container
// with a copy in flight is left alone until the copy lands.
func (r *replicationPass) trim(c *containerState, reps replicaSet, good []string) int {
	if _, busy := r.inflight[copyKey{c.info.Id, 0}]; busy {
		return 0
	}
	queued := 0
	var keep []string
	if len(good) > int(c.info.Replication) {
		keep = slices.Clone(good)
	}
	for extra := len(good) - int(c.info.Replication); extra > 0; extra-- {
		id := cmp.Or(r.movedOff(c, keep), r.trimVictim(keep))
		keep = slices.DeleteFunc(keep, func(k string) bool { return k == id })
		if r.deleteReplica(c.info.Id, id) {
			queued++
		}
	}
	unhealthy := false
	for _, rp := range reps.all() {
		unhealthy = unhealthy || rp.State == stratov1.ContainerState_CONTAINER_UNHEALTHY
	}
	if !unhealthy {
		return queued
	}
	for _, id := range reps.ids() {
		if reps.get(id).State == stratov1.ContainerState_CONTAINER_UNHEALTHY && r.s.nodes[id].healthy() && r.deleteReplica(c.info.Id, id) {
			queued++
		}
	}
	return queued
}

// deleteReplica plans a DeleteContainerCommand for datanode id's replica of
// container cid, unless one is under way (until the datanode stops
// reporting the replica); it says whether it planned one.
func (r *replicationPass) deleteReplica(cid uint64, id string) bool {
	k := deleteKey{cid, id}
	if r.s.deleting[k] || r.deleting[k] {
		return false
	}
	r.deleting[k] = true
	r.plan.send = append(r.plan.send, send{node: id, deletes: true,
		cmd: &stratov1.DatanodeCommand{Cmd: &stratov1.DatanodeCommand_DeleteContainer{
			DeleteContainer: &stratov1.DeleteContainerCommand{ContainerId: cid, Force: true}}}})
	return true
}

// trimVictim is the good copy among good to delete first: one on the
// rack with the most of them (so the rack rule holds after it), then on
// the datanode with the least free space, then the last by ID.
func (r *replicationPass) trimVictim(good []string) string {
	var buf [16]rackCount
	counts := r.s.spread(buf[:0], good)
	return slices.MinFunc(good, func(a, b string) int {
		na, nb := r.s.nodes[a], r.s.nodes[b]
		return cmp.Or(cmp.Compare(countOn(counts, rackOf(nb.details)), countOn(counts, rackOf(na.details))),
			cmp.Compare(na.stats.Load().GetRemaining(), nb.stats.Load().GetRemaining()), cmp.Compare(b, a))
	})
}

// checkRacks counts closed container c, which has the copies it needs and
// none in flight, as mis-replicated when it breaks its rack rule, and
// keeps it for fixMisplaced. good are its good holders (nil: found here).
// kept: c is known to keep its rule (false when it was not checked).
func (r *replicationPass) checkRacks(c *containerState, good []string) (kept bool) {
	if r.racks < 2 {
		return true
	}
	if c.info.State != stratov1.ContainerState_CONTAINER_CLOSED || r.busy(c) {
		return false
	}
	if good == nil {
		good = r.s.goodHolders(c)
	}
	if r.s.breaksRackRule(c, good, r.racks) {
		r.rep.MisReplicated++
		r.misplaced = append(r.misplaced, c)
		return false
	}
	return true
}

// busy says whether a copy or rebuild of c is in flight.
func (r *replicationPass) busy(c *containerState) bool {
	if len(r.inflight) == 0 {
		return false
	}
	for i := range want(c.info) + 1 {
		if _, ok := r.inflight[copyKey{c.info.Id, int32(i)}]; ok {
			return true
		}
	}
	return false
}
