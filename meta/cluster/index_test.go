package cluster

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// recountHeld is the oracle of the index: each datanode's containers,
// counted from every container's replica map.
func recountHeld(s *state) map[string][]uint64 {
	held := map[string][]uint64{}
	for cid, c := range s.containers {
		for id := range c.replicas.all() {
			held[id] = append(held[id], cid)
		}
	}
	for id := range held {
		slices.Sort(held[id])
	}
	return held
}

// checkIndex: the index (nodeState.containers) holds exactly what the
// replica maps say, and a listing by datanode returns it, by ID.
func checkIndex(t *testing.T, m *Manager, step string) {
	t.Helper()
	m.mu.Lock()
	held := recountHeld(&m.s)
	ids := slices.Sorted(maps.Keys(m.s.nodes))
	for id := range held {
		require.NotNil(t, m.s.nodes[id], "%s: datanode %s holds replicas and is not registered", step, id)
	}
	for _, id := range ids {
		require.Equal(t, held[id], slices.Sorted(maps.Keys(m.s.nodes[id].containers)), "%s: the index of %s", step, id)
	}
	// Safe mode's counts, kept as replicas and states change.
	closed, reported := int64(0), int64(0)
	for _, c := range m.s.containers {
		if c.info.State == stratov1.ContainerState_CONTAINER_CLOSED {
			closed++
			if len(c.replicas) > 0 {
				reported++
			}
		}
	}
	require.Equal(t, closed, m.s.byState[stratov1.ContainerState_CONTAINER_CLOSED], "%s: CLOSED containers", step)
	require.Equal(t, reported, m.s.closedReported, "%s: CLOSED containers with a replica", step)
	m.mu.Unlock()
	for _, id := range ids {
		infos, _ := m.ListContainers(0, 0, ContainerFilter{Datanode: id}, false)
		var got []uint64
		for _, c := range infos {
			got = append(got, c.Id)
		}
		require.Equal(t, held[id], got, "%s: the containers listed for %s", step, id)
	}
}

// indexSim drives a manager with random reports, deletions, registrations,
// leader changes and reloads.
type indexSim struct {
	t     *testing.T
	e     *env
	rng   *rand.Rand
	nodes []string
	// load reloads the durable state as it was with the first
	// containers alone (dropping the containers made since).
	load func() error
	// last: each datanode's last full report; repeats: how many of them
	// sent again were not read again (applyReportLocked's digest).
	last    map[string]*stratov1.ContainerReport
	repeats int
}

func (s *indexSim) container() uint64 {
	res, err := s.e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
	require.NoError(s.t, err)
	id := res.(*stratov1.ContainerRecord).Id
	if s.rng.IntN(2) == 0 {
		_, err = s.e.propose(context.Background(), setContainerState(s.e.now, id, stratov1.ContainerState_CONTAINER_CLOSED))
		require.NoError(s.t, err)
	}
	return id
}

// report is a random report: replicas of random containers, each listed
// once, some unknown to meta, and (incremental) some deleted.
func (s *indexSim) report(full bool) *stratov1.ContainerReport {
	r := &stratov1.ContainerReport{Full: full}
	s.e.m.mu.Lock()
	top := uint64(len(s.e.m.s.containers)) + 3
	s.e.m.mu.Unlock()
	states := []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_OPEN, stratov1.ContainerState_CONTAINER_CLOSED, stratov1.ContainerState_CONTAINER_UNHEALTHY}
	listed := map[uint64]bool{} // a datanode lists a container once
	for range s.rng.IntN(12) {
		cid := 1 + s.rng.Uint64N(top)
		if !listed[cid] {
			listed[cid] = true
			r.Replicas = append(r.Replicas, &stratov1.ContainerReplica{ContainerId: cid, State: states[s.rng.IntN(len(states))]})
		}
	}
	if !full {
		for range s.rng.IntN(4) {
			r.Deleted = append(r.Deleted, 1+s.rng.Uint64N(top))
		}
	}
	return r
}

