package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestMaintenance: a datanode put in maintenance and stopped for longer
// than the dead interval has nothing copied (every container it holds
// keeps two good copies elsewhere, the minimum), writes go on without it,
// and it comes back with its replicas; ending its maintenance puts it back
// in service, still with nothing copied. On a fake clock with production
// intervals (heartbeats every 3 s, dead after 2 minutes).
func TestMaintenance(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Clock: fakeClock()},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	data := map[string][]byte{"/vol/bkt/a": fastRandom(10<<20, 21)}
	require.NoError(t, f.write(ctx, "/vol/bkt/a", data["/vol/bkt/a"], 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	id := f.c.Datanode(0).ID()
	held := f.datanode(id).Containers
	require.Positive(t, held)

	f.setOpState(&stratov1.DecommissionDatanodeRequest{DatanodeId: id, Maintenance: true})
	f.waitDatanode(id, func(d *stratov1.DatanodeInfo) bool { return d.OpState == stratov1.NodeOpState_NODE_IN_MAINTENANCE })

	require.NoError(t, f.c.StopDatanode(0))
	f.waitDatanode(id, func(d *stratov1.DatanodeInfo) bool { return d.Health == stratov1.NodeHealth_NODE_DEAD })
	for range 30 { // meta's replication pass runs every tick
		time.Sleep(f.advance())
	}
	data["/vol/bkt/b"] = fastRandom(6<<20, 22)
	require.NoError(t, f.write(ctx, "/vol/bkt/b", data["/vol/bkt/b"], 256<<10, 0, nil))
	f.requireNoCopies(1, 2, 3)
	for _, c := range f.containers() {
		reps := f.replicas(c.Id).Replicas
		require.LessOrEqual(t, len(reps), 3, "container %d: no copy made while %s is away", c.Id, id)
	}

	require.NoError(t, f.c.StartDatanode(0))
	f.waitDatanode(id, func(d *stratov1.DatanodeInfo) bool {
		return d.Health == stratov1.NodeHealth_NODE_HEALTHY && d.Containers == held
	})
	require.Equal(t, stratov1.NodeOpState_NODE_IN_MAINTENANCE, f.datanode(id).OpState)
	// Its replicas are still on its disk.
	r, err := f.cl.Open(ctx, "/vol/bkt/a")
	require.NoError(t, err)
	for _, bl := range r.Info().Blocks {
		if _, ok := f.replicas(bl.BlockId.ContainerId).Replicas[id]; ok {
			f.requireBlockFile(id, bl, data["/vol/bkt/a"][bl.Offset:bl.Offset+bl.Length])
		}
	}
	require.NoError(t, r.Close())

	f.setOpState(&stratov1.DecommissionDatanodeRequest{DatanodeId: id, Maintenance: true, Recommission: true})
	require.Equal(t, stratov1.NodeOpState_NODE_IN_SERVICE, f.datanode(id).OpState)
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	f.requireNoCopies(0, 1, 2, 3)
	for p, want := range data {
		f.requireContent(p, want)
	}
}

// setOpState sends an operational state change.
func (f *faultCluster) setOpState(req *stratov1.DecommissionDatanodeRequest) {
	f.t.Helper()
	_, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.DecommissionDatanodeResponse, error) {
		return cc.DecommissionDatanode(ctx, req)
	})
	require.NoError(f.t, err)
}

// datanode is meta's view of datanode id.
func (f *faultCluster) datanode(id string) *stratov1.DatanodeInfo {
	f.t.Helper()
	dns, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	require.NoError(f.t, err)
	for _, d := range dns.Datanodes {
		if d.Details.Id == id {
			return d
		}
	}
	f.t.Fatalf("datanode %s not registered", id)
	return nil
}

// waitDatanode moves the clock on until meta's view of datanode id
// satisfies ok.
func (f *faultCluster) waitDatanode(id string, ok func(*stratov1.DatanodeInfo) bool) {
	f.t.Helper()
	require.Eventually(f.t, func() bool { f.advance(); return ok(f.datanode(id)) }, 60*time.Second, 10*time.Millisecond)
}

