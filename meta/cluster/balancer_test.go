package cluster

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// balSim is a cluster of simulated datanodes on an env's fake clock: each
// heartbeats with its full report and its use, and carries out at once
// the copies, EC rebuilds and deletions its replies carry (a copy lands
// on its target, which reports it at its next heartbeat).
type balSim struct {
	t        *testing.T
	e        *env
	capacity int64
	nodes    []*simNode
	want     map[uint64]int // containers and the copies (indexes) they need
	// down: datanodes that stopped (no heartbeat, no copy lands on them;
	// their disks keep what they held).
	down map[string]bool
	// paced: the bandwidth of every copy command sent (what the source
	// paces its push at; 0: none).
	paced []int64
	// background: whether each of those commands gives way to clients.
	background []bool
}

type simNode struct {
	id, rack string
	held     map[uint64]*stratov1.ContainerReplica
}

func newBalSim(t *testing.T, racks []string) *balSim {
	s := &balSim{t: t, e: newEnv(t, Options{}), capacity: 100 << 30, want: map[uint64]int{}, down: map[string]bool{}}
	for i, r := range racks {
		s.nodes = append(s.nodes, &simNode{id: fmt.Sprintf("dn%d", i+1), rack: r, held: map[uint64]*stratov1.ContainerReplica{}})
	}
	return s
}

// addContainer records a closed container of size bytes on holders (an
// erasure coded one when ec is set: holder i holds index i+1).
func (s *balSim) addContainer(size int64, ec *stratov1.ErasureCodingRecord, holders ...int) {
	rec := &stratov1.ContainerRecord{Replication: three, ErasureCoding: ec}
	res, err := s.e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: rec}})
	require.NoError(s.t, err)
	id := res.(*stratov1.ContainerRecord).Id
	_, err = s.e.propose(context.Background(), setContainerState(s.e.now, id, stratov1.ContainerState_CONTAINER_CLOSED))
	require.NoError(s.t, err)
	for i, h := range holders {
		rp := &stratov1.ContainerReplica{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, UsedBytes: size}
		if ec != nil {
			rp.ReplicaIndex = int32(i + 1)
		}
		s.nodes[h].held[id] = rp
	}
	s.want[id] = len(holders)
}

func (s *balSim) stats(n *simNode) *stratov1.NodeStats {
	var used int64
	for _, r := range n.held {
		used += r.UsedBytes
	}
	return &stratov1.NodeStats{Capacity: s.capacity, Used: used, Remaining: s.capacity - used}
}

func (s *balSim) report(n *simNode) *stratov1.ContainerReport {
	r := &stratov1.ContainerReport{Full: true}
	for _, id := range slices.Sorted(maps.Keys(n.held)) {
		r.Replicas = append(r.Replicas, proto.Clone(n.held[id]).(*stratov1.ContainerReplica))
	}
	return r
}

// register registers the datanodes up to up (all: -1).
func (s *balSim) register(up int) {
	for i, n := range s.nodes {
		if up >= 0 && i >= up {
			break
		}
		require.NoError(s.t, s.e.m.Register(s.e.now, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: n.id, DataAddr: "127.0.0.1:1" + n.id[2:], Rack: n.rack},
			Stats:   s.stats(n), Report: s.report(n)}))
	}
}

func (s *balSim) node(id string) *simNode {
	for _, n := range s.nodes {
		if n.id == id {
			return n
		}
	}
	s.t.Fatalf("no datanode %s", id)
	return nil
}

