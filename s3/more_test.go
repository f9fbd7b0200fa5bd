package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func put(t *testing.T, c *awss3.Client, b, k string, data []byte) {
	t.Helper()
	_, err := c.PutObject(context.Background(), &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader(data)})
	require.NoError(t, err, k)
}

func get(t *testing.T, c *awss3.Client, b, k string) []byte {
	t.Helper()
	out, err := c.GetObject(context.Background(), &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
	require.NoError(t, err, k)
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	require.NoError(t, err)
	return data
}

func TestListObjects(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	keys := []string{"a", "a-b/x", "a/b/c/d", "a/b/e", "a/f", "b/x y", "b/ü", "c%2Fd", "z"}
	for _, k := range keys {
		put(t, c, b, k, []byte(k))
	}
	// All, a page of 2 at a time (v2 and v1).
	var got []string
	var token *string
	for {
		out, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), MaxKeys: aws.Int32(2), ContinuationToken: token})
		require.NoError(t, err)
		for _, o := range out.Contents {
			got = append(got, *o.Key)
			require.Equal(t, int64(len(*o.Key)), aws.ToInt64(o.Size))
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		token = out.NextContinuationToken
	}
	require.Equal(t, keys, got)
	got = nil
	var marker *string
	for {
		out, err := c.ListObjects(ctx, &awss3.ListObjectsInput{Bucket: aws.String(b), MaxKeys: aws.Int32(3), Marker: marker})
		require.NoError(t, err)
		for _, o := range out.Contents {
			got = append(got, *o.Key)
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		marker = out.NextMarker
	}
	require.Equal(t, keys, got)

	// Delimiter, prefix, start-after, encoding-type=url.
	out, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), Delimiter: aws.String("/")})
	require.NoError(t, err)
	var prefixes, objs []string
	for _, p := range out.CommonPrefixes {
		prefixes = append(prefixes, *p.Prefix)
	}
	for _, o := range out.Contents {
		objs = append(objs, *o.Key)
	}
	require.Equal(t, []string{"a-b/", "a/", "b/"}, prefixes)
	require.Equal(t, []string{"a", "c%2Fd", "z"}, objs)
	out, err = c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String("a/b/"), Delimiter: aws.String("/")})
	require.NoError(t, err)
	require.Len(t, out.CommonPrefixes, 1)
	require.Equal(t, "a/b/c/", *out.CommonPrefixes[0].Prefix)
	require.Equal(t, "a/b/e", *out.Contents[0].Key)
	out, err = c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), StartAfter: aws.String("b/x y")})
	require.NoError(t, err)
	require.Equal(t, "b/ü", *out.Contents[0].Key)
	out, err = c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), Prefix: aws.String("b/"), EncodingType: types.EncodingTypeUrl})
	require.NoError(t, err)
	require.Equal(t, "b/x+y", *out.Contents[0].Key) // the Go SDK does not decode
	require.Equal(t, "b/%C3%BC", *out.Contents[1].Key)

	// DeleteObjects, quiet and not.
	del, err := c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("a")}, {Key: aws.String("missing")}}}})
	require.NoError(t, err)
	require.Len(t, del.Deleted, 2)
	del, err = c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Quiet: aws.Bool(true),
		Objects: []types.ObjectIdentifier{{Key: aws.String("z")}, {Key: aws.String("b/ü")}}}})
	require.NoError(t, err)
	require.Empty(t, del.Deleted)
	require.Empty(t, del.Errors)
	out, err = c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, int32(len(keys)-3), aws.ToInt32(out.KeyCount))
}

// An FSO bucket (made with strato's own API) is reachable: keys with '/'
// are paths, directories are common prefixes.
func TestFSOBucket(t *testing.T) {
	ctx := context.Background()
	_, err := env.client.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "s3v", Name: "fso-bucket"})
	require.NoError(t, err)
	c := sdk(t, false)
	put(t, c, "fso-bucket", "dir/sub/file", []byte("hello"))
	_, err = c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("fso-bucket"), Key: aws.String("empty-dir/"), Body: bytes.NewReader(nil)})
	require.NoError(t, err)
	st, err := env.client.Stat(ctx, "/s3v/fso-bucket/dir/sub/file")
	require.NoError(t, err)
	require.Equal(t, int64(5), st.Length)
	st, err = env.client.Stat(ctx, "/s3v/fso-bucket/empty-dir")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	out, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String("fso-bucket"), Delimiter: aws.String("/")})
	require.NoError(t, err)
	require.Len(t, out.CommonPrefixes, 2)
	require.Equal(t, []byte("hello"), get(t, c, "fso-bucket", "dir/sub/file"))
	_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String("fso-bucket"), Key: aws.String("empty-dir/")})
	require.NoError(t, err)
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String("fso-bucket"), Key: aws.String("dir/sub/file")})
	require.NoError(t, err)
	_, err = c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String("fso-bucket"), Key: aws.String("dir/sub/file")})
	require.Equal(t, "NoSuchKey", apiCode(err))
}

