package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestSnapshotAccess: with authentication, the bucket's owner (and an
// administrator) takes, renames and deletes its snapshots; another user,
// even one with WRITE on the bucket, may not; reading a snapshot needs the
// right on the bucket.
func TestSnapshotAccess(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	alice, bob, carol := a.user("alice"), a.user("bob"), a.user("carol")
	_, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	require.NoError(t, err)
	_, err = alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err)
	require.NoError(t, aclPut(ctx, alice, "vol", "bkt", "k"))
	require.NoError(t, alice.AddAcl(ctx, &stratov1.AclObject{Kind: stratov1.AclObjectKind_ACL_OBJECT_BUCKET, Volume: "vol", Bucket: "bkt"},
		mustAcls(t, "user:bob:rwl")))

	_, err = alice.CreateSnapshot(ctx, "vol", "bkt", "s1")
	require.NoError(t, err)
	_, err = bob.CreateSnapshot(ctx, "vol", "bkt", "s2")
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	require.ErrorContains(t, err, "snapshots are for the bucket's owner and administrators")
	require.ErrorIs(t, bob.DeleteSnapshot(ctx, "vol", "bkt", "s1"), client.ErrPermissionDenied)
	_, err = bob.RenameSnapshot(ctx, "vol", "bkt", "s1", "x")
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	_, err = a.admin.CreateSnapshot(ctx, "vol", "bkt", "s2")
	require.NoError(t, err)

	// Reads: bob's grant on the bucket opens its snapshots; carol has none.
	got, err := aclRead(ctx, bob, "vol", "bkt", ".snapshot/s1/k")
	require.NoError(t, err)
	require.Empty(t, got)
	snaps, err := bob.ListSnapshots(ctx, "vol", "bkt")
	require.NoError(t, err)
	require.Len(t, snaps, 2)
	_, err = aclRead(ctx, carol, "vol", "bkt", ".snapshot/s1/k")
	denied(t, err, "carol", "READ", "/vol/bkt")
	_, err = carol.ListSnapshots(ctx, "vol", "bkt")
	denied(t, err, "carol", "LIST", "/vol/bkt")
	_, err = carol.SnapshotDiff(ctx, "vol", "bkt", "s1", "")
	denied(t, err, "carol", "READ", "/vol/bkt")
	require.NoError(t, alice.DeleteSnapshot(ctx, "vol", "bkt", "s1"))
}