// step is three seconds: every datanode heartbeats and carries out its
// commands, meta ticks and, unless it is settling, runs a replication
// pass and proposes what it returns. After the heartbeats, every
// container must still be held whole: a copy (or index) on a datanode
// for each it needs.
func (s *balSim) step() ReplicationReport {
	s.t.Helper()
	for _, n := range s.nodes {
		if s.down[n.id] {
			continue
		}
		resp, err := s.e.m.Heartbeat(s.e.now, &stratov1.HeartbeatRequest{DatanodeId: n.id, Stats: s.stats(n), Report: s.report(n)})
		if resp.GetReregister() {
			require.NoError(s.t, s.e.m.Register(s.e.now, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: n.id, DataAddr: "127.0.0.1:1" + n.id[2:], Rack: n.rack},
				Stats:   s.stats(n), Report: s.report(n)}))
			continue
		}
		require.NoError(s.t, err)
		for _, cmd := range resp.Commands {
			if rc := cmd.GetReplicateContainer(); rc != nil {
				s.paced = append(s.paced, rc.Bandwidth)
				s.background = append(s.background, rc.Background)
			}
			if rc := cmd.GetReplicateContainer(); rc != nil && !s.down[rc.Target.Id] {
				s.node(rc.Target.Id).held[rc.ContainerId] = proto.Clone(n.held[rc.ContainerId]).(*stratov1.ContainerReplica)
			}
			if rc := cmd.GetReconstructEcContainer(); rc != nil {
				src := s.node(rc.Sources[0].Datanode.Id).held[rc.ContainerId]
				n.held[rc.ContainerId] = &stratov1.ContainerReplica{ContainerId: rc.ContainerId, State: stratov1.ContainerState_CONTAINER_CLOSED,
					UsedBytes: src.UsedBytes, ReplicaIndex: rc.ReplicaIndex}
			}
			if dc := cmd.GetDeleteContainer(); dc != nil {
				delete(n.held, dc.ContainerId)
			}
		}
		s.requireWhole()
	}
	s.e.now = s.e.now.Add(3 * time.Second)
	s.e.tick()
	if s.e.m.Settling(s.e.now) || s.e.m.SafeMode().InSafeMode {
		return ReplicationReport{}
	}
	rep := s.e.m.ReplicationWork(s.e.now, s.e.m.Options().ReplicationLimit)
	for _, cmd := range rep.Propose {
		_, err := s.e.propose(context.Background(), cmd)
		require.NoError(s.t, err)
	}
	return rep
}

// requireWhole: every container has a replica of each index it needs
// (replicated: as many replicas) on the datanodes.
func (s *balSim) requireWhole() {
	s.t.Helper()
	for id, n := range s.want {
		indexes := map[int32]int{}
		for _, nd := range s.nodes {
			if r := nd.held[id]; r != nil {
				indexes[r.ReplicaIndex]++
			}
		}
		if indexes[0] > 0 {
			require.GreaterOrEqual(s.t, indexes[0], n, "container %d lost a replica", id)
			continue
		}
		require.Len(s.t, indexes, n, "container %d lost an index", id)
	}
}

// requireExact: every container has exactly the copies it needs, no
// more, on the datanodes up.
func (s *balSim) requireExact() {
	s.t.Helper()
	for id, n := range s.want {
		held := 0
		for _, nd := range s.nodes {
			if nd.held[id] != nil && !s.down[nd.id] {
				held++
			}
		}
		require.Equal(s.t, n, held, "container %d", id)
	}
}

// utilizations are the datanodes' used fractions of capacity, and their
// mean.
func (s *balSim) utilizations() ([]float64, float64) {
	var out []float64
	var sum float64
	for _, n := range s.nodes {
		f := float64(s.stats(n).Used) / float64(s.capacity)
		out = append(out, f)
		sum += f
	}
	return out, sum / float64(len(out))
}

// racksOf lists the racks holding container id.
func (s *balSim) racksOf(id uint64) []string {
	var racks []string
	for _, n := range s.nodes {
		if n.held[id] != nil && !slices.Contains(racks, n.rack) {
			racks = append(racks, n.rack)
		}
	}
	return racks
}

func (s *balSim) start(p BalancerParams) {
	require.NoError(s.t, s.e.m.StartBalancer(context.Background(), s.e.now, p))
}

// runUntilStopped steps until the balancer stops (at most n steps), and
// returns its status.
func (s *balSim) runUntilStopped(n int) *stratov1.BalancerStatus {
	s.t.Helper()
	for range n {
		s.step()
		if st := s.e.m.BalancerStatus(); !st.Running && st.MovesInFlight == 0 {
			return st
		}
	}
	s.t.Fatalf("the balancer still runs after %d steps: %v", n, s.e.m.BalancerStatus())
	return nil
}

// fullAndEmpty is three full datanodes (one per rack) holding 24
// replicated containers of 1 GiB and 6 erasure coded ones (rs-2-1) of
// 1 GiB an index, and three empty ones (one per rack) that join.
func fullAndEmpty(t *testing.T) *balSim {
	s := newBalSim(t, []string{"/r1", "/r2", "/r3", "/r1", "/r2", "/r3"})
	for range 24 {
		s.addContainer(1<<30, nil, 0, 1, 2)
	}
	ec := &stratov1.ErasureCodingRecord{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 2, Parity: 1, CellSize: 1 << 20}
	for range 6 {
		s.addContainer(1<<30, ec, 0, 1, 2)
	}
	s.register(3)
	s.e.m.ExitSafeMode()
	s.step()
	s.register(-1)
	return s
}

