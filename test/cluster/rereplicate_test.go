package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// waitThreeCopies waits until every closed container has three CLOSED
// replicas on HEALTHY, in-service datanodes other than gone.
func (f *faultCluster) waitThreeCopies(gone string, timeout time.Duration) {
	f.t.Helper()
	ctx := f.t.Context()
	deadline := time.Now().Add(timeout)
	for {
		dns, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		require.NoError(f.t, err)
		good := map[string]bool{}
		for _, d := range dns.Datanodes {
			good[d.Details.Id] = d.Health == stratov1.NodeHealth_NODE_HEALTHY && d.OpState == stratov1.NodeOpState_NODE_IN_SERVICE && d.Details.Id != gone
		}
		short := 0
		for _, c := range f.containers() {
			if c.State != stratov1.ContainerState_CONTAINER_CLOSED {
				continue
			}
			n := 0
			for dn, r := range f.replicas(c.Id).Replicas {
				if good[dn] && r.State == stratov1.ContainerState_CONTAINER_CLOSED {
					n++
				}
			}
			if n < 3 {
				short++
			}
		}
		if short == 0 {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%d containers still short of three good copies", short)
		}
		time.Sleep(f.advance())
	}
}

// closeAllContainers closes every open container and waits until all are
// CLOSED.
func (f *faultCluster) closeAllContainers() {
	f.t.Helper()
	ctx := f.t.Context()
	for _, c := range f.containers() {
		if c.State == stratov1.ContainerState_CONTAINER_OPEN {
			err := f.cl.CloseContainer(ctx, c.Id, "", "test")
			require.NoError(f.t, err)
		}
	}
	require.Eventually(f.t, func() bool {
		f.advance()
		for _, c := range f.containers() {
			if c.State != stratov1.ContainerState_CONTAINER_CLOSED {
				return false
			}
		}
		return true
	}, 20*time.Second, 20*time.Millisecond)
}

// TestLostDatanodeReReplicated: a datanode and its data are lost; meta has
// the survivors push copies of its closed containers to the fourth node
// until every container has three copies again, and every key reads back
// (from the copies too). The node coming back with an empty disk is an
// ordinary empty datanode. The cluster runs on a fake clock with
// production intervals (heartbeats every 3 s, meta's tick every second,
// dead after 2 minutes), moved on a second at each look.
func TestLostDatanodeReReplicated(t *testing.T) { testLostDatanodeReReplicated(t, false) }

func testLostDatanodeReReplicated(t *testing.T, auth bool) {
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Auth: auth,
		Clock: fakeClock()},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	data := map[string][]byte{}
	for i := range 6 {
		p := fmt.Sprintf("/vol/bkt/f%d", i)
		data[p] = fastRandom(6<<20+i*1000, uint64(i+10))
		require.NoError(t, f.write(ctx, p, data[p], 256<<10, 0, nil))
	}
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)

	victim := f.c.Datanode(1).ID()
	require.NoError(t, f.c.StopDatanode(1))
	require.NoError(t, os.RemoveAll(f.c.DatanodeDir(1)))
	f.waitThreeCopies(victim, 60*time.Second)
	for p, want := range data {
		f.requireContent(p, want)
	}
	// Reads go to the new copies: every block lists three live holders
	// first (the lost node, until meta declares it dead, last).
	for p := range data {
		r, err := f.cl.Open(ctx, p)
		require.NoError(t, err)
		for _, bl := range r.Info().Blocks {
			require.GreaterOrEqual(t, len(bl.Pipeline.Members), 3)
			for _, m := range bl.Pipeline.Members[:3] {
				require.NotEqual(t, victim, m.Id, "%s block %v: the lost node is not among the first holders", p, bl.BlockId)
			}
		}
		require.NoError(t, r.Close())
	}
}

// TestDecommission: a decommissioned datanode's containers are copied
// elsewhere while it still serves reads; then it is DECOMMISSIONED.
func TestDecommission(t *testing.T) { testDecommission(t, false) }

func testDecommission(t *testing.T, tls bool) { testDecommissionWith(t, minicluster.Options{TLS: tls}) }

// TestTLSDecommission: the copies of a decommission go over TLS between
// datanodes of a TLS cluster.
func TestTLSDecommission(t *testing.T) { testDecommission(t, true) }

func testDecommissionWith(t *testing.T, o minicluster.Options) {
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, TLS: o.TLS, Auth: o.Auth, Clock: fakeClock()},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	want := fastRandom(10<<20, 99)
	require.NoError(t, f.write(ctx, "/vol/bkt/d", want, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	id := f.c.Datanode(0).ID()
	_, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.DecommissionDatanodeResponse, error) {
		return cc.DecommissionDatanode(ctx, &stratov1.DecommissionDatanodeRequest{DatanodeId: id})
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		f.advance()
		dns, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		require.NoError(t, err)
		for _, d := range dns.Datanodes {
			if d.Details.Id == id {
				return d.OpState == stratov1.NodeOpState_NODE_DECOMMISSIONED
			}
		}
		return false
	}, 60*time.Second, 10*time.Millisecond)
	f.waitThreeCopies(id, 10*time.Second)
	f.requireContent("/vol/bkt/d", want)
}

// TestFailedCopyPlannedAgain: the only possible target of a container's
// copy is down (meta still counts it healthy: its stale window has not
// passed), so the source's pushes fail. The source reports each failure in
// its next heartbeat and meta plans the copy again at once: when the
// target is back, the copy lands within seconds, not after meta's
// 10-minute replication timeout. On a fake clock with 3 s heartbeats; the
// stale window is 15 minutes, so that however slowly the machine runs the
// pushes while the clock moves on, they find the target still healthy.
func TestFailedCopyPlannedAgain(t *testing.T) {
	clock := fakeClock()
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 30 * time.Minute, Clock: clock},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	want := fastRandom(6<<20, 7)
	require.NoError(t, f.write(ctx, "/vol/bkt/k", want, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)

	ids := make([]string, 4)
	for i := range ids {
		ids[i] = f.c.Datanode(i).ID()
	}
	// A container held by the first datanode, and the one datanode that
	// does not hold it: the only target its copy can go to.
	target := -1
	for _, c := range f.containers() {
		reps := f.replicas(c.Id).Replicas
		if _, ok := reps[ids[0]]; !ok {
			continue
		}
		for i := 1; i < 4; i++ {
			if _, ok := reps[ids[i]]; !ok {
				target = i
			}
		}
		break
	}
	require.NotEqual(t, -1, target)
	require.NoError(t, f.c.StopDatanode(target))
	_, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.DecommissionDatanodeResponse, error) {
		return cc.DecommissionDatanode(ctx, &stratov1.DecommissionDatanodeRequest{DatanodeId: ids[0]})
	})
	require.NoError(t, err)
	// Pushes (from any holder) to the stopped target fail, and are
	// reported.
	require.Eventually(t, func() bool {
		f.advance()
		for i := range ids {
			if i != target && f.c.Datanode(i).ReplicationMetrics().PushesFailed > 0 {
				return true
			}
		}
		return false
	}, 60*time.Second, 50*time.Millisecond)
	back := clock.Now()
	require.NoError(t, f.c.StartDatanode(target))
	f.waitThreeCopies(ids[0], 20*time.Second)
	require.Less(t, clock.Since(back), time.Minute, "the copy is planned again, not after the replication timeout")
	f.requireContent("/vol/bkt/k", want)
}