func (s *indexSim) register(id string) {
	r := s.report(true)
	s.last[id] = proto.Clone(r).(*stratov1.ContainerReport)
	require.NoError(s.t, s.e.m.Register(s.e.now, &stratov1.RegisterRequest{
		Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1"}, Report: r}))
}

// replicaView is what the manager knows of the replicas, for comparing.
func replicaView(s *state) string {
	var b strings.Builder
	for _, cid := range slices.Sorted(maps.Keys(s.containers)) {
		c := s.containers[cid]
		reps := slices.Clone(c.replicas)
		slices.SortFunc(reps, func(a, b replica) int { return strings.Compare(a.node, b.node) })
		fmt.Fprintf(&b, "%d %v %v\n", cid, reps, slices.Sorted(maps.Keys(c.bad)))
	}
	for _, id := range slices.Sorted(maps.Keys(s.nodes)) {
		fmt.Fprintf(&b, "%s %v\n", id, slices.Sorted(maps.Keys(s.nodes[id].containers)))
	}
	copies := slices.SortedFunc(maps.Keys(s.replicating), func(a, b copyKey) int {
		return cmp.Or(cmp.Compare(a.container, b.container), cmp.Compare(a.index, b.index))
	})
	fmt.Fprintf(&b, "loss %d reported %d copies %v\n", s.lossGen, s.closedReported, copies)
	return b.String()
}

// repeat sends datanode id's last full report again, and checks that
// whether or not it is read again (its digest), the replica map ends as
// reading it does.
func (s *indexSim) repeat(id string) {
	m := s.e.m
	r := s.last[id]
	if r == nil {
		return
	}
	m.mu.Lock()
	n := m.s.nodes[id]
	m.mu.Unlock()
	if n == nil {
		return
	}
	gen := n.reportGen
	if _, err := m.Heartbeat(s.e.now, &stratov1.HeartbeatRequest{DatanodeId: id, Report: proto.Clone(r).(*stratov1.ContainerReport)}); err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if n.reportGen == gen {
		s.repeats++
	}
	got := replicaView(&m.s)
	m.applyReportLocked(id, n, proto.Clone(r).(*stratov1.ContainerReport), reportDigest{})
	require.Equal(s.t, replicaView(&m.s), got, "the full report of %s sent again", id)
}

// step applies one random change and says what it was.
func (s *indexSim) step() string {
	id := s.nodes[s.rng.IntN(len(s.nodes))]
	m := s.e.m
	switch k := s.rng.IntN(23); {
	case k >= 20:
		s.repeat(id)
		return "the last full report of " + id + " again"
	case k < 8:
		_, err := m.Heartbeat(s.e.now, &stratov1.HeartbeatRequest{DatanodeId: id, Report: s.report(false)})
		if err != nil {
			require.ErrorIs(s.t, err, ErrUnknownNode)
			s.register(id)
		}
		return "incremental report from " + id
	case k < 12:
		r := s.report(true)
		s.last[id] = proto.Clone(r).(*stratov1.ContainerReport)
		_, err := m.Heartbeat(s.e.now, &stratov1.HeartbeatRequest{DatanodeId: id, Report: r})
		if err != nil {
			s.register(id)
		}
		return "full report from " + id
	case k < 14:
		s.register(id)
		return "registration of " + id
	case k < 15:
		if s.rng.IntN(2) == 0 {
			return fmt.Sprintf("container %d", s.container())
		}
		// An existing container (perhaps with replicas) changes state.
		m.mu.Lock()
		cid := 1 + s.rng.Uint64N(uint64(len(m.s.containers)))
		_, ok := m.s.containers[cid]
		m.mu.Unlock()
		st := []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSING, stratov1.ContainerState_CONTAINER_CLOSED,
			stratov1.ContainerState_CONTAINER_UNHEALTHY}[s.rng.IntN(3)]
		if ok {
			_, _ = s.e.propose(context.Background(), setContainerState(s.e.now, cid, st))
		}
		return fmt.Sprintf("container %d to %v", cid, st)
	case k < 16:
		s.e.now = s.e.now.Add(time.Minute)
		m.BecomeLeader(s.e.now)
		return "a new leadership"
	case k < 17:
		require.NoError(s.t, s.load())
		return "a reload of the first containers' state"
	case k < 18:
		m.ExitSafeMode()
		m.ReplicationWork(s.e.now, 10)
		return "a replication pass"
	default:
		m.mu.Lock()
		var cids []uint64
		if n := m.s.nodes[id]; n != nil {
			cids = slices.Collect(maps.Keys(n.containers))
		}
		m.mu.Unlock()
		if len(cids) > 0 {
			slices.Sort(cids)
			require.NoError(s.t, m.MarkUnhealthy(cids[s.rng.IntN(len(cids))], id))
		}
		return "a replica of " + id + " marked bad"
	}
}

// TestReplicaIndexExact: whatever changes the replica map (reports full
// and incremental, deletions, registrations, leader changes, reloads that
// drop containers, bad replicas, replication passes), the index by
// datanode holds exactly the replica map's containers, and a listing by
// datanode returns them. A full report sent again and not read (its
// digest is the last one's) leaves the map as reading it would.
func TestReplicaIndexExact(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newEnv(t, Options{})
			s := &indexSim{t: t, e: e, rng: rand.New(rand.NewPCG(seed, 1)), nodes: []string{"dn1", "dn2", "dn3", "dn4", "dn5"},
				last: map[string]*stratov1.ContainerReport{}}
			for range 10 {
				s.container()
			}
			snap := e.db.NewSnapshot()
			t.Cleanup(func() { _ = snap.Close() })
			s.load = func() error { return e.m.Load(snap) }
			for range 10 {
				s.container()
			}
			for _, id := range s.nodes[:3] {
				s.register(id)
			}
			for i := range 400 {
				what := s.step()
				checkIndex(t, e.m, fmt.Sprintf("step %d, %s", i, what))
			}
			require.Positive(t, s.repeats, "no full report sent again was left unread")
		})
	}
}

