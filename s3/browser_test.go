package s3_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/internal/browsertest"
)

// fetchResult is what the page's fetch saw: the status, body and exposed
// ETag of a response, or the error of a request the browser blocked.
type fetchResult struct {
	Status int    `json:"status"`
	Body   string `json:"body"`
	ETag   string `json:"etag"`
	Error  string `json:"error"`
}

// TestBrowserCors: headless Chromium on a page of another origin (another
// port of 127.0.0.1) reads and writes objects of the gateway with
// presigned URLs, as a web application does. Without a CORS configuration,
// or with one for another origin, the browser blocks both; with a rule
// for the page's origin, the GET reads the object with its ETag exposed,
// and the PUT (preflighted: its method and Content-Type are not simple)
// stores what the page sent.
func TestBrowserCors(t *testing.T) {
	ctx, cancel := browsertest.New(t)
	defer cancel()
	c := sdk(t, false)
	b := newBucket(t, c)
	bg := context.Background()
	_, err := c.PutObject(bg, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("hello"), Body: strings.NewReader("hello, browser")})
	require.NoError(t, err)

	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<!doctype html><title>app</title><p>an application of another origin</p>")
	}))
	defer page.Close()
	require.NotEqual(t, page.URL, env.http.URL)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page.URL)))

	presign := awss3.NewPresignClient(c)
	get, err := presign.PresignGetObject(bg, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("hello")}, awss3.WithPresignExpires(time.Hour))
	require.NoError(t, err)
	put, err := presign.PresignPutObject(bg, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("up")}, awss3.WithPresignExpires(time.Hour))
	require.NoError(t, err)
	fetch := func(url, init string) fetchResult {
		t.Helper()
		js := fmt.Sprintf(`(async () => {
  try {
    const r = await fetch(%q, %s);
    return JSON.stringify({status: r.status, body: await r.text(), etag: r.headers.get("ETag") || ""});
  } catch (e) {
    return JSON.stringify({error: String(e)});
  }
})()`, url, init)
		fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		out, err := chromedp.Run(fctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		var r fetchResult
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		return r
	}
	const putInit = `{method: "PUT", body: "from the browser", headers: {"Content-Type": "text/plain"}}`
	blocked := func(why string) {
		t.Helper()
		require.Contains(t, fetch(get.URL, "{}").Error, "Failed to fetch", why)
		require.Contains(t, fetch(put.URL, putInit).Error, "Failed to fetch", why)
	}
	blocked("no CORS configuration")

	setCors := func(origin string) {
		t.Helper()
		_, err := c.PutBucketCors(bg, &awss3.PutBucketCorsInput{Bucket: aws.String(b), CORSConfiguration: &types.CORSConfiguration{
			CORSRules: []types.CORSRule{{AllowedOrigins: []string{origin}, AllowedMethods: []string{"GET", "PUT"},
				AllowedHeaders: []string{"Content-Type"}, MaxAgeSeconds: aws.Int32(1)}}}})
		require.NoError(t, err)
	}
	setCors("https://elsewhere.example")
	blocked("a rule for another origin")

	setCors(page.URL)
	r := fetch(get.URL, "{}")
	require.Empty(t, r.Error)
	require.Equal(t, fetchResult{Status: 200, Body: "hello, browser", ETag: r.ETag}, r)
	require.NotEmpty(t, r.ETag, "the gateway exposes ETag to the page")
	r = fetch(put.URL, putInit)
	require.Empty(t, r.Error)
	require.Equal(t, 200, r.Status)
	got, err := c.GetObject(bg, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("up")})
	require.NoError(t, err)
	body, err := io.ReadAll(got.Body)
	_ = got.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "from the browser", string(body))
	require.Equal(t, "text/plain", aws.ToString(got.ContentType))
}
