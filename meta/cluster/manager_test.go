package cluster

import (
	"context"
	"fmt"
	"maps"
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
	// reports are the full container reports closedCluster's datanodes sent.
	reports map[string]*stratov1.ContainerReport
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

// opState is datanode id's operational state as the manager lists it
// (unspecified when it is not registered).
func (e *env) opState(id string) stratov1.NodeOpState {
	for _, d := range e.m.Datanodes() {
		if d.GetDetails().GetId() == id {
			return d.GetOpState()
		}
	}
	return stratov1.NodeOpState_NODE_OP_STATE_UNSPECIFIED
}

func (e *env) alloc(repl stratov1.ReplicationFactor, ex Exclude) *Allocation {
	a, err := e.m.Allocate(context.Background(), e.now, Replicated(repl), 0, ex)
	require.NoError(e.t, err)
	return a
}

func TestOptionsValidate(t *testing.T) {
	_, err := New(Options{StaleAfter: time.Minute, DeadAfter: time.Second}, nil)
	require.ErrorContains(t, err, "StaleAfter")
	_, err = New(Options{BlockSize: 10, ContainerSize: 5}, nil)
	require.ErrorContains(t, err, "BlockSize")
	_, err = New(Options{CloseThreshold: 1.5}, nil)
	require.ErrorContains(t, err, "CloseThreshold")
}

func TestRegisterHeartbeatHealth(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 30 * time.Second})
	require.ErrorIs(t, e.m.Register(e.now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1"}}), ErrInvalid)

	resp, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: "ghost"})
	require.ErrorIs(t, err, ErrUnknownNode)
	require.True(t, resp.Reregister)

	e.register("dn1", "dn2")
	health := func() map[string]stratov1.NodeHealth {
		out := map[string]stratov1.NodeHealth{}
		for _, d := range e.m.Datanodes() {
			out[d.Details.Id] = d.Health
		}
		return out
	}
	require.Equal(t, map[string]stratov1.NodeHealth{"dn1": stratov1.NodeHealth_NODE_HEALTHY, "dn2": stratov1.NodeHealth_NODE_HEALTHY}, health())

	e.now = e.now.Add(12 * time.Second)
	e.heartbeat("dn1", nil)
	e.tick()
	require.Equal(t, stratov1.NodeHealth_NODE_HEALTHY, health()["dn1"])
	require.Equal(t, stratov1.NodeHealth_NODE_STALE, health()["dn2"])

	e.now = e.now.Add(20 * time.Second)
	e.heartbeat("dn1", nil)
	e.tick()
	require.Equal(t, stratov1.NodeHealth_NODE_DEAD, health()["dn2"])

	// A dead node that heartbeats again is healthy again.
	e.heartbeat("dn2", nil)
	require.Equal(t, stratov1.NodeHealth_NODE_HEALTHY, health()["dn2"])
}

