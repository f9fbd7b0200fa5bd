package cluster

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The balancer's part of the replication pass (balancer.go): it runs
// after the repairs and the rack mending, so that they have the
// per-datanode limits first, and a balancer move takes at most half of a
// datanode's limit, leaving the rest to repairs.

// balance reviews the moves under way and, while the balancer runs, ends
// or starts an iteration and plans the moves that fit.
func (r *replicationPass) balance() {
	open := r.reviewMoves()
	b := &r.s.bal
	rec := b.rec
	if !rec.GetRunning() {
		return
	}
	it := b.it
	if it != nil && it.run != rec.StartedUnixMs {
		it = nil
	}
	if it != nil && it.exhausted {
		// Moves found done in this pass are still listed (as under way)
		// until it is applied, and their sources' reports since are due.
		if open > 0 || r.plan.bal.lastDone || !r.fresh(b.lastDone) {
			return
		}
		// The iteration is over: its totals go into the record, and the
		// next one starts from the datanodes' reports since.
		r.progress(rec, 1)
		it = &balanceIteration{run: rec.StartedUnixMs, n: it.n}
		r.plan.bal.it = it // counted once, whatever follows
	}
	if it == nil || it.start.IsZero() {
		n := uint64(1)
		if it != nil {
			n = it.n + 1
		}
		v := r.s.balanceView(rec.Threshold)
		if balanced(v, rec.Threshold) {
			r.plan.propose = append(r.plan.propose, balancerStop(r.now, rec.StartedUnixMs, BalancerBalanced, v.spread))
			return
		}
		it = &balanceIteration{run: rec.StartedUnixMs, n: n, start: r.now, mean: v.mean, use: v.use,
			delta: map[string]int64{}, sent: map[string]int64{}}
	} else {
		it = it.clone()
	}
	r.plan.bal.it = it
	planned, waiting := r.planMoves(it)
	r.rep.BalancerMoves += planned
	if planned > 0 || waiting {
		return
	}
	it.exhausted = true
	if it.moves == 0 && open == 0 {
		v := r.s.balanceView(rec.Threshold)
		r.plan.propose = append(r.plan.propose, balancerStop(r.now, rec.StartedUnixMs, BalancerNothingMove, v.spread))
	}
}

// progress proposes the moves done so far, in iterations more
// iterations, for the record of running balancer rec.
func (r *replicationPass) progress(rec *stratov1.BalancerRecord, iterations uint64) {
	b := &r.s.bal
	r.plan.propose = append(r.plan.propose, balancerCommand(r.now, &stratov1.BalancerChange{Change: &stratov1.BalancerChange_Progress{
		Progress: &stratov1.BalancerProgress{Run: rec.StartedUnixMs, Iterations: iterations,
			MovedContainers: b.doneMoves + r.plan.bal.done, MovedBytes: b.doneBytes + r.plan.bal.doneBytes}}}))
	r.plan.bal.counted = true
}

// balanced: every datanode v involves is within threshold of the mean.
func balanced(v balanceView, threshold float64) bool {
	for _, id := range v.ids {
		if f := v.use[id].fraction(0); f > v.mean+threshold || f < v.mean-threshold {
			return false
		}
	}
	return true
}

func (it *balanceIteration) clone() *balanceIteration {
	c := *it
	c.delta, c.sent = maps.Clone(it.delta), maps.Clone(it.sent)
	return &c
}

// fresh: every in-service datanode has heartbeated since at (its report
// shows the moves done by then).
func (r *replicationPass) fresh(at time.Time) bool {
	for _, n := range r.s.nodes {
		if n.inService() && !n.lastSeen().After(at) {
			return false
		}
	}
	return true
}

