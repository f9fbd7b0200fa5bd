package cluster

import (
	"testing"
	"time"

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
	require.Equal(t, map[string]int64{"UNDER_REPLICATED": 0, "MISSING": 0, "UNHEALTHY": 0, "OVER_REPLICATED": 0, "MIS_REPLICATED": 0}, s.ContainersByProblem)

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

// The raw space counts the datanodes that are not dead, from their last
// reports.
func TestSpace(t *testing.T) {
	e := newEnv(t, Options{StaleAfter: 10 * time.Second, DeadAfter: 30 * time.Second})
	require.Equal(t, &stratov1.FsStatus{}, e.m.Space(), "no datanode: nothing")
	e.register("dn1", "dn2", "dn3")
	stats := func(id string, used int64) {
		_, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: id,
			Stats: &stratov1.NodeStats{Capacity: 100 << 30, Used: used, Remaining: 100<<30 - used}})
		require.NoError(t, err)
	}
	stats("dn1", 1<<30)
	stats("dn2", 2<<30)
	require.Equal(t, &stratov1.FsStatus{Capacity: 300 << 30, Used: 3 << 30, Remaining: 297 << 30, Datanodes: 3}, e.m.Space())

	// dn3 stops: stale, it still counts; dead, it does not.
	e.now = e.now.Add(15 * time.Second)
	stats("dn1", 1<<30)
	stats("dn2", 2<<30)
	e.tick()
	require.EqualValues(t, 3, e.m.Space().Datanodes)
	e.now = e.now.Add(20 * time.Second)
	stats("dn1", 1<<30)
	stats("dn2", 2<<30)
	e.tick()
	require.Equal(t, &stratov1.FsStatus{Capacity: 200 << 30, Used: 3 << 30, Remaining: 197 << 30, Datanodes: 2}, e.m.Space())
	require.EqualValues(t, 300<<30, e.m.Summary().Capacity, "the summary counts every datanode")
}

// TestDatanodesPaged: the datanode listing is paged by ID, from any ID
// (registered or not), with each datanode's open pipelines.
func TestDatanodesPaged(t *testing.T) {
	e := newEnv(t, Options{})
	e.register("dn1", "dn2", "dn3", "dn4", "dn5")
	e.m.ExitSafeMode()
	a := e.alloc(three, Exclude{})
	ids := func(dns []*stratov1.DatanodeInfo) []string {
		var out []string
		for _, d := range dns {
			out = append(out, d.Details.Id)
		}
		return out
	}
	require.Equal(t, []string{"dn1", "dn2"}, ids(e.m.Datanodes("", 2)))
	require.Equal(t, []string{"dn3", "dn4"}, ids(e.m.Datanodes("dn2", 2)))
	require.Equal(t, []string{"dn3", "dn4", "dn5"}, ids(e.m.Datanodes("dn25", 0)))
	require.Empty(t, e.m.Datanodes("dn5", 2))
	want := map[string]int32{}
	for _, p := range e.m.Pipelines() {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN {
			for _, id := range p.Members {
				want[id]++
			}
		}
	}
	require.NotEmpty(t, want)
	for _, d := range e.m.Datanodes("", 0) {
		require.Equal(t, want[d.Details.Id], d.Pipelines, d.Details.Id)
	}
	d, ok := e.m.Datanode(a.Pipeline.Members[0])
	require.True(t, ok)
	require.Equal(t, want[a.Pipeline.Members[0]], d.Pipelines)
	_, ok = e.m.Datanode("dn9")
	require.False(t, ok)
	e.register("dn0") // a new datanode is listed at once
	require.Equal(t, []string{"dn0", "dn1"}, ids(e.m.Datanodes("", 2)))
}

// TestListingsAcrossSteps: a listing or a summary of more containers than
// one hold of the lock reads (walkStep) sees every container once, in
// order.
func TestListingsAcrossSteps(t *testing.T) {
	n := walkStep + 5
	e := closedCluster(t, 3, n)
	all, _ := e.m.ListContainers(0, 0, ContainerFilter{}, false)
	require.Len(t, all, n)
	for i, c := range all {
		require.EqualValues(t, i+1, c.Id)
	}
	page, _ := e.m.ListContainers(3, walkStep, ContainerFilter{States: []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSED}}, false)
	require.Len(t, page, walkStep)
	require.EqualValues(t, 4, page[0].Id)
	rest, _ := e.m.ListContainers(page[len(page)-1].Id, walkStep, ContainerFilter{}, false)
	require.Len(t, rest, 2)
	require.EqualValues(t, n, rest[1].Id)
	require.EqualValues(t, n, e.m.Summary().Containers)
	require.EqualValues(t, n, e.m.Summary().ContainersByState["CLOSED"])
}
