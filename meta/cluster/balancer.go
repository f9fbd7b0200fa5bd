package cluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The container balancer (decision 0076, Ozone's ContainerBalancer). While
// it runs, the replication pass moves closed containers from datanodes
// whose used fraction of capacity is above the cluster's mean by more than
// the threshold to those below it, until every datanode is within it. A
// move is a copy (the replication manager's push, under its per-datanode
// limits) to the target, then, once the target reports the replica, the
// deletion of the source's replica by the pass's trim: a replica is never
// dropped before its copy is reported.
//
// Its record (running, parameters, totals; C b) is durable: a new leader
// resumes a running balancer. The moves and the iteration under way are
// the leader's soft state; a copy that landed under a leader that lost its
// leadership before the source's replica was dropped leaves an extra copy,
// which the ordinary trim removes.
//
// Work goes by iterations. An iteration takes the datanodes' use as they
// last reported it, plans moves (adding what each move brings and takes
// away) until the datanodes it can involve are within the threshold or
// MaxSizePerIteration bytes are planned, each source sending at most
// Bandwidth bytes a second on average since the iteration began, and ends
// when its moves are done and nothing more fits. The next one starts from
// fresh reports (every datanode heartbeated after the last move ended).
// The balancer stops itself when every datanode is within the threshold
// ("balanced") or when an iteration finds nothing it can move ("nothing
// can move": the rack rules, or no container fits).

// Balancer defaults (Ozone's threshold and size per iteration; HDFS's
// balancer bandwidth per datanode).
const (
	DefaultBalancerThreshold           = 0.10
	DefaultBalancerMaxSizePerIteration = 500 << 30
	DefaultBalancerBandwidth           = 100 << 20
)

// Balancer outcomes, as the record keeps them.
const (
	BalancerBalanced    = "balanced"
	BalancerStopped     = "stopped by an operator"
	BalancerNothingMove = "nothing can move"
)

// BalancerParams are a balancer run's parameters; zero fields take the
// defaults above (a negative Bandwidth: no cap).
type BalancerParams struct {
	Threshold           float64
	MaxSizePerIteration int64
	Bandwidth           int64
	// NoYield: the moves send at Bandwidth even while the datanodes serve
	// clients; by default they give way (decision 0098).
	NoYield bool
}

// balancerState is the balancer's part of state: its durable record (nil:
// never started) and the leader's soft state.
type balancerState struct {
	rec *stratov1.BalancerRecord
	// moves: the moves under way, by the copy they start (soft).
	moves map[copyKey]*move
	// it: the iteration under way (nil: none yet under this leader).
	it *balanceIteration
	// lastDone: when the pass last saw a move done.
	lastDone time.Time
	// doneMoves, doneBytes: moves done in the iteration under way, not
	// yet added to the record.
	doneMoves, doneBytes uint64
}

// move is one container replica moving from source to target.
type move struct {
	source, target string
	size           int64
	since          time.Time
	// done: the source's replica is gone (dropReplicaLocked) or its
	// datanode with it; the pass counts it and forgets it.
	done bool
}

// balanceIteration is one iteration: the datanodes' use at its start and
// what its moves change.
type balanceIteration struct {
	run   int64 // the record's StartedUnixMs
	n     uint64
	start time.Time
	mean  float64
	use   map[string]nodeUse
	// delta: bytes each datanode gains (negative: loses) by the moves
	// planned; sent: bytes each source was given to push.
	delta, sent map[string]int64
	planned     int64 // bytes planned
	moves       int   // moves planned
	// exhausted: nothing more fits; it ends when its moves are done.
	exhausted bool
}

// nodeUse is a datanode's used bytes and capacity.
type nodeUse struct{ used, capacity int64 }

func (u nodeUse) fraction(delta int64) float64 { return float64(u.used+delta) / float64(u.capacity) }

// balancerPlan is the balancer's part of a plan.
type balancerPlan struct {
	// it: the iteration as it is after the pass (nil: unchanged).
	it *balanceIteration
	// moves: moves started; drop: moves given up or done.
	moves map[copyKey]*move
	drop  []copyKey
	// done, doneBytes: moves found done; counted: the done counters were
	// added to a proposal (they restart from done).
	done, doneBytes uint64
	counted         bool
	// lastDone: a move was found done.
	lastDone bool
}

// StartBalancer starts the balancer through consensus with p (defaults
// filled in). A running balancer is not started again (ErrBadTransition).
func (m *Manager) StartBalancer(ctx context.Context, now time.Time, p BalancerParams) error {
	if p.Threshold == 0 {
		p.Threshold = DefaultBalancerThreshold
	}
	if p.MaxSizePerIteration == 0 {
		p.MaxSizePerIteration = DefaultBalancerMaxSizePerIteration
	}
	if p.Bandwidth == 0 {
		p.Bandwidth = DefaultBalancerBandwidth
	}
	if p.Threshold <= 0 || p.Threshold >= 1 || p.MaxSizePerIteration < 0 {
		return fmt.Errorf("%w: balancer threshold %v must be in (0, 1) and the size per iteration %d positive",
			ErrInvalid, p.Threshold, p.MaxSizePerIteration)
	}
	m.mu.Lock()
	running := m.s.bal.rec.GetRunning()
	spread := m.s.balanceView(p.Threshold).spread
	m.mu.Unlock()
	if running {
		return fmt.Errorf("%w: the balancer is running already", ErrBadTransition)
	}
	_, err := m.propose(ctx, balancerCommand(now, &stratov1.BalancerChange{Change: &stratov1.BalancerChange_Start{
		Start: &stratov1.BalancerStart{Threshold: p.Threshold, MaxSizePerIteration: p.MaxSizePerIteration, Bandwidth: p.Bandwidth, Spread: spread,
			NoYield: p.NoYield}}}))
	return err
}

// StopBalancer stops the balancer through consensus: no move starts after
// it; those under way finish. Stopping a balancer that does not run
// changes nothing.
func (m *Manager) StopBalancer(ctx context.Context, now time.Time) error {
	m.mu.Lock()
	rec := m.s.bal.rec
	var spread float64
	if rec.GetRunning() {
		spread = m.s.balanceView(rec.Threshold).spread
	}
	m.mu.Unlock()
	if !rec.GetRunning() {
		return nil
	}
	_, err := m.propose(ctx, balancerStop(now, rec.StartedUnixMs, BalancerStopped, spread))
	return err
}

func balancerCommand(now time.Time, ch *stratov1.BalancerChange) *stratov1.ClusterCommand {
	return &stratov1.ClusterCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.ClusterCommand_Balancer{Balancer: ch}}
}

