package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// One quota changes while the other stays (keep_*), on volumes and buckets.
func TestSetQuotaKeepsTheOther(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol", QuotaBytes: 1000, QuotaNamespace: 5})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", QuotaBytes: 100, QuotaNamespace: 7})

	h.must(&stratov1.SetQuotaRequest{Volume: "vol", QuotaBytes: 2000, KeepNamespace: true})
	v, err := h.rd().Volume("vol")
	require.NoError(t, err)
	require.Equal(t, []int64{2000, 5}, []int64{v.QuotaBytes, v.QuotaNamespace})
	h.must(&stratov1.SetQuotaRequest{Volume: "vol", QuotaNamespace: 1, KeepBytes: true})
	v, err = h.rd().Volume("vol")
	require.NoError(t, err)
	require.Equal(t, []int64{2000, 1}, []int64{v.QuotaBytes, v.QuotaNamespace})
	// The usage record's quotas are the ones enforced: the namespace quota
	// of 1 is full.
	h.fails(ErrFailedPrecondition, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bk2"})
	h.must(&stratov1.SetQuotaRequest{Volume: "vol", KeepBytes: true}) // clears the namespace quota
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "bk2"})

	h.must(&stratov1.SetQuotaRequest{Volume: "vol", Bucket: "bkt", KeepBytes: true})
	b, err := h.rd().Bucket("vol", "bkt")
	require.NoError(t, err)
	require.Equal(t, []int64{100, 0}, []int64{b.QuotaBytes, b.QuotaNamespace})
	h.must(&stratov1.SetQuotaRequest{Volume: "vol", Bucket: "bkt", KeepBytes: true, KeepNamespace: true})
	b, err = h.rd().Bucket("vol", "bkt")
	require.NoError(t, err)
	require.Equal(t, []int64{100, 0}, []int64{b.QuotaBytes, b.QuotaNamespace})
}

func TestUpdateVolumeAndBucket(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Owner: "alice"})

	vr := h.must(&stratov1.UpdateVolumeRequest{Name: "vol", Owner: "bob"}).(*stratov1.UpdateVolumeResponse)
	require.Equal(t, "bob", vr.GetVolume().GetOwner())
	require.Equal(t, int64(1), vr.GetVolume().GetUsedNamespace())
	v, err := h.rd().Volume("vol")
	require.NoError(t, err)
	require.Equal(t, "bob", v.Owner)

	br := h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Owner: "carol",
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE}).(*stratov1.UpdateBucketResponse)
	require.Equal(t, "carol", br.GetBucket().GetOwner())
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_ONE, br.GetBucket().GetReplication())
	ec := &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2}
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", ErasureCoding: ec})
	b, err := h.rd().Bucket("vol", "bkt")
	require.NoError(t, err)
	require.Equal(t, "carol", b.Owner, "what is not set stays")
	require.Equal(t, int32(3), b.GetErasureCoding().GetData())
	require.Equal(t, int32(1<<20), b.GetErasureCoding().GetCellSize(), "the default cell size is filled in")
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor_REPLICATION_THREE})
	b, err = h.rd().Bucket("vol", "bkt")
	require.NoError(t, err)
	require.Nil(t, b.GetErasureCoding(), "a replication ends the erasure coding")
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_THREE, b.Replication)

	h.fails(ErrInvalid, &stratov1.UpdateVolumeRequest{Name: "vol"})
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt"})
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor(2)})
	h.fails(ErrInvalid, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor_REPLICATION_ONE, ErasureCoding: ec})
	h.fails(ErrNotFound, &stratov1.UpdateVolumeRequest{Name: "nope", Owner: "x"})
	h.fails(ErrNotFound, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "nope", Owner: "x"})

	// Owners change for administrators only; the redundancy for those
	// who may write to the bucket.
	alice, carol := &Caller{User: "alice"}, &Caller{User: "carol"}
	_, err = h.as(alice, &stratov1.UpdateVolumeRequest{Name: "vol", Owner: "alice"})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "changing an owner is for administrators")
	_, err = h.as(carol, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Owner: "dave"})
	require.ErrorIs(t, err, ErrPermissionDenied)
	_, err = h.as(carol, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err, "the bucket's owner may change its replication")
	_, err = h.as(alice, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor_REPLICATION_THREE})
	require.ErrorIs(t, err, ErrPermissionDenied)
	_, err = h.as(&Caller{User: "root", Admin: true}, &stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Owner: "alice"})
	require.NoError(t, err)
}

// A bucket's new redundancy is the default of the keys written after it;
// those written before keep theirs.
func TestUpdateBucketAppliesToLaterKeys(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("bkt", "before", 10)
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt", Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	h.createFile("bkt", "after", 10)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_THREE, h.lookup("bkt", "before").GetReplication())
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_ONE, h.lookup("bkt", "after").GetReplication())
	h.must(&stratov1.UpdateBucketRequest{Volume: "vol", Name: "bkt",
		ErasureCoding: &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2}})
	h.createFile("bkt", "coded", 10)
	require.Equal(t, int32(3), h.lookup("bkt", "coded").GetErasureCoding().GetData())
	require.Nil(t, h.lookup("bkt", "after").GetErasureCoding())
}
