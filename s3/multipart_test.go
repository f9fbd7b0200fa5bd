package s3_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// upload begins a multipart upload of b/key and uploads parts; it returns
// the upload's ID and the parts as Complete lists them.
func upload(t *testing.T, c *awss3.Client, b, key string, parts ...[]byte) (string, []types.CompletedPart) {
	t.Helper()
	ctx := context.Background()
	cu, err := c.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key)})
	require.NoError(t, err)
	var done []types.CompletedPart
	for i, p := range parts {
		up, err := c.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: cu.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(p)})
		require.NoError(t, err)
		done = append(done, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	return aws.ToString(cu.UploadId), done
}

type completeAnswer struct {
	Status                      int
	Location, Bucket, Key, ETag string
	Code                        string
}

// completeRaw sends CompleteMultipartUpload for parts as a raw signed
// request to srv.
func completeRaw(t *testing.T, srv *httptest.Server, b, key, id string, parts []types.CompletedPart) completeAnswer {
	t.Helper()
	a, err := completeReq(srv, b, key, id, parts)
	require.NoError(t, err)
	return a
}

func completeReq(srv *httptest.Server, b, key, id string, parts []types.CompletedPart) (completeAnswer, error) {
	var body strings.Builder
	body.WriteString("<CompleteMultipartUpload>")
	for _, p := range parts {
		fmt.Fprintf(&body, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", aws.ToInt32(p.PartNumber), aws.ToString(p.ETag))
	}
	body.WriteString("</CompleteMultipartUpload>")
	data := []byte(body.String())
	req, err := http.NewRequest("POST", srv.URL+"/"+b+"/"+key+"?uploadId="+id, bytes.NewReader(data))
	if err != nil {
		return completeAnswer{}, err
	}
	req.Header.Set("X-Amz-Content-Sha256", sha(data))
	creds := aws.Credentials{AccessKeyID: testKey, SecretAccessKey: testSecret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, sha(data), "s3", region, time.Now()); err != nil {
		return completeAnswer{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return completeAnswer{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return completeAnswer{}, err
	}
	a := completeAnswer{Status: resp.StatusCode}
	if err := xml.Unmarshal(out, &a); err != nil {
		return a, fmt.Errorf("%w: %s", err, out)
	}
	return a, nil
}

// TestCompleteRetried: a Complete whose first attempt succeeded (its
// answer lost to the client) is answered 200 again with the object's
// ETag, Location, Bucket and Key, by any gateway; another part list, or
// the key since overwritten, gets NoSuchUpload; the object never changes.
func TestCompleteRetried(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	parts := [][]byte{randomBytes(5<<20, 21), randomBytes(1000, 22)}
	want := bytes.Join(parts, nil)
	id, done := upload(t, c, b, "k", parts...)

	first := completeRaw(t, env.http, b, "k", id, done)
	require.Equal(t, 200, first.Status, first.Code)
	require.True(t, strings.HasSuffix(first.ETag, `-2"`), first.ETag)
	again := completeRaw(t, env.http, b, "k", id, done)
	require.Equal(t, first, again)
	// Through the SDK, and through another gateway (a restart: the
	// memory is the object, in meta).
	out, err := c.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: aws.String(id),
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	require.NoError(t, err)
	require.Equal(t, first.ETag, aws.ToString(out.ETag))
	other := httptest.NewServer(newGatewayAt(t, time.Now()))
	defer other.Close()
	fresh := completeRaw(t, other, b, "k", id, done)
	require.Equal(t, 200, fresh.Status)
	require.Equal(t, first.ETag, fresh.ETag)

	// Another part list for the completed upload: NoSuchUpload, the object
	// as it was.
	require.Equal(t, "NoSuchUpload", completeRaw(t, env.http, b, "k", id, done[:1]).Code)
	require.Equal(t, "NoSuchUpload", completeRaw(t, env.http, b, "k", id, []types.CompletedPart{done[1]}).Code)
	require.True(t, bytes.Equal(want, get(t, c, b, "k")))

	// A Complete cut short after it made the object, before it deleted the
	// upload's marker: the retry answers the object and removes the marker.
	w, err := env.client.CreateKey(ctx, "s3v-multipart", b, id, client.WriteOptions{})
	require.NoError(t, err)
	w.SetAttributes([]*stratov1.KeyAttribute{{Name: "x-strato-upload-key", Value: "k"}})
	require.NoError(t, w.Close())
	lu, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, lu.Uploads, 1)
	require.Equal(t, first, completeRaw(t, env.http, b, "k", id, done))
	lu, err = c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Empty(t, lu.Uploads)

	// The key overwritten: the upload is forgotten.
	put(t, c, b, "k", []byte("newer"))
	require.Equal(t, "NoSuchUpload", completeRaw(t, env.http, b, "k", id, done).Code)
	require.Equal(t, []byte("newer"), get(t, c, b, "k"))
}

// TestConcurrentCompletes: Completes of one upload at once (a client's
// retry racing its first attempt) all succeed with the one object's ETag.
func TestConcurrentCompletes(t *testing.T) {
	c := sdk(t, false)
	b := newBucket(t, c)
	parts := [][]byte{randomBytes(5<<20, 31), randomBytes(5<<20, 32), randomBytes(10, 33)}
	id, done := upload(t, c, b, "k", parts...)
	var wg sync.WaitGroup
	answers := make([]completeAnswer, 4)
	errs := make([]error, len(answers))
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = completeReq(env.http, b, "k", id, done)
		}()
	}
	wg.Wait()
	for i, a := range answers {
		require.NoError(t, errs[i])
		require.Equal(t, 200, a.Status, a.Code)
		require.Equal(t, answers[0].ETag, a.ETag)
	}
	require.True(t, bytes.Equal(bytes.Join(parts, nil), get(t, c, b, "k")))
}

