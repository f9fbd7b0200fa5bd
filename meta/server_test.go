package meta_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The tests of meta's RPCs run meta on a minicluster without datanodes
// (MetaOnly): they register stand-in datanodes by RPC where they need
// some. The white-box tests that reach into the server stay in package
// meta (start_test.go).

// startMeta starts meta alone (o.MetaReplicas of it) with quick elections,
// on o.Dir or a new directory, until the test ends.
func startMeta(t *testing.T, o minicluster.Options) *minicluster.Cluster {
	t.Helper()
	o.MetaOnly = true
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	configure := o.ConfigureMeta
	o.ConfigureMeta = func(i int, mo *meta.Options) {
		mo.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
		if configure != nil {
			configure(i, mo)
		}
	}
	c, err := minicluster.Start(t.Context(), o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// dial connects a client to every meta replica of c.
func dial(t *testing.T, c *minicluster.Cluster) *client.MetaConn {
	t.Helper()
	mc, err := client.DialMeta(c.MetaAddrs())
	require.NoError(t, err)
	t.Cleanup(func() { _ = mc.Close() })
	return mc
}

// restartMeta restarts c's single replica and waits until it leads again.
func restartMeta(t *testing.T, c *minicluster.Cluster) {
	t.Helper()
	require.NoError(t, c.RestartMeta())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.WaitReady(ctx))
}

// leader waits until a replica of c leads and returns its index.
func leader(t *testing.T, c *minicluster.Cluster) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i := range c.MetaAddrs() {
			if s := c.MetaServer(i); s != nil && s.Node().IsLeader() {
				return i
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no leader elected")
	return -1
}

func ns(t *testing.T, mc *client.MetaConn, fn func(ctx context.Context, ns stratov1.NamespaceServiceClient) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return mc.Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		return fn(ctx, n)
	})
}

func requireCode(t *testing.T, want codes.Code, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, status.Code(err), "error: %v", err)
}

func TestNamespaceOverGRPC(t *testing.T) {
	mc := dial(t, startMeta(t, minicluster.Options{}))
	var dir *stratov1.CreateDirectoryResponse
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"}); err != nil {
			return err
		}
		if _, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"}); err != nil {
			return err
		}
		var err error
		dir, err = n.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "a/b/c"})
		return err
	}))
	require.EqualValues(t, 3, dir.Created)

	// A file: create, commit, stat, rename, list, delete.
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		ok, err := n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "a/b/f", Recursive: true})
		if err != nil {
			return err
		}
		if _, err := n.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "a/b/f", OpenId: ok.OpenId}); err != nil {
			return err
		}
		st, err := n.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "a/b/f"})
		if err != nil {
			return err
		}
		require.False(t, st.Status.IsDirectory)
		if _, err := n.Rename(ctx, &stratov1.RenameRequest{Volume: "vol", Bucket: "bkt", Src: "a/b/f", Dst: "a/g"}); err != nil {
			return err
		}
		ls, err := n.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: "vol", Bucket: "bkt", Path: "a"})
		if err != nil {
			return err
		}
		var names []string
		for _, s := range ls.Statuses {
			names = append(names, s.Path)
		}
		require.Equal(t, []string{"a/b", "a/g"}, names)
		_, err = n.Delete(ctx, &stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: "a/g"})
		return err
	}))

	// Errors keep their class across the wire.
	err := ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "a/g"})
		return err
	})
	requireCode(t, codes.NotFound, err)
	require.Contains(t, status.Convert(err).Message(), "not found")
	requireCode(t, codes.AlreadyExists, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
		return err
	}))
	err = ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "Bad_Name"})
		return err
	})
	requireCode(t, codes.InvalidArgument, err)
	requireCode(t, codes.FailedPrecondition, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.DeleteBucket(ctx, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "bkt"})
		return err
	}))
	requireCode(t, codes.FailedPrecondition, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.Delete(ctx, &stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: "a"})
		return err
	}))
}

