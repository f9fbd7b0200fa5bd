package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestNewLeaderSettlesBeforeDeciding: a replica that leads again drops the
// soft state it kept from its earlier leadership, and during the settle
// period it closes no pipeline of a datanode that has not registered with
// it yet; once the datanodes have reported, nothing looks under-replicated.
// A datanode that never comes back counts only after the settle period.
func TestNewLeaderSettlesBeforeDeciding(t *testing.T) {
	e := closedCluster(t, 4, 8)
	e.alloc(three, Exclude{})
	open := func() int {
		n := 0
		for _, p := range e.m.Pipelines() {
			if p.State == stratov1.PipelineState_PIPELINE_OPEN {
				n++
			}
		}
		return n
	}
	pipelines := open()
	require.Positive(t, pipelines)
	require.Zero(t, e.m.ReplicationWork(e.now, 100).UnderReplicated)
	require.False(t, e.m.Settling(e.now), "a manager that never became leader has no settle period")

	// Leadership went elsewhere for an hour and came back.
	e.now = e.now.Add(time.Hour)
	e.m.BecomeLeader(e.now)
	require.True(t, e.m.Settling(e.now))
	require.True(t, e.m.SafeMode().InSafeMode)
	require.Empty(t, e.m.Datanodes())
	resp, err := e.m.Heartbeat(e.now, &stratov1.HeartbeatRequest{DatanodeId: "dn1"})
	require.ErrorIs(t, err, ErrUnknownNode)
	require.True(t, resp.Reregister, "the datanode registers again, with its full report")

	// dn1 comes back first: every container has a reported replica, so
	// safe mode ends, but the others have not reported yet.
	e.register("dn1")
	e.heartbeat("dn1", e.reports["dn1"])
	e.tick()
	require.Equal(t, pipelines, open(), "no pipeline closed for members that have not registered yet")

	for _, dn := range []string{"dn2", "dn3"} {
		e.register(dn)
		e.heartbeat(dn, e.reports[dn])
	}
	e.now = e.now.Add(e.m.Options().LeaderSettle)
	require.False(t, e.m.Settling(e.now))
	for _, dn := range []string{"dn1", "dn2", "dn3"} {
		e.heartbeat(dn, nil)
	}
	// dn4 never came back: now its pipelines close and its replicas are
	// copied.
	e.tick()
	rep := e.m.ReplicationWork(e.now, 100)
	require.Equal(t, 6, rep.UnderReplicated, "dn4 held 6 of the 8 containers")
	require.Equal(t, 6, rep.Scheduled)
	require.Zero(t, rep.Deletes)
	for _, p := range e.m.Pipelines() {
		if p.State == stratov1.PipelineState_PIPELINE_OPEN {
			require.NotContains(t, p.Members, "dn4")
		}
	}
}