func TestCopyObject(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, true)
	b := newBucket(t, c)
	data := randomBytes(9<<20+3, 3)
	_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("src"), Body: bytes.NewReader(data),
		ContentType: aws.String("text/src"), Metadata: map[string]string{"m": "1"}, Tagging: aws.String("k1=v1&k2=v2")})
	require.NoError(t, err)
	cp, err := c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("dst"), CopySource: aws.String(b + "/src")})
	require.NoError(t, err)
	require.NotEmpty(t, aws.ToString(cp.CopyObjectResult.ETag))
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("dst")})
	require.NoError(t, err)
	require.Equal(t, "text/src", aws.ToString(head.ContentType))
	require.Equal(t, "1", head.Metadata["m"])
	require.True(t, bytes.Equal(data, get(t, c, b, "dst")))
	tags, err := c.GetObjectTagging(ctx, &awss3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("dst")})
	require.NoError(t, err)
	require.Len(t, tags.TagSet, 2)

	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("dst"), CopySource: aws.String(b + "/src"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("text/new"), Metadata: map[string]string{"x": "2"}})
	require.NoError(t, err)
	head, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("dst")})
	require.NoError(t, err)
	require.Equal(t, "text/new", aws.ToString(head.ContentType))
	require.Equal(t, map[string]string{"x": "2"}, head.Metadata)

	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("dst2"), CopySource: aws.String(b + "/src"),
		CopySourceIfMatch: aws.String(`"bad"`)})
	require.Equal(t, "PreconditionFailed", apiCode(err))
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("src"), CopySource: aws.String(b + "/src")})
	require.Equal(t, "InvalidRequest", apiCode(err))
	_, err = c.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("x"), CopySource: aws.String(b + "/nope")})
	require.Equal(t, "NoSuchKey", apiCode(err))
}

func TestMultipart(t *testing.T) {
	ctx := context.Background()
	for _, tlsOn := range []bool{false, true} {
		c := sdk(t, tlsOn)
		b := newBucket(t, c)
		key := "big/object"
		parts := [][]byte{randomBytes(5<<20, 11), randomBytes(6<<20+1, 12), randomBytes(123, 13)}
		cu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key),
			ContentType: aws.String("application/x-mp"), Metadata: map[string]string{"who": "mp"}})
		require.NoError(t, err)
		id := cu.UploadId
		var done []types.CompletedPart
		for i, p := range parts {
			up, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id,
				PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
			require.NoError(t, err)
			done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
		}
		lp, err := c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id})
		require.NoError(t, err)
		require.Len(t, lp.Parts, 3)
		require.Equal(t, int64(6<<20+1), aws.ToInt64(lp.Parts[1].Size))
		lu, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: aws.String(b)})
		require.NoError(t, err)
		require.Len(t, lu.Uploads, 1)
		require.Equal(t, key, aws.ToString(lu.Uploads[0].Key))

		// Out of order, a wrong ETag: refused, the upload stays.
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{done[1], done[0]}}})
		require.Equal(t, "InvalidPartOrder", apiCode(err))
		bad := done[0]
		bad.ETag = aws.String(`"0123"`)
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{bad, done[1]}}})
		require.Equal(t, "InvalidPart", apiCode(err))
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{done[2], {ETag: done[0].ETag, PartNumber: aws.Int32(4)}}}})
		require.Error(t, err)

		comp, err := c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(strings.Trim(aws.ToString(comp.ETag), `"`), "-3"), aws.ToString(comp.ETag))
		want := bytes.Join(parts, nil)
		require.True(t, bytes.Equal(want, get(t, c, b, key)))
		head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		require.NoError(t, err)
		require.Equal(t, "application/x-mp", aws.ToString(head.ContentType))
		require.Equal(t, "mp", head.Metadata["who"])
		require.Equal(t, comp.ETag, head.ETag)
		p2, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key), PartNumber: aws.Int32(2)})
		require.NoError(t, err)
		d, _ := io.ReadAll(p2.Body)
		require.True(t, bytes.Equal(parts[1], d))
		require.Equal(t, int32(3), aws.ToInt32(p2.PartsCount))
		// The parts are gone (their blocks are the key's now).
		_, err = c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: id})
		require.Equal(t, "NoSuchUpload", apiCode(err))
		mp, err := env.client.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "s3v-multipart", Bucket: b})
		require.NoError(t, err)
		require.Empty(t, mp.Keys)

		// Too small a part; UploadPartCopy with a range; abort.
		cu, err = c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k2")})
		require.NoError(t, err)
		up1, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("tiny"))})
		require.NoError(t, err)
		upc, err := c.UploadPartCopy(ctx, &awss3.UploadPartCopyInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(2), CopySource: aws.String(b + "/" + key), CopySourceRange: aws.String("bytes=10-1000009")})
		require.NoError(t, err)
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{
				{ETag: up1.ETag, PartNumber: aws.Int32(1)}, {ETag: upc.CopyPartResult.ETag, PartNumber: aws.Int32(2)}}}})
		require.Equal(t, "EntityTooSmall", apiCode(err))
		_, err = c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k2"), UploadId: cu.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: upc.CopyPartResult.ETag, PartNumber: aws.Int32(2)}}}})
		require.NoError(t, err)
		require.True(t, bytes.Equal(want[10:1000010], get(t, c, b, "k2")))

		cu, err = c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k3")})
		require.NoError(t, err)
		_, err = c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k3"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("abandoned"))})
		require.NoError(t, err)
		_, err = c.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k3"), UploadId: cu.UploadId})
		require.NoError(t, err)
		_, err = c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k3"), UploadId: cu.UploadId,
			PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("late"))})
		require.Equal(t, "NoSuchUpload", apiCode(err))
		_, err = c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k3")})
		require.Error(t, err)
	}
}

