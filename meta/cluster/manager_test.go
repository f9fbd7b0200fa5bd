package cluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

const (
	one   = stratov1.ReplicationFactor_REPLICATION_ONE
	three = stratov1.ReplicationFactor_REPLICATION_THREE
)

// env is a manager whose proposals are applied through Manager.Apply into a
// real Pebble DB (consensus is tested in its own package).
type env struct {
	t   *testing.T
	db  *pebble.DB
	m   *Manager
	now time.Time
	log []*stratov1.ClusterCommand
}

func newEnv(t *testing.T, opts Options) *env {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem(), FormatMajorVersion: pebble.FormatNewest, Logger: quietLogger{}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	e := &env{t: t, db: db, now: time.Unix(1_700_000_000, 0)}
	e.m, err = New(opts, e.propose)
	require.NoError(t, err)
	return e
}

func (e *env) propose(_ context.Context, cmd *stratov1.ClusterCommand) (proto.Message, error) {
	e.log = append(e.log, cmd)
	return applyTo(e.db, e.m, cmd)
}

func applyTo(db *pebble.DB, m *Manager, cmd *stratov1.ClusterCommand) (proto.Message, error) {
	b := db.NewIndexedBatch()
	defer b.Close()
	res, err := m.Apply(cmd, b)
	if err != nil {
		return nil, err
	}
	return res, b.Commit(pebble.NoSync)
}

func (e *env) register(ids ...string) {
	for _, id := range ids {
		require.NoError(e.t, e.m.Register(e.now, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1" + id[len(id)-1:]},
			Stats:   &stratov1.NodeStats{Capacity: 100 << 30, Remaining: 100 << 30},
		}))
	}
}

func (e *env) heartbeat(id string, report *stratov1.ContainerReport) *stratov1.HeartbeatResponse {
	resp, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: id, Report: report})
	require.NoError(e.t, err)
	return resp
}

func (e *env) tick() {
	for _, cmd := range e.m.Tick(e.now) {
		_, err := e.propose(context.Background(), cmd)
		require.NoError(e.t, err)
	}
}

// decommission decommissions (or recommissions) a datanode, through the
// env's proposals.
func (e *env) decommission(id string, recommission bool) error {
	return e.m.Decommission(context.Background(), e.now, id, recommission)
}

func (e *env) alloc(repl stratov1.ReplicationFactor, ex Exclude) *Allocation {
	a, err := e.m.Allocate(context.Background(), e.now, Replicated(repl), 0, ex)
	require.NoError(e.t, err)
	return a
}