func balancerStop(now time.Time, run int64, outcome string, spread float64) *stratov1.ClusterCommand {
	return balancerCommand(now, &stratov1.BalancerChange{Change: &stratov1.BalancerChange_Stop{
		Stop: &stratov1.BalancerStop{Run: run, Outcome: outcome, Spread: spread}}})
}

// BalancerStatus is the balancer's run as its record keeps it, with what
// the iteration under way moved, the moves under way, and the datanodes'
// use as the leader sees it now.
func (m *Manager) BalancerStatus() *stratov1.BalancerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := &m.s.bal
	thr := cmp.Or(b.rec.GetThreshold(), DefaultBalancerThreshold)
	v := m.s.balanceView(thr)
	r := b.rec
	st := &stratov1.BalancerStatus{Running: r.GetRunning(), Outcome: r.GetOutcome(), Threshold: r.GetThreshold(),
		MaxSizePerIteration: r.GetMaxSizePerIteration(), Bandwidth: r.GetBandwidth(), NoYield: r.GetNoYield(), StartedUnixMs: r.GetStartedUnixMs(),
		StoppedUnixMs: r.GetStoppedUnixMs(), Iterations: r.GetIterations(),
		MovedContainers: r.GetMovedContainers() + b.doneMoves, MovedBytes: r.GetMovedBytes() + b.doneBytes,
		SpreadBefore: r.GetSpreadBefore(), SpreadAfter: r.GetSpreadAfter(), Mean: v.mean, Spread: v.spread, BytesLeft: v.left}
	if b.it != nil {
		st.Iteration = b.it.n
	}
	for _, mv := range b.moves {
		if !mv.done {
			st.MovesInFlight++
			st.BytesInFlight += mv.size
		}
	}
	for _, id := range v.ids {
		u := v.use[id]
		class := "within"
		switch f := u.fraction(0); {
		case f > v.mean+thr:
			class = "over"
		case f < v.mean-thr:
			class = "under"
		}
		st.Datanodes = append(st.Datanodes, &stratov1.BalancerNode{Id: id, Used: u.used, Capacity: u.capacity,
			Utilization: u.fraction(0), Class: class})
	}
	return st
}

// balanceView is the datanodes' use as last reported: those the balancer
// involves (HEALTHY, in service, with a capacity), by ID.
type balanceView struct {
	ids    []string
	use    map[string]nodeUse
	mean   float64
	spread float64 // the largest used fraction less the smallest
	left   int64   // bytes to shed (or take) to come within the threshold
}

