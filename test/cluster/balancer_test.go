package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// balancerCluster is six datanodes on small disks over three racks
// (datanode i on /rack<i%3+1>), three of which (3, 4, 5) are stopped and
// dead while keys are written to the others: three full datanodes. The
// empty ones then come back. It returns the keys written.
func balancerCluster(t *testing.T, metas int) (*faultCluster, map[string][]byte) {
	f := startFaultCluster(t, minicluster.Options{Datanodes: 6, Racks: 3, MetaReplicas: metas, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Clock: fakeClock(),
		DatanodeFS: func(int) vfs.FS { return minicluster.CappedDisk{FS: vfs.Default, Capacity: 200 << 20} }},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	for i := 3; i < 6; i++ {
		require.NoError(t, f.c.StopDatanode(i))
	}
	require.Eventually(t, func() bool { f.advance(); return f.deadCount() == 3 }, 60*time.Second, 10*time.Millisecond)
	data := map[string][]byte{}
	for i := range 8 {
		p := fmt.Sprintf("/vol/bkt/k%d", i)
		data[p] = fastRandom(10<<20, uint64(40+i))
		require.NoError(t, f.write(t.Context(), p, data[p], 1<<20, 0, nil))
	}
	f.closeAllContainers()
	for i := 3; i < 6; i++ {
		require.NoError(t, f.c.StartDatanode(i))
	}
	require.Eventually(t, func() bool {
		f.advance()
		st := f.balancerStatus()
		return len(st.Datanodes) == 6
	}, 60*time.Second, 10*time.Millisecond)
	return f, data
}

// deadCount counts the datanodes meta holds DEAD.
func (f *faultCluster) deadCount() int {
	dns, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	require.NoError(f.t, err)
	n := 0
	for _, d := range dns.Datanodes {
		if d.Health == stratov1.NodeHealth_NODE_DEAD {
			n++
		}
	}
	return n
}

func (f *faultCluster) balancerStatus() *stratov1.BalancerStatus {
	f.t.Helper()
	st, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.BalancerStatus, error) {
		return cc.GetBalancerStatus(ctx, &stratov1.GetBalancerStatusRequest{})
	})
	require.NoError(f.t, err)
	return st
}

// waitBalanced moves the clock on until the balancer has stopped with
// nothing in flight, reading a key at each look (reads go on during the
// moves), and returns its status.
func (f *faultCluster) waitBalanced(data map[string][]byte, during func(*stratov1.BalancerStatus)) *stratov1.BalancerStatus {
	f.t.Helper()
	var keys []string
	for p := range data {
		keys = append(keys, p)
	}
	deadline := time.Now().Add(120 * time.Second)
	for i := 0; ; i++ {
		time.Sleep(f.advance())
		f.requireContent(keys[i%len(keys)], data[keys[i%len(keys)]])
		st := f.balancerStatus()
		if during != nil {
			during(st)
		}
		if !st.Running && st.MovesInFlight == 0 {
			return st
		}
		require.True(f.t, time.Now().Before(deadline), "the balancer still runs: %v", st)
	}
}

// requireBalanced checks that every datanode is within the threshold of
// the mean, every key reads back whole, and every container has its
// three copies and no more.
func (f *faultCluster) requireBalanced(st *stratov1.BalancerStatus, data map[string][]byte) {
	f.t.Helper()
	require.Equal(f.t, "balanced", st.Outcome, "%v", st)
	require.Len(f.t, st.Datanodes, 6)
	for _, d := range st.Datanodes {
		require.Equal(f.t, "within", d.Class, "%v", st)
		require.Positive(f.t, d.Used, "%s took containers", d.Id)
	}
	require.Less(f.t, st.SpreadAfter, st.SpreadBefore)
	for p, want := range data {
		f.requireContent(p, want)
	}
	f.waitThreeCopies("", 20*time.Second)
	require.Eventually(f.t, func() bool {
		f.advance()
		for _, c := range f.containers() {
			if c.State == stratov1.ContainerState_CONTAINER_CLOSED && len(f.replicas(c.Id).Replicas) > 3 {
				return false
			}
		}
		return true
	}, 30*time.Second, 10*time.Millisecond, "every source's replica dropped")
}

func (f *faultCluster) startBalancer(req *stratov1.StartBalancerRequest) {
	f.t.Helper()
	_, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.BalancerStatus, error) {
		return cc.StartBalancer(ctx, req)
	})
	require.NoError(f.t, err)
}

// TestBalancer: three full datanodes, three empty ones back; the
// balancer moves containers until every datanode is within 10% of the
// mean, keys read back during the moves and after, and each container
// keeps exactly its three copies.
func TestBalancer(t *testing.T) {
	f, data := balancerCluster(t, 1)
	st := f.balancerStatus()
	require.Zero(t, st.StartedUnixMs, "never started")
	require.Greater(t, st.Spread, 0.3)
	f.startBalancer(&stratov1.StartBalancerRequest{Threshold: 0.10, Bandwidth: -1})
	st = f.waitBalanced(data, nil)
	t.Logf("balancer: %v", st)
	f.requireBalanced(st, data)
	require.Positive(t, st.MovedContainers)
}

// TestBalancerMetaFailover: with meta as three replicas, the leader is
// stopped while the balancer moves containers (paced by its bandwidth, so
// that moves are under way); the new leader resumes the same run from its
// record once it has settled and brings every datanode within the
// threshold, with nothing lost and no copy left over.
func TestBalancerMetaFailover(t *testing.T) {
	f, data := balancerCluster(t, 3)
	f.startBalancer(&stratov1.StartBalancerRequest{Threshold: 0.10, Bandwidth: 2 << 20})
	run := f.balancerStatus().StartedUnixMs
	stopped := false
	st := f.waitBalanced(data, func(st *stratov1.BalancerStatus) {
		if stopped || st.MovedContainers == 0 || st.MovesInFlight == 0 {
			return
		}
		stopped = true
		for i := range 3 {
			if m := f.c.MetaServer(i); m != nil && m.Metrics().Leader {
				require.NoError(t, f.c.StopMeta(i))
				return
			}
		}
		t.Fatal("no meta leader")
	})
	require.True(t, stopped, "the leader was stopped mid-balance")
	require.Equal(t, run, st.StartedUnixMs, "the same run, resumed")
	t.Logf("balancer: %v", st)
	f.requireBalanced(st, data)
}
