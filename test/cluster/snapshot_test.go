package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestSnapshotHoldsBlocks: the blocks of keys deleted or overwritten after
// a snapshot stay on every replica through deletion rounds and a meta
// restart, and read back through .snapshot; once the snapshot is deleted
// (meta restarted right after, before its purge could run) they are freed on
// every replica and the bucket's usage falls to what it holds.
func TestSnapshotHoldsBlocks(t *testing.T) {
	f := startFaultCluster(t, deleteOptions(), stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	k1, k2, k2new := fastRandom(8<<20, 1), fastRandom(8<<20, 2), fastRandom(4<<20, 3)
	require.NoError(t, f.write(ctx, "/vol/bkt/dir/k1", k1, 1<<20, 0, nil))
	require.NoError(t, f.write(ctx, "/vol/bkt/k2", k2, 1<<20, 0, nil))
	f.waitSpace(16<<20, 4, 10*time.Second)

	_, err := f.cl.CreateSnapshot(ctx, "vol", "bkt", "s1")
	require.NoError(t, err)
	require.NoError(t, f.cl.Delete(ctx, "/vol/bkt/dir", true))
	w, err := f.cl.Create(ctx, "/vol/bkt/k2", client.CreateOptions{Overwrite: true})
	require.NoError(t, err)
	_, err = w.Write(k2new)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	// Deletion rounds pass: the snapshot's blocks stay.
	for range 5 {
		for range 10 {
			time.Sleep(f.advance())
		}
		f.waitSpace(20<<20, 5, 10*time.Second)
	}
	f.requireContent("/vol/bkt/.snapshot/s1/dir/k1", k1)
	f.requireContent("/vol/bkt/.snapshot/s1/k2", k2)
	f.requireContent("/vol/bkt/k2", k2new)
	bk, err := f.cl.GetBucket(ctx, "vol", "bkt")
	require.NoError(t, err)
	require.EqualValues(t, 20<<20, bk.UsedBytes, "the snapshot's bytes count in the bucket's usage")

	// A meta restart keeps the snapshot.
	require.NoError(t, f.c.RestartMeta())
	f.requireContent("/vol/bkt/.snapshot/s1/dir/k1", k1)
	diff, err := f.cl.SnapshotDiff(ctx, "vol", "bkt", "s1", "")
	require.NoError(t, err)
	var lines []string
	for _, e := range diff {
		lines = append(lines, e.Type.String()+" "+e.Path)
	}
	require.Equal(t, []string{"SNAPSHOT_DIFF_DELETE dir", "SNAPSHOT_DIFF_DELETE k2", "SNAPSHOT_DIFF_CREATE k2"}, lines)

	// Deleted, with meta restarted right after: everything
	// only the snapshot held is freed all the same.
	require.NoError(t, f.cl.DeleteSnapshot(ctx, "vol", "bkt", "s1"))
	require.NoError(t, f.c.RestartMeta())
	took := f.waitSpace(4<<20, 1, 60*time.Second)
	t.Logf("snapshot deleted: its 16 MiB freed on all replicas in %v", took)
	f.requireContent("/vol/bkt/k2", k2new)
	_, err = f.read(ctx, "/vol/bkt/.snapshot/s1/k2")
	require.ErrorContains(t, err, "snapshot not found")
	bk, err = f.cl.GetBucket(ctx, "vol", "bkt")
	require.NoError(t, err)
	require.EqualValues(t, 4<<20, bk.UsedBytes)
}
