package cluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestFullReportRepeated: a full report that says what the datanode's
// reports have said of the replicas the map holds is not read, and one
// that may change the map is: a container it lists is unknown or was
// unknown, a report in between changed or deleted a replica, or the state
// was reloaded. A bad mark holds through the repeats.
func TestFullReportRepeated(t *testing.T) {
	e := newEnv(t, Options{})
	e.m.ExitSafeMode()
	e.register("dn1")
	add := func() uint64 {
		res, err := e.propose(context.Background(), &stratov1.ClusterCommand{Op: &stratov1.ClusterCommand_AddContainer{AddContainer: &stratov1.ContainerRecord{Replication: three}}})
		require.NoError(t, err)
		return res.(*stratov1.ContainerRecord).Id
	}
	c1, c2 := add(), add()
	snap := e.db.NewSnapshot()
	t.Cleanup(func() { _ = snap.Close() })
	closed := stratov1.ContainerState_CONTAINER_CLOSED
	full := func(ids ...uint64) *stratov1.ContainerReport {
		r := &stratov1.ContainerReport{Full: true}
		for _, id := range ids {
			r.Replicas = append(r.Replicas, &stratov1.ContainerReplica{ContainerId: id, State: closed})
		}
		return r
	}
	n := e.m.s.nodes["dn1"]
	// read sends r and reports whether meta read it.
	read := func(r *stratov1.ContainerReport) bool {
		gen := n.reportGen
		e.heartbeat("dn1", r)
		return n.reportGen != gen
	}
	held := func(cid uint64) *replica { return e.m.s.containers[cid].replicas.get("dn1") }

	c3 := c2 + 1 // not made yet
	require.True(t, read(full(c1, c2, c3)))
	require.Nil(t, e.m.s.containers[c3])
	require.True(t, read(full(c1, c2, c3)), "a report naming an unknown container is read again")
	require.Equal(t, c3, add())
	require.True(t, read(full(c1, c2, c3)))
	require.NotNil(t, held(c3), "the container it named is known now")

	require.False(t, read(full(c1, c2, c3)), "the same report again")
	require.False(t, read(full(c1, c2, c3)))

	require.NoError(t, e.m.MarkUnhealthy(c1, "dn1"))
	require.False(t, read(full(c1, c2, c3)))
	require.Equal(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, held(c1).State, "the bad mark holds")

	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: c2, State: closed, BcsId: 5}}})
	require.EqualValues(t, 5, held(c2).BcsId)
	require.True(t, read(full(c1, c2, c3)), "a report in between changed a replica")
	require.Zero(t, held(c2).BcsId)
	require.Equal(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, held(c1).State)

	// Reports in between that end where the full report is: not read.
	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: c2, State: closed, BcsId: 5}}})
	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: c2, State: closed}}})
	require.False(t, read(full(c1, c2, c3)))
	e.heartbeat("dn1", &stratov1.ContainerReport{Deleted: []uint64{c3}})
	require.Nil(t, held(c3))
	require.True(t, read(full(c1, c2, c3)), "a replica was deleted in between")
	require.NotNil(t, held(c3))
	e.heartbeat("dn1", &stratov1.ContainerReport{Deleted: []uint64{c3}})
	require.False(t, read(full(c1, c2)))
	e.heartbeat("dn1", &stratov1.ContainerReport{Replicas: []*stratov1.ContainerReplica{{ContainerId: c3, State: closed}}})
	require.False(t, read(full(c1, c2, c3)))

	r := full(c1, c2, c3)
	r.Replicas[1].UsedBytes = 1 << 20
	require.True(t, read(r), "a replica changed")
	require.EqualValues(t, 1<<20, held(c2).UsedBytes)
	require.False(t, read(r))

	require.NoError(t, e.m.Load(snap))
	require.True(t, read(r), "the state was reloaded")
	require.Nil(t, e.m.s.containers[c3])
}
