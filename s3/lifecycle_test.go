package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"
)

// lifecycleDay is the length of a lifecycle day in the tests' meta
// (meta.Options.LifecycleDay): rules of 1 day act within two.
const lifecycleDay = 2 * time.Second

func putLifecycle(t *testing.T, c *awss3.Client, b string, rules ...types.LifecycleRule) {
	t.Helper()
	_, err := c.PutBucketLifecycleConfiguration(context.Background(), &awss3.PutBucketLifecycleConfigurationInput{
		Bucket: aws.String(b), LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rules}})
	require.NoError(t, err)
}

// waitFor polls cond until it holds, for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > d {
			t.Fatalf("waited %v for %s", d, what)
		}
	}
}

// TestLifecycleConfiguration: a configuration goes in and comes back as
// given; S3's rules on its shape are kept; Delete removes it.
func TestLifecycleConfiguration(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	_, err := c.GetBucketLifecycleConfiguration(ctx, &awss3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchLifecycleConfiguration", apiCode(err), "%v", err)

	date := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rules := []types.LifecycleRule{
		{ID: aws.String("logs"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("logs/")},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(30)}},
		{ID: aws.String("tmp"), Status: types.ExpirationStatusDisabled,
			Filter: &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("tmp/"),
				Tags: []types.Tag{{Key: aws.String("class"), Value: aws.String("scratch")}}, ObjectSizeGreaterThan: aws.Int64(1024)}},
			Expiration: &types.LifecycleExpiration{Date: &date}},
		{ID: aws.String("old"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")},
			NoncurrentVersionExpiration:    &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(7), NewerNoncurrentVersions: aws.Int32(2)},
			AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(3)}},
		{ID: aws.String("markers"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Tag: nil, Prefix: aws.String("m/")},
			Expiration: &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)}},
	}
	putLifecycle(t, c, b, rules...)
	got, err := c.GetBucketLifecycleConfiguration(ctx, &awss3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, got.Rules, 4)
	require.Equal(t, "logs/", aws.ToString(got.Rules[0].Filter.Prefix))
	require.Equal(t, int32(30), aws.ToInt32(got.Rules[0].Expiration.Days))
	require.Equal(t, types.ExpirationStatusDisabled, got.Rules[1].Status)
	and := got.Rules[1].Filter.And
	require.NotNil(t, and)
	require.Equal(t, "tmp/", aws.ToString(and.Prefix))
	require.Equal(t, int64(1024), aws.ToInt64(and.ObjectSizeGreaterThan))
	require.Equal(t, "scratch", aws.ToString(and.Tags[0].Value))
	require.True(t, date.Equal(aws.ToTime(got.Rules[1].Expiration.Date)))
	require.Equal(t, int32(7), aws.ToInt32(got.Rules[2].NoncurrentVersionExpiration.NoncurrentDays))
	require.Equal(t, int32(2), aws.ToInt32(got.Rules[2].NoncurrentVersionExpiration.NewerNoncurrentVersions))
	require.Equal(t, int32(3), aws.ToInt32(got.Rules[2].AbortIncompleteMultipartUpload.DaysAfterInitiation))
	require.True(t, aws.ToBool(got.Rules[3].Expiration.ExpiredObjectDeleteMarker))

	bad := map[string]types.LifecycleRule{
		"InvalidArgument": {ID: aws.String("x"), Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(0)}},
		"InvalidRequest":  {ID: aws.String("x"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("a")}},
		"MalformedXML":    {ID: aws.String("x"), Status: "On", Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
	}
	for code, r := range bad {
		_, err := c.PutBucketLifecycleConfiguration(ctx, &awss3.PutBucketLifecycleConfigurationInput{
			Bucket: aws.String(b), LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: []types.LifecycleRule{r}}})
		require.Equal(t, code, apiCode(err), "%v", err)
	}
	notMidnight := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	twice := types.LifecycleRule{ID: aws.String("same"), Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}}
	for _, rs := range [][]types.LifecycleRule{
		{{ID: aws.String("x"), Status: types.ExpirationStatusEnabled, Expiration: &types.LifecycleExpiration{Date: &notMidnight}}},
		{twice, twice},
	} {
		_, err := c.PutBucketLifecycleConfiguration(ctx, &awss3.PutBucketLifecycleConfigurationInput{
			Bucket: aws.String(b), LifecycleConfiguration: &types.BucketLifecycleConfiguration{Rules: rs}})
		require.Equal(t, "InvalidArgument", apiCode(err), "%v", err)
	}
	// The refusals changed nothing.
	got, err = c.GetBucketLifecycleConfiguration(ctx, &awss3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, got.Rules, 4)

	_, err = c.DeleteBucketLifecycle(ctx, &awss3.DeleteBucketLifecycleInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	_, err = c.GetBucketLifecycleConfiguration(ctx, &awss3.GetBucketLifecycleConfigurationInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchLifecycleConfiguration", apiCode(err), "%v", err)
	_, err = c.GetBucketLifecycleConfiguration(ctx, &awss3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("no-such-bucket-lc")})
	require.Equal(t, "NoSuchBucket", apiCode(err), "%v", err)
}