func TestSafeMode(t *testing.T) {
	e := newEnv(t, Options{SafeModeMinDatanodes: 3})
	_, err := e.m.Allocate(context.Background(), e.now, Replicated(three), 0, Exclude{})
	require.ErrorIs(t, err, ErrSafeMode)
	require.ErrorContains(t, err, "0 of 3 datanodes")
	e.register("dn1", "dn2")
	require.True(t, e.m.SafeMode().InSafeMode)
	e.register("dn3")
	require.False(t, e.m.SafeMode().InSafeMode)

	// After a restart with containers on record, meta waits for a replica
	// of every CLOSED container.
	e2 := newEnv(t, Options{SafeModeMinDatanodes: 1, SafeModeReplicaFraction: 1})
	e2.m.ExitSafeMode()
	e2.register("dn1")
	a := e2.alloc(one, Exclude{})
	_, err = e2.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{
		SetContainerState: &stratov1.ContainerStateChange{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	require.NoError(t, err)
	restart := func(e *env) *Manager {
		m, err := New(Options{SafeModeMinDatanodes: 1, SafeModeReplicaFraction: 1}, e.propose)
		require.NoError(t, err)
		require.NoError(t, m.Load(e.db))
		require.NoError(t, m.Register(e.now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1", DataAddr: "x:1"}}))
		return m
	}
	m2 := restart(e2)
	st := m2.SafeMode()
	require.True(t, st.InSafeMode)
	require.Less(t, st.ReplicaFraction, 1.0)
	require.NoError(t, m2.Register(e2.now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1", DataAddr: "x:1"},
		Report: &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_CLOSED}}}}))
	require.False(t, m2.SafeMode().InSafeMode)

	// OPEN containers are not waited for: a datanode makes a container at
	// its first write, so one allocated and never written is on no
	// datanode, and waiting for it kept a new meta leader in safe mode
	// for good (test/netfault: a leader killed before every open
	// container had been written to).
	e3 := newEnv(t, Options{SafeModeMinDatanodes: 1, SafeModeReplicaFraction: 1})
	e3.m.ExitSafeMode()
	e3.register("dn1")
	e3.alloc(one, Exclude{})
	require.False(t, restart(e3).SafeMode().InSafeMode)
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

func TestDeadNodeClosesPipeline(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 20 * time.Second})
	e.register("dn1", "dn2", "dn3", "dn4")
	a := e.alloc(three, Exclude{})
	victim := a.Pipeline.Members[1]
	e.now = e.now.Add(25 * time.Second)
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		if id != victim {
			e.heartbeat(id, nil)
		}
	}
	e.tick()
	ps := e.m.Pipelines()
	require.Equal(t, stratov1.PipelineState_PIPELINE_CLOSED, ps[0].State)
	info, _, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, info.State)
	// Survivors get a close command; the dead node gets nothing.
	for _, id := range a.Pipeline.Members {
		if id == victim {
			continue
		}
		var closed []uint64
		for _, c := range e.heartbeat(id, nil).Commands {
			closed = append(closed, c.GetCloseContainer().ContainerId)
		}
		require.Contains(t, closed, a.ContainerID)
	}
	// The next allocation builds a new pipeline of healthy nodes.
	b := e.alloc(three, Exclude{})
	require.NotContains(t, b.Pipeline.Members, victim)
	require.NotEqual(t, a.Pipeline.Id, b.Pipeline.Id)
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
	e := newEnv(t, Options{})
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
	e.reports = reports
	return e
}

// reregister registers closedCluster's datanodes again with their full
// reports, as they do with a new leader, and ends safe mode.
func (e *env) reregister() {
	for _, id := range slices.Sorted(maps.Keys(e.reports)) {
		require.NoError(e.t, e.m.Register(e.now, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1" + id[len(id)-1:]},
			Stats:   &stratov1.NodeStats{Capacity: 100 << 30, Remaining: 100 << 30},
			Report:  e.reports[id],
		}))
	}
	e.m.ExitSafeMode()
}

// reload replaces the manager with a new one loaded from the stored state
// (a restart, or a follower that becomes leader), and reregisters.
func (e *env) reload() {
	m, err := New(Options{}, e.propose)
	require.NoError(e.t, err)
	require.NoError(e.t, m.Load(e.db))
	e.m = m
	e.reregister()
}

func TestReplicationAfterDecommission(t *testing.T) {
	e := closedCluster(t, 4, 8)
	rep := e.m.ReplicationWork(e.now, 100)
	require.Zero(t, rep.UnderReplicated)
	require.NoError(t, e.decommission("dn1", false))
	require.ErrorIs(t, e.decommission("nope", false), ErrNotFound)

	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 6, rep.UnderReplicated, "dn1 holds 6 of 8 containers")
	require.Equal(t, 6, rep.Scheduled)
	require.Empty(t, rep.Decommissioned)
	// A second pass schedules nothing new while those are in flight.
	require.Zero(t, e.m.ReplicationWork(e.now, 100).Scheduled)

	// Sources execute; each target reports its new replica.
	var cmds []*stratov1.ReplicateContainerCommand
	sources := map[string]int{}
	for _, src := range []string{"dn1", "dn2", "dn3", "dn4"} {
		for _, c := range e.heartbeat(src, nil).Commands {
			rc := c.GetReplicateContainer()
			require.NotNil(t, rc)
			require.NotEqual(t, "dn1", rc.Target.Id, "never a decommissioning target")
			cmds = append(cmds, rc)
			sources[src]++
		}
	}
	require.Greater(t, len(sources), 1, "copies spread over the holders")
	for _, rc := range cmds {
		e.heartbeat(rc.Target.Id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: rc.ContainerId, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	}
	rep = e.m.ReplicationWork(e.now, 100)
	require.Zero(t, rep.UnderReplicated)
	require.Equal(t, []string{"dn1"}, rep.Decommissioned)
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONING, e.opState("dn1"), "recorded only when the server proposes it")
	_, err := e.propose(context.Background(), Decommissioned(e.now, "dn1"))
	require.NoError(t, err)
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONED, e.opState("dn1"))
	require.Empty(t, e.m.ReplicationWork(e.now, 100).Decommissioned)
}

