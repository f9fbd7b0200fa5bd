package s3_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// lockedErr checks that err is AWS's answer to a change an object lock
// forbids.
func lockedErr(t *testing.T, err error, msgAndArgs ...any) {
	t.Helper()
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "%v %v", err, msgAndArgs)
	require.Equal(t, "AccessDenied", ae.ErrorCode(), msgAndArgs...)
	require.Equal(t, "Access Denied because object protected by object lock.", ae.ErrorMessage(), msgAndArgs...)
}

// newLockBucket creates a bucket with object lock.
func newLockBucket(t *testing.T, c *awss3.Client) string {
	t.Helper()
	bucketSeq++
	name := "lock" + sanitize(t.Name())
	if len(name) > 55 {
		name = name[:55]
	}
	name += "-" + time.Now().Format("150405") + string(rune('a'+bucketSeq%26))
	_, err := c.CreateBucket(context.Background(), &awss3.CreateBucketInput{Bucket: aws.String(name), ObjectLockEnabledForBucket: aws.Bool(true)})
	require.NoError(t, err)
	return name
}

func putObject(t *testing.T, c *awss3.Client, in *awss3.PutObjectInput) (*awss3.PutObjectOutput, error) {
	t.Helper()
	if in.Body == nil {
		in.Body = bytes.NewReader([]byte("data of " + aws.ToString(in.Key)))
	}
	return c.PutObject(context.Background(), in)
}

func deleteVersion(c *awss3.Client, b, k, v string, bypass bool) error {
	in := &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String(k), VersionId: aws.String(v)}
	if bypass {
		in.BypassGovernanceRetention = aws.Bool(true)
	}
	_, err := c.DeleteObject(context.Background(), in)
	return err
}

func TestObjectLockConfiguration(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	plain := newBucket(t, c)
	b := newLockBucket(t, c)

	// A bucket with object lock is versioned, for good.
	v, err := c.GetBucketVersioning(ctx, &awss3.GetBucketVersioningInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.BucketVersioningStatusEnabled, v.Status)
	_, err = c.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusSuspended}})
	require.Equal(t, "InvalidBucketState", apiCode(err))

	cfg, err := c.GetObjectLockConfiguration(ctx, &awss3.GetObjectLockConfigurationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockEnabledEnabled, cfg.ObjectLockConfiguration.ObjectLockEnabled)
	require.Nil(t, cfg.ObjectLockConfiguration.Rule)

	put := func(bucket string, r *types.DefaultRetention) error {
		_, err := c.PutObjectLockConfiguration(ctx, &awss3.PutObjectLockConfigurationInput{Bucket: aws.String(bucket),
			ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
				Rule: &types.ObjectLockRule{DefaultRetention: r}}})
		return err
	}
	gov := types.ObjectLockRetentionModeGovernance
	require.Equal(t, "MalformedXML", apiCode(put(b, &types.DefaultRetention{Mode: gov, Days: aws.Int32(1), Years: aws.Int32(1)})))
	require.Equal(t, "MalformedXML", apiCode(put(b, &types.DefaultRetention{Mode: "SOMETIMES", Days: aws.Int32(1)})))
	require.Equal(t, "InvalidArgument", apiCode(put(b, &types.DefaultRetention{Mode: gov, Days: aws.Int32(-3)})))
	require.Equal(t, "InvalidArgument", apiCode(put(b, &types.DefaultRetention{Mode: gov, Years: aws.Int32(101)})))
	require.NoError(t, put(b, &types.DefaultRetention{Mode: types.ObjectLockRetentionModeCompliance, Years: aws.Int32(2)}))
	cfg, err = c.GetObjectLockConfiguration(ctx, &awss3.GetObjectLockConfigurationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockRetentionModeCompliance, cfg.ObjectLockConfiguration.Rule.DefaultRetention.Mode)
	require.Equal(t, int32(2), aws.ToInt32(cfg.ObjectLockConfiguration.Rule.DefaultRetention.Years))
	// No rule: no default retention.
	_, err = c.PutObjectLockConfiguration(ctx, &awss3.PutObjectLockConfigurationInput{Bucket: aws.String(b),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
	require.NoError(t, err)
	cfg, err = c.GetObjectLockConfiguration(ctx, &awss3.GetObjectLockConfigurationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Nil(t, cfg.ObjectLockConfiguration.Rule)

	// A bucket created without object lock.
	_, err = c.GetObjectLockConfiguration(ctx, &awss3.GetObjectLockConfigurationInput{Bucket: aws.String(plain)})
	require.Equal(t, "ObjectLockConfigurationNotFoundError", apiCode(err))
	require.Equal(t, "InvalidBucketState", apiCode(put(plain, &types.DefaultRetention{Mode: gov, Days: aws.Int32(1)})))
	until := time.Now().Add(time.Hour)
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(plain), Key: aws.String("k"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &until})
	require.Equal(t, "InvalidRequest", apiCode(err))
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(plain), Key: aws.String("k"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	require.Equal(t, "InvalidRequest", apiCode(err))
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(plain), Key: aws.String("k")})
	require.NoError(t, err)
	_, err = c.PutObjectRetention(ctx, &awss3.PutObjectRetentionInput{Bucket: aws.String(plain), Key: aws.String("k"),
		Retention: &types.ObjectLockRetention{Mode: gov, RetainUntilDate: &until}})
	require.Equal(t, "InvalidRequest", apiCode(err))
	_, err = c.GetObjectLegalHold(ctx, &awss3.GetObjectLegalHoldInput{Bucket: aws.String(plain), Key: aws.String("k")})
	require.Equal(t, "InvalidRequest", apiCode(err))

	// Bad headers, whatever the bucket.
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"),
		ObjectLockMode: "FOREVER", ObjectLockRetainUntilDate: &until})
	require.Equal(t, "InvalidArgument", apiCode(err))
	past := time.Now().Add(-time.Hour)
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &past})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"),
		ObjectLockMode: types.ObjectLockModeGovernance})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), ObjectLockLegalHoldStatus: "MAYBE"})
	require.Equal(t, "InvalidArgument", apiCode(err))
}