func TestRestartRecoversCommittedState(t *testing.T) {
	c := startMeta(t, minicluster.Options{})
	mc := dial(t, c)
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"}); err != nil {
			return err
		}
		if _, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"}); err != nil {
			return err
		}
		for i := 0; i < 50; i++ {
			if _, err := n.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: fmt.Sprintf("d/%d", i)}); err != nil {
				return err
			}
		}
		return nil
	}))
	restartMeta(t, c)
	mc2 := dial(t, c)
	require.NoError(t, ns(t, mc2, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		ls, err := n.ListStatus(ctx, &stratov1.ListStatusRequest{Volume: "vol", Bucket: "bkt", Path: "d", Limit: 1000})
		if err != nil {
			return err
		}
		require.Len(t, ls.Statuses, 50)
		return nil
	}))
}

func TestBlockAllocationThroughCluster(t *testing.T) {
	mc := dial(t, startMeta(t, minicluster.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, mc.Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, cl client.ClusterStubs) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"}); err != nil {
			return err
		}
		if _, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"}); err != nil {
			return err
		}
		// In safe mode until a datanode registers: allocation refused.
		_, err := n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "f", SizeHint: 1 << 20})
		requireCode(t, codes.Unavailable, err)
		require.Contains(t, err.Error(), "safe mode")

		for i := 1; i <= 3; i++ {
			if _, err := cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 19000+i)},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}}); err != nil {
				return err
			}
		}
		ok, err := n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "f", SizeHint: 1 << 20})
		if err != nil {
			return err
		}
		require.Len(t, ok.Blocks, 1)
		require.Len(t, ok.Blocks[0].Pipeline.Members, 3)
		second, err := n.AllocateBlock(ctx, &stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "f", OpenId: ok.OpenId, SizeHint: 1})
		if err != nil {
			return err
		}
		require.NotEqual(t, ok.Blocks[0].BlockId.LocalId, second.Block.BlockId.LocalId)
		blocks := []*stratov1.BlockLocation{ok.Blocks[0], second.Block}
		blocks[0].Length, blocks[1].Length = 100, 50
		if _, err := n.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "f", OpenId: ok.OpenId, Blocks: blocks}); err != nil {
			return err
		}
		k, err := n.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: "f"})
		if err != nil {
			return err
		}
		require.EqualValues(t, 150, k.Key.Size)
		require.Len(t, k.Key.Blocks, 2)

		dns, err := cl.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		if err != nil {
			return err
		}
		require.Len(t, dns.Datanodes, 3)
		ps, err := cl.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
		if err != nil {
			return err
		}
		require.Len(t, ps.Pipelines, 4, "one of replication THREE, one of ONE per datanode")
		// Heartbeat from a datanode meta does not know: told to register.
		hb, err := cl.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: "ghost"})
		if err != nil {
			return err
		}
		require.True(t, hb.Reregister)
		return nil
	}))
}

func TestThreeVotersFailoverLosesNoAcknowledgedWrite(t *testing.T) {
	c := startMeta(t, minicluster.Options{MetaReplicas: 3})
	li := leader(t, c)
	leaderID := c.MetaServer(li).ID()

	// A follower refuses a write and names the leader.
	s := c.MetaServer((li + 1) % 3)
	require.Eventually(t, func() bool { id, _ := s.Node().Leader(); return id == leaderID }, 10*time.Second, time.Millisecond,
		"the follower hears from the new leader")
	_, err := s.CreateVolume(context.Background(), &stratov1.CreateVolumeRequest{Name: "vol"})
	requireCode(t, codes.Unavailable, err)
	addr, retry := client.LeaderHint(err)
	require.True(t, retry)
	require.Equal(t, c.MetaAddrs()[li], addr)

	mc := dial(t, c)
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"}); err != nil {
			return err
		}
		_, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
		return err
	}))

	// 16 writers create directories; the leader is killed under load.
	var (
		acked   sync.Map
		nAcked  atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
		failed  atomic.Int64
		writers = 16
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				p := fmt.Sprintf("w%d/d%d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				err := mc.Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
					_, err := n.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: p})
					return err
				})
				cancel()
				if err == nil {
					acked.Store(p, true)
					nAcked.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}(w)
	}
	waitFor := func(n int64) {
		deadline := time.Now().Add(20 * time.Second)
		for nAcked.Load() < n && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.GreaterOrEqual(t, nAcked.Load(), n)
	}
	waitFor(300)
	require.NoError(t, c.StopMeta(li))
	before := nAcked.Load()
	waitFor(before + 300) // the survivors elect a leader and carry on
	stop.Store(true)
	wg.Wait()
	t.Logf("acknowledged %d writes (%d before the kill), %d failed cleanly", nAcked.Load(), before, failed.Load())

	// Every acknowledged directory is on the new leader.
	newLeader := c.MetaServer(leader(t, c))
	acked.Range(func(k, _ any) bool {
		_, err := newLeader.GetFileStatus(context.Background(), &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: k.(string)})
		require.NoError(t, err, "acknowledged directory %s lost", k)
		return true
	})
}