// A datanode registers with an ID and a data address. (Health and
// registration are testdata/dead_datanode.txt's.)
func TestRegisterNeedsIDAndAddress(t *testing.T) {
	e := newEnv(t, Options{})
	require.ErrorIs(t, e.m.Register(e.now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1"}}), ErrInvalid)
	require.ErrorIs(t, e.m.Register(e.now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{DataAddr: "x:1"}}), ErrInvalid)
}

func TestOptionsValidate(t *testing.T) {
	_, err := New(Options{StaleAfter: time.Minute, DeadAfter: time.Second}, nil)
	require.ErrorContains(t, err, "StaleAfter")
	_, err = New(Options{BlockSize: 10, ContainerSize: 5}, nil)
	require.ErrorContains(t, err, "BlockSize")
	_, err = New(Options{CloseThreshold: 1.5}, nil)
	require.ErrorContains(t, err, "CloseThreshold")
}

func TestAllocate(t *testing.T) {
	e := newEnv(t, Options{LocalIDBatch: 5})
	e.register("dn1", "dn2")
	_, err := e.m.Allocate(context.Background(), e.now, Replicated(three), 0, Exclude{})
	require.ErrorIs(t, err, ErrNoPipeline)
	require.ErrorContains(t, err, "2 healthy datanodes")
	_, err = e.m.Allocate(context.Background(), e.now, Replicated(2), 0, Exclude{})
	require.ErrorIs(t, err, ErrInvalid)

	e.register("dn3")
	seen := map[[2]uint64]bool{}
	containers := map[uint64]bool{}
	for i := 0; i < 20; i++ {
		a := e.alloc(three, Exclude{})
		require.Len(t, a.Members, 3)
		key := [2]uint64{a.ContainerID, a.LocalID}
		require.False(t, seen[key], "block %v allocated twice", key)
		seen[key] = true
		containers[a.ContainerID] = true
	}
	byRepl := map[stratov1.ReplicationFactor]int{}
	for _, p := range e.m.Pipelines() {
		byRepl[p.Replication]++
	}
	require.Equal(t, map[stratov1.ReplicationFactor]int{three: 1, one: 3}, byRepl,
		"one THREE pipeline (never two on the same nodes) and one ONE pipeline per datanode")
	require.Len(t, containers, 3, "allocations spread over the open containers of the pipeline")

	// 20 blocks, batches of 5: four reservations, never one per block.
	reservations := 0
	for _, c := range e.log {
		if c.GetReserveLocalIds() != 0 {
			reservations++
		}
	}
	require.Equal(t, 4, reservations)

	a := e.alloc(one, Exclude{})
	require.Len(t, a.Members, 1)
	require.Equal(t, one, a.Pipeline.Replication)
}

// A block reserves its writer's size hint in its container, between
// MinBlockReservation and BlockSize: small objects do not close a container
// after a few blocks as whole-block reservations would.
func TestAllocateReservesTheSizeHint(t *testing.T) {
	e := newEnv(t, Options{ContainerSize: 10 << 20, BlockSize: 1 << 20, MinBlockReservation: 64 << 10, OpenContainersPerPipeline: 1})
	e.register("dn1", "dn2", "dn3")
	allocSize := func(size int64) uint64 {
		a, err := e.m.Allocate(context.Background(), e.now, Replicated(three), size, Exclude{})
		require.NoError(t, err)
		return a.ContainerID
	}
	// 1 KiB hints reserve 64 KiB each: 9 MiB (90%) take 144 of them.
	first := allocSize(1 << 10)
	for i := 1; i < 143; i++ {
		require.Equal(t, first, allocSize(1<<10), "block %d", i)
	}
	require.Equal(t, first, allocSize(1<<10), "the 144th reaches 90%")
	second := allocSize(100 << 10)
	require.NotEqual(t, first, second, "full after 144")
	// A hint above the block size, or none, reserves a whole block: 9 of
	// them fill the next container (100 KiB are already reserved).
	for i := 0; i < 4; i++ {
		require.Equal(t, second, allocSize(64<<20))
		require.Equal(t, second, allocSize(0))
	}
	require.Equal(t, second, allocSize(-1), "the ninth whole block reaches 90%")
	require.NotEqual(t, second, allocSize(1<<10))
}

func TestAllocateExcludesAndClosesFullContainers(t *testing.T) {
	e := newEnv(t, Options{ContainerSize: 10 << 20, BlockSize: 1 << 20, OpenContainersPerPipeline: 1, FullCloseDelay: 10 * time.Second})
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	first := a.ContainerID
	for i := 0; i < 8; i++ {
		require.Equal(t, first, e.alloc(three, Exclude{}).ContainerID)
	}
	// The ninth block reaches 90%: the container takes no more blocks, but
	// stays open while its writers finish.
	require.NotEqual(t, first, e.alloc(three, Exclude{}).ContainerID)
	info, _, err := e.m.Replicas(first)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_OPEN, info.State)
	e.now = e.now.Add(e.m.Options().FullCloseDelay / 2)
	e.tick()
	for _, id := range a.Pipeline.Members {
		require.Empty(t, e.heartbeat(id, nil).Commands)
	}
	// FullCloseDelay later it closes, and its members are told.
	e.now = e.now.Add(e.m.Options().FullCloseDelay)
	e.tick()
	info, _, err = e.m.Replicas(first)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, info.State)
	for _, id := range a.Pipeline.Members {
		cmds := e.heartbeat(id, nil).Commands
		require.Len(t, cmds, 1)
		require.Equal(t, first, cmds[0].GetCloseContainer().ContainerId)
	}
	e.tick()
	require.Empty(t, e.heartbeat(a.Pipeline.Members[0], nil).Commands, "closed once")

	// Excluding a member forces a pipeline without it.
	e.register("dn4")
	bad := a.Pipeline.Members[0]
	b := e.alloc(three, Exclude{Datanodes: []string{bad}})
	require.NotContains(t, b.Pipeline.Members, bad)
	require.NotEqual(t, a.Pipeline.Id, b.Pipeline.Id)
	require.Contains(t, b.Pipeline.Members, "dn4")

	// Excluding a container picks or makes another.
	c := e.alloc(three, Exclude{Containers: []uint64{b.ContainerID}, Pipelines: []uint64{a.Pipeline.Id}})
	require.NotEqual(t, b.ContainerID, c.ContainerID)
}

