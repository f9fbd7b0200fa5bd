package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

var rs32 = &stratov1.ErasureCodingRecord{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2, CellSize: 1 << 20}

func (e *env) allocEC(cfg *stratov1.ErasureCodingRecord, ex Exclude) *Allocation {
	a, err := e.m.Allocate(context.Background(), e.now, ErasureCoded(cfg), 0, ex)
	require.NoError(e.t, err)
	return a
}

func datanodeIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("dn%d", i+1)
	}
	return ids
}

// createCommands returns the CreateContainerCommands a datanode's next
// heartbeat carries, by container.
func (e *env) createCommands(id string) map[uint64]*stratov1.CreateContainerCommand {
	out := map[uint64]*stratov1.CreateContainerCommand{}
	for _, c := range e.heartbeat(id, nil).Commands {
		if cc := c.GetCreateContainer(); cc != nil {
			out[cc.ContainerId] = cc
		}
	}
	return out
}

// TestECAllocation: a block group of RS-3-2 lands on an EC pipeline of 5
// distinct healthy datanodes, in member order; each member is told its
// replica index of a new EC container; too few datanodes is
// ErrNoPipeline; EC and replicated pipelines never mix.
func TestECAllocation(t *testing.T) {
	e := newEnv(t, Options{LocalIDBatch: 4})
	e.m.ExitSafeMode()
	ids := datanodeIDs(7)
	e.register(ids[:4]...)
	_, err := e.m.Allocate(context.Background(), e.now, ErasureCoded(rs32), 0, Exclude{})
	require.ErrorIs(t, err, ErrNoPipeline)
	require.ErrorContains(t, err, "rs-3-2-1024k: 4 healthy datanodes with room for a pipeline, need 5")
	_, err = e.m.Allocate(context.Background(), e.now, Redundancy{Replication: three, EC: rs32}, 0, Exclude{})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = e.m.Allocate(context.Background(), e.now, ErasureCoded(&stratov1.ErasureCodingRecord{Data: 3, Parity: 2, CellSize: 1 << 20}), 0, Exclude{})
	require.ErrorIs(t, err, ErrInvalid, "no codec")

	e.register(ids[4:]...)
	a := e.allocEC(rs32, Exclude{})
	require.Len(t, a.Members, 5)
	members := map[string]bool{}
	for i, d := range a.Members {
		require.Equal(t, a.Pipeline.Members[i], d.Id, "members in member order")
		members[d.Id] = true
	}
	require.Len(t, members, 5, "distinct datanodes")
	require.True(t, proto.Equal(rs32, a.Pipeline.ErasureCoding))
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED, a.Pipeline.Replication)
	info, _, err := e.m.Replicas(a.ContainerID)
	require.NoError(t, err)
	require.Equal(t, int32(3), info.ErasureCoding.GetData())
	require.Equal(t, a.Pipeline.Id, info.PipelineId)
	require.Equal(t, []int32{1, 2, 3, 4, 5}, info.MissingIndexes, "nothing reported yet")

	// Each member's next heartbeat gives it its index; the others get none.
	for _, id := range ids {
		cmds := e.createCommands(id)
		if !members[id] {
			require.Empty(t, cmds, id)
			continue
		}
		cc := cmds[a.ContainerID]
		require.NotNil(t, cc, id)
		require.Equal(t, int32(slices.Index(a.Pipeline.Members, id)+1), cc.ReplicaIndex, id)
		require.Equal(t, a.Pipeline.Id, cc.Pipeline.Id)
		require.Equal(t, int32(2), cc.Pipeline.ErasureCoding.GetParity())
	}

	// More groups go to EC containers on EC pipelines, other configs to
	// their own pipelines, replicated blocks never to EC ones.
	seen := map[[2]uint64]bool{}
	for range 10 {
		b := e.allocEC(rs32, Exclude{})
		require.True(t, proto.Equal(rs32, b.Pipeline.ErasureCoding))
		require.False(t, seen[[2]uint64{b.ContainerID, b.LocalID}])
		seen[[2]uint64{b.ContainerID, b.LocalID}] = true
		info, _, err := e.m.Replicas(b.ContainerID)
		require.NoError(t, err)
		require.NotNil(t, info.ErasureCoding)
	}
	xor := &stratov1.ErasureCodingRecord{Codec: stratov1.ErasureCodec_ERASURE_CODEC_XOR, Data: 2, Parity: 1, CellSize: 64 << 10}
	x := e.allocEC(xor, Exclude{})
	require.Len(t, x.Members, 3)
	require.NotEqual(t, a.Pipeline.Id, x.Pipeline.Id)
	r := e.alloc(three, Exclude{})
	require.Nil(t, r.Pipeline.ErasureCoding)
	info, _, err = e.m.Replicas(r.ContainerID)
	require.NoError(t, err)
	require.Nil(t, info.ErasureCoding)

	// A writer that could not reach a member gets a group on other nodes.
	bad := a.Members[0].Id
	c := e.allocEC(rs32, Exclude{Datanodes: []string{bad}})
	require.NotContains(t, c.Pipeline.Members, bad)
	require.Len(t, c.Members, 5)

	// A member that reports its replica without an index (a write created
	// it first, or a new leader dropped the command) is told again.
	for _, id := range ids {
		e.createCommands(id)
	}
	m0 := a.Pipeline.Members[2]
	resp := e.heartbeat(m0, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_OPEN}}})
	require.Len(t, resp.Commands, 1)
	require.Equal(t, int32(3), resp.Commands[0].GetCreateContainer().GetReplicaIndex())
	e.heartbeat(m0, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID, State: stratov1.ContainerState_CONTAINER_OPEN, ReplicaIndex: 3}}})
	require.Empty(t, e.createCommands(m0))
}