// TestRetriedRequestOverGRPC: a mutation retried with the same request ID
// (gRPC metadata) gets the first reply instead of failing; without the ID
// the repeat fails.
func TestRetriedRequestOverGRPC(t *testing.T) {
	mc := dial(t, startMeta(t, minicluster.Options{}))
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol", Owner: "o"}); err != nil {
			return err
		}
		_, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Owner: "o"})
		return err
	}))
	rename := func(ctx context.Context) error {
		return ns(t, mc, func(_ context.Context, n stratov1.NamespaceServiceClient) error {
			_, err := n.Rename(ctx, &stratov1.RenameRequest{Volume: "vol", Bucket: "bkt", Src: "d", Dst: "e"})
			return err
		})
	}
	require.NoError(t, ns(t, mc, func(ctx context.Context, n stratov1.NamespaceServiceClient) error {
		_, err := n.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "d"})
		return err
	}))
	ctx := metadata.AppendToOutgoingContext(context.Background(), "strato-client", "c1", "strato-request", "42")
	require.NoError(t, rename(ctx))
	require.NoError(t, rename(ctx), "the retry gets the first reply")
	requireCode(t, codes.NotFound, rename(context.Background()))
}

// A datanode registered with one cluster is refused by another (a meta
// address reused, a volume moved): its replicas would otherwise join the
// wrong cluster's replica map. The cluster ID survives a restart.
func TestRegisterRefusesAnotherCluster(t *testing.T) {
	a := startMeta(t, minicluster.Options{})
	mcA, mcB := dial(t, a), dial(t, startMeta(t, minicluster.Options{}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	register := func(mc *client.MetaConn, id, cluster string) (string, error) {
		var resp *stratov1.RegisterResponse
		err := mc.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl client.ClusterStubs) error {
			var err error
			resp, err = cl.Register(ctx, &stratov1.RegisterRequest{ClusterId: cluster,
				Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:19001"},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}})
			return err
		})
		return resp.GetClusterId(), err
	}
	cidA, err := register(mcA, "dn1", "")
	require.NoError(t, err)
	require.NotEmpty(t, cidA)
	again, err := register(mcA, "dn1", cidA)
	require.NoError(t, err)
	require.Equal(t, cidA, again)

	cidB, err := register(mcB, "dn2", "")
	require.NoError(t, err)
	require.NotEqual(t, cidA, cidB)
	_, err = register(mcB, "dn1", cidA)
	requireCode(t, codes.FailedPrecondition, err)
	require.Contains(t, err.Error(), cidA)
	var dns *stratov1.ListDatanodesResponse
	require.NoError(t, mcB.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl client.ClusterStubs) error {
		dns, err = cl.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		return err
	}))
	require.Len(t, dns.Datanodes, 1, "only B's own datanode is known to B")

	restartMeta(t, a)
	mcA2 := dial(t, a)
	after, err := register(mcA2, "dn1", cidA)
	require.NoError(t, err)
	require.Equal(t, cidA, after, "the cluster ID is durable")
	_, err = register(mcA2, "dn3", cidB)
	requireCode(t, codes.FailedPrecondition, err)
}

// TestAuthTokenNeedsTLS: token authentication without TLS would send
// tokens in the clear and let any process register as a datanode and take
// the block-token keys; meta refuses to start so unless told it is a test.
func TestAuthTokenNeedsTLS(t *testing.T) {
	o := meta.Options{Dir: t.TempDir(), Auth: meta.AuthToken}
	o.EnsureDefaults()
	err := o.Validate()
	require.ErrorContains(t, err, "needs TLS")
	o.AuthWithoutTLS = true
	require.NoError(t, o.Validate())
}