// A datanode's operational state is durable: a new leadership (which
// drops the soft state) and a manager loaded from the stored state both
// find it when the datanode registers again; transitions the state machine
// forbids are refused in apply; recommission clears the record.
func TestDecommissionIsDurable(t *testing.T) {
	e := closedCluster(t, 4, 8)
	require.NoError(t, e.decommission("dn1", false))
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONING, e.opState("dn1"))

	// Another leadership: the nodes re-register.
	e.m.BecomeLeader(e.now)
	e.reregister()
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONING, e.opState("dn1"))
	require.Equal(t, stratov1.NodeOpState_NODE_IN_SERVICE, e.opState("dn2"))
	a := e.alloc(three, Exclude{})
	require.NotContains(t, a.Pipeline.Members, "dn1", "a decommissioning datanode takes no writes")

	// Another manager (a restart, or a follower that becomes leader)
	// loaded from the stored state.
	e.reload()
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONING, e.opState("dn1"))

	// The end of a decommission is recorded, and survives the same way.
	_, err := e.propose(context.Background(), Decommissioned(e.now, "dn1"))
	require.NoError(t, err)
	e.reload()
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONED, e.opState("dn1"))
	require.EqualValues(t, 3, e.m.Summary().DatanodesByOpState["IN_SERVICE"], "dn1 is not counted in service")

	// Forbidden: decommissioned from service (a stale leader's proposal
	// after a recommission), decommissioning from decommissioned.
	_, err = e.propose(context.Background(), Decommissioned(e.now, "dn2"))
	require.ErrorIs(t, err, ErrBadTransition)
	_, err = e.propose(context.Background(), setNodeOpState(e.now, "dn1", stratov1.NodeOpState_NODE_DECOMMISSIONING))
	require.ErrorIs(t, err, ErrBadTransition)
	require.NoError(t, e.decommission("dn1", false), "decommissioning a decommissioned datanode is no error")
	require.Equal(t, stratov1.NodeOpState_NODE_DECOMMISSIONED, e.opState("dn1"))

	// Recommission: back in service, and the record is gone.
	require.NoError(t, e.decommission("dn1", true))
	require.Equal(t, stratov1.NodeOpState_NODE_IN_SERVICE, e.opState("dn1"))
	_, closer, err := e.db.Get(nodeOpKey("dn1"))
	require.ErrorIs(t, err, pebble.ErrNotFound)
	if closer != nil {
		_ = closer.Close()
	}
	require.ErrorIs(t, e.decommission("nope", false), ErrNotFound)
}

