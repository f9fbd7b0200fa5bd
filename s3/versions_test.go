package s3_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func setVersioning(t *testing.T, c *awss3.Client, b string, s types.BucketVersioningStatus) {
	t.Helper()
	_, err := c.PutBucketVersioning(context.Background(), &awss3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: s}})
	require.NoError(t, err)
}

// putVersion writes data as b/k and returns the version ID the PUT names.
func putVersion(t *testing.T, c *awss3.Client, b, k string, data []byte) string {
	t.Helper()
	out, err := c.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(data)})
	require.NoError(t, err, k)
	return aws.ToString(out.VersionId)
}

func getVersion(t *testing.T, c *awss3.Client, b, k, v string) (string, []byte) {
	t.Helper()
	in := &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)}
	if v != "" {
		in.VersionId = aws.String(v)
	}
	out, err := c.GetObject(context.Background(), in)
	require.NoError(t, err, "%s@%s", k, v)
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	return aws.ToString(out.VersionId), data
}

// header is a header of the HTTP answer that failed with err (":status":
// its status code).
func header(t *testing.T, err error, name string) string {
	t.Helper()
	var re *awshttp.ResponseError
	require.True(t, errors.As(err, &re), "%v", err)
	if name == ":status" {
		return strconv.Itoa(re.Response.StatusCode)
	}
	return re.Response.Header.Get(name)
}

// listVersions lists every version of b in pages of max, as
// "key@version", "*" after the latest, "!" after a delete marker.
func listVersions(t *testing.T, c *awss3.Client, b, prefix, delim string, max int32) (out, prefixes []string) {
	t.Helper()
	in := &awss3.ListObjectVersionsInput{Bucket: aws.String(b), Prefix: aws.String(prefix), MaxKeys: aws.Int32(max)}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	for {
		page, err := c.ListObjectVersions(context.Background(), in)
		require.NoError(t, err)
		// The SDK keeps versions and markers apart: merge them back in
		// key order, newest first (version IDs sort so within a key).
		var all []string
		for _, v := range page.Versions {
			s := aws.ToString(v.Key) + "@" + aws.ToString(v.VersionId)
			if aws.ToBool(v.IsLatest) {
				s += "*"
			}
			all = append(all, s)
		}
		for _, m := range page.DeleteMarkers {
			s := aws.ToString(m.Key) + "@" + aws.ToString(m.VersionId)
			if aws.ToBool(m.IsLatest) {
				s += "*"
			}
			all = append(all, s+"!")
		}
		sortVersions(all)
		out = append(out, all...)
		for _, p := range page.CommonPrefixes {
			prefixes = append(prefixes, aws.ToString(p.Prefix))
		}
		require.LessOrEqual(t, len(page.Versions)+len(page.DeleteMarkers)+len(page.CommonPrefixes), int(max))
		if !aws.ToBool(page.IsTruncated) {
			return out, prefixes
		}
		in.KeyMarker, in.VersionIdMarker = page.NextKeyMarker, page.NextVersionIdMarker
	}
}