// TestBalancerBringsEveryNodeWithinThreshold: three full datanodes and
// three empty ones; the balancer moves replicated containers and erasure
// coded indexes until every datanode is within 10% of the mean, never
// drops a replica before its copy is reported, keeps every container on
// its racks as the rules want, and stops itself, balanced.
func TestBalancerBringsEveryNodeWithinThreshold(t *testing.T) {
	s := fullAndEmpty(t)
	for range 3 {
		s.step() // nothing moves while it does not run
	}
	require.Zero(t, s.e.m.BalancerStatus().MovesInFlight)
	before, _ := s.utilizations()
	require.InDelta(t, 0.30, before[0], 0.001)

	s.start(BalancerParams{Threshold: 0.05, Bandwidth: -1})
	require.ErrorIs(t, s.e.m.StartBalancer(context.Background(), s.e.now, BalancerParams{}), ErrBadTransition)
	rec := s.runUntilStopped(400)
	require.Equal(t, BalancerBalanced, rec.Outcome)
	after, mean := s.utilizations()
	for i, f := range after {
		require.InDelta(t, mean, f, 0.05+1e-9, "datanode %d: %v (mean %v)", i+1, after, mean)
	}
	require.InDelta(t, 0.30, rec.SpreadBefore, 0.001)
	require.LessOrEqual(t, rec.SpreadAfter, 0.10+1e-9)
	t.Logf("%v", rec)
	require.Positive(t, rec.Iterations)
	require.Positive(t, rec.MovedContainers)
	require.Equal(t, rec.MovedContainers<<30, rec.MovedBytes)
	for id := range s.want {
		require.GreaterOrEqual(t, len(s.racksOf(id)), 2, "container %d", id)
	}
	s.requireWhole()
	s.requireExact() // the sources' replicas were dropped
}

// TestBalancerLimitsAndStop: a source takes at most half of its
// replication limit in moves at once, the bandwidth paces a source's
// moves over the iteration, and a stop lets the moves under way finish
// and starts none.
func TestBalancerLimitsAndStop(t *testing.T) {
	s := fullAndEmpty(t)
	s.start(BalancerParams{Threshold: 0.05, Bandwidth: 1 << 30 / 60}) // a GiB a minute per source
	rep := s.step()
	require.Equal(t, 3, rep.BalancerMoves, "one move of 1 GiB per source at the start of the iteration")
	for range 5 { // 15 s: not yet room for another
		require.Zero(t, s.step().BalancerMoves)
	}
	for range 20 {
		s.step()
	}
	st := s.e.m.BalancerStatus()
	require.True(t, st.Running)
	moved := st.MovedContainers + uint64(st.MovesInFlight)
	require.InDelta(t, 6, moved, 3, "about a move per source a minute: %v", st)
	require.NotEmpty(t, s.paced)
	for _, bw := range s.paced {
		require.Equal(t, int64(1<<30/60), bw, "every move carries the cap, which the source keeps on the wire")
	}
	for _, bg := range s.background {
		require.True(t, bg, "every move gives way to clients by default")
	}

	require.NoError(t, s.e.m.StopBalancer(context.Background(), s.e.now))
	st = s.e.m.BalancerStatus()
	require.False(t, st.Running)
	require.Equal(t, BalancerStopped, st.Outcome)
	for range 10 {
		require.Zero(t, s.step().BalancerMoves)
	}
	require.Zero(t, s.e.m.BalancerStatus().MovesInFlight, "the moves under way finished")
	s.requireWhole()

	s2 := fullAndEmpty(t)
	s2.start(BalancerParams{Threshold: 0.05, Bandwidth: -1, NoYield: true})
	rep = s2.step()
	require.Equal(t, 3*(s2.e.m.Options().ReplicationLimit/2), rep.BalancerMoves, "half the limit of each source")
	s2.step() // the commands go out with the next heartbeats
	for _, bw := range s2.paced {
		require.Zero(t, bw, "no cap, no pacing")
	}
	require.NotEmpty(t, s2.background)
	for _, bg := range s2.background {
		require.False(t, bg, "no_yield: the moves do not give way")
	}
	require.True(t, s2.e.m.BalancerStatus().NoYield, "the run's record keeps no_yield")
}

