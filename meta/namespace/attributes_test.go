package namespace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestSetAttributes(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.volBucket("fsb", stratov1.BucketLayout_LAYOUT_FSO)
	kv := func(nv ...string) []*stratov1.KeyAttribute {
		var out []*stratov1.KeyAttribute
		for i := 0; i < len(nv); i += 2 {
			out = append(out, &stratov1.KeyAttribute{Name: nv[i], Value: nv[i+1]})
		}
		return out
	}
	lookup := func(bucket, key string) *stratov1.KeyInfo {
		res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: bucket, Key: key})
		require.NoError(t, err)
		return res.Key
	}
	for _, bucket := range []string{"obs", "fsb"} {
		key := "dir/k"
		var c *stratov1.CommitKeyResponse
		if bucket == "fsb" {
			c = h.createFile(bucket, key, 5)
		} else {
			c = h.putKey(bucket, key, 5)
		}
		before := lookup(bucket, key)
		usedBytes, usedNames := h.usage(bucket)

		// Replaced whole, sorted; nothing else changes.
		h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, ObjectId: c.ObjectId,
			Attributes: kv("x-amz-tagging", "a=1", "etag", `"e"`)})
		after := lookup(bucket, key)
		require.Equal(t, kv("etag", `"e"`, "x-amz-tagging", "a=1"), after.Attributes)
		after.Attributes = before.Attributes
		require.Equal(t, before.String(), after.String(), "only the attributes change")
		b, n := h.usage(bucket)
		require.Equal(t, []int64{usedBytes, usedNames}, []int64{b, n})
		// Without an object ID: whatever key is there.
		h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, Attributes: kv("etag", `"f"`)})
		require.Equal(t, kv("etag", `"f"`), lookup(bucket, key).Attributes)

		// Another version of the key: the old object ID is refused.
		var c2 *stratov1.CommitKeyResponse
		if bucket == "fsb" {
			c2 = h.createFile(bucket, key, 3)
		} else {
			c2 = h.putKey(bucket, key, 3)
		}
		require.Empty(t, lookup(bucket, key).Attributes, "a commit replaces the attributes")
		err := h.fails(ErrFailedPrecondition, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, ObjectId: c.ObjectId, Attributes: kv("a", "b")})
		require.ErrorIs(t, err, ErrKeyReplaced)
		h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, ObjectId: c2.ObjectId})
		require.Empty(t, lookup(bucket, key).Attributes)

		err = h.fails(ErrNotFound, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: "dir/nope", Attributes: kv("a", "b")})
		require.ErrorIs(t, err, ErrKeyNotFound)
		h.fails(ErrNotFound, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: "nodir/k"})
		h.fails(ErrNotFound, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: "nope", Key: key})
		h.fails(ErrInvalid, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, Attributes: kv("a", "1", "a", "2")})
		h.fails(ErrInvalid, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, Attributes: kv("", "1")})
		h.fails(ErrInvalid, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: bucket, Key: key, Attributes: kv("a", strings.Repeat("x", 65<<10))})
	}
	// A directory of an FSO bucket has no attributes.
	err := h.fails(ErrFailedPrecondition, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: "fsb", Key: "dir", Attributes: kv("a", "b")})
	require.ErrorIs(t, err, ErrIsADirectory)
	h.fails(ErrInvalid, &stratov1.SetAttributesRequest{Volume: "vol", Bucket: "fsb", Key: "a//b"})

	// A bucket's, through the reader's bucket cache and the listing.
	_, err = h.rd().Bucket("vol", "obs") // cached
	require.NoError(t, err)
	h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: "obs", Attributes: kv("x-amz-tagging", "team=a")})
	bk, err := h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Equal(t, kv("x-amz-tagging", "team=a"), bk.Attributes)
	list, err := h.rd().ListBuckets(&stratov1.ListBucketsRequest{Volume: "vol", Prefix: "obs"})
	require.NoError(t, err)
	require.Equal(t, kv("x-amz-tagging", "team=a"), list.Buckets[0].Attributes)
	// The bucket works as before (apply's bucket cache too).
	h.putKey("obs", "after", 1)
	h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: "obs"})
	bk, err = h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Empty(t, bk.Attributes)
}