// sortVersions orders "key@version..." by key, then version ID ("null"
// last: in these tests it is always the oldest).
func sortVersions(s []string) {
	less := func(a, b string) bool {
		ka, va, _ := strings.Cut(a, "@")
		kb, vb, _ := strings.Cut(b, "@")
		if ka != kb {
			return ka < kb
		}
		return strings.Replace(va, "null", "~", 1) < strings.Replace(vb, "null", "~", 1)
	}
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestVersioning(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	st, err := c.GetBucketVersioning(ctx, &awss3.GetBucketVersioningInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Empty(t, st.Status, "never versioned")
	require.Empty(t, putVersion(t, c, b, "k", []byte("zero")), "no version ID in a bucket never versioned")

	// MFA delete is refused; a configuration without a status too.
	_, err = c.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled, MFADelete: types.MFADeleteEnabled}})
	require.Equal(t, "NotImplemented", apiCode(err))
	_, err = c.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: aws.String(b),
		VersioningConfiguration: &types.VersioningConfiguration{}})
	require.Equal(t, "IllegalVersioningConfigurationException", apiCode(err))
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	st, err = c.GetBucketVersioning(ctx, &awss3.GetBucketVersioningInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.BucketVersioningStatusEnabled, st.Status)

	v1 := putVersion(t, c, b, "k", []byte("one"))
	v2 := putVersion(t, c, b, "k", []byte("two!"))
	require.NotEmpty(t, v1)
	require.NotEqual(t, v1, v2)
	v, data := getVersion(t, c, b, "k", "")
	require.Equal(t, []string{v2, "two!"}, []string{v, string(data)})
	_, data = getVersion(t, c, b, "k", v1)
	require.Equal(t, "one", string(data))
	_, data = getVersion(t, c, b, "k", "null")
	require.Equal(t, "zero", string(data))
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v1)})
	require.NoError(t, err)
	require.Equal(t, v1, aws.ToString(head.VersionId))
	require.EqualValues(t, 3, aws.ToInt64(head.ContentLength))
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String("nope")})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String("0000000000000001")})
	require.Equal(t, "NoSuchVersion", apiCode(err))
	// Another store's ID (a ULID) names no version here.
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String("01G65Z755AFWAKHE12NY0CQ9FH")})
	require.Equal(t, "NoSuchVersion", apiCode(err))
	// Noncurrent versions count in the bucket's usage.
	info, err := env.client.GetBucket(ctx, "s3v", b)
	require.NoError(t, err)
	require.EqualValues(t, 4+3+4, info.UsedBytes)
	require.Equal(t, stratov1.BucketVersioning_VERSIONING_ENABLED, info.Versioning)

	// A DELETE makes a delete marker: GET answers 404 with the marker.
	del, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.True(t, aws.ToBool(del.DeleteMarker))
	marker := aws.ToString(del.VersionId)
	require.NotEmpty(t, marker)
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.Equal(t, "NoSuchKey", apiCode(err))
	require.Equal(t, "true", header(t, err, "x-amz-delete-marker"))
	require.Equal(t, marker, header(t, err, "x-amz-version-id"))
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.Equal(t, "404", header(t, err, ":status"))
	require.Equal(t, "true", header(t, err, "x-amz-delete-marker"))
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(marker)})
	require.Equal(t, "MethodNotAllowed", apiCode(err))
	require.Equal(t, "true", header(t, err, "x-amz-delete-marker"))
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(marker)})
	require.Equal(t, "405", header(t, err, ":status"))
	all, _ := listVersions(t, c, b, "", "", 1000)
	require.Equal(t, []string{"k@" + marker + "*!", "k@" + v2, "k@" + v1, "k@null"}, all)
	list, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Empty(t, list.Contents)

	// Removing the marker brings the object back.
	del, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(marker)})
	require.NoError(t, err)
	require.True(t, aws.ToBool(del.DeleteMarker))
	require.Equal(t, marker, aws.ToString(del.VersionId))
	v, data = getVersion(t, c, b, "k", "")
	require.Equal(t, []string{v2, "two!"}, []string{v, string(data)})

	// A copy of an old version makes a new one.
	cp, err := c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("k"),
		CopySource: aws.String(b + "/k?versionId=" + v1)})
	require.NoError(t, err)
	require.Equal(t, v1, aws.ToString(cp.CopySourceVersionId))
	v3 := aws.ToString(cp.VersionId)
	require.NotEmpty(t, v3)
	v, data = getVersion(t, c, b, "k", "")
	require.Equal(t, []string{v3, "one"}, []string{v, string(data)})
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("c"),
		CopySource: aws.String(b + "/k?versionId=0000000000000001")})
	require.Equal(t, "NoSuchVersion", apiCode(err))

	// Tags of a noncurrent version.
	_, err = c.PutObjectTagging(ctx, &awss3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("t"), Value: aws.String("old")}}}})
	require.NoError(t, err)
	tags, err := c.GetObjectTagging(ctx, &awss3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2)})
	require.NoError(t, err)
	require.Len(t, tags.TagSet, 1)
	require.Equal(t, v2, aws.ToString(tags.VersionId))
	tags, err = c.GetObjectTagging(ctx, &awss3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.Empty(t, tags.TagSet)
	attrs, err := c.GetObjectAttributes(ctx, &awss3.GetObjectAttributesInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: aws.String(v2),
		ObjectAttributes: []types.ObjectAttributes{types.ObjectAttributesObjectSize}})
	require.NoError(t, err)
	require.EqualValues(t, 4, aws.ToInt64(attrs.ObjectSize))

	// DeleteObjects with versions: one for good, a marker, one that is not.
	res, err := c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: []types.ObjectIdentifier{
		{Key: aws.String("k"), VersionId: aws.String(v1)}, {Key: aws.String("k")}, {Key: aws.String("k"), VersionId: aws.String("0000000000000001")},
		{Key: aws.String("k"), VersionId: aws.String("bad")}}}})
	require.NoError(t, err)
	require.Len(t, res.Deleted, 3)
	require.Equal(t, v1, aws.ToString(res.Deleted[0].VersionId))
	require.True(t, aws.ToBool(res.Deleted[1].DeleteMarker))
	marker2 := aws.ToString(res.Deleted[1].DeleteMarkerVersionId)
	require.NotEmpty(t, marker2)
	require.Len(t, res.Errors, 1)
	require.Equal(t, "InvalidArgument", aws.ToString(res.Errors[0].Code))
	all, _ = listVersions(t, c, b, "", "", 1000)
	require.Equal(t, []string{"k@" + marker2 + "*!", "k@" + v3, "k@" + v2, "k@null"}, all)
	info, err = env.client.GetBucket(ctx, "s3v", b)
	require.NoError(t, err)
	require.EqualValues(t, 4+3+4, info.UsedBytes, "v1 freed, v3 a copy of it")
}

