package s3_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

func s3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestObjectTagging(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: nil,
		ContentType: aws.String("text/x"), Metadata: map[string]string{"m": "1"}, Tagging: aws.String("a=1")})
	require.NoError(t, err)
	head0, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	tags := func(key string) map[string]string {
		out, err := c.GetObjectTagging(ctx, &awss3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String(key)})
		require.NoError(t, err)
		m := map[string]string{}
		for _, tg := range out.TagSet {
			m[*tg.Key] = *tg.Value
		}
		return m
	}
	require.Equal(t, map[string]string{"a": "1"}, tags("k"))

	_, err = c.PutObjectTagging(ctx, &awss3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("data eng")}, {Key: aws.String("ü"), Value: aws.String("")}}}})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"team": "data eng", "ü": ""}, tags("k"))
	// Everything else about the object stays: type, metadata, ETag, date.
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.Equal(t, aws.ToString(head0.ETag), aws.ToString(head.ETag))
	require.Equal(t, "text/x", aws.ToString(head.ContentType))
	require.Equal(t, map[string]string{"m": "1"}, head.Metadata)
	require.Equal(t, head0.LastModified, head.LastModified)
	require.Equal(t, int32(2), aws.ToInt32(head.TagCount))

	_, err = c.DeleteObjectTagging(ctx, &awss3.DeleteObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.Empty(t, tags("k"))
	head, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"m": "1"}, head.Metadata)

	// Bad tag sets are refused and change nothing.
	put := func(ts ...types.Tag) error {
		_, err := c.PutObjectTagging(ctx, &awss3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"), Tagging: &types.Tagging{TagSet: ts}})
		return err
	}
	tg := func(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	var eleven []types.Tag
	for i := range 11 {
		eleven = append(eleven, tg(string(rune('a'+i)), "v"))
	}
	require.Equal(t, "BadRequest", s3Code(put(eleven...)), "AWS's code for too many tags")
	for _, bad := range [][]types.Tag{{tg("a", "1"), tg("a", "2")}, {tg("", "v")}, {tg("aws:x", "v")},
		{tg(string(make([]byte, 129)), "v")}, {tg("k", "a<b")}} {
		require.Equal(t, "InvalidTag", s3Code(put(bad...)), "%v", bad)
	}
	require.Empty(t, tags("k"))
	_, err = c.PutObjectTagging(ctx, &awss3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("nope"), Tagging: &types.Tagging{TagSet: []types.Tag{tg("a", "1")}}})
	require.Equal(t, "NoSuchKey", s3Code(err))
	_, err = c.DeleteObjectTagging(ctx, &awss3.DeleteObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("nope")})
	require.Equal(t, "NoSuchKey", s3Code(err))
}

func TestBucketTagging(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, true)
	b := newBucket(t, c)
	_, err := c.GetBucketTagging(ctx, &awss3.GetBucketTaggingInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchTagSet", s3Code(err))
	_, err = c.PutBucketTagging(ctx, &awss3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}, {Key: aws.String("a"), Value: aws.String("b")}}}})
	require.NoError(t, err)
	out, err := c.GetBucketTagging(ctx, &awss3.GetBucketTaggingInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("a"), Value: aws.String("b")}, {Key: aws.String("env"), Value: aws.String("test")}}, out.TagSet)
	// The bucket is unchanged otherwise.
	put(t, c, b, "x", []byte("x"))
	_, err = c.DeleteBucketTagging(ctx, &awss3.DeleteBucketTaggingInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	_, err = c.GetBucketTagging(ctx, &awss3.GetBucketTaggingInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchTagSet", s3Code(err))
	_, err = c.PutBucketTagging(ctx, &awss3.PutBucketTaggingInput{Bucket: aws.String("no-such-bucket-x"),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}})
	require.Equal(t, "NoSuchBucket", s3Code(err))
}

// TestCreateBucketTags: CreateBucket's configuration may carry the
// bucket's tag set, checked as PutBucketTagging's; an unknown location
// constraint is InvalidLocationConstraint.
func TestCreateBucketTags(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	bucketSeq++
	name := fmt.Sprintf("b%d-createtags", bucketSeq)
	create := func(lc types.BucketLocationConstraint, tags ...types.Tag) error {
		_, err := c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(name),
			CreateBucketConfiguration: &types.CreateBucketConfiguration{LocationConstraint: lc, Tags: tags}})
		return err
	}
	tag := func(k, v string) types.Tag { return types.Tag{Key: aws.String(k), Value: aws.String(v)} }
	var many []types.Tag
	for i := 0; i < 51; i++ {
		many = append(many, tag(fmt.Sprintf("k%d", i), "v"))
	}
	for _, tc := range []struct {
		lc   types.BucketLocationConstraint
		tags []types.Tag
		code string
	}{
		{"", []types.Tag{tag("a", "1"), tag("a", "2")}, "InvalidTag"},
		{"", []types.Tag{tag("user!name", "1")}, "InvalidTag"},
		{"", []types.Tag{tag("k", "`v")}, "InvalidTag"},
		{"", many, "BadRequest"},
		{"us-west-1", nil, "InvalidLocationConstraint"},
		{"us-east-1", nil, "InvalidLocationConstraint"},
	} {
		require.Equal(t, tc.code, apiCode(create(tc.lc, tc.tags...)))
		_, err := c.HeadBucket(ctx, &awss3.HeadBucketInput{Bucket: aws.String(name)})
		require.Error(t, err, "a refused CreateBucket made its bucket")
	}
	require.NoError(t, create("", tag("team", "storage"), tag("env", "test")))
	got, err := c.GetBucketTagging(ctx, &awss3.GetBucketTaggingInput{Bucket: aws.String(name)})
	require.NoError(t, err)
	require.Len(t, got.TagSet, 2)
	require.Equal(t, "env", aws.ToString(got.TagSet[0].Key))
}
