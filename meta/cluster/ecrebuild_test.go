package cluster

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// ecWork is what the datanodes' next heartbeats carry: reconstructions by
// target, copies by source.
type ecWork struct {
	rebuild map[string][]*stratov1.DatanodeCommand
	copies  map[string][]*stratov1.DatanodeCommand
}

func (e *env) ecWork(ids ...string) ecWork {
	w := ecWork{rebuild: map[string][]*stratov1.DatanodeCommand{}, copies: map[string][]*stratov1.DatanodeCommand{}}
	for _, id := range ids {
		for _, c := range e.heartbeat(id, nil).Commands {
			if c.GetReconstructEcContainer() != nil {
				w.rebuild[id] = append(w.rebuild[id], c)
			}
			if c.GetReplicateContainer() != nil {
				w.copies[id] = append(w.copies[id], c)
			}
		}
	}
	return w
}

// kill makes the datanodes not in alive DEAD.
func (e *env) kill(alive ...string) {
	e.now = e.now.Add(10 * time.Minute)
	for _, dn := range alive {
		e.heartbeat(dn, nil)
	}
	e.tick()
}

// TestECReconstruction: a closed RS-3-2 container that lost index 3 gets
// one ReconstructECContainerCommand, to a datanode holding no index, with
// the config and every surviving index as a source; not again while it is
// in flight; again elsewhere when the target reports it failed; and the
// container is healthy once the target reports the index, which lookups
// then point at. Two lost indexes go to two targets; a target takes one
// index of a container and no more than the limit; a container with fewer
// than d indexes left is not rebuilt.
func TestECReconstruction(t *testing.T) {
	e, id := closedEC(t, 7)
	e.kill("dn1", "dn2", "dn4", "dn5", "dn6", "dn7")
	live := []string{"dn1", "dn2", "dn4", "dn5", "dn6", "dn7"}
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Scheduled)
	require.Equal(t, 1, rep.InFlight)
	w := e.ecWork(live...)
	require.Empty(t, w.copies)
	require.Len(t, w.rebuild, 1)
	var target string
	for dn, cmds := range w.rebuild {
		target = dn
		require.Len(t, cmds, 1)
	}
	require.Contains(t, []string{"dn6", "dn7"}, target, "a datanode holding no index")
	cmd := w.rebuild[target][0]
	rc := cmd.GetReconstructEcContainer()
	require.Equal(t, id, rc.ContainerId)
	require.Equal(t, int32(3), rc.ReplicaIndex)
	require.True(t, proto.Equal(ErasureCoding(rs32), rc.ErasureCoding))
	var srcs []string
	for _, s := range rc.Sources {
		srcs = append(srcs, s.Datanode.Id)
		require.Equal(t, s.Datanode.Id, "dn"+string(rune('0'+s.ReplicaIndex)), "index %d", s.ReplicaIndex)
	}
	require.Equal(t, []string{"dn1", "dn2", "dn4", "dn5"}, srcs)

	// In flight: nothing new.
	rep = e.m.ReplicationWork(e.now, 10)
	require.Zero(t, rep.Scheduled)
	require.Empty(t, e.ecWork(live...).rebuild)

	// The target fails: planned again at once, on the other spare.
	_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: target, FailedCommands: []*stratov1.CommandFailure{
		{CommandId: cmd.Id, ContainerId: id, Reason: "test"}}})
	require.NoError(t, err)
	require.Equal(t, 1, e.m.ReplicationWork(e.now, 10).Scheduled)
	w = e.ecWork(live...)
	require.Len(t, w.rebuild, 1)
	other := map[string]string{"dn6": "dn7", "dn7": "dn6"}[target]
	require.Len(t, w.rebuild[other], 1, "away from the target that failed")

	// The new target reports index 3: healthy, and lookups use it.
	e.heartbeat(other, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 3}}})
	missing, err := e.m.MissingIndexes(id)
	require.NoError(t, err)
	require.Empty(t, missing)
	info, _, err := e.m.Replicas(id)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED, info.Problem)
	rep = e.m.ReplicationWork(e.now, 10)
	require.Zero(t, rep.InFlight)
	require.Zero(t, rep.UnderReplicated+rep.Scheduled)
	stored := make([]*stratov1.DatanodeDetails, 5)
	for i := range stored {
		stored[i], _ = e.m.Node("dn" + string(rune('1'+i)))
	}
	locs := e.m.Locations(id, stored)
	require.Equal(t, other, locs[2].Id, "the rebuilt index in the dead member's place")
	require.Equal(t, "dn4", locs[3].Id)
}