// TestObjectLockGovernance: a bucket's default retention applies to new
// versions; deleting a version needs the bypass; a plain delete makes a
// marker and an overwrite a new version, as at AWS.
func TestObjectLockGovernance(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newLockBucket(t, c)
	_, err := c.PutObjectLockConfiguration(ctx, &awss3.PutObjectLockConfigurationInput{Bucket: aws.String(b),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}})
	require.NoError(t, err)
	before := time.Now()
	v1 := putVersion(t, c, b, "k", []byte("one"))
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockModeGovernance, head.ObjectLockMode)
	require.WithinDuration(t, before.Add(24*time.Hour), aws.ToTime(head.ObjectLockRetainUntilDate), time.Minute)
	ret, err := c.GetObjectRetention(ctx, &awss3.GetObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v1)})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockRetentionModeGovernance, ret.Retention.Mode)
	_, err = c.GetObjectLegalHold(ctx, &awss3.GetObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err, "a version with a lock has a legal hold status (OFF)")

	lockedErr(t, deleteVersion(c, b, "k", v1, false))
	// A plain delete makes a marker; an overwrite, a version.
	del, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.True(t, aws.ToBool(del.DeleteMarker))
	v2 := putVersion(t, c, b, "k", []byte("two"))
	require.NotEqual(t, v1, v2)
	lockedErr(t, deleteVersion(c, b, "k", v1, false))

	// Shortening needs the bypass too.
	shorter := time.Now().Add(time.Hour)
	_, err = c.PutObjectRetention(ctx, &awss3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &shorter}})
	lockedErr(t, err)
	_, err = c.PutObjectRetention(ctx, &awss3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2),
		Retention:                 &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &shorter},
		BypassGovernanceRetention: aws.Bool(true)})
	require.NoError(t, err)
	ret, err = c.GetObjectRetention(ctx, &awss3.GetObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2)})
	require.NoError(t, err)
	require.WithinDuration(t, shorter, aws.ToTime(ret.Retention.RetainUntilDate), time.Second)

	// The bucket keeps its versions: it cannot be deleted.
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(b)})
	require.Equal(t, "BucketNotEmpty", apiCode(err))

	// With the bypass (strato dev and these tests: no authorization, so
	// any key may; with it, the bucket's owner and administrators),
	// versions go.
	require.NoError(t, deleteVersion(c, b, "k", v1, true))
	require.NoError(t, deleteVersion(c, b, "k", v2, true))
	require.NoError(t, deleteVersion(c, b, "k", aws.ToString(del.VersionId), false), "markers are never locked")
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(b)})
	require.NoError(t, err)
}

// TestObjectLockCompliance: nobody shortens a COMPLIANCE retention or
// deletes its version before its date, bypass or not; it may be extended.
func TestObjectLockCompliance(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newLockBucket(t, c)
	until := time.Now().Add(3 * time.Second)
	out, err := putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("c"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	require.NoError(t, err)
	v := aws.ToString(out.VersionId)
	retention := func(mode types.ObjectLockRetentionMode, at time.Time, bypass bool) error {
		in := &awss3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("c"), VersionId: aws.String(v),
			Retention: &types.ObjectLockRetention{Mode: mode, RetainUntilDate: &at}}
		if bypass {
			in.BypassGovernanceRetention = aws.Bool(true)
		}
		_, err := c.PutObjectRetention(ctx, in)
		return err
	}
	lockedErr(t, retention(types.ObjectLockRetentionModeCompliance, until.Add(-time.Second), true), "shortened")
	lockedErr(t, retention(types.ObjectLockRetentionModeGovernance, until.Add(time.Hour), true), "made governance")
	lockedErr(t, deleteVersion(c, b, "c", v, true))
	until = until.Add(time.Second)
	require.NoError(t, retention(types.ObjectLockRetentionModeCompliance, until, false), "extended")
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("c")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockModeCompliance, head.ObjectLockMode)
	require.WithinDuration(t, until, aws.ToTime(head.ObjectLockRetainUntilDate), time.Second)
	time.Sleep(time.Until(until) + 100*time.Millisecond)
	require.NoError(t, deleteVersion(c, b, "c", v, false), "the retention has ended (meta's clock)")
}