// TestECContainerCloses: closing an EC container sends the close to every
// member; it is CLOSED once the live members closed theirs.
func TestECContainerCloses(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register(datanodeIDs(5)...)
	a := e.allocEC(rs32, Exclude{})
	cmds, err := e.m.CloseContainer(e.now, a.ContainerID, "")
	require.NoError(t, err)
	for _, c := range cmds {
		_, err := e.propose(context.Background(), c)
		require.NoError(t, err)
	}
	for i, id := range a.Pipeline.Members {
		closes := 0
		for _, c := range e.heartbeat(id, nil).Commands {
			if c.GetCloseContainer().GetContainerId() == a.ContainerID {
				closes++
			}
		}
		require.Equal(t, 1, closes, id)
		e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: a.ContainerID,
			State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: int32(i + 1)}}})
		e.tick()
		info, _, err := e.m.Replicas(a.ContainerID)
		require.NoError(t, err)
		if i < 4 {
			require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSING, info.State, "member %d closed", i)
		} else {
			require.Equal(t, stratov1.ContainerState_CONTAINER_CLOSED, info.State)
			require.Empty(t, info.MissingIndexes)
			require.Equal(t, int32(5), info.GoodCopies)
		}
	}
}

// closedEC is a cluster of n datanodes with one closed RS-3-2 container
// whose index i is on datanode dn<i> (1 to 5).
func closedEC(t *testing.T, n int) (*env, uint64) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	ids := datanodeIDs(n)
	e.register(ids...)
	return e, e.addClosedEC(ids[:5])
}

// addClosedEC adds a CLOSED RS-3-2 container whose index i+1 is on
// members[i], reported by each.
func (e *env) addClosedEC(members []string) uint64 {
	t := e.t
	res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{
		AddContainer: &stratov1.ContainerRecord{ErasureCoding: rs32}}})
	require.NoError(t, err)
	id := res.(*stratov1.ContainerRecord).Id
	_, err = e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_SetContainerState{
		SetContainerState: &stratov1.ContainerStateChange{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED}}})
	require.NoError(t, err)
	for i, dn := range members {
		e.heartbeat(dn, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
			{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: int32(i + 1)}}})
	}
	return id
}