// TestECReconstructionTargetsAndLimits: two lost indexes of one container
// go to two datanodes holding no index of it; with one such datanode only
// one index is rebuilt at a time; the per-target limit holds across
// containers; fewer than d indexes left rebuild nothing.
func TestECReconstructionTargetsAndLimits(t *testing.T) {
	e, id := closedEC(t, 8)
	e.kill("dn3", "dn4", "dn5", "dn6", "dn7", "dn8")
	live := []string{"dn3", "dn4", "dn5", "dn6", "dn7", "dn8"}
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 2, rep.Scheduled)
	w := e.ecWork(live...)
	require.Len(t, w.rebuild, 2, "one index per target")
	var indexes []int32
	for dn, cmds := range w.rebuild {
		require.Contains(t, []string{"dn6", "dn7", "dn8"}, dn)
		require.Len(t, cmds, 1)
		rc := cmds[0].GetReconstructEcContainer()
		require.Equal(t, id, rc.ContainerId)
		require.Len(t, rc.Sources, 3)
		indexes = append(indexes, rc.ReplicaIndex)
	}
	slices.Sort(indexes)
	require.Equal(t, []int32{1, 2}, indexes)

	// One spare left for a second container: it takes one index, the
	// other waits (blocked); a limit of 1 per target holds.
	e2, _ := closedEC(t, 6)
	e2.kill("dn3", "dn4", "dn5", "dn6")
	rep = e2.m.ReplicationWork(e2.now, 10)
	require.Equal(t, 1, rep.Scheduled)
	require.Equal(t, 1, rep.BlockedByLimits)
	w = e2.ecWork("dn3", "dn4", "dn5", "dn6")
	require.Len(t, w.rebuild["dn6"], 1)

	e3, a := closedEC(t, 6)
	b := e3.addClosedEC([]string{"dn1", "dn2", "dn3", "dn4", "dn5"})
	e3.kill("dn2", "dn3", "dn4", "dn5", "dn6")
	rep = e3.m.ReplicationWork(e3.now, 1)
	require.Equal(t, 1, rep.Scheduled, "dn6 takes one rebuild at a time")
	require.Equal(t, 1, rep.BlockedByLimits)
	w = e3.ecWork("dn2", "dn3", "dn4", "dn5", "dn6")
	require.Len(t, w.rebuild["dn6"], 1)
	first := w.rebuild["dn6"][0].GetReconstructEcContainer().ContainerId
	require.Contains(t, []uint64{a, b}, first)

	// Three members of the 8-node container lost: 2 indexes left of 3
	// needed, nothing is rebuilt (it is reported missing).
	e.kill("dn4", "dn5", "dn6", "dn7", "dn8")
	rep = e.m.ReplicationWork(e.now, 10)
	require.Equal(t, []uint64{id}, rep.Missing)
	require.Zero(t, rep.Scheduled)
}