// TestDeleteBucketDropsUploads: a bucket's uploads in progress go with it,
// so a new bucket of the same name lists none.
func TestDeleteBucketDropsUploads(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	upload(t, c, b, "k", []byte("part"))
	_, err := c.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: &b})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: &b})
	require.NoError(t, err)
	res, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b})
	require.NoError(t, err)
	require.Empty(t, res.Uploads)
	upload(t, c, b, "k2", []byte("part")) // the parts bucket is made again
	res, err = c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b})
	require.NoError(t, err)
	require.Len(t, res.Uploads, 1)
}

// TestListUploadsMarkers: an upload-id-marker must name an upload of the
// key-marker (or of the first key after it), and a page that ends on a
// common prefix names it as NextKeyMarker.
func TestListUploadsMarkers(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	ids := map[string]string{}
	for _, k := range []string{"abc/x", "foo/bar/baz", "foo/quxx", "obj", "xyz/y"} {
		ids[k], _ = upload(t, c, b, k)
	}
	_, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b, KeyMarker: aws.String("abc/x"),
		UploadIdMarker: aws.String(ids["obj"])})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b, KeyMarker: aws.String("abc/x"),
		UploadIdMarker: aws.String("nosuchupload")})
	require.Equal(t, "InvalidArgument", apiCode(err))

	page, err := c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b, Delimiter: aws.String("/"), MaxUploads: aws.Int32(2)})
	require.NoError(t, err)
	require.True(t, aws.ToBool(page.IsTruncated))
	require.Equal(t, "foo/", aws.ToString(page.NextKeyMarker))
	require.Equal(t, ids["foo/bar/baz"], aws.ToString(page.NextUploadIdMarker))
	page, err = c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b, Delimiter: aws.String("/"),
		KeyMarker: page.NextKeyMarker, UploadIdMarker: page.NextUploadIdMarker})
	require.NoError(t, err)
	require.False(t, aws.ToBool(page.IsTruncated))
	require.Len(t, page.Uploads, 1)
	require.Equal(t, "obj", aws.ToString(page.Uploads[0].Key))
	require.Equal(t, "", aws.ToString(page.NextKeyMarker))

	// A key-marker that is no upload's key: the keys after it.
	page, err = c.ListMultipartUploads(ctx, &awss3.ListMultipartUploadsInput{Bucket: &b, KeyMarker: aws.String("foo/c")})
	require.NoError(t, err)
	require.Len(t, page.Uploads, 3)
	require.Equal(t, "foo/quxx", aws.ToString(page.Uploads[0].Key))
}

// TestCompleteObjectSize: x-amz-mp-object-size must be the parts' total.
func TestCompleteObjectSize(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	id, parts := upload(t, c, b, "k", []byte("hello"))
	in := &awss3.CompleteMultipartUploadInput{Bucket: &b, Key: aws.String("k"), UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}
	for _, n := range []int64{-1, 4} {
		in.MpuObjectSize = aws.Int64(n)
		_, err := c.CompleteMultipartUpload(ctx, in)
		require.Equal(t, "InvalidRequest", apiCode(err), "size %d", n)
	}
	in.MpuObjectSize = aws.Int64(5)
	_, err := c.CompleteMultipartUpload(ctx, in)
	require.NoError(t, err)
}
