package s3_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"
)

// TestBucketCors: PutBucketCors, GetBucketCors and DeleteBucketCors with
// the SDK; a browser's preflight (OPTIONS, no credentials) answered from
// the first rule that allows the origin, the method and the headers, and
// refused (403) otherwise or without a configuration; a request with an
// Origin gets the rule's headers even when it fails; bad configurations
// are refused.
func TestBucketCors(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)

	_, err := c.GetBucketCors(ctx, &awss3.GetBucketCorsInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchCORSConfiguration", s3Code(err))
	preflight := func(path, origin, method, headers string) answer {
		t.Helper()
		req, err := http.NewRequest(http.MethodOptions, env.http.URL+"/"+b+path, nil)
		require.NoError(t, err)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if method != "" {
			req.Header.Set("Access-Control-Request-Method", method)
		}
		if headers != "" {
			req.Header.Set("Access-Control-Request-Headers", headers)
		}
		return do(t, req)
	}
	require.Equal(t, http.StatusForbidden, preflight("/k", "https://app.example", "PUT", "").StatusCode, "no configuration")

	for _, bad := range []types.CORSRule{
		{AllowedMethods: []string{"PATCH"}, AllowedOrigins: []string{"*"}},
		{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"https://*.*.example"}},
		{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*"}, AllowedHeaders: []string{"X-Custom:Header"}},
		{AllowedMethods: []string{"GET"}, AllowedOrigins: []string{"*"}, ExposeHeaders: []string{"bad header"}},
		{AllowedMethods: []string{"GET"}},
	} {
		_, err := c.PutBucketCors(ctx, &awss3.PutBucketCorsInput{Bucket: aws.String(b),
			CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{bad}}})
		require.Error(t, err, "%+v", bad)
	}
	rules := []types.CORSRule{
		{ID: aws.String("app"), AllowedOrigins: []string{"https://*.app.example"}, AllowedMethods: []string{"GET", "PUT"},
			AllowedHeaders: []string{"Content-Type", "x-amz-*"}, ExposeHeaders: []string{"ETag"}, MaxAgeSeconds: aws.Int32(600)},
		{AllowedOrigins: []string{"*"}, AllowedMethods: []string{"GET", "HEAD"}},
	}
	_, err = c.PutBucketCors(ctx, &awss3.PutBucketCorsInput{Bucket: aws.String(b), CORSConfiguration: &types.CORSConfiguration{CORSRules: rules}})
	require.NoError(t, err)
	got, err := c.GetBucketCors(ctx, &awss3.GetBucketCorsInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, got.CORSRules, 2)
	require.Equal(t, "app", aws.ToString(got.CORSRules[0].ID))
	require.Equal(t, []string{"Content-Type", "x-amz-*"}, got.CORSRules[0].AllowedHeaders)
	require.Equal(t, int32(600), aws.ToInt32(got.CORSRules[0].MaxAgeSeconds))
	require.Equal(t, []string{"*"}, got.CORSRules[1].AllowedOrigins)

	// The first rule: its origin pattern, methods and headers.
	resp := preflight("/dir/k.txt", "https://www.app.example", "PUT", "Content-Type, X-Amz-Date")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "https://www.app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	require.Equal(t, "GET, PUT", resp.Header.Get("Access-Control-Allow-Methods"))
	require.Equal(t, "content-type, x-amz-date", resp.Header.Get("Access-Control-Allow-Headers"))
	require.Equal(t, "ETag", resp.Header.Get("Access-Control-Expose-Headers"))
	require.Equal(t, "600", resp.Header.Get("Access-Control-Max-Age"))
	// A header the first rule does not allow, a method no rule allows.
	require.Equal(t, http.StatusForbidden, preflight("/k", "https://www.app.example", "PUT", "Authorization").StatusCode)
	require.Equal(t, http.StatusForbidden, preflight("/k", "https://other.example", "DELETE", "").StatusCode)
	// The second rule: any origin, answered as *.
	resp = preflight("/k", "https://other.example", "GET", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "false", resp.Header.Get("Access-Control-Allow-Credentials"))
	// Without an origin or a method, a method in lower case, a header
	// that is no field name: a bad request.
	require.Equal(t, http.StatusBadRequest, preflight("/k", "", "GET", "").StatusCode)
	require.Equal(t, http.StatusBadRequest, preflight("/k", "https://other.example", "", "").StatusCode)
	require.Equal(t, http.StatusBadRequest, preflight("/k", "https://other.example", "get", "").StatusCode)
	require.Equal(t, http.StatusBadRequest, preflight("/k", "https://other.example", "GET", "x-ok,bad/header").StatusCode)
	// Exposed: the rule's headers, and ETag always.
	require.Equal(t, "ETag", preflight("/k", "https://other.example", "GET", "").Header.Get("Access-Control-Expose-Headers"))

	// A request with an origin, anonymous and so refused, still carries
	// the rule's headers; one whose origin no rule allows does not.
	get := func(origin string) answer {
		req, err := http.NewRequest(http.MethodGet, env.http.URL+"/"+b+"/missing", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		return do(t, req)
	}
	resp = get("https://www.app.example")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "https://www.app.example", resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, "ETag", resp.Header.Get("Access-Control-Expose-Headers"))

	// Tags and CORS live side by side in the bucket's attributes.
	_, err = c.PutBucketTagging(ctx, &awss3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("team"), Value: aws.String("web")}}}})
	require.NoError(t, err)
	_, err = c.GetBucketCors(ctx, &awss3.GetBucketCorsInput{Bucket: aws.String(b)})
	require.NoError(t, err)

	_, err = c.DeleteBucketCors(ctx, &awss3.DeleteBucketCorsInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	_, err = c.GetBucketCors(ctx, &awss3.GetBucketCorsInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchCORSConfiguration", s3Code(err))
	require.Equal(t, http.StatusForbidden, preflight("/k", "https://other.example", "GET", "").StatusCode)
	tags, err := c.GetBucketTagging(ctx, &awss3.GetBucketTaggingInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Len(t, tags.TagSet, 1)
	require.Empty(t, get("https://www.app.example").Header.Get("Access-Control-Allow-Origin"))
}

// answer is the status and headers of a response whose body was read.
type answer struct {
	StatusCode int
	Header     http.Header
}

// do sends req and reads its answer.
func do(t *testing.T, req *http.Request) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return answer{StatusCode: resp.StatusCode, Header: resp.Header}
}
