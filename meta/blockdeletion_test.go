package meta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestBlockDeletionBatches drives the leader's block deletion by hand with
// three fake datanodes: each tick looks at a bounded number of blocks and
// resumes where the previous one stopped; an entry is purged only once
// every replica holder acknowledged it.
func TestBlockDeletionBatches(t *testing.T) {
	lis := listen(t)
	s := startServer(t, Options{Dir: t.TempDir(), TickInterval: time.Hour, DeleteBlocksBatch: 50}, lis)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.WaitReady(ctx))
	dns := []string{"dn1", "dn2", "dn3"}
	for i, id := range dns {
		_, err := s.Register(ctx, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("127.0.0.1:%d", 19000+i)},
			Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}})
		require.NoError(t, err)
	}
	_, err := s.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = s.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)

	// Five keys of 20 blocks each.
	const keys, perKey = 5, 20
	for k := range keys {
		name := fmt.Sprintf("k%d", k)
		ok, err := s.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: name, SizeHint: 1})
		require.NoError(t, err)
		blocks := ok.Blocks
		for len(blocks) < perKey {
			a, err := s.AllocateBlock(ctx, &stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: name, OpenId: ok.OpenId, SizeHint: 1})
			require.NoError(t, err)
			blocks = append(blocks, a.Block)
		}
		for _, b := range blocks {
			b.Length = 10
		}
		_, err = s.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: name, OpenId: ok.OpenId, Blocks: blocks})
		require.NoError(t, err)
	}
	// Every datanode holds every container of replication THREE.
	report := &stratov1.ContainerReport{Full: true}
	for _, c := range s.cl.Containers(0, 0) {
		if c.Replication == stratov1.ReplicationFactor_REPLICATION_THREE {
			report.Replicas = append(report.Replicas, &stratov1.ContainerReplica{ContainerId: c.Id, State: stratov1.ContainerState_CONTAINER_OPEN})
		}
	}
	require.NotEmpty(t, report.Replicas)
	beat := func(id string, acks ...uint64) []*stratov1.DeleteBlocksCommand {
		resp, err := s.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: id, Report: report, DeletedBlocksAcks: acks})
		require.NoError(t, err)
		var out []*stratov1.DeleteBlocksCommand
		for _, c := range resp.Commands {
			if d := c.GetDeleteBlocks(); d != nil {
				out = append(out, d)
			}
		}
		return out
	}
	for _, id := range dns {
		beat(id)
	}
	for k := range keys {
		_, err := s.DeleteKey(ctx, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "bkt", Key: fmt.Sprintf("k%d", k)})
		require.NoError(t, err)
	}
	entries, blocks, err := s.DeletedBlocksBacklog(ctx)
	require.NoError(t, err)
	require.Equal(t, keys, entries)
	require.Equal(t, keys*perKey, blocks)

	// Tick 1 looks at 3 entries (60 blocks ≥ 50), tick 2 at the other 2.
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.EqualValues(t, 3*perKey*len(dns), s.BlockDeletionStats().Blocks)
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.EqualValues(t, keys*perKey*len(dns), s.BlockDeletionStats().Blocks)
	// Tick 3: everything in flight, nothing sent again.
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.EqualValues(t, keys*perKey*len(dns), s.BlockDeletionStats().Blocks)
	require.Equal(t, keys, s.BlockDeletionStats().InFlight)

	seqs := map[string][]uint64{}
	for _, id := range dns {
		n := 0
		seen := map[uint64]bool{}
		for _, d := range beat(id) {
			n += len(d.LocalIds)
			if !seen[d.Seq] {
				seen[d.Seq] = true
				seqs[id] = append(seqs[id], d.Seq)
			}
		}
		require.Equal(t, keys*perKey, n, id)
		require.Len(t, seqs[id], keys)
	}
	// Two of three acknowledge: nothing is purged.
	beat("dn1", seqs["dn1"]...)
	beat("dn2", seqs["dn2"]...)
	require.NoError(t, s.deleteBlocksTick(ctx))
	entries, _, err = s.DeletedBlocksBacklog(ctx)
	require.NoError(t, err)
	require.Equal(t, keys, entries)
	// The third acknowledges: all purged.
	beat("dn3", seqs["dn3"]...)
	require.NoError(t, s.deleteBlocksTick(ctx))
	entries, _, err = s.DeletedBlocksBacklog(ctx)
	require.NoError(t, err)
	require.Zero(t, entries)
	st := s.BlockDeletionStats()
	require.EqualValues(t, keys, st.Purged)
	require.Zero(t, st.InFlight)
}
