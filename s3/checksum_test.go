package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cespare/xxhash/v2"
	"github.com/minio/crc64nvme"
	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"
)

// TestXXHashChecksums: a PUT with an XXHASH checksum (computed here: the
// SDK sends them and does not compute them), the gateway checks and stores it and gives them back on GET, HEAD and
// listings; a wrong value is BadDigest and writes nothing.
func TestXXHashChecksums(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	data := randomBytes(3<<20+5, 11)
	be64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	h128 := xxh3.Hash128(data).Bytes()
	sums := map[types.ChecksumAlgorithm]string{
		types.ChecksumAlgorithmXxhash64:  base64.StdEncoding.EncodeToString(be64(xxhash.Sum64(data))),
		types.ChecksumAlgorithmXxhash3:   base64.StdEncoding.EncodeToString(be64(xxh3.Hash(data))),
		types.ChecksumAlgorithmXxhash128: base64.StdEncoding.EncodeToString(h128[:]),
	}
	for algo, sum := range sums {
		in := &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(string(algo)), Body: bytes.NewReader(data)}
		field := map[types.ChecksumAlgorithm]**string{types.ChecksumAlgorithmXxhash64: &in.ChecksumXXHASH64,
			types.ChecksumAlgorithmXxhash3: &in.ChecksumXXHASH3, types.ChecksumAlgorithmXxhash128: &in.ChecksumXXHASH128}[algo]
		*field = aws.String(sum)
		_, err := c.PutObject(ctx, in)
		require.NoError(t, err, algo)
		got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(string(algo)), ChecksumMode: types.ChecksumModeEnabled})
		require.NoError(t, err, algo)
		require.NoError(t, got.Body.Close())
		back := map[types.ChecksumAlgorithm]*string{types.ChecksumAlgorithmXxhash64: got.ChecksumXXHASH64,
			types.ChecksumAlgorithmXxhash3: got.ChecksumXXHASH3, types.ChecksumAlgorithmXxhash128: got.ChecksumXXHASH128}[algo]
		require.Equal(t, sum, aws.ToString(back), algo)
		require.Equal(t, types.ChecksumTypeFullObject, got.ChecksumType)
	}
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("XXHASH3"), ChecksumMode: types.ChecksumModeEnabled})
	require.NoError(t, err)
	require.Equal(t, sums[types.ChecksumAlgorithmXxhash3], aws.ToString(head.ChecksumXXHASH3))

	list, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, list.Contents, 3)
	for _, o := range list.Contents {
		require.Equal(t, []types.ChecksumAlgorithm{types.ChecksumAlgorithm(aws.ToString(o.Key))}, o.ChecksumAlgorithm)
		require.Equal(t, types.ChecksumTypeFullObject, o.ChecksumType)
	}

	wrong := base64.StdEncoding.EncodeToString(make([]byte, 8))
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("bad"), Body: bytes.NewReader(data),
		ChecksumXXHASH64: aws.String(wrong)})
	require.Equal(t, "BadDigest", apiCode(err), "%v", err)
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("bad")})
	require.Error(t, err, "a refused PUT writes nothing")
}

// TestMultipartChecksumTypes: an upload's checksum as S3 defines it since
// 2025. Without an algorithm the object gets a FULL_OBJECT CRC64NVME
// combined from its parts (whatever checksum the SDK sent with each);
// FULL_OBJECT CRC32C is the CRC of the whole object; COMPOSITE SHA256 is
// the checksum of the parts' checksums, "-N".
func TestMultipartChecksumTypes(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	part := randomBytes(5<<20, 3)
	last := randomBytes(1234, 4)
	whole := append(append(append([]byte(nil), part...), part...), last...)
	for _, tc := range []struct {
		algo types.ChecksumAlgorithm
		typ  types.ChecksumType
	}{{"", ""}, {types.ChecksumAlgorithmCrc32c, types.ChecksumTypeFullObject}, {types.ChecksumAlgorithmSha256, types.ChecksumTypeComposite}} {
		key := "mp-" + string(tc.algo)
		in := &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key), ChecksumAlgorithm: tc.algo, ChecksumType: tc.typ}
		up, err := c.CreateMultipartUpload(ctx, in)
		require.NoError(t, err)
		var parts []types.CompletedPart
		for i, data := range [][]byte{part, part, last} {
			out, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: up.UploadId,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(data), ChecksumAlgorithm: tc.algo})
			require.NoError(t, err)
			parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(int32(i + 1)),
				ChecksumCRC32C: out.ChecksumCRC32C, ChecksumSHA256: out.ChecksumSHA256})
		}
		cin := &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key),
			UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
		if tc.algo == "" {
			// An upload without an algorithm ignores a final checksum.
			cin.ChecksumCRC64NVME = aws.String("vqf3hRLTlJw=")
		}
		done, err := c.CompleteMultipartUpload(ctx, cin)
		require.NoError(t, err, key)
		head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		require.NoError(t, err)
		switch tc.algo {
		case "":
			want := crc64nvme.New()
			want.Write(whole)
			require.Equal(t, base64.StdEncoding.EncodeToString(want.Sum(nil)), aws.ToString(done.ChecksumCRC64NVME))
			require.Equal(t, types.ChecksumTypeFullObject, done.ChecksumType)
			require.Equal(t, aws.ToString(done.ChecksumCRC64NVME), aws.ToString(head.ChecksumCRC64NVME))
		case types.ChecksumAlgorithmCrc32c:
			want := crc32.New(crc32.MakeTable(crc32.Castagnoli))
			want.Write(whole)
			require.Equal(t, base64.StdEncoding.EncodeToString(want.Sum(nil)), aws.ToString(done.ChecksumCRC32C))
			require.Equal(t, types.ChecksumTypeFullObject, head.ChecksumType)
		case types.ChecksumAlgorithmSha256:
			h := sha256.New()
			for _, p := range parts {
				d, err := base64.StdEncoding.DecodeString(aws.ToString(p.ChecksumSHA256))
				require.NoError(t, err)
				h.Write(d)
			}
			require.Equal(t, base64.StdEncoding.EncodeToString(h.Sum(nil))+"-3", aws.ToString(done.ChecksumSHA256))
			require.Equal(t, types.ChecksumTypeComposite, head.ChecksumType)
		}
	}
}