func TestReplicationLimitsAndMissing(t *testing.T) {
	e := closedCluster(t, 4, 8)
	e.now = e.now.Add(10 * time.Minute)
	for _, id := range []string{"dn2", "dn3", "dn4"} {
		e.heartbeat(id, nil)
	}
	e.tick() // dn1 is dead
	rep := e.m.ReplicationWork(e.now, 1)
	require.Equal(t, 6, rep.UnderReplicated)
	require.LessOrEqual(t, rep.Scheduled, 3, "limit 1 per datanode as source and 1 as target, 3 live nodes")
	require.Equal(t, 3, rep.Scheduled, "a node's pushes do not count against its imports: every live node pushes one and receives one")
	require.Positive(t, rep.BlockedByLimits)
	require.Empty(t, rep.Missing)
	imports := map[string]int{}
	for _, id := range []string{"dn2", "dn3", "dn4"} {
		pushes := 0
		for _, c := range e.heartbeat(id, nil).Commands {
			if rc := c.GetReplicateContainer(); rc != nil {
				pushes++
				imports[rc.Target.Id]++
			}
		}
		require.LessOrEqual(t, pushes, 1, "%s pushes within the limit", id)
	}
	for id, n := range imports {
		require.LessOrEqual(t, n, 1, "%s receives within the limit", id)
	}

	// Lose every holder of a container: reported missing, loudly.
	e.now = e.now.Add(10 * time.Minute)
	e.heartbeat("dn4", nil)
	e.tick()
	rep = e.m.ReplicationWork(e.now, 100)
	require.NotEmpty(t, rep.Missing)
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

func TestClientClosesContainer(t *testing.T) {
	e := newEnv(t, Options{OpenContainersPerPipeline: 2})
	e.register("dn1", "dn2", "dn3", "dn4")
	a := e.alloc(three, Exclude{})

	_, err := e.m.CloseContainer(e.now, 999, "")
	require.ErrorIs(t, err, ErrNotFound)

	// Without a failed node only that container closes.
	cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	require.Len(t, cmds, 1)
	for _, c := range cmds {
		_, err := e.propose(context.Background(), c)
		require.NoError(t, err)
	}
	info, _, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, info.State)
	for _, id := range a.Pipeline.Members {
		require.Equal(t, a.ContainerID, e.heartbeat(id, nil).Commands[0].GetCloseContainer().ContainerId)
	}
	// Asking again changes nothing.
	cmds, err = e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	require.Empty(t, cmds)

	// Naming a failed member closes the whole pipeline; new blocks avoid it.
	b := e.alloc(three, Exclude{Containers: []uint64{a.ContainerID}})
	bad := b.Pipeline.Members[2]
	cmds, err = e.m.CloseContainer(e.now, b.ContainerID, bad)
	require.NoError(t, err)
	require.Greater(t, len(cmds), 1)
	for _, c := range cmds {
		_, err := e.propose(context.Background(), c)
		require.NoError(t, err)
	}
	for _, p := range e.m.Pipelines() {
		if p.Id == b.Pipeline.Id {
			require.Equal(t, stratov1.PipelineState_PIPELINE_CLOSED, p.State)
		}
	}
	c := e.alloc(three, Exclude{Datanodes: []string{bad}})
	require.NotContains(t, c.Pipeline.Members, bad)
	require.NotEqual(t, b.Pipeline.Id, c.Pipeline.Id)
}

func TestReplicaReportClosesFullContainer(t *testing.T) {
	e := newEnv(t, Options{ContainerSize: 10 << 20, BlockSize: 1 << 20})
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	e.heartbeat("dn2", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{
		ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_OPEN, UsedBytes: 9 << 20}}})
	e.tick()
	info, _, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, info.State)
}

func TestClosingBecomesClosedWhenReplicasReport(t *testing.T) {
	e := newEnv(t, Options{})
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	for _, c := range cmds {
		_, err := e.propose(context.Background(), c)
		require.NoError(t, err)
	}
	report := func(id string, st stratov1.ContainerState) {
		e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: st}}})
	}
	state := func() stratov1.ContainerState {
		info, _, err := e.m.Replicas(a.ContainerID)
		require.NoError(t, err)
		return info.State
	}
	report("dn1", stratov1.ContainerState_CONTAINER_CLOSED)
	report("dn2", stratov1.ContainerState_CONTAINER_OPEN)
	e.tick()
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, state(), "one replica still open")
	report("dn2", stratov1.ContainerState_CONTAINER_CLOSED)
	report("dn3", stratov1.ContainerState_CONTAINER_UNHEALTHY)
	e.tick()
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSED, state())
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

