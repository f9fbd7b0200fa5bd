package cluster

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestSnapshotAfterRaftInstall: a meta follower that was down while a
// bucket snapshot was taken and the bucket changed catches up through a
// Raft snapshot (the log was compacted meanwhile); made leader, it serves
// the bucket snapshot and its diff as the old leader did.
func TestSnapshotAfterRaftInstall(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, MetaReplicas: 3,
		TickInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	ctx := t.Context()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_FSO})
	require.NoError(t, err)
	require.NoError(t, cl.Mkdirs(ctx, "/vol/bkt/keep/a"))

	follower := -1
	for i := range 3 {
		if !c.MetaServer(i).Metrics().Leader {
			follower = i
		}
	}
	require.NoError(t, c.StopMeta(follower))
	_, err = cl.CreateSnapshot(ctx, "vol", "bkt", "s1")
	require.NoError(t, err)
	require.NoError(t, cl.Delete(ctx, "/vol/bkt/keep", true))
	// Enough entries that the log is compacted past the follower's place
	// (consensus compacts every 10,000).
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1400 {
				if err := cl.Mkdirs(ctx, fmt.Sprintf("/vol/bkt/load/%d/%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	require.NoError(t, <-errs)

	require.NoError(t, c.StartMeta(follower))
	m := c.MetaServer(follower)
	require.Eventually(t, func() bool { return m.Node().Metrics().SnapshotsApplied > 0 }, 30*time.Second, 50*time.Millisecond,
		"the follower installs a Raft snapshot")
	require.Eventually(t, func() bool {
		return m.Metrics().Consensus.Applied >= c.Meta().Metrics().Consensus.Commit
	}, 30*time.Second, 50*time.Millisecond)
	require.NoError(t, c.Meta().Node().TransferLeadership(ctx, m.Node().ID()))
	require.Eventually(t, func() bool { return m.Metrics().Leader }, 10*time.Second, 20*time.Millisecond)

	st, err := cl.Stat(ctx, "/vol/bkt/.snapshot/s1/keep/a")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	_, err = cl.Stat(ctx, "/vol/bkt/keep")
	require.ErrorIs(t, err, client.ErrNotFound)
	diff, err := cl.SnapshotDiff(ctx, "vol", "bkt", "s1", "")
	require.NoError(t, err)
	require.Len(t, diff, 2) // - keep, + load
}