// TestBalancerKeepsRackRules: dn3 is alone on its rack; its containers'
// other copies are on the other rack, as are the empty datanodes, so
// moving one of its replicas would leave a container on one rack. It
// moves nothing off dn3, and the balancer stops when nothing more can
// move.
func TestBalancerKeepsRackRules(t *testing.T) {
	s := newBalSim(t, []string{"/a", "/a", "/b", "/a", "/a", "/a"})
	for range 12 {
		s.addContainer(1<<30, nil, 0, 1, 2)
	}
	s.register(-1)
	s.e.m.ExitSafeMode()
	s.step()
	s.start(BalancerParams{Threshold: 0.02, Bandwidth: -1})
	rec := s.runUntilStopped(400)
	require.Equal(t, BalancerNothingMove, rec.Outcome)
	require.Len(t, s.node("dn3").held, 12, "dn3's replicas stay")
	for id := range s.want {
		require.Equal(t, []string{"/a", "/b"}, sortedRacks(s.racksOf(id)), "container %d", id)
	}
	require.NotEmpty(t, s.node("dn4").held)
}

func sortedRacks(r []string) []string { slices.Sort(r); return r }

// TestBalancerResumesOnNewLeader: the balancer's record is durable; a new
// leader (a manager loaded from the same state, the datanodes registering
// again) resumes the run once it has settled, and balances the cluster
// with nothing lost.
func TestBalancerResumesOnNewLeader(t *testing.T) {
	s := fullAndEmpty(t)
	s.start(BalancerParams{Threshold: 0.05, Bandwidth: -1})
	for range 4 {
		s.step()
	}
	require.Positive(t, uint64(s.e.m.BalancerStatus().MovesInFlight)+s.e.m.BalancerStatus().MovedContainers)

	m, err := New(s.e.m.Options(), s.e.propose)
	require.NoError(t, err)
	require.NoError(t, m.Load(s.e.db))
	m.BecomeLeader(s.e.now)
	s.e.m = m
	require.True(t, m.BalancerStatus().Running, "the record says it runs")
	rec := s.runUntilStopped(600)
	require.Equal(t, BalancerBalanced, rec.Outcome)
	after, mean := s.utilizations()
	for i, f := range after {
		require.InDelta(t, mean, f, 0.05+1e-9, "datanode %d: %v", i+1, after)
	}
	s.requireExact() // an extra copy left by the old leader is trimmed
}

// TestBalancerSourceOrTargetLost: a source of moves under way stops, and
// so does a target: nothing is deleted for a copy that did not land; the
// lost datanodes' containers are copied back to three, and the balancer
// finishes over the datanodes left.
func TestBalancerSourceOrTargetLost(t *testing.T) {
	s := fullAndEmpty(t)
	s.start(BalancerParams{Threshold: 0.05, Bandwidth: -1})
	rep := s.step()
	require.Positive(t, rep.BalancerMoves)
	// The commands are queued: dn1 (a source) and dn4 (a target) stop
	// before their next heartbeat carries them out.
	s.down["dn1"], s.down["dn4"] = true, true
	rec := s.runUntilStopped(800)
	require.Contains(t, []string{BalancerBalanced, BalancerNothingMove}, rec.Outcome)
	for range 50 { // the copies of what dn1 and dn4 held finish
		s.step()
	}
	s.requireWhole()
	s.requireExact()
	after, _ := s.utilizations()
	t.Logf("%v %v", rec, after)
}

// TestBalancerFewContainers: three full datanodes share a few
// containers, so a container is moved by one source at a time and the
// others wait for it; an iteration that starts as the last moves of the
// one before end waits for them (and for the reports after them) rather
// than finding nothing to move. It ends balanced.
func TestBalancerFewContainers(t *testing.T) {
	s := newBalSim(t, []string{"/r1", "/r2", "/r3", "/r1", "/r2", "/r3"})
	s.capacity = 200 << 30
	for _, gib := range []int64{10, 16, 12, 10, 16, 12, 4} {
		s.addContainer(gib<<30, nil, 0, 1, 2)
	}
	s.register(-1)
	s.e.m.ExitSafeMode()
	s.step()
	s.start(BalancerParams{Threshold: 0.10, Bandwidth: -1})
	st := s.runUntilStopped(400)
	require.Equal(t, BalancerBalanced, st.Outcome, "%v", st)
	after, mean := s.utilizations()
	for i, f := range after {
		require.InDelta(t, mean, f, 0.10+1e-9, "datanode %d: %v", i+1, after)
	}
	s.requireExact()
}