// reviewMoves goes over the moves under way: a move whose source's replica
// is gone is done (counted); one whose copy failed, or that waited too
// long for its source's replica to go, is given up (the replication pass
// trims whatever extra copy is left). It returns the moves still open.
func (r *replicationPass) reviewMoves() int {
	b := &r.s.bal
	open := 0
	for _, k := range slices.SortedFunc(maps.Keys(b.moves), compareCopyKeys) {
		mv := b.moves[k]
		c := r.s.containers[k.container]
		_, copying := r.inflight[k]
		var landed bool
		if c != nil {
			tr := c.replicas.get(mv.target)
			landed = tr != nil && tr.State == stratov1.ContainerState_CONTAINER_CLOSED
		}
		switch {
		case mv.done || landed && !r.s.nodes[mv.source].alive():
			r.plan.bal.drop = append(r.plan.bal.drop, k)
			r.plan.bal.done++
			r.plan.bal.doneBytes += uint64(mv.size)
			r.plan.bal.lastDone = true
		case c != nil && copying:
			open++
		case landed && r.now.Sub(mv.since) < 2*r.o.ReplicationTimeout:
			open++ // the pass's trim drops the source's replica
		default:
			r.plan.bal.drop = append(r.plan.bal.drop, k)
			r.plan.bal.lastDone = true
		}
	}
	return open
}

// planMoves plans the moves of iteration it that fit now, most used
// sources first. It returns how many it planned, and whether others wait
// for room (a datanode's limit, a source's bandwidth).
func (r *replicationPass) planMoves(it *balanceIteration) (planned int, waiting bool) {
	rec := r.s.bal.rec
	lim := max(1, r.limit/2)
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(it.use)) {
		if r.s.nodes[id].inService() {
			ids = append(ids, id)
		}
	}
	frac := func(id string) float64 { return it.use[id].fraction(it.delta[id]) }
	sources := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return frac(id) <= it.mean })
	slices.SortStableFunc(sources, func(a, b string) int { return cmp.Compare(frac(b), frac(a)) })
	// The targets below the mean, least used first: sorted again after
	// each move, not for each container tried.
	targets := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return frac(id) >= it.mean })
	sortTargets := func() {
		targets = slices.DeleteFunc(targets, func(id string) bool { return frac(id) >= it.mean })
		slices.SortStableFunc(targets, func(a, b string) int { return cmp.Compare(frac(a), frac(b)) })
	}
	sortTargets()
	for _, src := range sources {
		if rec.MaxSizePerIteration > 0 && it.planned >= rec.MaxSizePerIteration {
			return planned, false
		}
		if r.pushes[src] >= lim || !r.withinBandwidth(it, src) {
			waiting = true // its containers are not even listed
			continue
		}
		cands, pending := r.movable(src)
		waiting = waiting || pending
		for _, c := range cands {
			if r.pushes[src] >= lim || !r.withinBandwidth(it, src) {
				waiting = true
				break
			}
			rp := c.replicas.get(src)
			if rec.MaxSizePerIteration > 0 && it.planned > 0 && it.planned+rp.UsedBytes > rec.MaxSizePerIteration {
				continue
			}
			t, blocked := r.moveTarget(it, targets, c, src, rp.UsedBytes, lim)
			waiting = waiting || blocked
			if t == "" {
				continue
			}
			key := copyKey{c.info.Id, rp.ReplicaIndex}
			r.copy(key, src, t)
			cmd := r.plan.send[len(r.plan.send)-1].cmd.GetReplicateContainer()
			if rec.Bandwidth > 0 {
				// The cap holds on the wire too: the source paces its moves.
				cmd.Bandwidth = rec.Bandwidth
			}
			// A move gives way to client traffic on both datanodes.
			cmd.Background = !rec.NoYield
			if r.plan.bal.moves == nil {
				r.plan.bal.moves = map[copyKey]*move{}
			}
			r.plan.bal.moves[key] = &move{source: src, target: t, size: rp.UsedBytes, since: r.now}
			it.delta[src] -= rp.UsedBytes
			it.delta[t] += rp.UsedBytes
			it.sent[src] += rp.UsedBytes
			it.planned += rp.UsedBytes
			it.moves++
			planned++
			sortTargets()
			if frac(src) <= it.mean {
				break
			}
		}
	}
	return planned, waiting
}

