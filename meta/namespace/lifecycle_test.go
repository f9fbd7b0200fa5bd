package namespace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestLifecycleRulesStored: UpdateBucket sets an OBS bucket's rules (the
// bucket then carries them), refuses bad ones and FSO buckets, and
// clear_lifecycle removes them.
func TestLifecycleRulesStored(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "fsb", Layout: stratov1.BucketLayout_LAYOUT_FSO})
	lc := &stratov1.Lifecycle{Rules: []*stratov1.LifecycleRule{{Id: "a", Enabled: true, Prefix: "logs/", ExpirationDays: 3}}}
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: lc})
	b, err := h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Equal(t, int32(3), b.GetLifecycle().GetRules()[0].GetExpirationDays())

	h.fails(ErrWrongLayout, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "fsb", Lifecycle: lc})
	for name, r := range map[string]*stratov1.LifecycleRule{
		"no action":          {Id: "x", Enabled: true, Prefix: "p"},
		"days and date":      {ExpirationDays: 1, ExpirationDateUnixMs: 1},
		"negative":           {ExpirationDays: -1},
		"marker and days":    {ExpirationDays: 1, ExpiredObjectDeleteMarker: true},
		"marker and tags":    {ExpiredObjectDeleteMarker: true, Tags: []*stratov1.KeyAttribute{{Name: "a", Value: "b"}}},
		"abort and size":     {AbortIncompleteMultipartDays: 1, SizeGreaterThan: 5},
		"newer without days": {NewerNoncurrentVersions: 2, ExpirationDays: 1},
		"sizes crossed":      {ExpirationDays: 1, SizeGreaterThan: 10, SizeLessThan: 5},
		"tag twice":          {ExpirationDays: 1, Tags: []*stratov1.KeyAttribute{{Name: "a"}, {Name: "a"}}},
	} {
		err := h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: &stratov1.Lifecycle{Rules: []*stratov1.LifecycleRule{r}}})
		require.Error(t, err, name)
	}
	twice := &stratov1.LifecycleRule{Id: "same", ExpirationDays: 1}
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: &stratov1.Lifecycle{Rules: []*stratov1.LifecycleRule{twice, twice}}})
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: &stratov1.Lifecycle{}})
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Lifecycle: lc, ClearLifecycle: true})
	b, err = h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Len(t, b.GetLifecycle().GetRules(), 1, "refusals change nothing")

	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", ClearLifecycle: true})
	b, err = h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Nil(t, b.GetLifecycle())
}

// TestDeleteIfObjectID: a delete with if_object_id happens only while the
// key's latest version is that object, on OBS and FSO buckets, unversioned
// and versioned alike.
func TestDeleteIfObjectID(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.volBucket("fso", stratov1.BucketLayout_LAYOUT_FSO)
	for _, b := range []string{"obs", "fso"} {
		old := h.putKey(b, "d/k", 1).GetObjectId()
		cur := h.putKey(b, "d/k", 1).GetObjectId()
		h.fails(ErrKeyReplaced, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: b, Key: "d/k", IfObjectId: old})
		require.Equal(t, cur, h.latestObject(b, "d/k"), "%s: a refused delete deletes nothing", b)
		h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: b, Key: "d/k", IfObjectId: cur})
		require.Zero(t, h.latestObject(b, "d/k"), b)
		h.fails(ErrKeyReplaced, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: b, Key: "d/k", IfObjectId: cur})
	}
	// An FSO directory is the object its ID names.
	dir, err := h.stat("fso", "d")
	require.NoError(t, err)
	h.fails(ErrKeyReplaced, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "fso", Key: "d", IfObjectId: dir.GetObjectId() + 1})
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "fso", Key: "d", IfObjectId: dir.GetObjectId()})

	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "obs", Versioning: stratov1.BucketVersioning_VERSIONING_ENABLED})
	v1 := h.putKey("obs", "v", 1).GetObjectId()
	v2 := h.putKey("obs", "v", 1).GetObjectId()
	h.fails(ErrFailedPrecondition, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "v", IfObjectId: v1})
	res := h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "v", IfObjectId: v2}).(*stratov1.DeleteResponse)
	require.True(t, res.GetDeleteMarker())
	// The latest is now a marker: no object to match.
	h.fails(ErrFailedPrecondition, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "v", IfObjectId: v2})
}

// TestLifecycleDue: S3's day count, rounded up to the next day boundary
// (midnight UTC for 24-hour days).
func TestLifecycleDue(t *testing.T) {
	day := 24 * time.Hour
	at := time.Date(2026, 3, 1, 15, 4, 5, 0, time.UTC)
	require.Equal(t, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), LifecycleDue(at, 1, day))
	require.Equal(t, time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC), LifecycleDue(at, 29, day))
	midnight := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), LifecycleDue(midnight, 1, day))
	require.Equal(t, time.Unix(4, 0), LifecycleDue(time.Unix(1, 500), 1, 2*time.Second))
}
