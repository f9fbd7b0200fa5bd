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
	require.NoError(t, e.m.Decommission("dn4", false))
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
