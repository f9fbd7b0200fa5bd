package cluster

import (
	"fmt"
	"path"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestTrashCheckpointsRollAndExpire: on meta's clock, a directory moved
// into the trash keeps its blocks; the next checkpoint round makes
// Current a checkpoint named by the time; once the checkpoint is older
// than the trash interval a round deletes it, and block deletion gives
// its space back on every datanode.
func TestTrashCheckpointsRollAndExpire(t *testing.T) {
	o := deleteOptions()
	o.TrashInterval, o.TrashCheckpointInterval = time.Minute, 20*time.Second
	f := startFaultCluster(t, o, stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()

	pol, err := f.cl.TrashPolicy(ctx)
	require.NoError(t, err)
	require.Equal(t, time.Minute.Milliseconds(), pol.IntervalMs)
	require.Equal(t, (20 * time.Second).Milliseconds(), pol.CheckpointIntervalMs)
	root := "/vol/bkt/.Trash/" + f.cl.TrashUser(pol)

	data := fastRandom(8<<20, 1)
	require.NoError(t, f.write(ctx, "/vol/bkt/dir/f", data, 1<<20, 0, nil))
	f.waitSpace(8<<20, 2, 10*time.Second)
	dst, skipped, err := f.cl.MoveToTrash(ctx, "/vol/bkt/dir")
	require.NoError(t, err)
	require.Empty(t, skipped)
	require.Equal(t, root+"/Current/vol/bkt/dir", dst)
	_, err = f.cl.Stat(ctx, "/vol/bkt/dir")
	require.ErrorIs(t, err, client.ErrNotFound)

	// The next round (within a checkpoint interval) rolls Current.
	checkpoint := regexp.MustCompile(`^` + regexp.QuoteMeta(root) + `/\d{12}$`)
	var cp string
	for start := time.Now(); cp == ""; time.Sleep(f.advance()) {
		require.Less(t, time.Since(start), 20*time.Second, "no checkpoint")
		sts, err := f.cl.List(ctx, root)
		require.NoError(t, err)
		if len(sts) == 1 && checkpoint.MatchString("/vol/bkt/"+sts[0].Path) {
			cp = "/vol/bkt/" + sts[0].Path
		}
	}
	f.requireContent(path.Join(cp, "vol/bkt/dir/f"), data)
	require.Equal(t, [3]int64{8 << 20, 8 << 20, 8 << 20}, f.usage().used, "a checkpoint keeps its blocks")

	// Past the interval, a round deletes the checkpoint: its blocks go.
	took := f.waitSpace(0, 0, 60*time.Second)
	t.Logf("checkpoint expired and its blocks freed in %v", took)
	_, err = f.cl.Stat(ctx, cp)
	require.ErrorIs(t, err, client.ErrNotFound)
	require.Positive(t, f.c.Meta().BlockDeletionStats().Purged)
}

// TestTrashRoundSpansTicks: a round over more buckets than one tick takes
// (trashBucketsPerTick, 64) goes on from its cursor, across volumes, until
// every FSO bucket's Current is a checkpoint; an OBS bucket is skipped.
func TestTrashRoundSpansTicks(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, Clock: fakeClock(),
		TrashInterval: time.Hour, TrashCheckpointInterval: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	ctx := t.Context()
	cl, err := client.New(client.Options{Meta: c.MetaAddrs()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })

	var paths []string
	for v, n := range map[string]int{"vol1": 50, "vol2": 30} {
		_, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: v})
		require.NoError(t, err)
		for i := range n {
			b := fmt.Sprintf("b%02d", i)
			_, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: v, Name: b})
			require.NoError(t, err)
			p := "/" + v + "/" + b + "/.Trash/u"
			require.NoError(t, cl.Mkdirs(ctx, p+"/Current/x"))
			paths = append(paths, p)
		}
	}
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol2", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)

	for start := time.Now(); ; time.Sleep(advance(c)) {
		require.Less(t, time.Since(start), 30*time.Second, "not every bucket checkpointed")
		left := 0
		for _, p := range paths {
			if _, err := cl.Stat(ctx, p+"/Current"); err == nil {
				left++
			}
		}
		if left == 0 {
			break
		}
	}
	for _, p := range paths {
		sts, err := cl.List(ctx, p)
		require.NoError(t, err)
		require.Len(t, sts, 1, p)
		require.Regexp(t, `/\d{12}$`, sts[0].Path)
	}
}
