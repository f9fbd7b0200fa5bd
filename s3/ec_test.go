package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Objects of an erasure coded bucket (xor-2-1: the test cluster has three
// datanodes) through the gateway: PUT, GET, ranged GET, and a multipart
// upload completed into it.
func TestErasureCodedBucket(t *testing.T) {
	ctx := context.Background()
	_, e, err := client.ParseReplication("xor-2-1-1024k")
	require.NoError(t, err)
	bucketSeq++
	b := fmt.Sprintf("b%d-ec-xor", bucketSeq)
	_, err = env.client.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "s3v", Name: b, ErasureCoding: e,
		Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	c := sdk(t, false)

	data := randomBytes(9<<20+7, 21)
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("one"), Body: bytes.NewReader(data)})
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, get(t, c, b, "one")))
	ki, err := env.client.LookupKey(ctx, "s3v", b, "one")
	require.NoError(t, err)
	require.Equal(t, "xor-2-1-1024k", client.Redundancy(ki.Replication, ki.ErasureCoding))
	r, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("one"), Range: aws.String("bytes=1048570-3145739")})
	require.NoError(t, err)
	var got bytes.Buffer
	_, err = got.ReadFrom(r.Body)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data[1048570:3145740], got.Bytes()))

	parts := [][]byte{randomBytes(5<<20, 22), randomBytes(1<<20+3, 23)}
	cu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp")})
	require.NoError(t, err)
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		require.NoError(t, err)
		done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp"),
		UploadId: cu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	require.NoError(t, err)
	require.True(t, bytes.Equal(bytes.Join(parts, nil), get(t, c, b, "mp")))
}
