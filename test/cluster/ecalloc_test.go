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

// TestErasureCodedAllocation: meta allocates a block group of rs-3-2 over
// the 5 datanodes of an EC pipeline, in member order and marked as a
// group; every member's datanode learns its replica index from meta (a
// command on its heartbeat) and reports it; an empty erasure coded key
// commits, and its group is deleted from every member.
func TestErasureCodedAllocation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 5,
		HeartbeatInterval: 3 * time.Second, Clock: fakeClock()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, e, err := client.ParseReplication("rs-3-2-1024k")
	require.NoError(t, err)
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "ecb", ErasureCoding: e})
	require.NoError(t, err)

	do := func(fn func(ns stratov1.NamespaceServiceClient, s client.ClusterStubs) error) {
		t.Helper()
		require.NoError(t, cl.Meta().Do(ctx, func(_ context.Context, ns stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
			return fn(ns, s)
		}))
	}
	var open *stratov1.OpenKeyResponse
	do(func(ns stratov1.NamespaceServiceClient, _ client.ClusterStubs) (err error) {
		open, err = ns.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "k", SizeHint: 1 << 20})
		return err
	})
	require.Equal(t, "rs-3-2-1024k", client.Redundancy(open.Replication, open.ErasureCoding))
	require.Len(t, open.Blocks, 1)
	bl := open.Blocks[0]
	require.Equal(t, "rs-3-2-1024k", client.Redundancy(0, bl.Pipeline.GetErasureCoding()))
	members := bl.Pipeline.GetMembers()
	require.Len(t, members, 5)
	index := map[string]int32{} // datanode → the replica index it must hold
	for i, m := range members {
		index[m.Id] = int32(i + 1)
	}
	require.Len(t, index, 5, "distinct datanodes")

	// The pipeline is an EC one with the members in the same order.
	do(func(_ stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
		pipes, err := s.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
		if err != nil {
			return err
		}
		for _, p := range pipes.Pipelines {
			if p.Id == bl.Pipeline.Id {
				require.NotNil(t, p.ErasureCoding)
				for i, m := range members {
					require.Equal(t, m.Id, p.Members[i])
				}
				return nil
			}
		}
		t.Fatalf("pipeline %d not listed", bl.Pipeline.Id)
		return nil
	})

	// Every member's datanode reports the container with its index.
	cid := bl.BlockId.ContainerId
	var reps *stratov1.ContainerReplicasResponse
	require.Eventually(t, func() bool {
		advance(c)
		do(func(_ stratov1.NamespaceServiceClient, s client.ClusterStubs) (err error) {
			reps, err = s.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: cid})
			return err
		})
		if len(reps.Replicas) != 5 {
			return false
		}
		for dn, r := range reps.Replicas {
			if r.ReplicaIndex != index[dn] {
				return false
			}
		}
		return true
	}, time.Minute, 10*time.Millisecond, "replicas %v, want indexes %v", reps, index)
	require.NotNil(t, reps.Container.ErasureCoding)
	require.Empty(t, reps.Container.MissingIndexes)

	// The key commits with its group empty, and is looked up as a group.
	do(func(ns stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		_, err := ns.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "ecb", Key: "k", OpenId: open.OpenId,
			Blocks: []*stratov1.BlockLocation{{BlockId: bl.BlockId, Length: 0}}})
		return err
	})
	do(func(ns stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		res, err := ns.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: "vol", Bucket: "ecb", Key: "k"})
		if err != nil {
			return err
		}
		require.Zero(t, res.Key.Size)
		require.Len(t, res.Key.Blocks, 1)
		got := res.Key.Blocks[0].Pipeline
		require.NotNil(t, got.ErasureCoding)
		require.Len(t, got.Members, 5)
		for i, m := range members {
			require.Equal(t, m.Id, got.Members[i].Id, "lookups keep member order")
		}
		return nil
	})

	// Deleted, its group is deleted on every member holding the container:
	// the entry goes once all five acknowledged.
	do(func(ns stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		_, err := ns.DeleteKey(ctx, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "ecb", Key: "k"})
		return err
	})
	require.Eventually(t, func() bool {
		advance(c)
		entries, _, err := c.Meta().DeletedBlocksBacklog(ctx)
		require.NoError(t, err)
		return entries == 0
	}, time.Minute, 10*time.Millisecond)
}
