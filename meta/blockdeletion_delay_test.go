package meta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// TestBlockDeletionDelay: with Options.BlockDeletionDelay, the blocks of
// a deleted key are not sent for deletion before the delay has passed
// since the key was deleted (a backup of meta younger than the delay then
// restores without keys whose blocks are gone), and are sent after it.
func TestBlockDeletionDelay(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lis := listen(t)
	// The background tick never comes (the test calls deleteBlocksTick):
	// at an hour, it would find the datanodes silent that long DEAD.
	s := startServer(t, Options{Dir: t.TempDir(), TickInterval: 1000 * time.Hour, Clock: clock, BlockDeletionDelay: time.Hour}, lis)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.WaitReady(ctx))
	for i, id := range []string{"dn1", "dn2", "dn3"} {
		_, err := s.Register(ctx, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("127.0.0.1:%d", 19100+i)},
			Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}})
		require.NoError(t, err)
	}
	_, err := s.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = s.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	ok, err := s.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "k", SizeHint: 1})
	require.NoError(t, err)
	for _, b := range ok.Blocks {
		b.Length = 10
	}
	_, err = s.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k", OpenId: ok.OpenId, Blocks: ok.Blocks})
	require.NoError(t, err)
	report := &stratov1.ContainerReport{Full: true}
	for _, c := range s.cl.Containers(0, 0) {
		report.Replicas = append(report.Replicas, &stratov1.ContainerReplica{ContainerId: c.Id, State: stratov1.ContainerState_CONTAINER_OPEN})
	}
	for _, id := range []string{"dn1", "dn2", "dn3"} {
		_, err := s.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: id, Report: report})
		require.NoError(t, err)
	}
	_, err = s.DeleteKey(ctx, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k"})
	require.NoError(t, err)

	alive := func() { // the datanodes heartbeat, as they would all along
		for _, id := range []string{"dn1", "dn2", "dn3"} {
			_, err := s.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: id})
			require.NoError(t, err)
		}
	}
	clock.Advance(time.Hour - time.Second)
	alive()
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.Zero(t, s.BlockDeletionStats().Blocks, "nothing is sent before the delay")
	clock.Advance(time.Second)
	alive()
	require.NoError(t, s.deleteBlocksTick(ctx))
	require.NotZero(t, s.BlockDeletionStats().Blocks, "the blocks are sent once the delay has passed")
}
