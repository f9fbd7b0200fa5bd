package namespace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

const (
	enabled   = stratov1.BucketVersioning_VERSIONING_ENABLED
	suspended = stratov1.BucketVersioning_VERSIONING_SUSPENDED
)

func (h *harness) setVersioning(bucket string, v stratov1.BucketVersioning) {
	h.t.Helper()
	res := h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: bucket, Versioning: v}).(*stratov1.UpdateBucketResponse)
	require.Equal(h.t, v, res.Bucket.Versioning)
}

// versions lists every version of bucket under prefix, pages of limit,
// as "key@version" with "*" after the latest and "!" after a marker.
func (h *harness) versions(bucket, prefix string, limit int32) []string {
	h.t.Helper()
	var out []string
	km, vm := "", ""
	for {
		res, err := h.rd().ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: bucket, Prefix: prefix,
			KeyMarker: km, VersionIdMarker: vm, Limit: limit})
		require.NoError(h.t, err)
		for _, v := range res.Versions {
			s := v.Name + "@" + v.VersionId
			if v.IsLatest {
				s += "*"
			}
			if v.DeleteMarker {
				s += "!"
			}
			out = append(out, s)
		}
		if !res.Truncated {
			return out
		}
		require.NotEmpty(h.t, res.NextKeyMarker)
		km, vm = res.NextKeyMarker, res.NextVersionIdMarker
	}
}

func (h *harness) lookupVersion(bucket, key, vid string) (*stratov1.KeyInfo, error) {
	res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: bucket, Key: key, VersionId: vid})
	if err != nil {
		return nil, err
	}
	return res.Key, nil
}

func (h *harness) deleteKey(bucket, key, vid string) *stratov1.DeleteResponse {
	h.t.Helper()
	return h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: bucket, Key: key, VersionId: vid}).(*stratov1.DeleteResponse)
}

func TestVersionsEnabled(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.volBucket("fsb", stratov1.BucketLayout_LAYOUT_FSO)
	h.putKey("obs", "k", 1)
	require.Empty(t, h.putKey("obs", "u", 1).VersionId, "a bucket never versioned has no version IDs")
	h.fails(ErrWrongLayout, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "fsb", Versioning: enabled})
	h.setVersioning("obs", enabled)

	v1 := h.putKey("obs", "k", 2).VersionId
	v2 := h.putKey("obs", "k", 3).VersionId
	require.NotEqual(t, v1, v2)
	require.Less(t, v2, v1, "newer versions sort first")
	require.Equal(t, []string{"k@" + v2 + "*", "k@" + v1, "k@null", "u@null*"}, h.versions("obs", "", 0))
	b, n := h.usage("obs")
	require.Equal(t, []int64{7, 4}, []int64{b, n}, "noncurrent versions count")

	cur, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	require.NoError(t, err)
	require.Equal(t, v2, cur.Key.VersionId)
	require.EqualValues(t, 3, cur.Key.Size)
	old, err := h.lookupVersion("obs", "k", v1)
	require.NoError(t, err)
	require.EqualValues(t, 2, old.Size)
	null, err := h.lookupVersion("obs", "k", "null")
	require.NoError(t, err)
	require.EqualValues(t, 1, null.Size)
	_, err = h.lookupVersion("obs", "k", "0123")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = h.lookupVersion("obs", "k", "0000000000000001")
	require.ErrorIs(t, err, ErrKeyNotFound)

	// A delete makes a marker, the latest version.
	del := h.deleteKey("obs", "k", "")
	require.True(t, del.DeleteMarker)
	_, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	require.ErrorIs(t, err, ErrKeyNotFound)
	m, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k", DeleteMarkers: true})
	require.NoError(t, err)
	require.True(t, m.Key.DeleteMarker)
	require.Equal(t, del.VersionId, m.Key.VersionId)
	require.Equal(t, []string{"k@" + del.VersionId + "*!", "k@" + v2, "k@" + v1, "k@null"}, h.versions("obs", "k", 0))
	list, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs"})
	require.NoError(t, err)
	require.Len(t, list.Keys, 1, "ListKeys shows the latest versions that are objects: u")

	// Deleting the marker brings v2 back.
	res := h.deleteKey("obs", "k", del.VersionId)
	require.True(t, res.DeleteMarker)
	cur, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	require.NoError(t, err)
	require.Equal(t, v2, cur.Key.VersionId)

	// Deleting a version for good frees its blocks and its bytes.
	before := len(h.deletedBlocks())
	h.deleteKey("obs", "k", v1)
	require.Len(t, h.deletedBlocks(), before+1)
	b, n = h.usage("obs")
	require.Equal(t, []int64{5, 3}, []int64{b, n})
	// The current version deleted by ID: the next newest becomes current.
	h.deleteKey("obs", "k", v2)
	cur, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	require.NoError(t, err)
	require.Equal(t, "null", cur.Key.VersionId)
	require.Equal(t, []string{"k@null*", "u@null*"}, h.versions("obs", "", 0))
	_, err = h.do(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k", VersionId: v2})
	require.ErrorIs(t, err, ErrKeyNotFound)

	// Versioned buckets rename nothing and take no snapshots; a bucket
	// with snapshots cannot be versioned.
	h.fails(ErrFailedPrecondition, &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "k", ToKey: "k2"})
	h.fails(ErrFailedPrecondition, &stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "obs", Name: "s"})
	h.volBucket("snap", stratov1.BucketLayout_LAYOUT_OBS)
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "snap", Name: "s"})
	h.fails(ErrHasSnapshots, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "snap", Versioning: enabled})
}

