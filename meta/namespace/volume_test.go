package namespace

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestVolumes(t *testing.T) {
	h := newHarness(t)
	res := h.must(&stratov1.CreateVolumeRequest{Name: "vol-a", Owner: "alice", QuotaBytes: 10, QuotaNamespace: 2}).(*stratov1.CreateVolumeResponse)
	require.NotZero(t, res.Volume.Id)
	require.Equal(t, h.now.UnixMilli(), res.Volume.CreationTimeUnixMs)
	h.fails(ErrExists, &stratov1.CreateVolumeRequest{Name: "vol-a"})
	h.fails(ErrInvalid, &stratov1.CreateVolumeRequest{Name: "Vol"})
	h.fails(ErrInvalid, &stratov1.CreateVolumeRequest{Name: "vol-b", QuotaBytes: -1})
	for _, n := range []string{"vol-b", "vol-c", "other"} {
		h.must(&stratov1.CreateVolumeRequest{Name: n})
	}

	v, err := h.rd().Volume("vol-a")
	require.NoError(t, err)
	require.Equal(t, "alice", v.Owner)
	require.Equal(t, int64(10), v.QuotaBytes)
	_, err = h.rd().Volume("nope")
	require.ErrorIs(t, err, ErrVolumeNotFound)
	require.ErrorIs(t, err, ErrNotFound)

	names := func(req *stratov1.ListVolumesRequest) (out []string, truncated bool) {
		res, err := h.rd().ListVolumes(req)
		require.NoError(t, err)
		for _, v := range res.Volumes {
			out = append(out, v.Name)
		}
		return out, res.Truncated
	}
	all, tr := names(&stratov1.ListVolumesRequest{})
	require.Equal(t, []string{"other", "vol-a", "vol-b", "vol-c"}, all)
	require.False(t, tr)
	got, tr := names(&stratov1.ListVolumesRequest{Prefix: "vol-", StartAfter: "vol-a", Limit: 1})
	require.Equal(t, []string{"vol-b"}, got)
	require.True(t, tr)
	got, _ = names(&stratov1.ListVolumesRequest{Prefix: "vol-", StartAfter: "vol-b"})
	require.Equal(t, []string{"vol-c"}, got)

	// Namespace quota of a volume counts buckets.
	h.must(&stratov1.CreateBucketRequest{Volume: "vol-a", Name: "bk1"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol-a", Name: "bk2"})
	err = h.fails(ErrFailedPrecondition, &stratov1.CreateBucketRequest{Volume: "vol-a", Name: "bk3"})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	v, _ = h.rd().Volume("vol-a")
	require.Equal(t, int64(2), v.UsedNamespace)

	err = h.fails(ErrFailedPrecondition, &stratov1.DeleteVolumeRequest{Name: "vol-a"})
	require.ErrorIs(t, err, ErrVolumeNotEmpty)
	require.Contains(t, err.Error(), "vol-a")
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol-a", Name: "bk1"})
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol-a", Name: "bk2"})
	h.must(&stratov1.DeleteVolumeRequest{Name: "vol-a"})
	h.fails(ErrNotFound, &stratov1.DeleteVolumeRequest{Name: "vol-a"})
	all, _ = names(&stratov1.ListVolumesRequest{})
	require.Equal(t, []string{"other", "vol-b", "vol-c"}, all)

	// Quotas can be changed; raising one lets the blocked write through.
	h.must(&stratov1.CreateVolumeRequest{Name: "small", QuotaNamespace: 1})
	h.must(&stratov1.CreateBucketRequest{Volume: "small", Name: "bk1"})
	h.fails(ErrFailedPrecondition, &stratov1.CreateBucketRequest{Volume: "small", Name: "bk2"})
	h.must(&stratov1.SetQuotaRequest{Volume: "small", QuotaNamespace: 2})
	h.must(&stratov1.CreateBucketRequest{Volume: "small", Name: "bk2"})
	h.fails(ErrNotFound, &stratov1.SetQuotaRequest{Volume: "nope"})
	h.fails(ErrInvalid, &stratov1.SetQuotaRequest{Volume: "small", QuotaBytes: -5})
}

func TestBuckets(t *testing.T) {
	h := newHarness(t)
	h.fails(ErrNotFound, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	h.must(&stratov1.CreateVolumeRequest{Name: "vol"})
	res := h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Owner: "bob"}).(*stratov1.CreateBucketResponse)
	bk := res.Bucket
	require.Equal(t, stratov1.BucketLayout_LAYOUT_FSO, bk.Layout)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_THREE, bk.Replication)
	require.Equal(t, stratov1.ChecksumType_CHECKSUM_CRC32C, bk.ChecksumType)
	require.Equal(t, int32(16<<10), bk.BytesPerChecksum)
	require.Equal(t, int64(256<<20), bk.BlockSize)
	require.NotZero(t, bk.VolumeId)

	obs := h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE, ChecksumType: stratov1.ChecksumType_CHECKSUM_SHA256,
		BytesPerChecksum: 1 << 20, QuotaBytes: 100, QuotaNamespace: 5, BlockSize: 1 << 20}).(*stratov1.CreateBucketResponse).Bucket
	got, err := h.rd().Bucket("vol", "obs")
	require.NoError(t, err)
	require.Equal(t, obs.Id, got.Id)
	require.Equal(t, stratov1.BucketLayout_LAYOUT_OBS, got.Layout)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_ONE, got.Replication)
	require.Equal(t, stratov1.ChecksumType_CHECKSUM_SHA256, got.ChecksumType)
	require.Equal(t, int32(1<<20), got.BytesPerChecksum)
	require.Equal(t, int64(100), got.QuotaBytes)

	h.fails(ErrExists, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "b", Replication: 2})
	h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt2", BytesPerChecksum: -1})
	h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt2", ChecksumType: 99})
	h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt2", Layout: 9})
	err = h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "My_Bucket"})
	require.ErrorIs(t, err, ErrInvalidName)
	require.Contains(t, err.Error(), "lowercase")

	list, err := h.rd().ListBuckets(&stratov1.ListBucketsRequest{Volume: "vol"})
	require.NoError(t, err)
	require.Len(t, list.Buckets, 2)
	require.Equal(t, "bkt", list.Buckets[0].Name)
	require.Equal(t, "obs", list.Buckets[1].Name)
	list, err = h.rd().ListBuckets(&stratov1.ListBucketsRequest{Volume: "vol", StartAfter: "bkt"})
	require.NoError(t, err)
	require.Len(t, list.Buckets, 1)
	_, err = h.rd().ListBuckets(&stratov1.ListBucketsRequest{Volume: "nope"})
	require.ErrorIs(t, err, ErrNotFound)

	// Not empty: a key, then a directory.
	h.putKey("obs", "k")
	err = h.fails(ErrFailedPrecondition, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "obs"})
	require.ErrorIs(t, err, ErrBucketNotEmpty)
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k"})
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "obs"})
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "d"})
	h.fails(ErrFailedPrecondition, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "bkt"})
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: "d"})
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "bkt"})
	h.fails(ErrNotFound, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "bkt"})
	_, err = h.rd().Bucket("vol", "bkt")
	require.ErrorIs(t, err, ErrBucketNotFound)
	v, _ := h.rd().Volume("vol")
	require.Zero(t, v.UsedNamespace)

	// A bucket recreated under the same name is a new bucket: an open key of
	// the old one cannot be committed into it.
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "re1", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "re1", Key: "k"}).(*stratov1.OpenKeyResponse)
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "re1"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "re1", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "re1", Key: "k", OpenId: open.OpenId})
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name, rule string
	}{
		{"ab", "3 to 63"},
		{strings.Repeat("a", 64), "3 to 63"},
		{"Abc", "lowercase"},
		{"a_c", "lowercase"},
		{"-abc", "begin and end"},
		{"abc.", "begin and end"},
		{"a..b", "adjacent periods"},
		{"a.-b", "period next to a hyphen"},
		{"192.168.1.1", "IP address"},
		{"xn--abc", "xn--"},
		{"abc-s3alias", "-s3alias"},
	} {
		err := ValidateBucketName(tc.name)
		require.ErrorIs(t, err, ErrInvalid, tc.name)
		require.Contains(t, err.Error(), tc.rule, tc.name)
	}
	for _, ok := range []string{"abc", "a-b.c1", "my.bucket.name", strings.Repeat("a", 63), "123"} {
		require.NoError(t, ValidateBucketName(ok), ok)
	}

	for _, tc := range []struct{ in, out string }{
		{"", ""}, {"/", ""}, {"a", "a"}, {"/a/b/", "a/b"}, {"a/b c/d", "a/b c/d"}, {"a/.x/..y", "a/.x/..y"},
	} {
		got, err := CleanPath(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.out, got, tc.in)
	}
	for _, tc := range []struct{ in, rule string }{
		{"a//b", "empty components"},
		{"//", "empty components"},
		{"a/./b", `"." or ".."`},
		{"../a", `"." or ".."`},
		{"a/..", `"." or ".."`},
		{"a/" + strings.Repeat("x", 256), "at most 255"},
		{strings.Repeat("a/", 2049), "at most 4096"},
		{"a\x00b", "NUL"},
		{"a/\xff", "UTF-8"},
	} {
		_, err := CleanPath(tc.in)
		require.ErrorIs(t, err, ErrInvalid, tc.in)
		require.Contains(t, err.Error(), tc.rule, tc.in)
	}

	require.NoError(t, ValidateKeyName("a//b/./c"))
	require.ErrorContains(t, ValidateKeyName(""), "empty")
	require.ErrorContains(t, ValidateKeyName(strings.Repeat("k", 1025)), "at most 1024")
	require.ErrorContains(t, ValidateKeyName("\xff"), "UTF-8")
}
