package s3_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestBrowserFormUpload: headless Chromium submits an HTML form of a page
// of another origin to the gateway, as a web site lets its visitors
// upload: hidden fields signed by the site's server (a SigV4 POST policy
// allowing keys under uploads/ and a redirect back to the site), a file
// chosen in the form's file input. The gateway stores the file under the
// file's name and sends the browser back to the site with the bucket,
// key and ETag.
func TestBrowserFormUpload(t *testing.T) {
	ctx, cancel := browsertest.New(t)
	defer cancel()
	c := sdk(t, false)
	b := newBucket(t, c)
	file := filepath.Join(t.TempDir(), "photo.txt")
	require.NoError(t, os.WriteFile(file, []byte("chosen in the browser"), 0o600))

	var (
		mu   sync.Mutex
		back url.Values
		form string
	)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/done" {
			back = r.URL.Query()
			_, _ = io.WriteString(w, `<!doctype html><p id="done">uploaded</p>`)
			return
		}
		_, _ = io.WriteString(w, form)
	}))
	defer page.Close()
	f := &postForm{fields: [][2]string{{"key", "uploads/${filename}"}, {"success_action_redirect", page.URL + "/done"}, {"Content-Type", "text/plain"}},
		conditions: []any{map[string]string{"bucket": b}, []any{"starts-with", "$key", "uploads/"},
			map[string]string{"success_action_redirect": page.URL + "/done"}, []any{"starts-with", "$Content-Type", "text/"},
			[]any{"content-length-range", 1, 1 << 20}}}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<!doctype html><title>upload</title><form id="f" action="%s/%s" method="post" enctype="multipart/form-data">`, env.http.URL, b)
	for _, kv := range f.signed(t) {
		fmt.Fprintf(&sb, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(kv[0]), html.EscapeString(kv[1]))
	}
	sb.WriteString(`<input type="file" name="file" id="file"><input type="submit" id="send" value="Upload"></form>`)
	mu.Lock()
	form = sb.String()
	mu.Unlock()

	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	require.NoError(t, chromedp.Do(sctx, chromedp.Navigate(page.URL+"/form"), chromedp.WaitVisible(chromedp.CSS("#file")),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}), chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS("#done"))))

	mu.Lock()
	got := back
	mu.Unlock()
	require.Equal(t, b, got.Get("bucket"))
	require.Equal(t, "uploads/photo.txt", got.Get("key"))
	out, err := c.GetObject(context.Background(), &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("uploads/photo.txt")})
	require.NoError(t, err)
	data, err := io.ReadAll(out.Body)
	_ = out.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "chosen in the browser", string(data))
	require.Equal(t, "text/plain", aws.ToString(out.ContentType))
	require.Equal(t, aws.ToString(out.ETag), got.Get("etag"))
}
