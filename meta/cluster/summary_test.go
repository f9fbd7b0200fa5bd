package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The summary and the filtered listing judge containers as the replication
// manager does: a decommissioning holder's replica is not a good copy.
func TestSummaryAndContainerFilters(t *testing.T) {
	e := closedCluster(t, 4, 8)
	s := e.m.Summary()
	require.EqualValues(t, 4, s.Datanodes)
	require.EqualValues(t, 4, s.DatanodesByHealth["HEALTHY"])
	require.EqualValues(t, 4*(100<<30), s.Capacity)
	require.EqualValues(t, 8, s.Containers)
	require.EqualValues(t, 8, s.ContainersByState["CLOSED"])
	require.Equal(t, map[string]int64{"UNDER_REPLICATED": 0, "MISSING": 0, "UNHEALTHY": 0, "OVER_REPLICATED": 0}, s.ContainersByProblem)

	require.NoError(t, e.decommission("dn1", false))
	s = e.m.Summary()
	require.EqualValues(t, 6, s.ContainersByProblem["UNDER_REPLICATED"], "dn1 holds 6 of the 8")
	require.EqualValues(t, 1, s.DatanodesByOpState["DECOMMISSIONING"])
	require.Len(t, s.Decommissioning, 1)
	require.Equal(t, "dn1", s.Decommissioning[0].DatanodeId)
	require.EqualValues(t, 6, s.Decommissioning[0].Replicas)
	require.EqualValues(t, 6, s.Decommissioning[0].Waiting)

	under := ContainerFilter{Problems: []stratov1.ContainerProblem{stratov1.ContainerProblem_CONTAINER_PROBLEM_MISSING, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED}}
	infos, reps := e.m.ListContainers(0, 0, under, true)
	require.Len(t, infos, 6)
	require.Len(t, reps, 6)
	for i, info := range infos {
		require.Equal(t, stratov1.ContainerProblem_CONTAINER_PROBLEM_UNDER_REPLICATED, info.Problem)
		require.EqualValues(t, 2, info.GoodCopies)
		require.Equal(t, info.Id, reps[i].Container.Id)
		require.Contains(t, reps[i].Replicas, "dn1")
	}
	// Paged: limit counts matches, start_after continues after the last.
	page, _ := e.m.ListContainers(0, 4, under, false)
	require.Len(t, page, 4)
	rest, _ := e.m.ListContainers(page[3].Id, 4, under, false)
	require.Len(t, rest, 2)
	require.Greater(t, rest[0].Id, page[3].Id)

	held, _ := e.m.ListContainers(0, 0, ContainerFilter{Datanode: "dn2"}, false)
	require.Len(t, held, 6)
	none, _ := e.m.ListContainers(0, 0, ContainerFilter{States: []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_OPEN}}, false)
	require.Empty(t, none)
	all, _ := e.m.ListContainers(0, 0, ContainerFilter{States: []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_OPEN, stratov1.ContainerState_CONTAINER_CLOSED}}, false)
	require.Len(t, all, 8)
}
