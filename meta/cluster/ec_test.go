package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"

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