// TestListContainersByDatanodePaged: one datanode's containers are listed
// by ID, page by page from any ID, over more than one hold of the lock,
// with the other filters applied.
func TestListContainersByDatanodePaged(t *testing.T) {
	n := walkStep + 40
	e := closedCluster(t, 4, n)
	var want []uint64 // dn2's: the containers c with (c-1) mod 4 in {0, 2, 3}
	for c := 1; c <= n; c++ {
		if (c-1)%4 != 2 {
			want = append(want, uint64(c))
		}
	}
	ids := func(infos []*stratov1.ContainerInfo) []uint64 {
		var out []uint64
		for _, c := range infos {
			out = append(out, c.Id)
		}
		return out
	}
	var got []uint64
	var after uint64
	for {
		page, reps := e.m.ListContainers(after, 97, ContainerFilter{Datanode: "dn2"}, true)
		require.LessOrEqual(t, len(page), 97)
		require.Len(t, reps, len(page))
		if len(page) == 0 {
			break
		}
		for i, r := range reps {
			require.Equal(t, page[i].Id, r.Container.Id)
			require.Contains(t, r.Replicas, "dn2")
		}
		got = append(got, ids(page)...)
		after = page[len(page)-1].Id
	}
	require.Equal(t, want, got)
	all, _ := e.m.ListContainers(0, 0, ContainerFilter{Datanode: "dn2"}, false)
	require.Equal(t, want, ids(all))
	from, _ := e.m.ListContainers(3, 2, ContainerFilter{Datanode: "dn2"}, false)
	require.Equal(t, []uint64{4, 5}, ids(from), "after an ID it does not hold (3 is not dn2's), up to the limit")
	none, _ := e.m.ListContainers(0, 0, ContainerFilter{Datanode: "dn9"}, false)
	require.Empty(t, none)
	open, _ := e.m.ListContainers(0, 0, ContainerFilter{Datanode: "dn2", States: []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_OPEN}}, false)
	require.Empty(t, open)

	// dn1 leaves: dn2's containers that dn1 also holds are short of a copy.
	require.NoError(t, e.decommission("dn1", false))
	under := ContainerFilter{Datanode: "dn2", Problems: []stratov1.ContainerProblem{stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED}}
	short, _ := e.m.ListContainers(0, 0, under, false)
	var wantShort []uint64
	for c := 1; c <= n; c++ {
		if (c-1)%4 == 0 || (c-1)%4 == 3 { // held by dn1 and dn2
			wantShort = append(wantShort, uint64(c))
		}
	}
	require.Equal(t, wantShort, ids(short))
	page, _ := e.m.ListContainers(wantShort[2], 3, under, false)
	require.Equal(t, wantShort[3:6], ids(page))
}

