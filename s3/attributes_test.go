package s3_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"
)

// TestGetObjectAttributes: the SDK's GetObjectAttributes of an object of
// one PUT (ETag, size, storage class, its CRC32 checksum) and of a
// multipart one (its parts' sizes, paged); an unknown attribute is
// InvalidArgument; a missing key NoSuchKey.
func TestGetObjectAttributes(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	data := []byte("hello, attributes")
	put, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("one"), Body: bytes.NewReader(data),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32})
	require.NoError(t, err)
	all := []types.ObjectAttributes{types.ObjectAttributesEtag, types.ObjectAttributesChecksum, types.ObjectAttributesObjectParts,
		types.ObjectAttributesStorageClass, types.ObjectAttributesObjectSize}
	got, err := c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("one"), ObjectAttributes: all})
	require.NoError(t, err)
	require.Equal(t, aws.ToString(put.ETag), `"`+aws.ToString(got.ETag)+`"`)
	require.Equal(t, int64(len(data)), aws.ToInt64(got.ObjectSize))
	require.Equal(t, types.StorageClassStandard, got.StorageClass)
	require.NotNil(t, got.Checksum)
	require.Equal(t, aws.ToString(put.ChecksumCRC32), aws.ToString(got.Checksum.ChecksumCRC32))
	require.Nil(t, got.ObjectParts, "one PUT: no parts")
	require.NotNil(t, got.LastModified)

	// Three parts of 5 MiB, 5 MiB and 1 byte.
	mpu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mpu")})
	require.NoError(t, err)
	sizes := []int{5 << 20, 5 << 20, 1}
	var done []types.CompletedPart
	for i, n := range sizes {
		part := make([]byte, n)
		_, _ = rand.Read(part)
		up, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mpu"), UploadId: mpu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part)})
		require.NoError(t, err)
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: up.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mpu"),
		UploadId: mpu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	require.NoError(t, err)
	got, err = c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("mpu"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectParts, types.ObjectAttributesObjectSize}, MaxParts: aws.Int32(2)})
	require.NoError(t, err)
	require.Equal(t, int64(10<<20+1), aws.ToInt64(got.ObjectSize))
	require.Empty(t, aws.ToString(got.ETag), "not asked")
	op := got.ObjectParts
	require.Equal(t, int32(3), aws.ToInt32(op.TotalPartsCount))
	require.True(t, aws.ToBool(op.IsTruncated))
	require.Len(t, op.Parts, 2)
	require.Equal(t, int64(5<<20), aws.ToInt64(op.Parts[1].Size))
	got, err = c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("mpu"),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectParts}, PartNumberMarker: op.NextPartNumberMarker})
	require.NoError(t, err)
	require.False(t, aws.ToBool(got.ObjectParts.IsTruncated))
	require.Len(t, got.ObjectParts.Parts, 1)
	require.Equal(t, int32(3), aws.ToInt32(got.ObjectParts.Parts[0].PartNumber))
	require.Equal(t, int64(1), aws.ToInt64(got.ObjectParts.Parts[0].Size))

	_, err = c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("one")})
	require.Error(t, err, "no attribute asked (the SDK refuses it itself)")
	_, err = c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("one"),
		ObjectAttributes: []types.ObjectAttributes{"Owner"}})
	require.Equal(t, "InvalidArgument", s3Code(err))
	_, err = c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("nope"), ObjectAttributes: all})
	require.Equal(t, "NoSuchKey", s3Code(err))
}