func TestVersioningMultipart(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	v1 := putVersion(t, c, b, "mp", []byte("small"))
	up, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp")})
	require.NoError(t, err)
	part := bytes.Repeat([]byte("p"), 5<<20)
	p1, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: up.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(part)})
	require.NoError(t, err)
	done, err := c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("mp"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: p1.ETag, PartNumber: aws.Int32(1), ChecksumCRC32: p1.ChecksumCRC32}}}})
	require.NoError(t, err)
	v2 := aws.ToString(done.VersionId)
	require.NotEmpty(t, v2)
	require.NotEqual(t, v1, v2)
	all, _ := listVersions(t, c, b, "", "", 1000)
	require.Equal(t, []string{"mp@" + v2 + "*", "mp@" + v1}, all)
	_, data := getVersion(t, c, b, "mp", v1)
	require.Equal(t, "small", string(data))
	v, data := getVersion(t, c, b, "mp", "")
	require.Equal(t, v2, v)
	require.Len(t, data, 5<<20)
}

func TestVersioningSuspended(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	v1 := putVersion(t, c, b, "k", []byte("one"))
	setVersioning(t, c, b, types.BucketVersioningStatusSuspended)
	st, err := c.GetBucketVersioning(ctx, &awss3.GetBucketVersioningInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, types.BucketVersioningStatusSuspended, st.Status)
	require.Equal(t, "null", putVersion(t, c, b, "k", []byte("two")))
	require.Equal(t, "null", putVersion(t, c, b, "k", []byte("three")), "the null version replaced")
	all, _ := listVersions(t, c, b, "", "", 1000)
	require.Equal(t, []string{"k@" + v1, "k@null*"}, all)
	_, data := getVersion(t, c, b, "k", "null")
	require.Equal(t, "three", string(data))
	del, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	require.True(t, aws.ToBool(del.DeleteMarker))
	require.Equal(t, "null", aws.ToString(del.VersionId))
	all, _ = listVersions(t, c, b, "", "", 1000)
	require.Equal(t, []string{"k@" + v1, "k@null*!"}, all)
	info, err := env.client.GetBucket(ctx, "s3v", b)
	require.NoError(t, err)
	require.EqualValues(t, 3, info.UsedBytes, "only v1 holds bytes")
	// Never unversioned again: the API has no such state to set.
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	_, data = getVersion(t, c, b, "k", v1)
	require.Equal(t, "one", string(data))
}

func TestListObjectVersionsPaging(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	setVersioning(t, c, b, types.BucketVersioningStatusEnabled)
	for _, k := range []string{"a", "d/1", "d/2", "e f", "z"} {
		for i := range 3 {
			putVersion(t, c, b, k, []byte{byte(i)})
		}
	}
	_, err := c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("z")})
	require.NoError(t, err)
	all, _ := listVersions(t, c, b, "", "", 1000)
	require.Len(t, all, 16)
	for _, max := range []int32{1, 2, 3, 7} {
		got, _ := listVersions(t, c, b, "", "", max)
		require.Equal(t, all, got, "pages of %d", max)
	}
	got, _ := listVersions(t, c, b, "d/", "", 2)
	require.Equal(t, all[3:9], got)
	got, prefixes := listVersions(t, c, b, "", "/", 2)
	require.Equal(t, []string{"d/"}, prefixes)
	require.Len(t, got, 10)

	// encoding-type=url and the markers' errors.
	out, err := c.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String(b), Prefix: aws.String("e "),
		EncodingType: types.EncodingTypeUrl})
	require.NoError(t, err)
	require.Len(t, out.Versions, 3)
	require.Equal(t, "e+f", aws.ToString(out.Versions[0].Key))
	_, err = c.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String(b), VersionIdMarker: aws.String("null")})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = c.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String(b), KeyMarker: aws.String("a"), VersionIdMarker: aws.String("x")})
	require.Equal(t, "InvalidArgument", apiCode(err))
}

// A file-system bucket is not versioned: it refuses versioning and lists
// no versions.
func TestVersioningFSO(t *testing.T) {
	ctx := context.Background()
	_, err := env.client.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "s3v", Name: "fso-versions"})
	require.NoError(t, err)
	c := sdk(t, false)
	_, err = c.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: aws.String("fso-versions"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}})
	require.Equal(t, "InvalidBucketState", apiCode(err))
	put(t, c, "fso-versions", "dir/f", []byte("x"))
	put(t, c, "fso-versions", "g", []byte("y"))
	// Its keys list as null versions, as an unversioned bucket's do.
	all, prefixes := listVersions(t, c, "fso-versions", "", "/", 1)
	require.Equal(t, []string{"g@null*"}, all)
	require.Equal(t, []string{"dir/"}, prefixes)
	_, data := getVersion(t, c, "fso-versions", "dir/f", "null")
	require.Equal(t, "x", string(data))
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String("fso-versions"), Key: aws.String("g"), VersionId: aws.String("null")})
	require.NoError(t, err)
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String("fso-versions"), Key: aws.String("g")})
	require.Error(t, err)
}