// walkedSummary is Summary as it is before any pass: every container
// judged now.
func walkedSummary(m *Manager) *stratov1.ClusterSummary {
	m.mu.Lock()
	j := m.s.judged
	m.s.judged = nil
	m.mu.Unlock()
	s := m.Summary()
	m.mu.Lock()
	m.s.judged = j
	m.mu.Unlock()
	return s
}

// TestSummaryFromPass: before a pass the summary judges every container;
// after one it reports the pass's judgement, which is what a walk finds
// when nothing changed since; a datanode that started decommissioning
// after the pass is judged on its own; a new leadership judges again.
func TestSummaryFromPass(t *testing.T) {
	e := closedClusterWith(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 30 * time.Second}, 6, 60)
	require.NoError(t, e.m.MarkUnhealthy(7, "dn1"))
	require.NoError(t, e.decommission("dn2", false))
	// dn6 dies: what it held is short of a copy.
	for range 4 {
		e.now = e.now.Add(10 * time.Second)
		for _, id := range []string{"dn1", "dn2", "dn3", "dn4", "dn5"} {
			e.heartbeat(id, nil)
		}
		e.tick()
	}
	before := e.m.Summary()
	require.Zero(t, before.ProblemsAsOfUnixMs, "no pass yet: judged now")
	requireSummary(t, before, walkedSummary(e.m), "before a pass")
	require.NotZero(t, before.ContainersByProblem["UNDER_REPLICATED"])

	// The pass orders copies and deletions; none has landed.
	passAt := e.now
	e.m.ReplicationWork(e.now, 2)
	e.now = e.now.Add(time.Second)
	after := e.m.Summary()
	require.Equal(t, passAt.UnixMilli(), after.ProblemsAsOfUnixMs)
	walked := walkedSummary(e.m)
	require.Zero(t, walked.ProblemsAsOfUnixMs)
	walked.ProblemsAsOfUnixMs = after.ProblemsAsOfUnixMs
	requireSummary(t, walked, after, "the pass's judgement is a walk's")
	require.Len(t, after.Decommissioning, 1)
	require.NotZero(t, after.Decommissioning[0].Waiting)

	// dn3 starts decommissioning after the pass: judged from its
	// containers alone, as a walk would.
	require.NoError(t, e.decommission("dn3", false))
	after = e.m.Summary()
	require.Equal(t, passAt.UnixMilli(), after.ProblemsAsOfUnixMs)
	walked = walkedSummary(e.m)
	require.Len(t, after.Decommissioning, 2)
	require.True(t, proto.Equal(walked.Decommissioning[1], after.Decommissioning[1]), "%v, walked %v", after.Decommissioning[1], walked.Decommissioning[1])
	require.Equal(t, "dn3", after.Decommissioning[1].DatanodeId)
	require.EqualValues(t, 30, after.Decommissioning[1].Replicas)

	// A leader change forgets the pass.
	e.m.BecomeLeader(e.now)
	require.Zero(t, e.m.Summary().ProblemsAsOfUnixMs)
}

// TestContainersByStateCounted: the summary's counts by state follow the
// containers' changes and a reload.
func TestContainersByStateCounted(t *testing.T) {
	e := newEnv(t, Options{})
	for range 5 {
		_, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
		require.NoError(t, err)
	}
	for id, st := range map[uint64]stratov1.ContainerState{1: stratov1.ContainerState_CONTAINER_CLOSING, 2: stratov1.ContainerState_CONTAINER_CLOSED, 3: stratov1.ContainerState_CONTAINER_CLOSED} {
		_, err := e.propose(context.Background(), setContainerState(e.now, id, st))
		require.NoError(t, err)
	}
	_, err := e.propose(context.Background(), setContainerState(e.now, 3, stratov1.ContainerState_CONTAINER_DELETED))
	require.NoError(t, err)
	want := map[string]int64{"OPEN": 2, "CLOSING": 1, "CLOSED": 1, "DELETED": 1}
	s := e.m.Summary()
	require.EqualValues(t, 5, s.Containers)
	require.Equal(t, want, s.ContainersByState)
	require.NoError(t, e.m.Load(e.db))
	require.Equal(t, want, e.m.Summary().ContainersByState)
}