func TestLoadRestoresDurableState(t *testing.T) {
	e := newEnv(t, Options{LocalIDBatch: 3})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3")
	var last uint64
	for i := 0; i < 5; i++ {
		last = e.alloc(three, Exclude{}).LocalID
	}
	m2, err := New(Options{LocalIDBatch: 3}, e.propose)
	require.NoError(t, err)
	require.NoError(t, m2.Load(e.db))
	require.Len(t, m2.Pipelines(), len(e.m.Pipelines()))
	for i, p := range e.m.Pipelines() {
		require.True(t, proto.Equal(p, m2.Pipelines()[i]))
	}
	require.Equal(t, len(e.m.Containers(0, 0)), len(m2.Containers(0, 0)))
	// A new leader never hands out an ID the old one may have used.
	e.m = m2
	m2.ExitSafeMode()
	e.register("dn1", "dn2", "dn3")
	require.Greater(t, e.alloc(three, Exclude{}).LocalID, last)
}

func TestApplyIsDeterministic(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3")
	for i := 0; i < 30; i++ {
		e.alloc(three, Exclude{})
		e.alloc(one, Exclude{})
	}
	other := newEnv(t, Options{})
	for _, cmd := range e.log {
		_, err := applyTo(other.db, other.m, cmd)
		require.NoError(t, err)
	}
	require.Equal(t, dump(t, e.db), dump(t, other.db))
}

func dump(t *testing.T, db *pebble.DB) map[string]string {
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	out := map[string]string{}
	for it.First(); it.Valid(); it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	return out
}

func TestApplyRejectsBadTransitions(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1")
	a := e.alloc(one, Exclude{})
	set := func(id uint64, s stratov1.ContainerState) error {
		_, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{
			SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: s}}})
		return err
	}
	require.ErrorIs(t, set(999, stratov1.ContainerState_CONTAINER_CLOSED), ErrNotFound)
	require.NoError(t, set(a.ContainerID, stratov1.ContainerState_CONTAINER_CLOSED))
	require.ErrorIs(t, set(a.ContainerID, stratov1.ContainerState_CONTAINER_OPEN), ErrBadTransition)
}

func TestChooseMembers(t *testing.T) {
	cands := []Candidate{{ID: "a", Pipelines: 2, Free: 100}, {ID: "b", Pipelines: 0, Free: 10}, {ID: "c", Pipelines: 1, Free: 50}, {ID: "d", Pipelines: 0, Free: 20}, {ID: "e", Pipelines: 1, Free: 60}}
	got, err := ChooseMembers(cands, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"d", "b", "e"}, got)
	_, err = ChooseMembers(cands[:3], 3, 2)
	require.ErrorContains(t, err, "2 healthy datanodes")
	got, err = ChooseMembers(cands[:1], 1, 3)
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, got)
	_, err = ChooseMembers(cands[:1], 1, 2)
	require.Error(t, err, "a is at its limit")
}

// closedCluster builds n datanodes holding k closed containers at
// replication three, placed round-robin.
func closedCluster(t *testing.T, n, k int) *env {
	return closedClusterWith(t, Options{}, n, k)
}