// TestECDecommission: a decommissioning datanode holding an index has it
// copied off (a ReplicateContainerCommand from it to a datanode holding no
// index; not a rebuild), and is DECOMMISSIONED once the target reports the
// index.
func TestECDecommission(t *testing.T) {
	e, id := closedEC(t, 6)
	require.NoError(t, e.decommission("dn4", false))
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Scheduled)
	require.Empty(t, rep.Decommissioned)
	w := e.ecWork(datanodeIDs(6)...)
	require.Empty(t, w.rebuild)
	require.Len(t, w.copies["dn4"], 1)
	rc := w.copies["dn4"][0].GetReplicateContainer()
	require.Equal(t, id, rc.ContainerId)
	require.Equal(t, "dn6", rc.Target.Id)
	require.Zero(t, e.m.ReplicationWork(e.now, 10).Scheduled, "in flight")

	e.heartbeat("dn6", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 4}}})
	rep = e.m.ReplicationWork(e.now, 10)
	require.Equal(t, []string{"dn4"}, rep.Decommissioned)
	require.Zero(t, rep.InFlight)
	missing, err := e.m.MissingIndexes(id)
	require.NoError(t, err)
	require.Empty(t, missing)
	info, _, err := e.m.Replicas(id)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED, info.Problem, "the decommissioned copy is not extra")
	stored := make([]*stratov1.DatanodeDetails, 5)
	for i := range stored {
		stored[i], _ = e.m.Node("dn" + string(rune('1'+i)))
	}
	locs := e.m.Locations(id, stored)
	require.Equal(t, "dn6", locs[3].Id, "readers go to the copy, not the decommissioned member")
	require.Equal(t, "dn5", locs[4].Id)
}

// closedECOnPipeline is a cluster of n datanodes with one closed RS-3-2
// container on a pipeline (its recorded places), each member reporting
// its index; it returns the container and the members in member order.
func closedECOnPipeline(t *testing.T, n int) (*env, uint64, []string) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register(datanodeIDs(n)...)
	a := e.allocEC(rs32, Exclude{})
	cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	for _, c := range cmds {
		_, err := e.propose(t.Context(), c)
		require.NoError(t, err)
	}
	for i, id := range a.Pipeline.Members {
		e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID,
			State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: int32(i + 1)}}})
	}
	e.tick()
	info, _, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSED, info.State)
	return e, a.ContainerID, a.Pipeline.Members
}

// deletes returns the containers the datanodes' next heartbeats are told
// to delete, by datanode.
func (e *env) deletes(ids ...string) map[string][]uint64 {
	out := map[string][]uint64{}
	for _, id := range ids {
		for _, c := range e.heartbeat(id, nil).Commands {
			if d := c.GetDeleteContainer(); d != nil {
				out[id] = append(out[id], d.ContainerId)
			}
		}
	}
	return out
}