// requireNoCopies checks that the running datanodes i pushed and imported
// no container.
func (f *faultCluster) requireNoCopies(is ...int) {
	f.t.Helper()
	for _, i := range is {
		m := f.c.Datanode(i).ReplicationMetrics()
		require.Zero(f.t, m.PushesInFlight+m.PushesCompleted+m.PushesFailed+m.ImportsInFlight+m.ImportsCompleted+m.ImportsFailed,
			"datanode %d's replication: %+v", i, m)
	}
}

// TestMaintenanceSecondFailure: with one datanode in maintenance and
// stopped, a second one dies. The containers both held drop below the
// minimum of two good copies and are copied back to two; those the second
// held without the first go back to three; those only the first held
// stay as they are. The maintenance's end time then passes: the first
// datanode, back, is in service with its replicas, and the extra copies
// are trimmed.
func TestMaintenanceSecondFailure(t *testing.T) {
	clock := fakeClock()
	f := startFaultCluster(t, minicluster.Options{Datanodes: 5, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Clock: clock},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	data := fastRandom(24<<20, 31)
	require.NoError(t, f.write(ctx, "/vol/bkt/a", data, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	first, second := f.c.Datanode(0).ID(), f.c.Datanode(1).ID()
	both := 0
	for _, c := range f.containers() {
		reps := f.replicas(c.Id).Replicas
		if _, ok := reps[first]; ok {
			if _, ok := reps[second]; ok {
				both++
			}
		}
	}
	require.Positive(t, both, "some container on both datanodes")

	f.setOpState(&stratov1.DecommissionDatanodeRequest{DatanodeId: first, Maintenance: true,
		MaintenanceEndUnixMs: clock.Now().Add(time.Hour).UnixMilli()})
	f.waitDatanode(first, func(d *stratov1.DatanodeInfo) bool { return d.OpState == stratov1.NodeOpState_NODE_IN_MAINTENANCE })
	require.NoError(t, f.c.StopDatanode(0))
	f.waitDatanode(first, func(d *stratov1.DatanodeInfo) bool { return d.Health == stratov1.NodeHealth_NODE_DEAD })
	require.NoError(t, f.c.StopDatanode(1))
	f.waitDatanode(second, func(d *stratov1.DatanodeInfo) bool { return d.Health == stratov1.NodeHealth_NODE_DEAD })

	// Two good copies of what both held, three of the rest the second
	// held; nothing copied for what only the first held.
	good := func(cid uint64) (n int, onFirst bool) {
		for dn, r := range f.replicas(cid).Replicas {
			if dn == first {
				onFirst = true
			}
			if dn != first && dn != second && r.State == stratov1.ContainerState_CONTAINER_CLOSED {
				n++
			}
		}
		return n, onFirst
	}
	require.Eventually(t, func() bool {
		f.advance()
		for _, c := range f.containers() {
			n, onFirst := good(c.Id)
			if want := map[bool]int{true: 2, false: 3}[onFirst]; n != want {
				return false
			}
		}
		return true
	}, 60*time.Second, 10*time.Millisecond, "copies back to the minimum, and only those")
	f.requireContent("/vol/bkt/a", data)

	// The first comes back, and its maintenance ends by its timer.
	require.NoError(t, f.c.StartDatanode(0))
	f.waitDatanode(first, func(d *stratov1.DatanodeInfo) bool { return d.Health == stratov1.NodeHealth_NODE_HEALTHY })
	require.Equal(t, stratov1.NodeOpState_NODE_IN_MAINTENANCE, f.datanode(first).OpState)
	clock.Advance(time.Hour)
	f.waitDatanode(first, func(d *stratov1.DatanodeInfo) bool { return d.OpState == stratov1.NodeOpState_NODE_IN_SERVICE })
	require.Eventually(t, func() bool {
		f.advance()
		for _, c := range f.containers() {
			n := 0
			for dn, r := range f.replicas(c.Id).Replicas {
				if dn != second && r.State == stratov1.ContainerState_CONTAINER_CLOSED {
					n++
				}
			}
			if n != 3 {
				return false
			}
		}
		return true
	}, 60*time.Second, 10*time.Millisecond, "three copies of every container, the extra trimmed")
	f.requireContent("/vol/bkt/a", data)
}