func TestReplicationTrimsExtraAndUnhealthyCopies(t *testing.T) {
	e := closedCluster(t, 4, 8)
	// A fourth copy of a container appears (a node came back after its
	// containers were copied elsewhere): the extra copy goes, never below 3.
	_, reps, err := e.m.Replicas(1)
	require.NoError(t, err)
	require.Len(t, reps, 3)
	var spare string
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		if reps[id] == nil {
			spare = id
		}
	}
	e.heartbeat(spare, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: 1, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	rep := e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 1, rep.OverReplicated)
	require.Equal(t, 1, rep.Deletes)
	deletes := 0
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		for _, c := range e.heartbeat(id, nil).Commands {
			if d := c.GetDeleteContainer(); d != nil {
				require.Equal(t, uint64(1), d.ContainerId)
				deletes++
			}
		}
	}
	require.Equal(t, 1, deletes)
	require.Zero(t, e.m.ReplicationWork(e.now, 100).Deletes, "not commanded twice")

	// An unhealthy replica is replaced first, then deleted.
	_, reps, err = e.m.Replicas(2)
	require.NoError(t, err)
	var bad string
	for id := range reps {
		bad = id
		break
	}
	require.NoError(t, e.m.MarkUnhealthy(2, bad))
	rep = e.m.ReplicationWork(e.now, 100)
	require.Zero(t, rep.Deletes, "only two good copies: copy first")
	require.Equal(t, 1, rep.Scheduled)
	var target string
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		for _, c := range e.heartbeat(id, nil).Commands {
			if rc := c.GetReplicateContainer(); rc != nil && rc.ContainerId == 2 {
				target = rc.Target.Id
			}
		}
	}
	require.NotEmpty(t, target)
	require.NotEqual(t, bad, target)
	e.heartbeat(target, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: 2, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 1, rep.Deletes)
	var deleted []string
	for _, id := range []string{"dn1", "dn2", "dn3", "dn4"} {
		for _, c := range e.heartbeat(id, nil).Commands {
			if d := c.GetDeleteContainer(); d != nil && d.ContainerId == 2 {
				deleted = append(deleted, id)
			}
		}
	}
	require.Equal(t, []string{bad}, deleted)
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

func TestReplicationNeverFromAStaleHolder(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 60 * time.Second})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3", "dn4")
	res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
	require.NoError(t, err)
	id := res.(*stratov1.ContainerRecord).Id
	_, err = e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	require.NoError(t, err)
	closed := &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}}
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(dn, closed)
	}
	// dn1 goes silent: STALE, not yet DEAD. Its copy no longer counts, and
	// it is no source either (a command to it would never run).
	e.now = e.now.Add(15 * time.Second)
	for _, dn := range []string{"dn2", "dn3", "dn4"} {
		e.heartbeat(dn, nil)
	}
	e.tick()
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Scheduled)
	require.Empty(t, rep.Missing)
	require.Empty(t, e.heartbeat("dn1", nil).Commands)
	// The copy's source dies before it lands: it is scheduled again.
	var src string
	for _, dn := range []string{"dn2", "dn3"} {
		if len(e.heartbeat(dn, nil).Commands) > 0 {
			src = dn
		}
	}
	require.NotEmpty(t, src)
	e.now = e.now.Add(15 * time.Second)
	for _, dn := range []string{"dn2", "dn3", "dn4"} {
		if dn != src {
			e.heartbeat(dn, nil)
		}
	}
	e.tick()
	require.Equal(t, 1, e.m.ReplicationWork(e.now, 10).Scheduled)
}