// closedClusterWith is closedCluster with a manager of options opts.
func closedClusterWith(t *testing.T, opts Options, n, k int) *env {
	e := newEnv(t, opts)
	e.m.ExitSafeMode()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("dn%d", i+1)
	}
	e.register(ids...)
	reports := map[string]*stratov1.ContainerReport{}
	for c := 0; c < k; c++ {
		res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
		require.NoError(t, err)
		id := res.(*stratov1.ContainerRecord).Id
		_, err = e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
		require.NoError(t, err)
		for r := 0; r < 3; r++ {
			dn := ids[(c+r)%n]
			if reports[dn] == nil {
				reports[dn] = &stratov1.ContainerReport{Full: true}
			}
			reports[dn].Replicas = append(reports[dn].Replicas, &stratov1.ContainerReplica{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED})
		}
	}
	for dn, r := range reports {
		e.heartbeat(dn, r)
	}
	return e
}

// TestClosingIsNotMissing: a container meta has closed whose replicas
// still report CLOSING (their CLOSED reports are a heartbeat away) is not
// missing, nor one no datanode has reported yet (imported CLOSED) until a
// member of its pipeline reports in full without it; once its only holders
// are dead it is.
func TestClosingIsNotMissing(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3")
	pres, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddPipeline{
		AddPipeline: &stratov1.PipelineRecord{Id: 1, Replication: three, Members: []string{"dn1", "dn2", "dn3"}}}})
	require.NoError(t, err)
	pipeline := pres.(*stratov1.PipelineRecord).Id
	closed := func() uint64 {
		res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three, PipelineId: pipeline}}})
		require.NoError(t, err)
		id := res.(*stratov1.ContainerRecord).Id
		for _, st := range []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSING, stratov1.ContainerState_CONTAINER_CLOSED} {
			_, err = e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: st}}})
			require.NoError(t, err)
		}
		return id
	}
	imported := closed()
	rep := e.m.ReplicationWork(e.now, 100)
	require.Empty(t, rep.Missing, "no report yet: the holders report it in their next full report")
	e.now = e.now.Add(time.Hour)
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(dn, &stratov1.ContainerReport{}) // incremental reports say nothing of it
	}
	require.Empty(t, e.m.ReplicationWork(e.now, 100).Missing, "no full report since")
	e.now = e.now.Add(time.Second)
	e.heartbeat("dn2", &stratov1.ContainerReport{Full: true})
	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, []uint64{imported}, rep.Missing, "a holder reported in full without it")
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(dn, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: imported, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	}
	require.Empty(t, e.m.ReplicationWork(e.now, 100).Missing)

	res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
	require.NoError(t, err)
	id := res.(*stratov1.ContainerRecord).Id
	_, err = e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	require.NoError(t, err)
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(dn, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSING}}})
	}
	rep = e.m.ReplicationWork(e.now, 100)
	require.Empty(t, rep.Missing, "replicas closing on live datanodes hold the data")
	require.Zero(t, rep.UnderReplicated)

	// The holders die before any reports CLOSED: now it is missing.
	e.now = e.now.Add(10 * time.Minute)
	e.register("dn4")
	e.tick()
	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, []uint64{imported, id}, rep.Missing)
}

// quietLogger keeps pebble's informational lines out of test output.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)      {}
func (quietLogger) Errorf(f string, a ...any) { fmt.Printf(f+"\n", a...) }
func (quietLogger) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

func TestPipelinesSpreadOverTheCluster(t *testing.T) {
	e := newEnv(t, Options{PipelinesPerNode: 2})
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("dn%02d", i)
	}
	e.register(ids...)
	used := map[string]int{}
	for i := 0; i < 60; i++ {
		for _, m := range e.alloc(three, Exclude{}).Members {
			used[m.Id]++
		}
	}
	require.Len(t, used, 10, "every datanode receives blocks")
	perNode := map[string]int{}
	for _, p := range e.m.Pipelines() {
		if p.Replication == three {
			for _, m := range p.Members {
				perNode[m]++
			}
		}
	}
	for id, n := range perNode {
		require.LessOrEqual(t, n, 2, "datanode %s over its pipeline limit", id)
	}
}

