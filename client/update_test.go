package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// A quota set alone leaves the other as it was; updates reach meta.
func TestSetQuotaAndUpdate(t *testing.T) {
	c, err := client.New(client.Options{Meta: []string{realMeta(t)}, Owner: "alice"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol", QuotaNamespace: 9})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)

	tib := int64(1 << 40)
	require.NoError(t, c.SetQuota(ctx, "vol", "", client.Quota{Bytes: &tib}))
	v, err := c.GetVolume(ctx, "vol")
	require.NoError(t, err)
	require.Equal(t, []int64{tib, 9}, []int64{v.QuotaBytes, v.QuotaNamespace})
	zero, n := int64(0), int64(100)
	require.NoError(t, c.SetQuota(ctx, "vol", "bkt", client.Quota{Namespace: &n}))
	require.NoError(t, c.SetQuota(ctx, "vol", "", client.Quota{Namespace: &zero}))
	v, err = c.GetVolume(ctx, "vol")
	require.NoError(t, err)
	require.Equal(t, []int64{tib, 0}, []int64{v.QuotaBytes, v.QuotaNamespace})
	b, err := c.GetBucket(ctx, "vol", "bkt")
	require.NoError(t, err)
	require.Equal(t, []int64{0, 100}, []int64{b.QuotaBytes, b.QuotaNamespace})

	v, err = c.UpdateVolume(ctx, "vol", "bob")
	require.NoError(t, err)
	require.Equal(t, "bob", v.Owner)
	b, err = c.UpdateBucket(ctx, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Owner: "carol",
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err)
	require.Equal(t, "carol", b.Owner)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_ONE, b.Replication)
	require.Equal(t, int64(100), b.QuotaNamespace, "an update keeps the quotas")
}