func (s *state) balanceView(threshold float64) balanceView {
	v := balanceView{use: map[string]nodeUse{}}
	var used, capacity int64
	for id, n := range s.nodes {
		st := n.stats.Load()
		if !n.inService() || st.GetCapacity() <= 0 {
			continue
		}
		v.ids = append(v.ids, id)
		v.use[id] = nodeUse{used: st.GetUsed(), capacity: st.GetCapacity()}
		used += st.GetUsed()
		capacity += st.GetCapacity()
	}
	slices.Sort(v.ids)
	if capacity == 0 {
		return v
	}
	v.mean = float64(used) / float64(capacity)
	lo, hi := 1.0, 0.0
	var over, under int64
	for _, id := range v.ids {
		u := v.use[id]
		f := u.fraction(0)
		lo, hi = min(lo, f), max(hi, f)
		over += max(0, u.used-int64((v.mean+threshold)*float64(u.capacity)))
		under += max(0, int64((v.mean-threshold)*float64(u.capacity))-u.used)
	}
	v.spread, v.left = hi-lo, max(over, under)
	return v
}

// nextBalancerRecord is the balancer's record rec (nil: none) after
// change ch applied at now (Unix ms), nil when ch changes nothing: a start
// replaces it; a stop or progress of the run it names (a stop naming none:
// whichever runs) changes a running one.
func nextBalancerRecord(rec *stratov1.BalancerRecord, ch *stratov1.BalancerChange, now int64) *stratov1.BalancerRecord {
	switch c := ch.Change.(type) {
	case *stratov1.BalancerChange_Start:
		return &stratov1.BalancerRecord{Running: true, Threshold: c.Start.Threshold, MaxSizePerIteration: c.Start.MaxSizePerIteration,
			Bandwidth: c.Start.Bandwidth, NoYield: c.Start.NoYield, StartedUnixMs: now, SpreadBefore: c.Start.Spread}
	case *stratov1.BalancerChange_Stop:
		if !rec.GetRunning() || (c.Stop.Run != 0 && c.Stop.Run != rec.StartedUnixMs) {
			return nil
		}
		rec = proto.Clone(rec).(*stratov1.BalancerRecord)
		rec.Running, rec.StoppedUnixMs, rec.Outcome, rec.SpreadAfter = false, now, c.Stop.Outcome, c.Stop.Spread
		return rec
	case *stratov1.BalancerChange_Progress:
		if !rec.GetRunning() || c.Progress.Run != rec.StartedUnixMs {
			return nil
		}
		rec = proto.Clone(rec).(*stratov1.BalancerRecord)
		rec.Iterations += c.Progress.Iterations
		rec.MovedContainers += c.Progress.MovedContainers
		rec.MovedBytes += c.Progress.MovedBytes
		return rec
	}
	return nil
}

// movedOff is the holder of replicated container c that trim deletes
// first: the source of its balancer move once the copy is among good
// (reported, CLOSED, in service), unless dropping it would break the rack
// rule. "" otherwise.
func (r *replicationPass) movedOff(c *containerState, good []string) string {
	mv := r.s.bal.moves[copyKey{c.info.Id, 0}]
	if mv == nil || !slices.Contains(good, mv.target) || !slices.Contains(good, mv.source) {
		return ""
	}
	rest := slices.DeleteFunc(slices.Clone(good), func(id string) bool { return id == mv.source })
	if r.racks >= 2 && r.s.breaksRackRule(c, rest, r.racks) {
		return ""
	}
	return mv.source
}

// movedTo is the holder of index i (0-based) of EC container c that
// planECTrim keeps: the target of its balancer move once both it and the
// source are among holders. "" otherwise.
func (r *replicationPass) movedTo(c *containerState, i int, holders []string) string {
	mv := r.s.bal.moves[copyKey{c.info.Id, int32(i + 1)}]
	if mv == nil || !slices.Contains(holders, mv.target) || !slices.Contains(holders, mv.source) {
		return ""
	}
	return mv.target
}

// moveDoneLocked: datanode id no longer holds its replica of container
// cid; a move off it whose target holds the container is done. Under mu.
func (m *Manager) moveDoneLocked(cid uint64, id string) {
	for k, mv := range m.s.bal.moves {
		if k.container == cid && mv.source == id {
			if c := m.s.containers[cid]; c != nil && c.replicas.has(mv.target) {
				mv.done = true
			}
		}
	}
}

// applyBalancerLocked makes the balancer's part of p so. Under mu.
func (m *Manager) applyBalancerLocked(now time.Time, bp *balancerPlan) {
	b := &m.s.bal
	for _, k := range bp.drop {
		delete(b.moves, k)
	}
	if len(bp.moves) > 0 && b.moves == nil {
		b.moves = map[copyKey]*move{}
	}
	maps.Copy(b.moves, bp.moves)
	if bp.counted { // the proposal counted those found done now too
		b.doneMoves, b.doneBytes = 0, 0
	} else {
		b.doneMoves += bp.done
		b.doneBytes += bp.doneBytes
	}
	if bp.lastDone {
		b.lastDone = now
	}
	if bp.it != nil {
		b.it = bp.it
	}
}