func TestMarkUnhealthy(t *testing.T) {
	e := newEnv(t, Options{})
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	require.ErrorIs(t, e.m.MarkUnhealthy(a.ContainerID, "dn1"), ErrNotFound) // not reported yet
	rep := &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_OPEN}}}
	e.heartbeat("dn1", rep)
	require.NoError(t, e.m.MarkUnhealthy(a.ContainerID, "dn1"))
	_, reps, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, reps["dn1"].State)
	// The node's next reports do not clear the verdict...
	e.heartbeat("dn1", rep)
	_, reps, err = e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, reps["dn1"].State)
	// ...until the replica is gone from it; a new copy starts clean.
	e.heartbeat("dn1", &stratov1.ContainerReport{Deleted: []uint64{a.ContainerID}})
	e.heartbeat("dn1", rep)
	_, reps, err = e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_OPEN, reps["dn1"].State)
	require.ErrorIs(t, e.m.MarkUnhealthy(12345, "dn1"), ErrNotFound)
}

func TestLocationsFollowReplicas(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 20 * time.Second})
	e.register("dn1", "dn2", "dn3", "dn4")
	a := e.alloc(three, Exclude{})
	stored := a.Members
	require.Equal(t, stored, e.m.Locations(a.ContainerID, stored), "nothing reported yet")
	closed := &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_CLOSED}}}
	// One member reported (the others will at their next heartbeat): every
	// member is still listed, the reporting one first.
	e.heartbeat(stored[2].Id, closed)
	got := e.m.Locations(a.ContainerID, stored)
	require.Len(t, got, 3)
	require.Equal(t, stored[2].Id, got[0].Id)
	var spare string
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		if !slices.ContainsFunc(stored, func(d *stratov1.DatanodeDetails) bool { return d.Id == id }) {
			spare = id
			continue
		}
		e.heartbeat(id, closed)
	}
	ids := func(ds []*stratov1.DatanodeDetails) (out []string) {
		for _, d := range ds {
			out = append(out, d.Id)
		}
		return out
	}
	require.Equal(t, ids(stored), ids(e.m.Locations(a.ContainerID, stored)))
	// The first member dies; a copy lands on the spare node.
	e.now = e.now.Add(25 * time.Second)
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		if id != stored[0].Id {
			e.heartbeat(id, nil)
		}
	}
	e.heartbeat(spare, closed)
	e.tick()
	require.Equal(t, []string{stored[1].Id, stored[2].Id, spare}, ids(e.m.Locations(a.ContainerID, stored)))
}

// A pipeline closed without its open containers (a leader that lost its
// leadership between the two proposals) has them closed at the next tick,
// with close commands to the members: a container left open would never
// close, nor be copied off a decommissioning holder.
func TestOpenContainerOfClosedPipelineCloses(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	_, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_ClosePipeline{ClosePipeline: a.Pipeline.Id}})
	require.NoError(t, err)
	e.tick()
	infos, _ := e.m.ListContainers(0, 0, ContainerFilter{}, false)
	require.Len(t, infos, 1)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, infos[0].State)
	for _, id := range a.Pipeline.Members {
		cmds := e.heartbeat(id, nil).Commands
		require.Len(t, cmds, 1, id)
		require.Equal(t, a.ContainerID, cmds[0].GetCloseContainer().GetContainerId(), id)
	}
}