func TestAbandonedUploadsCleanedUp(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	cu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k")})
	require.NoError(t, err)
	_, err = c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cu.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("abandoned"))})
	require.NoError(t, err)
	gw := newGatewayAt(t, time.Now().Add(8*24*time.Hour))
	n, err := gw.CleanupUploads(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	_, err = c.ListParts(ctx, &awss3.ListPartsInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cu.UploadId})
	require.Equal(t, "NoSuchUpload", apiCode(err))
}

func TestPresigned(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	ps := awss3.NewPresignClient(c)
	req, err := ps.PresignPutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("p k")}, awss3.WithPresignExpires(time.Minute))
	require.NoError(t, err)
	hr, _ := http.NewRequest(req.Method, req.URL, strings.NewReader("presigned body"))
	for k, v := range req.SignedHeader {
		hr.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(hr)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)

	g, err := ps.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("p k")}, awss3.WithPresignExpires(time.Minute))
	require.NoError(t, err)
	resp, err = http.Get(g.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "presigned body", string(body))

	// Forged: the signature changed; the URL used for another key.
	resp, err = http.Get(strings.Replace(g.URL, "X-Amz-Signature=", "X-Amz-Signature=0", 1))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 403, resp.StatusCode)
	resp, err = http.Get(strings.Replace(g.URL, "/p%20k?", "/other?", 1))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 403, resp.StatusCode)

	// Expired.
	old := awss3.NewPresignClient(c, func(o *awss3.PresignOptions) {
		o.Presigner = v4.NewSigner()
	})
	e, err := old.PresignGetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("p k")}, awss3.WithPresignExpires(time.Second),
		func(o *awss3.PresignOptions) {
			o.ClientOptions = append(o.ClientOptions, func(o *awss3.Options) {})
		})
	require.NoError(t, err)
	// The gateway's clock, not the test, moves past the expiry.
	clockAhead.Store(int64(2 * time.Second))
	defer clockAhead.Store(0)
	resp, err = http.Get(e.URL)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 403, resp.StatusCode)
	require.Contains(t, string(body), "expired")
}