// The replication pass judges every container for the summary: the
// judgement of a closed replicated container allocates nothing (the
// collector's work slows the heartbeats).
func TestJudgeAllocatesNothing(t *testing.T) {
	e := closedCluster(t, 4, 1)
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	c := e.m.s.containers[1]
	allocs := testing.AllocsPerRun(100, func() {
		e.m.s.judge(c, 2) // two racks in service: the rack rule is checked
	})
	require.Zero(t, allocs)
}

// requireSummary: got is the summary want.
func requireSummary(t *testing.T, want, got *stratov1.ClusterSummary, msg string) {
	t.Helper()
	require.True(t, proto.Equal(want, got), "%s:\nwant %v\n got %v", msg, want, got)
}

// TestSoundContainersJudgedOnce: the pass judges for the summary only the
// containers it did not find sound, and what it reports is still a walk's:
// here mis-replicated ones (three replicas on one rack), an over-replicated
// one, one with an UNHEALTHY replica beside three good ones, and the containers of a dead datanode, among
// sound ones; no datanode is decommissioning (which judges every container).
func TestSoundContainersJudgedOnce(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 30 * time.Second})
	e.m.ExitSafeMode()
	ids := []string{"dn1", "dn2", "dn3", "dn4", "dn5", "dn6", "dn7"}
	for i, id := range ids {
		require.NoError(t, e.m.Register(e.now, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("127.0.0.1:1%d", i), Rack: fmt.Sprintf("/r%d", i/3)},
			Stats:   &stratov1.NodeStats{Capacity: 100 << 30, Remaining: 100 << 30}}))
	}
	reports := map[string]*stratov1.ContainerReport{}
	var cids []uint64
	for c := range 70 {
		res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
		require.NoError(t, err)
		id := res.(*stratov1.ContainerRecord).Id
		cids = append(cids, id)
		_, err = e.propose(context.Background(), setContainerState(e.now, id, stratov1.ContainerState_CONTAINER_CLOSED))
		require.NoError(t, err)
		holders := 3
		if c == 1 || c == 2 {
			holders = 4 // over-replicated (1: until a replica is marked bad)
		}
		for r := range holders {
			dn := ids[(c+r)%len(ids)]
			if reports[dn] == nil {
				reports[dn] = &stratov1.ContainerReport{Full: true}
			}
			reports[dn].Replicas = append(reports[dn].Replicas, &stratov1.ContainerReplica{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED})
		}
	}
	for dn, r := range reports {
		e.heartbeat(dn, r)
	}
	require.NoError(t, e.m.MarkUnhealthy(cids[1], "dn2"))
	// dn7 dies.
	for range 4 {
		e.now = e.now.Add(10 * time.Second)
		for _, id := range ids[:6] {
			e.heartbeat(id, nil)
		}
		e.tick()
	}
	require.Equal(t, stratov1.NodeHealth_NODE_DEAD, e.health("dn7"))
	e.m.ReplicationWork(e.now, 2)
	got := e.m.Summary()
	require.NotZero(t, got.ProblemsAsOfUnixMs)
	walked := walkedSummary(e.m)
	walked.ProblemsAsOfUnixMs = got.ProblemsAsOfUnixMs
	requireSummary(t, walked, got, "the pass's judgement is a walk's")
	for _, p := range []string{"MIS_REPLICATED", "OVER_REPLICATED", "UNHEALTHY", "UNDER_REPLICATED"} {
		require.NotZero(t, got.ContainersByProblem[p], "%s: %v", p, got.ContainersByProblem)
	}
}
