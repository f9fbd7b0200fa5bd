package s3_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

// TestListBucketsPaged: ListBuckets with max-buckets pages with a
// continuation token, filters by prefix and region; a bad max-buckets is
// InvalidArgument.
func TestListBucketsPaged(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	var names []string
	for range 5 {
		names = append(names, newBucket(t, c))
	}
	var got []string
	var tok *string
	pages := 0
	for {
		out, err := c.ListBuckets(ctx, &awss3.ListBucketsInput{MaxBuckets: aws.Int32(2), ContinuationToken: tok, Prefix: aws.String("b")})
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(out.Buckets), 2)
		for _, b := range out.Buckets {
			got = append(got, aws.ToString(b.Name))
			require.Equal(t, region, aws.ToString(b.BucketRegion))
		}
		if out.ContinuationToken == nil {
			break
		}
		tok = out.ContinuationToken
	}
	all, err := c.ListBuckets(ctx, &awss3.ListBucketsInput{})
	require.NoError(t, err)
	var want []string
	for _, b := range all.Buckets {
		want = append(want, aws.ToString(b.Name))
	}
	require.Equal(t, want, got, "the pages make the whole list")
	require.Greater(t, pages, 2)
	for _, n := range names {
		require.Contains(t, got, n)
	}
	out, err := c.ListBuckets(ctx, &awss3.ListBucketsInput{Prefix: aws.String(names[3])})
	require.NoError(t, err)
	require.Len(t, out.Buckets, 1)
	out, err = c.ListBuckets(ctx, &awss3.ListBucketsInput{BucketRegion: aws.String("eu-west-9")})
	require.NoError(t, err)
	require.Empty(t, out.Buckets)
	_, err = c.ListBuckets(ctx, &awss3.ListBucketsInput{MaxBuckets: aws.Int32(0)})
	require.Equal(t, "InvalidArgument", s3Code(err))
}

// TestListObjectsEmptyPrefix: a listing without a prefix still answers an
// empty Prefix element, as AWS does (clients read it as "" rather than
// absent).
func TestListObjectsEmptyPrefix(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	v2, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.NotNil(t, v2.Prefix)
	require.Empty(t, aws.ToString(v2.Prefix))
	v1, err := c.ListObjects(ctx, &awss3.ListObjectsInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.NotNil(t, v1.Prefix)
}

// TestWebsiteRedirect: x-amz-website-redirect-location must be a path or
// an http(s) URL (PutObject, CreateMultipartUpload); CopyObject does not
// copy it, but sets the one it is given.
func TestWebsiteRedirect(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), WebsiteRedirectLocation: aws.String("ftp://x")})
	require.Equal(t, "InvalidRedirectLocation", s3Code(err))
	_, err = c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"), WebsiteRedirectLocation: aws.String("x")})
	require.Equal(t, "InvalidRedirectLocation", s3Code(err))
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("src"), WebsiteRedirectLocation: aws.String("/elsewhere")})
	require.NoError(t, err)
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("src")})
	require.NoError(t, err)
	require.Equal(t, "/elsewhere", aws.ToString(head.WebsiteRedirectLocation))
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("dst"), CopySource: aws.String(b + "/src")})
	require.NoError(t, err)
	head, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("dst")})
	require.NoError(t, err)
	require.Empty(t, aws.ToString(head.WebsiteRedirectLocation))
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("dst2"), CopySource: aws.String(b + "/src"),
		WebsiteRedirectLocation: aws.String("https://example.com/")})
	require.NoError(t, err)
	head, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("dst2")})
	require.NoError(t, err)
	require.Equal(t, "https://example.com/", aws.ToString(head.WebsiteRedirectLocation))
}