// signed sends a request signed with the SDK's signer, with the given
// payload hash, secret and time.
func signed(t *testing.T, method, path string, body []byte, payloadHash, secret string, at time.Time, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, env.http.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	creds := aws.Credentials{AccessKeyID: testKey, SecretAccessKey: secret}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, payloadHash, "s3", region, at))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// signedCode is the S3 error code of a signed request ("200" if none).
func signedCode(t *testing.T, method, path string, body []byte, payloadHash, secret string, at time.Time, hdr map[string]string) string {
	t.Helper()
	resp := signed(t, method, path, body, payloadHash, secret, at, hdr)
	defer func() { _ = resp.Body.Close() }()
	return errorCode(t, resp)
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func errorCode(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if c := errorCodeOf(string(b)); c != "" {
		return c
	}
	return fmt.Sprint(resp.StatusCode)
}

// errorCodeOf is the S3 error code of an error body ("" if none).
func errorCodeOf(body string) string {
	_, rest, ok := strings.Cut(body, "<Code>")
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(rest, "<")
	return code
}

func TestAuthRefusals(t *testing.T) {
	c := sdk(t, false)
	b := newBucket(t, c)
	now := time.Now()
	body := []byte("the body")
	// A good request.
	resp := signed(t, "PUT", "/"+b+"/k", body, sha(body), testSecret, now, nil)
	require.Equal(t, 200, resp.StatusCode, errorCode(t, resp))
	resp.Body.Close()
	// Wrong secret; unknown key; skewed clock; no signature.
	require.Equal(t, "SignatureDoesNotMatch", signedCode(t, "PUT", "/"+b+"/k", body, sha(body), "wrong", now, nil))
	require.Equal(t, "RequestTimeTooSkewed", signedCode(t, "PUT", "/"+b+"/k", body, sha(body), testSecret, now.Add(-20*time.Minute), nil))
	resp, err := http.Get(env.http.URL + "/" + b + "/k")
	require.NoError(t, err)
	require.Equal(t, "AccessDenied", errorCode(t, resp))
	bad := awss3.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("nobody", "x", "")},
		func(o *awss3.Options) { o.BaseEndpoint = aws.String(env.http.URL); o.UsePathStyle = true })
	_, err = bad.ListBuckets(context.Background(), &awss3.ListBucketsInput{})
	require.Equal(t, "InvalidAccessKeyId", apiCode(err))

	// A replayed request with another body; a bad Content-MD5; a bad
	// checksum: refused, and the object keeps its first content.
	other := []byte("another body")
	require.Equal(t, "XAmzContentSHA256Mismatch", signedCode(t, "PUT", "/"+b+"/k", other, sha(body), testSecret, now, nil))
	require.Equal(t, "BadDigest", signedCode(t, "PUT", "/"+b+"/k", other, "UNSIGNED-PAYLOAD", testSecret, now,
		map[string]string{"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="}))
	require.Equal(t, "BadDigest", signedCode(t, "PUT", "/"+b+"/k", other, "UNSIGNED-PAYLOAD", testSecret, now,
		map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}))
	// A Content-MD5 that is no MD5: empty, not base64, or of another length.
	for _, v := range []string{"", "invalid_md5", "aGVsbCBzLGRham5mamFuc2Y="} {
		require.Equal(t, "InvalidDigest", signedCode(t, "PUT", "/"+b+"/k", other, "UNSIGNED-PAYLOAD", testSecret, now,
			map[string]string{"Content-MD5": v}), "Content-MD5 %q", v)
	}
	require.Equal(t, body, get(t, c, b, "k"))
}

// TestMultipartChecksumSchema: CreateMultipartUpload refuses a checksum
// type its algorithm cannot give (AWS's pairs), and takes the others.
func TestMultipartChecksumSchema(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	for _, tc := range []struct {
		typ  types.ChecksumType
		algo types.ChecksumAlgorithm
		ok   bool
	}{
		{types.ChecksumTypeComposite, types.ChecksumAlgorithmCrc64nvme, false},
		{types.ChecksumTypeFullObject, types.ChecksumAlgorithmSha1, false},
		{types.ChecksumTypeFullObject, types.ChecksumAlgorithmSha256, false},
		{types.ChecksumTypeComposite, types.ChecksumAlgorithmCrc32c, true},
		{types.ChecksumTypeComposite, types.ChecksumAlgorithmSha256, true},
		{types.ChecksumTypeFullObject, types.ChecksumAlgorithmCrc32, true},
	} {
		cu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"),
			ChecksumType: tc.typ, ChecksumAlgorithm: tc.algo})
		if !tc.ok {
			require.Equal(t, "InvalidRequest", apiCode(err), "%s with %s", tc.typ, tc.algo)
			require.ErrorContains(t, err, "checksum type cannot be used with the "+strings.ToLower(string(tc.algo))+" checksum algorithm")
			continue
		}
		require.NoError(t, err, "%s with %s", tc.typ, tc.algo)
		_, err = c.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cu.UploadId})
		require.NoError(t, err)
	}
}
