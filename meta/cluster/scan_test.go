package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// commandsOf returns the commands of a heartbeat reply to dn.
func (e *env) commandsOf(dn string) []*stratov1.DatanodeCommand {
	return e.heartbeat(dn, nil).Commands
}

// TestScanContainerQueuesCommands: a requested scan goes to every live
// holder of a CLOSED replica, and to no other datanode.
func TestScanContainerQueuesCommands(t *testing.T) {
	e := closedCluster(t, 4, 1) // container 1 on dn1, dn2, dn3
	_, reps, err := e.m.Replicas(1)
	require.NoError(t, err)
	require.Len(t, reps, 3)
	e.heartbeat("dn2", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: 1, State: stratov1.ContainerState_CONTAINER_UNHEALTHY}}})
	got, err := e.m.ScanContainer(1, true)
	require.NoError(t, err)
	require.Equal(t, []string{"dn1", "dn3"}, got, "dn2's replica is UNHEALTHY already")
	for _, dn := range got {
		cmds := e.commandsOf(dn)
		require.Len(t, cmds, 1)
		require.Equal(t, uint64(1), cmds[0].GetScanContainer().GetContainerId())
		require.True(t, cmds[0].GetScanContainer().GetData())
	}
	require.Empty(t, e.commandsOf("dn4"))
	_, err = e.m.ScanContainer(99, true)
	require.ErrorIs(t, err, ErrNotFound)
}

// TestUnhealthyReplicaWithNoTarget: on three datanodes, a replica found
// UNHEALTHY leaves no datanode to copy a good one to. Meta deletes the bad
// replica first, then copies a good one to its datanode.
func TestUnhealthyReplicaWithNoTarget(t *testing.T) {
	e := closedCluster(t, 3, 1)
	e.heartbeat("dn2", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: 1, State: stratov1.ContainerState_CONTAINER_UNHEALTHY}}})
	rep := e.m.ReplicationWork(e.now, 2)
	require.Equal(t, 1, rep.UnderReplicated)
	require.Equal(t, 1, rep.Deletes)
	cmds := e.commandsOf("dn2")
	require.Len(t, cmds, 1)
	require.Equal(t, uint64(1), cmds[0].GetDeleteContainer().GetContainerId())
	e.heartbeat("dn2", &stratov1.ContainerReport{Deleted: []uint64{1}})
	rep = e.m.ReplicationWork(e.now, 2)
	require.Equal(t, 1, rep.Scheduled)
	var target string
	for _, dn := range []string{"dn1", "dn3"} {
		for _, c := range e.commandsOf(dn) {
			if rc := c.GetReplicateContainer(); rc != nil {
				target = rc.GetTarget().GetId()
			}
		}
	}
	require.Equal(t, "dn2", target)
}