func TestVersionsSuspended(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.setVersioning("obs", enabled)
	v1 := h.putKey("obs", "k", 1).VersionId
	h.setVersioning("obs", suspended)
	require.Equal(t, "null", h.putKey("obs", "k", 2).VersionId)
	require.Equal(t, []string{"k@null*", "k@" + v1}, h.versions("obs", "", 0))
	// Another null write replaces the null version.
	before := len(h.deletedBlocks())
	h.putKey("obs", "k", 4)
	require.Len(t, h.deletedBlocks(), before+1)
	b, n := h.usage("obs")
	require.Equal(t, []int64{5, 2}, []int64{b, n})
	// A delete makes a null marker that replaces the null version.
	del := h.deleteKey("obs", "k", "")
	require.True(t, del.DeleteMarker)
	require.Equal(t, "null", del.VersionId)
	require.Equal(t, []string{"k@null*!", "k@" + v1}, h.versions("obs", "", 0))
	b, n = h.usage("obs")
	require.Equal(t, []int64{1, 2}, []int64{b, n})
	// Enabled again: a new version; the null marker stays, noncurrent.
	h.setVersioning("obs", enabled)
	v3 := h.putKey("obs", "k", 8).VersionId
	require.Equal(t, []string{"k@" + v3 + "*", "k@null!", "k@" + v1}, h.versions("obs", "", 0))
	// Suspended, a write replaces the noncurrent null marker.
	h.setVersioning("obs", suspended)
	h.putKey("obs", "k", 16)
	require.Equal(t, []string{"k@null*", "k@" + v3, "k@" + v1}, h.versions("obs", "", 0))
	// Never unversioned again.
	_, err := h.do(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Versioning: stratov1.BucketVersioning(7)})
	require.ErrorIs(t, err, ErrInvalid)
	h.fails(ErrBucketNotEmpty, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "obs"})
}

func TestVersionsPaging(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.setVersioning("obs", enabled)
	for _, k := range []string{"a", "b/1", "b/2", "c", "d"} {
		for range 3 {
			h.putKey("obs", k, 1)
		}
	}
	h.deleteKey("obs", "c", "")
	h.deleteKey("obs", "d", "")
	h.putKey("obs", "d", 1)
	all := h.versions("obs", "", 0)
	require.Len(t, all, 18)
	for _, limit := range []int32{1, 2, 3, 5} {
		require.Equal(t, all, h.versions("obs", "", limit), "pages of %d", limit)
	}
	require.Equal(t, all[3:9], h.versions("obs", "b/", 2))
	latest := 0
	for _, v := range all {
		if v[len(v)-1] == '*' || v[len(v)-2:] == "*!" {
			latest++
		}
	}
	require.Equal(t, 5, latest, "one latest version per key: %v", all)

	// With a delimiter, b/ rolls up into one common prefix.
	var got []string
	km, vm := "", ""
	for {
		res, err := h.rd().ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "obs", Delimiter: "/",
			KeyMarker: km, VersionIdMarker: vm, Limit: 2})
		require.NoError(t, err)
		for _, v := range res.Versions {
			got = append(got, v.Name)
		}
		got = append(got, res.CommonPrefixes...)
		if !res.Truncated {
			break
		}
		km, vm = res.NextKeyMarker, res.NextVersionIdMarker
	}
	require.Equal(t, []string{"a", "a", "a", "b/", "c", "c", "c", "c", "d", "d", "d", "d", "d"}, got)
	_, err := h.rd().ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: "vol", Bucket: "obs", VersionIdMarker: "null"})
	require.ErrorIs(t, err, ErrInvalid)
}

// An open key published by an hsync and then replaced on a versioned
// bucket is a noncurrent version: its expiry frees none of the blocks
// that version holds.
func TestVersionsHsyncedOpenKeyExpires(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.setVersioning("obs", enabled)
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"}).(*stratov1.OpenKeyResponse)
	bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "obs", Key: "k", OpenId: open.OpenId, SizeHint: 1}).(*stratov1.AllocateBlockResponse)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "k", OpenId: open.OpenId, Hsync: true,
		Blocks: []*stratov1.BlockLocation{{BlockId: bl.Block.BlockId, Length: 1}}})
	h.putKey("obs", "k", 2)
	require.Len(t, h.versions("obs", "", 0), 2)
	before := len(h.deletedBlocks())
	cmd, err := h.ns.PrepareExpiry(h.db, h.now.Add(h.ns.Options().OpenKeyTTL+time.Minute), 100)
	require.NoError(t, err)
	require.NotNil(t, cmd)
	res, err := h.apply(cmd)
	require.NoError(t, err)
	require.Equal(t, []uint64{open.OpenId}, res.(*stratov1.ExpireOpenKeysResult).Expired)
	require.Len(t, h.deletedBlocks(), before, "the noncurrent version's block stays")
	_, err = h.lookupVersion("obs", "k", h.versions("obs", "", 0)[1][2:])
	require.NoError(t, err)
}

// A delete of the null version of a bucket never versioned is a delete:
// a snapshot that sees the key keeps it and its blocks.
func TestVersionNullDeleteKeepsSnapshots(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.putKey("obs", "k", 3)
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "obs", Name: "s"})
	before := len(h.deletedBlocks())
	require.Equal(t, "null", h.deleteKey("obs", "k", "null").VersionId)
	require.Len(t, h.deletedBlocks(), before)
	res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: ".snapshot/s/k"})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Key.Size)
	_, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	require.ErrorIs(t, err, ErrKeyNotFound)
}
