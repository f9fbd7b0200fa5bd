package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

var rs63 = &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 6, Parity: 3}

// TestErasureCodedBuckets: a bucket's erasure coding config is validated,
// stored with the cell size filled in, and returned; a bad one is refused
// with the reason.
func TestErasureCodedBuckets(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "ecb", ErasureCoding: rs63})
	bk, err := h.rd().Bucket("vol", "ecb")
	require.NoError(t, err)
	want := &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 6, Parity: 3, CellSize: 1 << 20}
	require.Equal(t, want.String(), bk.ErasureCoding.String())
	h.volBucket("plain", stratov1.BucketLayout_LAYOUT_OBS)
	bk, err = h.rd().Bucket("vol", "plain")
	require.NoError(t, err)
	require.Nil(t, bk.ErasureCoding)

	for e, why := range map[*stratov1.ErasureCoding]string{
		{Data: 6, Parity: 3}: "erasure codec ERASURE_CODEC_UNSPECIFIED",
		{Codec: stratov1.ErasureCodec_ERASURE_CODEC_XOR, Data: 2, Parity: 2}:                    "xor has exactly 1 parity member",
		{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 1, Parity: 2}:                     "2 to 32 data members",
		{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2, CellSize: 1000}:     "not a multiple of 4096",
		{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2, CellSize: 64 << 20}: "up to 16777216",
	} {
		err := h.fails(ErrInvalid, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bad", ErasureCoding: e})
		require.ErrorContains(t, err, why)
	}
}

// TestErasureCodedKeys: a key's own config wins, then its own replication,
// then the bucket's erasure coding, then the bucket's replication; an empty
// erasure coded key commits (deferred or not) and says how it is stored;
// its blocks are block groups of d+p members (the allocator's), marked with
// the config; compose does not mix groups and blocks.
func TestErasureCodedKeys(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "ecb", Layout: stratov1.BucketLayout_LAYOUT_OBS, ErasureCoding: rs63})
	h.volBucket("plain", stratov1.BucketLayout_LAYOUT_OBS)
	xor := &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_XOR, Data: 2, Parity: 1, CellSize: 64 << 10}

	for _, tc := range []struct {
		bucket string
		repl   stratov1.ReplicationFactor
		e      *stratov1.ErasureCoding
		want   string // the key's erasure coding, "" for replicated
		repl2  stratov1.ReplicationFactor
	}{
		{"ecb", 0, nil, "rs-6-3-1024k", 0},
		{"ecb", stratov1.ReplicationFactor_REPLICATION_ONE, nil, "", stratov1.ReplicationFactor_REPLICATION_ONE},
		{"ecb", stratov1.ReplicationFactor_REPLICATION_ONE, xor, "xor-2-1-64k", 0},
		{"plain", 0, nil, "", stratov1.ReplicationFactor_REPLICATION_THREE},
		{"plain", 0, xor, "xor-2-1-64k", 0},
	} {
		open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: tc.bucket, Key: "k", Replication: tc.repl, ErasureCoding: tc.e}).(*stratov1.OpenKeyResponse)
		require.Equal(t, tc.want, ecName(open.ErasureCoding), "%+v", tc)
		require.Equal(t, tc.repl2, open.Replication, "%+v", tc)
		h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: tc.bucket, Key: "k", OpenId: open.OpenId})
		ki := h.lookup(tc.bucket, "k")
		require.Equal(t, tc.want, ecName(ki.ErasureCoding), "%+v", tc)
		require.Equal(t, tc.repl2, ki.Replication, "%+v", tc)

		tok, err := h.deferOpen(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: tc.bucket, Key: "d", Replication: tc.repl, ErasureCoding: tc.e, Deferrable: true})
		require.NoError(t, err)
		h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: tc.bucket, Key: "d", CreateToken: tok})
		ki = h.lookup(tc.bucket, "d")
		require.Equal(t, tc.want, ecName(ki.ErasureCoding), "deferred %+v", tc)
	}

	// Data: block groups of d+p members, marked as such, in the open key,
	// each allocation, and the committed key, whose size is the sum of the
	// groups' lengths.
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "big", SizeHint: 10}).(*stratov1.OpenKeyResponse)
	require.Len(t, open.Blocks, 1)
	group := func(bl *stratov1.BlockLocation) {
		t.Helper()
		require.Len(t, bl.Pipeline.Members, 9)
		require.Equal(t, "rs-6-3-1024k", ecName(bl.Pipeline.ErasureCoding))
	}
	group(open.Blocks[0])
	al := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "ecb", Key: "big", OpenId: open.OpenId, SizeHint: 10}).(*stratov1.AllocateBlockResponse)
	group(al.Block)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "ecb", Key: "big", OpenId: open.OpenId, Blocks: []*stratov1.BlockLocation{
		{BlockId: open.Blocks[0].BlockId, Length: 6 << 20}, {BlockId: al.Block.BlockId, Length: 100}}})
	ki := h.lookup("ecb", "big")
	require.Equal(t, int64(6<<20+100), ki.Size)
	require.Len(t, ki.Blocks, 2)
	require.Equal(t, int64(6<<20), ki.Blocks[1].Offset)
	for _, bl := range ki.Blocks {
		group(bl)
	}
	// A replicated key's blocks say nothing of erasure coding.
	three := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "three", SizeHint: 10,
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE}).(*stratov1.OpenKeyResponse)
	require.Len(t, three.Blocks[0].Pipeline.Members, 3)
	require.Nil(t, three.Blocks[0].Pipeline.ErasureCoding)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "ecb", Key: "three", OpenId: three.OpenId, Blocks: []*stratov1.BlockLocation{
		{BlockId: three.Blocks[0].BlockId, Length: 5}}})

	// A compose takes no groups into a replicated key, nor blocks into an
	// erasure coded one.
	for _, tc := range []struct {
		repl     stratov1.ReplicationFactor
		src, why string
	}{
		{stratov1.ReplicationFactor_REPLICATION_THREE, "big", "source vol/ecb/big is stored as rs-6-3-1024k, the key as THREE"},
		{0, "three", "source vol/ecb/three is stored as THREE, the key as rs-6-3-1024k"},
	} {
		c := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "composed", Replication: tc.repl}).(*stratov1.OpenKeyResponse)
		err := h.fails(ErrInvalidBlocks, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "ecb", Key: "composed", OpenId: c.OpenId,
			Sources: []*stratov1.KeySource{{Volume: "vol", Bucket: "ecb", Key: tc.src}}})
		require.ErrorContains(t, err, tc.why)
	}
	h.fails(ErrInvalid, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "bad",
		ErasureCoding: &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 40, Parity: 2}})
}

// ecName is a config's string ("" for none).
func ecName(e *stratov1.ErasureCoding) string {
	if e == nil {
		return ""
	}
	c, err := ECConfig(&stratov1.ErasureCodingRecord{Codec: e.Codec, Data: e.Data, Parity: e.Parity, CellSize: e.CellSize})
	if err != nil {
		return err.Error()
	}
	return c.String()
}

func (h *harness) lookup(bucket, key string) *stratov1.KeyInfo {
	h.t.Helper()
	res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: bucket, Key: key})
	require.NoError(h.t, err)
	return res.Key
}