// A copy its source reports failed is planned again at the next pass,
// away from the target that failed, not after ReplicationTimeout; a report
// of an older command changes nothing.
func TestFailedCopyIsPlannedAgainElsewhere(t *testing.T) {
	e := closedCluster(t, 5, 1)
	require.NoError(t, e.decommission("dn1", false))
	require.Equal(t, 1, e.m.ReplicationWork(e.now, 100).Scheduled)
	first := map[string]*stratov1.DatanodeCommand{}
	for _, src := range []string{"dn1", "dn2", "dn3"} {
		for _, c := range e.heartbeat(src, nil).Commands {
			first[src] = c
		}
	}
	require.Len(t, first, 1)
	var src string
	var cmd *stratov1.DatanodeCommand
	for s, c := range first {
		src, cmd = s, c
	}
	rc := cmd.GetReplicateContainer()
	fail := func(id uint64) {
		_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: src, FailedCommands: []*stratov1.CommandFailure{
			{CommandId: id, ContainerId: rc.ContainerId, Reason: "connection refused"}}})
		require.NoError(t, err)
	}
	fail(cmd.Id + 100)
	require.Zero(t, e.m.ReplicationWork(e.now, 100).Scheduled, "an unknown command's failure is ignored")
	fail(cmd.Id)
	rep := e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 1, rep.Scheduled, "planned again at once")
	var again *stratov1.ReplicateContainerCommand
	for _, s := range []string{"dn1", "dn2", "dn3"} {
		for _, c := range e.heartbeat(s, nil).Commands {
			again = c.GetReplicateContainer()
		}
	}
	require.NotNil(t, again)
	require.Equal(t, rc.ContainerId, again.ContainerId)
	require.NotEqual(t, rc.Target.Id, again.Target.Id, "another target while one exists")
}

// A CLOSING container whose live holders closed their replicas is CLOSED
// though a DEAD datanode last reported its replica OPEN; a live holder
// that has not closed is sent the close command again after StaleAfter.
func TestClosingIgnoresDeadHoldersAndResendsClose(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: time.Minute})
	e.register("dn1", "dn2", "dn3")
	a := e.alloc(three, Exclude{})
	cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	for _, c := range cmds {
		_, err := e.propose(context.Background(), c)
		require.NoError(t, err)
	}
	report := func(id string, st stratov1.ContainerState) *stratov1.HeartbeatResponse {
		return e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: st}}})
	}
	state := func() stratov1.ContainerState {
		info, _, err := e.m.Replicas(a.ContainerID)
		require.NoError(t, err)
		return info.State
	}
	closes := func(resp *stratov1.HeartbeatResponse) int {
		n := 0
		for _, c := range resp.Commands {
			if c.GetCloseContainer().GetContainerId() == a.ContainerID {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, closes(report("dn1", stratov1.ContainerState_CONTAINER_CLOSED)))
	require.Equal(t, 1, closes(report("dn2", stratov1.ContainerState_CONTAINER_OPEN)))
	require.Equal(t, 1, closes(report("dn3", stratov1.ContainerState_CONTAINER_OPEN)))
	e.tick()
	require.Zero(t, closes(report("dn2", stratov1.ContainerState_CONTAINER_OPEN)), "not before StaleAfter")

	// dn2 restarted and forgot its command; dn3 falls silent.
	e.now = e.now.Add(11 * time.Second)
	e.heartbeat("dn1", nil)
	report("dn2", stratov1.ContainerState_CONTAINER_OPEN)
	e.tick()
	require.Equal(t, 1, closes(report("dn2", stratov1.ContainerState_CONTAINER_CLOSED)), "sent again")
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, state(), "dn3 is stale, not dead")

	e.now = e.now.Add(time.Minute)
	e.heartbeat("dn1", nil)
	e.heartbeat("dn2", nil)
	e.tick()
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSED, state(), "dn3 is dead: its OPEN replica no longer holds the close up")
}

// A decommissioning datanode that holds a replica of an open or closing
// container is not done: the container is copied once closed.
func TestDecommissionWaitsForOpenContainers(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1", "dn2", "dn3", "dn4")
	a := e.alloc(three, Exclude{})
	for _, id := range a.Pipeline.Members {
		e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_OPEN}}})
	}
	dn := a.Pipeline.Members[0]
	require.NoError(t, e.decommission(dn, false))
	require.Empty(t, e.m.ReplicationWork(e.now, 100).Decommissioned, "its open container is not copied yet")
	e.tick() // the pipeline is unusable: its containers close
	require.Empty(t, e.m.ReplicationWork(e.now, 100).Decommissioned, "its closing container is not copied yet")
}