func exists(c *awss3.Client, b, k string) bool {
	_, err := c.HeadObject(context.Background(), &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
	return err == nil
}

// TestLifecycleExpiration: meta's rounds expire the current versions a
// rule's filter (prefix, tag, size) matches, and nothing else: by date
// at once, by days after their day count.
func TestLifecycleExpiration(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	put := func(k string, size int, tagging string) {
		in := &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(make([]byte, size))}
		if tagging != "" {
			in.Tagging = aws.String(tagging)
		}
		_, err := c.PutObject(ctx, in)
		require.NoError(t, err)
	}
	put("logs/a", 10, "")
	put("logs/big", 5000, "")
	put("keep/a", 10, "")
	put("tmp/x", 10, "class=scratch")
	put("tmp/y", 10, "class=gold")
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	putLifecycle(t, c, b,
		types.LifecycleRule{ID: aws.String("small-logs"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{And: &types.LifecycleRuleAndOperator{Prefix: aws.String("logs/"), ObjectSizeLessThan: aws.Int64(1000)}},
			Expiration: &types.LifecycleExpiration{Date: &past}},
		types.LifecycleRule{ID: aws.String("scratch"), Status: types.ExpirationStatusEnabled,
			Filter:     &types.LifecycleRuleFilter{Tag: &types.Tag{Key: aws.String("class"), Value: aws.String("scratch")}},
			Expiration: &types.LifecycleExpiration{Days: aws.Int32(1)}},
		types.LifecycleRule{ID: aws.String("off"), Status: types.ExpirationStatusDisabled,
			Filter:     &types.LifecycleRuleFilter{Prefix: aws.String("keep/")},
			Expiration: &types.LifecycleExpiration{Date: &past}})
	waitFor(t, 10*time.Second, "logs/a to expire by date", func() bool { return !exists(c, b, "logs/a") })
	waitFor(t, 5*lifecycleDay+5*time.Second, "tmp/x to expire after a day", func() bool { return !exists(c, b, "tmp/x") })
	for _, k := range []string{"logs/big", "keep/a", "tmp/y"} {
		require.True(t, exists(c, b, k), "%s matches no enabled rule", k)
	}
	// A key written after the rules, under the date rule, goes too.
	put("logs/late", 1, "")
	waitFor(t, 10*time.Second, "logs/late to expire", func() bool { return !exists(c, b, "logs/late") })
}

// TestLifecycleVersions: on a versioned bucket, expiring the current
// version puts a delete marker on top; noncurrent versions go after their
// days except the newest NewerNoncurrentVersions; a delete marker left
// alone is removed.
func TestLifecycleVersions(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	var vs []string
	for i := range 4 {
		vs = append(vs, putVersion(t, c, b, "k", []byte(fmt.Sprint(i))))
	}
	putVersion(t, c, b, "gone", []byte("x"))
	_, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("gone")})
	require.NoError(t, err)
	putLifecycle(t, c, b,
		types.LifecycleRule{ID: aws.String("noncurrent"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("k")},
			NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1), NewerNoncurrentVersions: aws.Int32(1)}},
		types.LifecycleRule{ID: aws.String("markers"), Status: types.ExpirationStatusEnabled, Filter: &types.LifecycleRuleFilter{Prefix: aws.String("gone")},
			Expiration:                  &types.LifecycleExpiration{ExpiredObjectDeleteMarker: aws.Bool(true)},
			NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}})
	// k keeps its current version and the newest noncurrent one; "gone"
	// loses its one version, then its lone delete marker.
	want := []string{"k@" + vs[3] + "*", "k@" + vs[2]}
	var all []string
	waitFor(t, 8*lifecycleDay+5*time.Second, "noncurrent versions and the lone marker to go", func() bool {
		all, _ = listVersions(t, c, b, "", "", 1000)
		return fmt.Sprint(all) == fmt.Sprint(want)
	})
	_, data := getVersion(t, c, b, "k", "")
	require.Equal(t, "3", string(data))

	// Expiring the current version of a versioned key leaves a marker.
	b2 := newBucket(t, c)
	setVersioning(t, c, b2, types.BucketVersioningStatusEnabled)
	v := putVersion(t, c, b2, "doc", []byte("x"))
	past := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	putLifecycle(t, c, b2, types.LifecycleRule{ID: aws.String("all"), Status: types.ExpirationStatusEnabled,
		Filter: &types.LifecycleRuleFilter{Prefix: aws.String("")}, Expiration: &types.LifecycleExpiration{Date: &past}})
	waitFor(t, 10*time.Second, "doc to expire", func() bool { return !exists(c, b2, "doc") })
	all, _ = listVersions(t, c, b2, "", "", 1000)
	require.Len(t, all, 2)
	require.Equal(t, "doc@"+v, all[1], "the expired version stays, noncurrent")
	require.Regexp(t, `^doc@.*\*!$`, all[0], "a delete marker is the latest")
}