func TestChooseMembersRacks(t *testing.T) {
	cands := []Candidate{
		{ID: "a", Free: 60, Rack: "/r1"}, {ID: "b", Free: 50, Rack: "/r1"}, {ID: "c", Free: 40, Rack: "/r1"},
		{ID: "d", Free: 30, Rack: "/r2"}, {ID: "e", Free: 20, Rack: "/r2"}, {ID: "f", Free: 10, Rack: "/r3"},
	}
	perRack := func(ids []string) map[string]int {
		n := map[string]int{}
		for _, id := range ids {
			n[cands[slices.IndexFunc(cands, func(c Candidate) bool { return c.ID == id })].Rack]++
		}
		return n
	}
	// Two racks: a THREE pipeline is two and one, the best of each first.
	got, err := ChooseMembers(cands[:5], 3, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "b"}, got)
	// Three racks: one in each; five members: 2, 2, 1.
	got, err = ChooseMembers(cands, 3, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "f"}, got)
	got, err = ChooseMembers(cands, 5, 10)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"/r1": 2, "/r2": 2, "/r3": 1}, perRack(got))
	// A rack with no candidate left is skipped; the pipeline limit still
	// applies before racks.
	got, err = ChooseMembers(cands, 6, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "d", "f", "b", "e", "c"}, got)
	cands[3].Pipelines, cands[4].Pipelines = 2, 2
	got, err = ChooseMembers(cands, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "f", "b"}, got)
	// One rack: the plain order (fewest pipelines, most free space, ID);
	// no rack is DefaultRack.
	one := []Candidate{{ID: "x", Free: 1, Rack: DefaultRack}, {ID: "y", Free: 3, Rack: DefaultRack}, {ID: "z", Free: 2}}
	got, err = ChooseMembers(one, 3, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"y", "z", "x"}, got)
}

// TestChooseMembersSpansRacks: on random candidates, ChooseMembers's
// pipeline spans min(size, racks with a candidate under the limit) racks,
// and with one rack it is the first size of the plain order.
func TestChooseMembersSpansRacks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var cands []Candidate
		racks := 1 + rng.IntN(4)
		for i := range 1 + rng.IntN(12) {
			cands = append(cands, Candidate{ID: fmt.Sprintf("n%02d", i), Pipelines: rng.IntN(3), Free: rng.Int64N(5), Rack: fmt.Sprintf("/r%d", rng.IntN(racks))})
		}
		size, limit := 1+rng.IntN(6), 1+rng.IntN(3)
		got, err := ChooseMembers(cands, size, limit)
		usable := map[string]bool{}
		n := 0
		for _, c := range cands {
			if c.Pipelines < limit {
				usable[c.Rack] = true
				n++
			}
		}
		if n < size {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Len(t, got, size)
		spanned := map[string]bool{}
		for _, id := range got {
			spanned[cands[slices.IndexFunc(cands, func(c Candidate) bool { return c.ID == id })].Rack] = true
		}
		require.Len(t, spanned, min(size, len(usable)), "%v %d %d → %v", cands, size, limit, got)
		require.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), size)
	}
}

// TestClosingStep: a tick judges at most ClosingStep CLOSING containers, so
// that a backlog holds the lock briefly; the rest close on later ticks.
func TestClosingStep(t *testing.T) {
	e := newEnv(t, Options{ClosingStep: 3, OpenContainersPerPipeline: 1})
	e.register("dn1", "dn2", "dn3")
	var ids []uint64
	for range 10 {
		a := e.alloc(three, Exclude{})
		ids = append(ids, a.ContainerID)
		cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
		require.NoError(t, err)
		for _, c := range cmds {
			_, err := e.propose(context.Background(), c)
			require.NoError(t, err)
		}
	}
	require.Equal(t, 10, e.m.Closing())
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		rep := &stratov1.ContainerReport{}
		for _, id := range ids {
			rep.Replicas = append(rep.Replicas, &stratov1.ContainerReplica{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED})
		}
		e.heartbeat(dn, rep)
	}
	ticks := 0
	for e.m.Closing() > 0 {
		ticks++
		require.LessOrEqual(t, ticks, 4, "10 containers at 3 a tick")
		closed := 0
		for _, cmd := range e.m.Tick(e.now) {
			if cmd.GetSetContainerState().GetState() == stratov1.ContainerState_CONTAINER_CLOSED {
				closed++
			}
			_, err := e.propose(context.Background(), cmd)
			require.NoError(t, err)
		}
		require.LessOrEqual(t, closed, 3)
		require.Positive(t, closed)
	}
	for _, id := range ids {
		info, _, err := e.m.Replicas(id)
		require.NoError(t, err)
		require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSED, info.State)
	}
}
