package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestThreeMetaReplicas: with meta as a three-voter group, losing the
// leader loses nothing: the client and the datanodes follow the new leader
// (the datanodes register again with it), writes and reads go on, and a
// bucket snapshot taken before reads after.
func TestThreeMetaReplicas(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 4 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	before := fastRandom(9<<20, 1)
	require.NoError(t, f.write(ctx, "/vol/bkt/before", before, 128<<10, 0, nil))
	// A bucket snapshot taken before the failover is read after it.
	_, err := f.cl.CreateSnapshot(ctx, "vol", "bkt", "s1")
	require.NoError(t, err)

	leader := stopMetaLeader(t, f.c)

	after := fastRandom(7<<20, 2)
	require.NoError(t, f.write(ctx, "/vol/bkt/after", after, 128<<10, 0, nil))
	f.requireContent("/vol/bkt/before", before)
	f.requireContent("/vol/bkt/after", after)
	require.NoError(t, f.cl.Delete(ctx, "/vol/bkt/before", false))
	f.requireContent("/vol/bkt/.snapshot/s1/before", before)

	// The old leader comes back as a follower and catches up.
	require.NoError(t, f.c.StartMeta(leader))
	require.Eventually(t, func() bool {
		m := f.c.MetaServer(leader)
		st := m.Metrics().Consensus
		return st.LeaderID != 0 && st.Applied >= f.c.Meta().Metrics().Consensus.Commit
	}, 20*time.Second, 50*time.Millisecond)
}

// TestMetaMembershipUnderLoad: while a client writes files, a fourth meta
// replica joins (learner, then voter) through the AddMetaMember RPC,
// leadership moves to it, and the first replica is removed and stops. The
// client and the datanodes (whose meta lists do not name the new replica)
// follow the leader hints; every file written is read back whole.
func TestMetaMembershipUnderLoad(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 1 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()

	var (
		mu      sync.Mutex
		written = map[string][]byte{}
		lastErr atomic.Value
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range 2 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				path := fmt.Sprintf("/vol/bkt/w%d/f%04d", w, i)
				data := fastRandom(300<<10+i, uint64(w<<20|i))
				if err := f.write(ctx, path, data, 64<<10, 0, nil); err != nil {
					lastErr.Store(fmt.Sprintf("%s: %v", path, err))
					continue // not acknowledged: not checked
				}
				mu.Lock()
				written[path] = data
				mu.Unlock()
			}
		})
	}
	progress := func(stage string) {
		t.Helper()
		mu.Lock()
		target := len(written) + 5
		mu.Unlock()
		if !assert.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(written) >= target
		}, 30*time.Second, 10*time.Millisecond) {
			t.Fatalf("writes stopped %s (last error: %v)", stage, lastErr.Load())
		}
	}
	progress("at first")

	i, err := f.c.AddMetaReplica(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, i)
	n4 := f.c.MetaServer(3)
	require.Eventually(t, func() bool { return len(n4.Node().Status().Voters) == 4 }, 10*time.Second, 10*time.Millisecond)
	progress("after the addition")

	call := func(fn func(context.Context, client.ClusterStubs) (*stratov1.MetaMembersResponse, error)) {
		t.Helper()
		_, err := client.Cluster(ctx, f.cl, fn)
		require.NoError(t, err)
	}
	call(func(ctx context.Context, cc client.ClusterStubs) (*stratov1.MetaMembersResponse, error) {
		return cc.TransferMetaLeader(ctx, &stratov1.TransferMetaLeaderRequest{Id: 4})
	})
	require.Eventually(t, n4.Node().IsLeader, 10*time.Second, 10*time.Millisecond)
	call(func(ctx context.Context, cc client.ClusterStubs) (*stratov1.MetaMembersResponse, error) {
		return cc.RemoveMetaMember(ctx, &stratov1.RemoveMetaMemberRequest{Id: 1})
	})
	select {
	case <-f.c.MetaServer(0).Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the removed replica did not stop")
	}
	require.NoError(t, f.c.StopMeta(0))
	progress("after the transfer and the removal")
	// The datanodes registered again with the new leader.
	require.Eventually(t, func() bool { return n4.Metrics().HealthyDatanodes == 3 }, 10*time.Second, 10*time.Millisecond)
	stop.Store(true)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	for path, data := range written {
		f.requireContent(path, data)
	}
	t.Logf("%d files written and read back", len(written))
	require.Equal(t, []uint64{2, 3, 4}, n4.Node().Status().Voters)
}