// TestObjectLockLegalHold: a legal hold keeps a version whatever the
// bypass; DeleteObjects deletes what it may and names the rest; the
// headers of PUT, CopyObject and CreateMultipartUpload set a lock.
func TestObjectLockLegalHold(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newLockBucket(t, c)
	held := putVersion(t, c, b, "held", []byte("h"))
	free := putVersion(t, c, b, "free", []byte("f"))
	_, err := c.GetObjectLegalHold(ctx, &awss3.GetObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("held")})
	require.Equal(t, "NoSuchObjectLockConfiguration", apiCode(err))
	_, err = c.PutObjectLegalHold(ctx, &awss3.PutObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("held"),
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}})
	require.NoError(t, err)
	lh, err := c.GetObjectLegalHold(ctx, &awss3.GetObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("held"), VersionId: aws.String(held)})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockLegalHoldStatusOn, lh.LegalHold.Status)
	_, err = c.GetObjectRetention(ctx, &awss3.GetObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("held")})
	require.Equal(t, "NoSuchObjectLockConfiguration", apiCode(err), "a legal hold is no retention")
	lockedErr(t, deleteVersion(c, b, "held", held, true))

	// DeleteObjects: partial success.
	res, err := c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(b), BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{
			{Key: aws.String("held"), VersionId: aws.String(held)}, {Key: aws.String("free"), VersionId: aws.String(free)}}}})
	require.NoError(t, err)
	require.Len(t, res.Errors, 1)
	require.Equal(t, "held", aws.ToString(res.Errors[0].Key))
	require.Equal(t, "AccessDenied", aws.ToString(res.Errors[0].Code))
	require.Equal(t, "Access Denied because object protected by object lock.", aws.ToString(res.Errors[0].Message))
	require.Len(t, res.Deleted, 1)
	require.Equal(t, "free", aws.ToString(res.Deleted[0].Key))

	// Headers: PUT, copy, multipart.
	far := time.Now().Add(time.Hour)
	out, err := putObject(t, c, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("p"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn, ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &far})
	require.NoError(t, err)
	get, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("p")})
	require.NoError(t, err)
	_ = get.Body.Close()
	require.Equal(t, types.ObjectLockLegalHoldStatusOn, get.ObjectLockLegalHoldStatus)
	require.Equal(t, types.ObjectLockModeGovernance, get.ObjectLockMode)
	pv := aws.ToString(out.VersionId)

	cp, err := c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copy"), CopySource: aws.String(b + "/p"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	require.NoError(t, err)
	lh, err = c.GetObjectLegalHold(ctx, &awss3.GetObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("copy")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockLegalHoldStatusOn, lh.LegalHold.Status)

	mp, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &far})
	require.NoError(t, err)
	part, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: mp.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	require.NoError(t, err)
	done, err := c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	require.NoError(t, err)
	ret, err := c.GetObjectRetention(ctx, &awss3.GetObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("mp")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockRetentionModeGovernance, ret.Retention.Mode)
	require.WithinDuration(t, far, aws.ToTime(ret.Retention.RetainUntilDate), time.Second)
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("mp")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectLockLegalHoldStatusOff, head.ObjectLockLegalHoldStatus)

	// Taking the holds off; the governance retentions give way to the
	// bypass; then the bucket empties.
	for _, kv := range [][2]string{{"held", held}, {"p", pv}, {"copy", aws.ToString(cp.VersionId)}} {
		_, err = c.PutObjectLegalHold(ctx, &awss3.PutObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String(kv[0]), VersionId: aws.String(kv[1]),
			LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}})
		require.NoError(t, err)
	}
	require.NoError(t, deleteVersion(c, b, "held", held, false))
	lockedErr(t, deleteVersion(c, b, "p", pv, false))
	require.NoError(t, deleteVersion(c, b, "p", pv, true))
	require.NoError(t, deleteVersion(c, b, "copy", aws.ToString(cp.VersionId), false))
	require.NoError(t, deleteVersion(c, b, "mp", aws.ToString(done.VersionId), true))
	_, err = c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: aws.String(b)})
	require.NoError(t, err)
}