// withinBandwidth: source src has been given no more than the bandwidth
// allows since iteration it began (it may start another move).
func (r *replicationPass) withinBandwidth(it *balanceIteration, src string) bool {
	bw := r.s.bal.rec.Bandwidth
	return bw <= 0 || float64(it.sent[src]) <= float64(bw)*r.now.Sub(it.start).Seconds()
}

// moveTarget picks where container c, size bytes on src, moves to: the
// first of targets (those below the mean, least used first) below the
// threshold unless src is above it, that the move leaves within the
// threshold, holding no replica of c, under its import limit lim, and on
// a rack that keeps c's rack rule. blocked: a target was at its limit.
func (r *replicationPass) moveTarget(it *balanceIteration, targets []string, c *containerState, src string, size int64, lim int) (target string, blocked bool) {
	thr := r.s.bal.rec.Threshold
	frac := func(id string, more int64) float64 { return it.use[id].fraction(it.delta[id] + more) }
	over := frac(src, 0) > it.mean+thr
	if frac(src, -size) < it.mean-thr {
		return "", false
	}
	var holders []string
	for _, t := range targets {
		switch {
		case !over && frac(t, 0) >= it.mean-thr:
			return "", blocked
		case frac(t, size) > it.mean+thr || c.replicas.has(t):
			continue
		case r.imports[t] >= lim:
			blocked = true
			continue
		}
		if r.racks >= 2 {
			if holders == nil {
				holders = r.s.goodHolders(c)
			}
			i := slices.Index(holders, src)
			if i < 0 {
				return "", false // not a good holder: steady said it was
			}
			moved := slices.Clone(holders)
			moved[i] = t
			if r.s.breaksRackRule(c, moved, r.racks) {
				continue
			}
		}
		return t, false
	}
	return "", blocked
}

// movable lists the containers src may move, largest first (ties by
// ID): CLOSED, steady, and with nothing of theirs under way. pending: a
// container of src was passed over only for what is under way (a copy, a
// move, a deletion), so it may move once that is done.
func (r *replicationPass) movable(src string) (out []*containerState, pending bool) {
	n := r.s.nodes[src]
	for cid := range n.containers {
		c := r.s.containers[cid]
		if c == nil || c.info.State != stratov1.ContainerState_CONTAINER_CLOSED {
			continue
		}
		switch rp := c.replicas.get(src); {
		case rp == nil || rp.UsedBytes <= 0:
		case r.underWay(c):
			pending = true
		case r.steady(c):
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *containerState) int {
		return cmp.Or(cmp.Compare(b.replicas.get(src).UsedBytes, a.replicas.get(src).UsedBytes), cmp.Compare(a.info.Id, b.info.Id))
	})
	return out, pending
}

// underWay: a copy or rebuild of c, a balancer move of it, or the deletion
// of one of its replicas is under way (or planned by this pass).
func (r *replicationPass) underWay(c *containerState) bool {
	if r.busy(c) {
		return true
	}
	for id := range c.replicas.all() {
		if r.s.deleting[deleteKey{c.info.Id, id}] || r.deleting[deleteKey{c.info.Id, id}] {
			return true
		}
	}
	for i := range want(c.info) + 1 {
		k := copyKey{c.info.Id, int32(i)}
		if r.s.bal.moves[k] != nil || r.plan.bal.moves[k] != nil {
			return true
		}
	}
	return false
}

// steady: closed container c has exactly the copies it needs, each a
// CLOSED replica on an in-service datanode (one per index when erasure
// coded), and is within its rack rule.
func (r *replicationPass) steady(c *containerState) bool {
	n := want(c.info)
	if len(c.replicas) != n {
		return false
	}
	seen := make([]bool, n+1)
	for id, rp := range c.replicas.all() {
		if rp.State != stratov1.ContainerState_CONTAINER_CLOSED || !r.s.nodes[id].inService() {
			return false
		}
		if c.info.ErasureCoding != nil {
			i := int(rp.ReplicaIndex)
			if i < 1 || i > n || seen[i] {
				return false
			}
			seen[i] = true
		}
	}
	return r.racks < 2 || !r.s.breaksRackRule(c, r.s.goodHolders(c), r.racks)
}
