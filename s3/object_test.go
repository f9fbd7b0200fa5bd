package s3_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// apiCode is the S3 error code of err ("" if none).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestBuckets(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	_, err := c.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b)})
	require.Equal(t, "BucketAlreadyOwnedByYou", apiCode(err))
	_, err = c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("Bad_Name")})
	require.Equal(t, "InvalidBucketName", apiCode(err))
	lb, err := c.ListBuckets(ctx, &awss3.ListBucketsInput{})
	require.NoError(t, err)
	found := false
	for _, x := range lb.Buckets {
		found = found || *x.Name == b
	}
	require.True(t, found)
	loc, err := c.GetBucketLocation(ctx, &awss3.GetBucketLocationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.BucketLocationConstraint(""), loc.LocationConstraint)

	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("x")})
	require.NoError(t, err)
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(b)})
	require.Equal(t, "BucketNotEmpty", apiCode(err))
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	_, err = c.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(b)})
	require.Error(t, err)
	_, err = c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchBucket", apiCode(err))
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: strings.NewReader("x")})
	require.Equal(t, "NoSuchBucket", apiCode(err))
}

func TestPutGetObject(t *testing.T) {
	ctx := context.Background()
	for _, tlsOn := range []bool{false, true} {
		c := sdk(t, tlsOn)
		b := newBucket(t, c)
		data := randomBytes(20<<20+777, 7) // blocks of 8 MiB, chunks of 4 MiB
		keys := []string{"plain", "dir/sub/file.txt", "ünïcödé/ключ/日本", "sp ace+plus%percent?q=1&a#hash", "a//b/./c/../d"}
		for _, key := range keys {
			put, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: bytes.NewReader(data),
				ContentType: aws.String("text/x-test"), Metadata: map[string]string{"color": "blue", "n": "1"},
				CacheControl: aws.String("no-cache")})
			require.NoError(t, err, key)
			require.NotEmpty(t, aws.ToString(put.ETag))

			got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
			require.NoError(t, err, key)
			body, err := io.ReadAll(got.Body)
			require.NoError(t, err)
			require.True(t, bytes.Equal(data, body), key)
			require.Equal(t, "text/x-test", aws.ToString(got.ContentType))
			require.Equal(t, "blue", got.Metadata["color"])
			require.Equal(t, "no-cache", aws.ToString(got.CacheControl))
			require.Equal(t, aws.ToString(put.ETag), aws.ToString(got.ETag))
			{
				require.NotEmpty(t, aws.ToString(got.ChecksumCRC32), "the SDK's default checksum is stored")
			}
		}
		key := keys[0]
		// Ranges at chunk and block boundaries.
		for _, r := range [][2]int64{{0, 0}, {4<<20 - 1, 4 << 20}, {8<<20 - 3, 8<<20 + 3}, {16 << 20, 20<<20 + 776}, {5, 5}} {
			got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key),
				Range: aws.String("bytes=" + itoa(r[0]) + "-" + itoa(r[1]))})
			require.NoError(t, err)
			body, err := io.ReadAll(got.Body)
			require.NoError(t, err)
			require.True(t, bytes.Equal(data[r[0]:r[1]+1], body), "range %v", r)
		}
		got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), Range: aws.String("bytes=-10")})
		require.NoError(t, err)
		body, _ := io.ReadAll(got.Body)
		require.True(t, bytes.Equal(data[len(data)-10:], body))
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), Range: aws.String("bytes=999999999-")})
		require.Equal(t, "InvalidRange", apiCode(err))

		// Conditions.
		head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), aws.ToInt64(head.ContentLength))
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), IfMatch: aws.String(`"nope"`)})
		require.Equal(t, "PreconditionFailed", apiCode(err))
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), IfMatch: head.ETag})
		require.NoError(t, err)
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), IfNoneMatch: head.ETag})
		require.Error(t, err) // 304
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), IfModifiedSince: aws.Time(time.Now().Add(time.Hour))})
		require.Error(t, err) // 304
		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), IfUnmodifiedSince: aws.Time(time.Now().Add(-time.Hour))})
		require.Equal(t, "PreconditionFailed", apiCode(err))
		_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: strings.NewReader("x"), IfNoneMatch: aws.String("*")})
		require.Equal(t, "PreconditionFailed", apiCode(err))

		// Overrides.
		got, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key),
			ResponseContentType: aws.String("application/x-over"), ResponseContentDisposition: aws.String("attachment")})
		require.NoError(t, err)
		got.Body.Close()
		require.Equal(t, "application/x-over", aws.ToString(got.ContentType))
		require.Equal(t, "attachment", aws.ToString(got.ContentDisposition))

		_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("missing")})
		require.Equal(t, "NoSuchKey", apiCode(err))
		_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("missing")})
		require.NoError(t, err)

		// An empty object.
		_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("empty"), Body: bytes.NewReader(nil)})
		require.NoError(t, err)
		got, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("empty")})
		require.NoError(t, err)
		body, _ = io.ReadAll(got.Body)
		require.Empty(t, body)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A 200 MiB object with the SDK's default checksum (CRC32 in an aws-chunked
// trailer over HTTPS), read back and compared by hash.
func TestLargeObjectTrailer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	ctx := context.Background()
	c := sdk(t, true)
	b := newBucket(t, c)
	data := randomBytes(200<<20, 99)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("large"), Body: bytes.NewReader(data)})
	require.NoError(t, err)
	got, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("large"), ChecksumMode: types.ChecksumModeEnabled})
	require.NoError(t, err)
	defer got.Body.Close()
	h := md5.New()
	n, err := io.Copy(h, got.Body)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	want := md5.Sum(data)
	require.Equal(t, want[:], h.Sum(nil))
	require.NotEmpty(t, aws.ToString(got.ChecksumCRC32))
}
