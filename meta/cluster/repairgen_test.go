package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestRepairGen: RepairGen moves on with what may leave a container short
// of copies (a registration, a datanode dead, a replica gone or reported
// UNHEALTHY), and not with quiet heartbeats or reports that repeat what
// meta knows.
func TestRepairGen(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 20 * time.Second})
	gen := e.m.RepairGen()
	e.register("dn1", "dn2", "dn3")
	require.NotEqual(t, gen, e.m.RepairGen(), "registrations")
	res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
	require.NoError(t, err)
	cid := res.(*stratov1.ContainerRecord).Id
	replica := func(st stratov1.ContainerState) *stratov1.ContainerReplica {
		return &stratov1.ContainerReplica{ContainerId: cid, State: st}
	}
	for _, id := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(id, &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{replica(stratov1.ContainerState_CONTAINER_CLOSED)}})
	}
	unchanged := func(what string) {
		t.Helper()
		g := e.m.RepairGen()
		require.Equal(t, gen, g, what)
	}
	gen = e.m.RepairGen()
	e.heartbeat("dn1", nil)
	unchanged("a quiet heartbeat")
	e.heartbeat("dn1", &stratov1.ContainerReport{Full: true, Replicas: []*stratov1.ContainerReplica{replica(stratov1.ContainerState_CONTAINER_CLOSED)}})
	unchanged("a full report of what meta knows")

	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{replica(stratov1.ContainerState_CONTAINER_UNHEALTHY)}})
	require.NotEqual(t, gen, e.m.RepairGen(), "a replica reported UNHEALTHY")
	gen = e.m.RepairGen()
	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{replica(stratov1.ContainerState_CONTAINER_UNHEALTHY)}})
	unchanged("an UNHEALTHY replica reported again")

	e.heartbeat("dn2", &stratov1.ContainerReport{Full: true})
	require.NotEqual(t, gen, e.m.RepairGen(), "a replica gone from a full report")
	gen = e.m.RepairGen()
	e.heartbeat("dn3", &stratov1.ContainerReport{Deleted: []uint64{cid}})
	require.NotEqual(t, gen, e.m.RepairGen(), "a replica reported deleted")
	gen = e.m.RepairGen()

	e.now = e.now.Add(30 * time.Second)
	e.heartbeat("dn1", nil)
	e.tick()
	require.Equal(t, stratov1.NodeHealth_NODE_DEAD, e.health("dn2"))
	require.NotEqual(t, gen, e.m.RepairGen(), "datanodes dead")
}