// TestLifecycleAbortsUploads: an incomplete multipart upload older than
// the rule's days is aborted (its parts go); one under another prefix
// stays.
func TestLifecycleAbortsUploads(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := newBucket(t, c)
	start := func(k string) string {
		out, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(k)})
		require.NoError(t, err)
		_, err = c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(k), UploadId: out.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
		require.NoError(t, err)
		return aws.ToString(out.UploadId)
	}
	stale := start("uploads/big")
	kept := start("other/big")
	putLifecycle(t, c, b, types.LifecycleRule{ID: aws.String("abort"), Status: types.ExpirationStatusEnabled,
		Filter:                         &types.LifecycleRuleFilter{Prefix: aws.String("uploads/")},
		AbortIncompleteMultipartUpload: &types.AbortIncompleteMultipartUpload{DaysAfterInitiation: aws.Int32(1)}})
	uploads := func() []string {
		out, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: aws.String(b)})
		require.NoError(t, err)
		var ids []string
		for _, u := range out.Uploads {
			ids = append(ids, aws.ToString(u.UploadId))
		}
		return ids
	}
	waitFor(t, 5*lifecycleDay+5*time.Second, "the upload to be aborted", func() bool { return len(uploads()) == 1 })
	require.Equal(t, []string{kept}, uploads())
	_, err := c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(b), Key: aws.String("uploads/big"), UploadId: aws.String(stale)})
	require.Equal(t, "NoSuchUpload", apiCode(err), "%v", err)
}

// TestLifecycleRespectsObjectLock: a noncurrent version under retention is
// never deleted by a lifecycle rule (meta refuses the round's delete as it
// refuses anyone's), while an unlocked one beside it goes; the round counts
// what it skipped.
func TestLifecycleRespectsObjectLock(t *testing.T) {
	c := sdk(t, false)
	ctx := context.Background()
	b := fmt.Sprintf("lock-lifecycle-%d", time.Now().UnixNano()%1e9)
	_, err := c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b), ObjectLockEnabledForBucket: aws.Bool(true)})
	require.NoError(t, err)
	old := putVersion(t, c, b, "k", []byte("locked"))
	until := time.Now().Add(24 * time.Hour)
	_, err = c.PutObjectRetention(ctx, &awss3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(old),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	require.NoError(t, err)
	putVersion(t, c, b, "k", []byte("new"))
	putVersion(t, c, b, "f", []byte("free"))
	putVersion(t, c, b, "f", []byte("new"))
	skipped := env.cluster.Meta().LifecycleStats().Skipped
	putLifecycle(t, c, b, types.LifecycleRule{ID: aws.String("noncurrent"), Status: types.ExpirationStatusEnabled,
		Filter:                      &types.LifecycleRuleFilter{Prefix: aws.String("")},
		NoncurrentVersionExpiration: &types.NoncurrentVersionExpiration{NoncurrentDays: aws.Int32(1)}})
	waitFor(t, 5*lifecycleDay+5*time.Second, "the unlocked noncurrent version to go", func() bool {
		all, _ := listVersions(t, c, b, "f", "", 1000)
		return len(all) == 1
	})
	waitFor(t, 5*time.Second, "the locked version's delete to be refused", func() bool {
		return env.cluster.Meta().LifecycleStats().Skipped > skipped
	})
	all, _ := listVersions(t, c, b, "k", "", 1000)
	require.Contains(t, all, "k@"+old, "the locked version stays")
	_, data := getVersion(t, c, b, "k", old)
	require.Equal(t, "locked", string(data))
}
