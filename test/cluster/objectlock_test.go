package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestObjectLockSurvivesMetaFailover: a bucket's object lock and each
// version's lock are meta state written by Raft (decision 0088): after
// the meta leader is lost, the new leader has them and refuses the
// deletes they forbid.
func TestObjectLockSurvivesMetaFailover(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 1 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	_, err := f.cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "worm", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE, ObjectLock: true})
	require.NoError(t, err)
	_, err = f.cl.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "worm",
		ObjectLock: &stratov1.BucketObjectLock{Enabled: true, DefaultMode: stratov1.RetentionMode_RETENTION_COMPLIANCE, DefaultDays: 1}})
	require.NoError(t, err)
	put := func(key string) string {
		w, err := f.cl.CreateKey(ctx, "vol", "worm", key, client.WriteOptions{})
		require.NoError(t, err)
		_, err = w.Write(fastRandom(64<<10, 1))
		require.NoError(t, err)
		require.NoError(t, w.Close())
		return w.VersionID()
	}
	retained, held := put("retained"), put("held")
	_, err = f.cl.SetObjectLock(ctx, &stratov1.SetObjectLockRequest{Volume: "vol", Bucket: "worm", Key: "held", VersionId: held,
		LegalHold: proto.Bool(true)})
	require.NoError(t, err)
	stopMetaLeader(t, f.c)

	bk, err := f.cl.GetBucket(ctx, "vol", "worm")
	require.NoError(t, err)
	require.Equal(t, int32(1), bk.ObjectLock.GetDefaultDays())
	for key, v := range map[string]string{"retained": retained, "held": held} {
		ki, err := f.cl.LookupKeyVersion(ctx, "vol", "worm", key, client.KeyVersion{ID: v})
		require.NoError(t, err)
		require.Equal(t, stratov1.RetentionMode_RETENTION_COMPLIANCE, ki.ObjectLock.GetMode(), key)
		require.Equal(t, key == "held", ki.ObjectLock.GetLegalHold(), key)
		_, err = f.cl.DeleteKeyWith(ctx, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "worm", Key: key, VersionId: v, BypassGovernance: true})
		require.ErrorIs(t, err, client.ErrObjectLocked, key)
	}
}