// TestECJudgement: an EC container is judged index by index (all indexes
// good: fine; one without a good replica: UNDER_REPLICATED with that index
// missing; fewer than d live: MISSING; two replicas of an index:
// OVER_REPLICATED, and one of them deleted), and the replication manager
// deletes nothing else and keeps a decommissioning holder waiting. (Its
// copies and rebuilds are TestECReconstruction's, its trimming
// TestECTrim's: here the limit of 0 lets none start.)
func TestECJudgement(t *testing.T) {
	e, id := closedEC(t, 7)
	judge := func() (stratov1.ContainerProblem, []int32) {
		info, _, err := e.m.Replicas(id)
		require.NoError(t, err)
		missing, err := e.m.MissingIndexes(id)
		require.NoError(t, err)
		require.Equal(t, info.MissingIndexes, missing)
		return info.Problem, missing
	}
	noCommands := func() { // asks the live datanodes only: a heartbeat revives
		for _, d := range e.m.Datanodes() {
			if d.Health == stratov1.NodeHealth_NODE_DEAD {
				continue
			}
			dn := d.Details.Id
			for _, c := range e.heartbeat(dn, nil).Commands {
				require.Nil(t, c.GetReplicateContainer(), "%s: %v", dn, c)
				require.Nil(t, c.GetReconstructEcContainer(), "%s: %v", dn, c)
				require.Nil(t, c.GetDeleteContainer(), "%s: %v", dn, c)
			}
		}
	}
	p, missing := judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED, p)
	require.Empty(t, missing)
	rep := e.m.ReplicationWork(e.now, 100)
	require.Equal(t, ReplicationReport{Containers: 1}, rep)

	// A replica of index 1 appears on dn6 as well: over-replicated, and
	// one is deleted (with no pipeline recorded and no free space
	// reported, the first by ID is kept).
	e.heartbeat("dn6", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 1}}})
	p, _ = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_OVER_REPLICATED, p)
	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 1, rep.OverReplicated)
	require.Equal(t, 1, rep.Deletes)
	require.Equal(t, id, e.heartbeat("dn6", nil).Commands[0].GetDeleteContainer().GetContainerId())
	noCommands()
	e.heartbeat("dn6", &stratov1.ContainerReport{Deleted: []uint64{id}})

	// Replicas of different indexes at different bcsIDs are not lagging
	// copies of one another.
	e.heartbeat("dn2", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{
		{ContainerId: id, State: stratov1.ContainerState_CONTAINER_CLOSED, ReplicaIndex: 2, BcsId: 9}}})
	e.m.ReplicationWork(e.now, 100)
	p, _ = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED, p)

	// Decommissioning dn4 takes index 4's only good replica away: under-
	// replicated, and dn4 waits (for a copy the limit does not let start).
	require.NoError(t, e.decommission("dn4", false))
	p, missing = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED, p)
	require.Equal(t, []int32{4}, missing)
	rep = e.m.ReplicationWork(e.now, 0)
	require.Equal(t, 1, rep.UnderReplicated)
	require.Empty(t, rep.Decommissioned)
	require.Zero(t, rep.Scheduled)
	require.Equal(t, 1, rep.BlockedByLimits)
	noCommands()
	require.NoError(t, e.decommission("dn4", true))

	// dn3 dies: index 3 is missing, the data is still there (4 of 5).
	live := func(ids ...string) {
		e.now = e.now.Add(10 * time.Minute)
		for _, dn := range ids {
			e.heartbeat(dn, nil)
		}
		e.tick()
	}
	live("dn1", "dn2", "dn4", "dn5", "dn6", "dn7")
	p, missing = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED, p)
	require.Equal(t, []int32{3}, missing)
	rep = e.m.ReplicationWork(e.now, 0)
	require.Equal(t, 1, rep.UnderReplicated)
	require.Empty(t, rep.Missing)
	require.Zero(t, rep.Scheduled+rep.Deletes)
	require.Equal(t, 1, rep.BlockedByLimits)
	noCommands()
	s := e.m.Summary()
	require.Equal(t, int64(1), s.ContainersByProblem["UNDER_REPLICATED"])

	// A reader is pointed at the members in member order; a dead member
	// stays in its place (its index is rebuilt from the others).
	stored := make([]*stratov1.DatanodeDetails, 5)
	for i := range stored {
		d, ok := e.m.Node(fmt.Sprintf("dn%d", i+1))
		require.True(t, ok)
		stored[i] = d
	}
	require.Equal(t, stored, e.m.Locations(id, stored))

	// dn2 is lost too: 3 indexes left, still readable. Then dn1: 2 of 3
	// needed, MISSING.
	live("dn1", "dn4", "dn5", "dn6", "dn7")
	p, missing = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED, p)
	require.Equal(t, []int32{2, 3}, missing)
	live("dn4", "dn5", "dn6", "dn7")
	p, missing = judge()
	require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING, p)
	require.Equal(t, []int32{1, 2, 3}, missing)
	rep = e.m.ReplicationWork(e.now, 100)
	require.Equal(t, []uint64{id}, rep.Missing)
	noCommands()
	require.Equal(t, int64(1), e.m.Summary().ContainersByProblem["MISSING"])
}
