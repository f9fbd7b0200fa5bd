package s3_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

// TestCopySourceRefused: a copy source that cannot name an object, and an
// UploadPartCopy range that is malformed or beyond the source, are
// InvalidArgument, whatever exists (the upload named here does not).
func TestCopySourceRefused(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b, Key: aws.String("src"), Body: bytes.NewReader(make([]byte, 100))})
	require.NoError(t, err)
	for _, src := range []string{"bucket/%ZZ", "%", "bucket/%C3%", "192.168.1.1/foo", "my-buc@k&()t/obj", "bucket", "bucket/",
		"bucket/.", "bucket/..", "bucket/../", "bucket/foo/ba/../../../r/baz"} {
		_, err := c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &b, Key: aws.String("dst"), CopySource: aws.String(src)})
		require.Equal(t, "InvalidArgument", apiCode(err), "CopyObject from %q", src)
		_, err = c.UploadPartCopy(ctx, &awss3.UploadPartCopyInput{Bucket: &b, Key: aws.String("dst"), UploadId: aws.String("no-such-upload"),
			PartNumber: aws.Int32(1), CopySource: aws.String(src)})
		require.Equal(t, "InvalidArgument", apiCode(err), "UploadPartCopy from %q", src)
	}
	// A key that stays inside its bucket is a key.
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &b, Key: aws.String("dst"), CopySource: aws.String(b + "/x/../src")})
	require.Equal(t, "NoSuchKey", apiCode(err))

	up, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: &b, Key: aws.String("dst")})
	require.NoError(t, err)
	for rg, code := range map[string]string{"byte=1-2": "InvalidArgument", "bytes=20-10": "InvalidArgument", "bytes=-2-30": "InvalidArgument",
		"bytes=5-": "InvalidArgument", "bytes=50-100": "InvalidArgument", "bytes=0-99": ""} {
		_, err = c.UploadPartCopy(ctx, &awss3.UploadPartCopyInput{Bucket: &b, Key: aws.String("dst"), UploadId: up.UploadId,
			PartNumber: aws.Int32(1), CopySource: aws.String(b + "/src"), CopySourceRange: aws.String(rg)})
		require.Equal(t, code, apiCode(err), "range %q: %v", rg, err)
	}
}

// TestExpectedBucketOwner: x-amz-expected-bucket-owner and
// x-amz-source-expected-bucket-owner must name the bucket's owner (here
// the caller, by its access key); another is AccessDenied.
func TestExpectedBucketOwner(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: &b, Key: aws.String("k"), Body: bytes.NewReader([]byte("x")),
		ExpectedBucketOwner: aws.String(testKey)})
	require.NoError(t, err)
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &b, Key: aws.String("k2"), CopySource: aws.String(b + "/k"),
		ExpectedSourceBucketOwner: aws.String("someone-else")})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: &b, Key: aws.String("k2"), CopySource: aws.String(b + "/k"),
		ExpectedSourceBucketOwner: aws.String(testKey)})
	require.NoError(t, err)
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b, Key: aws.String("k"), ExpectedBucketOwner: aws.String("someone-else")})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: &b, ExpectedBucketOwner: aws.String("someone-else")})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &b, Key: aws.String("k")})
	require.NoError(t, err, "the refused delete deleted")
}