// TestECTrim: a member that comes back after its index was rebuilt
// elsewhere leaves the container with two good replicas of that index
// (OVER_REPLICATED); the one not in the container's recorded place (the
// rebuilt one) is deleted, once, and only while both are CLOSED on
// HEALTHY datanodes, every other index is good and no work on the
// container is in flight. Nothing else is ever deleted, and lookups keep
// pointing at the member in its place.
func TestECTrim(t *testing.T) {
	e, id, members := closedECOnPipeline(t, 7)
	all := datanodeIDs(7)
	lost := members[2] // index 3
	var alive []string
	for _, dn := range all {
		if dn != lost {
			alive = append(alive, dn)
		}
	}
	e.kill(alive...)
	require.Equal(t, 1, e.m.ReplicationWork(e.now, 10).Scheduled)
	w := e.ecWork(alive...)
	require.Len(t, w.rebuild, 1)
	var target string
	for dn := range w.rebuild {
		target = dn
	}
	require.NotContains(t, members, target)
	e.heartbeat(target, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 3}}})
	rep := e.m.ReplicationWork(e.now, 10)
	require.Zero(t, rep.InFlight+rep.Deletes+rep.OverReplicated)

	problem := func() stratov1.ContainerProblem {
		info, _, err := e.m.Replicas(id)
		require.NoError(t, err)
		return info.Problem
	}
	// The old holder comes back with its replica not closed yet: not a
	// good replica, nothing to trim.
	e.heartbeat(lost, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSING, ReplicaIndex: 3}}})
	require.Zero(t, e.m.ReplicationWork(e.now, 10).Deletes)
	require.Empty(t, e.deletes(all...))

	// Closed: two good replicas of index 3. The target is STALE for a
	// while (the other is not healthy): nothing is deleted.
	e.heartbeat(lost, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 3}}})
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED, problem())
	e.now = e.now.Add(time.Minute) // past stale, short of dead
	for _, dn := range all {
		if dn != target {
			e.heartbeat(dn, nil)
		}
	}
	e.tick()
	rep = e.m.ReplicationWork(e.now, 10)
	require.Zero(t, rep.Deletes)
	require.Zero(t, rep.OverReplicated, "one good replica per index while the target is stale")
	require.Empty(t, e.deletes(members...))

	// Both healthy, but another index is being rebuilt (its sources must
	// stay): no trim until that is done.
	e.heartbeat(target, nil)
	e.heartbeat(members[0], &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_UNHEALTHY, ReplicaIndex: 1}}})
	rep = e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Scheduled)
	require.Zero(t, rep.Deletes)
	w = e.ecWork(all...)
	require.Len(t, w.rebuild, 1)
	var target1 string
	for dn, cmds := range w.rebuild {
		target1 = dn
		require.Equal(t, int32(1), cmds[0].GetReconstructEcContainer().ReplicaIndex)
	}
	require.Zero(t, e.m.ReplicationWork(e.now, 10).Deletes, "a rebuild of index 1 in flight")
	e.heartbeat(target1, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 1}}})

	// Now: the rebuilt index 3 (not in its recorded place) is deleted; the
	// UNHEALTHY replica of index 1 is not this pass's business; index 1's
	// new replica is alone and kept.
	rep = e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Deletes)
	require.Equal(t, map[string][]uint64{target: {id}}, e.deletes(all...))
	// Not again while the deletion is under way, and never the other.
	for range 3 {
		require.Zero(t, e.m.ReplicationWork(e.now, 10).Deletes)
	}
	require.Empty(t, e.deletes(all...))
	e.heartbeat(target, &stratov1.ContainerReport{Deleted: []uint64{id}})
	require.Zero(t, e.m.ReplicationWork(e.now, 10).Deletes)
	require.Empty(t, e.deletes(all...))
	missing, err := e.m.MissingIndexes(id)
	require.NoError(t, err)
	require.Empty(t, missing)
	stored := make([]*stratov1.DatanodeDetails, 5)
	for i := range stored {
		stored[i], _ = e.m.Node(members[i])
	}
	locs := e.m.Locations(id, stored)
	require.Equal(t, lost, locs[2].Id, "the member in its place")
}

// TestECTrimKeepsThePlace: with the old holder in place and the rebuilt
// replica both good, the one deleted is never the one in place, whatever
// the free space; with neither in place (the index rebuilt twice), the
// one on the datanode with the most free space is kept.
func TestECTrimKeepsThePlace(t *testing.T) {
	e, id, members := closedECOnPipeline(t, 8)
	var spares []string
	for _, dn := range datanodeIDs(8) {
		if !slices.Contains(members, dn) {
			spares = append(spares, dn)
		}
	}
	require.Len(t, spares, 3)
	stats := func(dn string, free int64) {
		_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: dn, Stats: &stratov1.NodeStats{Remaining: free}})
		require.NoError(t, err)
	}
	stats(members[1], 1)
	stats(spares[0], 1<<40)
	e.heartbeat(spares[0], &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 2}}})
	require.Equal(t, 1, e.m.ReplicationWork(e.now, 10).Deletes)
	require.Equal(t, map[string][]uint64{spares[0]: {id}}, e.deletes(append(slices.Clone(members), spares...)...))
	e.heartbeat(spares[0], &stratov1.ContainerReport{Deleted: []uint64{id}})

	// Index 2's member is decommissioning: its replica is neither good
	// nor extra. Two copies of index 2 on spares: the one with more free
	// space stays, and the member's is never deleted.
	require.NoError(t, e.decommission(members[1], false))
	stats(spares[1], 10)
	stats(spares[2], 20)
	for _, dn := range spares[1:] {
		e.heartbeat(dn, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
			{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 2}}})
	}
	rep := e.m.ReplicationWork(e.now, 10)
	require.Equal(t, 1, rep.Deletes)
	require.Equal(t, []string{members[1]}, rep.Decommissioned)
	require.Equal(t, map[string][]uint64{spares[1]: {id}}, e.deletes(append(slices.Clone(members), spares...)...))
}
