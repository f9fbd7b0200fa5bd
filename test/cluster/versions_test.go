package cluster

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestVersionsSurviveMetaFailover: the versions and delete markers of a
// versioned bucket (S3 versioning) are meta state like any other: after
// the meta leader is lost, the new leader lists them and every version
// reads back; a delete marker removed there brings the object back.
func TestVersionsSurviveMetaFailover(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 1 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	_, err := f.cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE})
	require.NoError(t, err)
	_, err = f.cl.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Versioning: stratov1.BucketVersioning_VERSIONING_ENABLED})
	require.NoError(t, err)

	data := map[string][]byte{}
	var ids []string
	for i := range 3 {
		d := fastRandom((i+1)<<20, uint64(i+1))
		w, err := f.cl.CreateKey(ctx, "vol", "obs", "k", client.WriteOptions{})
		require.NoError(t, err)
		_, err = w.Write(d)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		require.NotEmpty(t, w.VersionID())
		ids = append(ids, w.VersionID())
		data[w.VersionID()] = d
	}
	del, err := f.cl.DeleteKeyVersion(ctx, "vol", "obs", "k", "")
	require.NoError(t, err)
	require.True(t, del.DeleteMarker)

	stopMetaLeader(t, f.c)

	list, err := f.cl.ListKeyVersions(ctx, &stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "obs"})
	require.NoError(t, err)
	var got []string
	for _, v := range list.Versions {
		got = append(got, v.VersionId)
	}
	require.Equal(t, []string{del.VersionId, ids[2], ids[1], ids[0]}, got)
	require.True(t, list.Versions[0].DeleteMarker && list.Versions[0].IsLatest)
	for id, d := range data {
		r, err := f.cl.OpenKeyVersion(ctx, "vol", "obs", "k", client.KeyVersion{ID: id})
		require.NoError(t, err)
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.True(t, bytes.Equal(d, b), "version %s", id)
	}
	_, err = f.cl.LookupKey(ctx, "vol", "obs", "k")
	require.ErrorIs(t, err, client.ErrNotFound)
	_, err = f.cl.DeleteKeyVersion(ctx, "vol", "obs", "k", del.VersionId)
	require.NoError(t, err)
	ki, err := f.cl.LookupKey(ctx, "vol", "obs", "k")
	require.NoError(t, err)
	require.Equal(t, ids[2], ki.VersionId)
	// Deleting a version for good frees its bytes.
	bk, err := f.cl.GetBucket(ctx, "vol", "obs")
	require.NoError(t, err)
	require.EqualValues(t, 6<<20, bk.UsedBytes)
	_, err = f.cl.DeleteKeyVersion(ctx, "vol", "obs", "k", ids[0])
	require.NoError(t, err)
	bk, err = f.cl.GetBucket(ctx, "vol", "obs")
	require.NoError(t, err)
	require.EqualValues(t, 5<<20, bk.UsedBytes)
}

// stopMetaLeader stops the meta replica that leads and returns its index.
func stopMetaLeader(t *testing.T, c *minicluster.Cluster) int {
	t.Helper()
	leader := -1
	for i := range c.Options().MetaReplicas {
		if m := c.MetaServer(i); m != nil && m.Metrics().Leader {
			leader = i
		}
	}
	require.NotEqual(t, -1, leader)
	require.NoError(t, c.StopMeta(leader))
	return leader
}
