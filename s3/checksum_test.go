package s3_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/cespare/xxhash/v2"
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
