package main

import (
	"bytes"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/s3"
)

// TestS3ClientCommands: strato s3 mb, cp (up and down) and ls against a
// gateway on a real cluster, with a key made by strato admin s3 key create.
func TestS3ClientCommands(t *testing.T) {
	h := dataClusterWith(t, minicluster.Options{S3: &minicluster.S3Options{Gateway: s3.Options{CleanupInterval: -1}}})

	k := jsonOf[map[string]any](t, h.ok("admin", "s3", "key", "create", "--json"))
	t.Setenv("AWS_ACCESS_KEY_ID", k["key"].(map[string]any)["accessKey"].(string))
	t.Setenv("AWS_SECRET_ACCESS_KEY", k["secret"].(string))
	t.Setenv("AWS_ENDPOINT_URL", h.s3)
	run := func(args ...string) string {
		t.Helper()
		r := execute(nil, append([]string{"s3"}, args...)...)
		require.Equal(t, 0, r.code, "strato s3 %s: %s", strings.Join(args, " "), r.stderr)
		return r.stdout
	}
	dir := t.TempDir()
	data := payload(5<<20+7, 3)
	src := filepath.Join(dir, "src.bin")
	require.NoError(t, os.WriteFile(src, data, 0o644))

	run("mb", "s3://cli")
	run("mb", "s3://cli") // exists: no error
	run("cp", src, "s3://cli/dir/")
	run("cp", src, "s3://cli/dir/ü and space")
	require.Equal(t, "     5242887  dir/src.bin\n     5242887  dir/ü and space\n", run("ls", "s3://cli/dir/"))
	out := filepath.Join(dir, "out.bin")
	run("cp", "s3://cli/dir/ü and space", out)
	back, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, data, back)

	line := requireFailure(t, execute(nil, "s3", "cp", "s3://cli/nope", out), 1, []string{"s3", "cp"})
	require.Contains(t, line, "NoSuchKey")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret")
	line = requireFailure(t, execute(nil, "s3", "ls", "s3://cli"), 1, []string{"s3", "ls"})
	require.Contains(t, line, "SignatureDoesNotMatch")
}

// s3CLI starts a cluster with an S3 gateway, makes a key and points the
// strato s3 client commands at it; run runs one that must succeed.
func s3CLI(t *testing.T) (h *cliHarness, run func(args ...string) string) {
	t.Helper()
	h = dataClusterWith(t, minicluster.Options{S3: &minicluster.S3Options{Gateway: s3.Options{CleanupInterval: -1}}})
	k := jsonOf[map[string]any](t, h.ok("admin", "s3", "key", "create", "--json"))
	t.Setenv("AWS_ACCESS_KEY_ID", k["key"].(map[string]any)["accessKey"].(string))
	t.Setenv("AWS_SECRET_ACCESS_KEY", k["secret"].(string))
	t.Setenv("AWS_ENDPOINT_URL", h.s3)
	return h, func(args ...string) string {
		t.Helper()
		r := execute(nil, append([]string{"s3"}, args...)...)
		require.Equal(t, 0, r.code, "strato s3 %s: %s", strings.Join(args, " "), r.stderr)
		return r.stdout
	}
}

// s3Proxy points the S3 client commands at a proxy of target whose hook
// sees every request first and may answer it (true) in the gateway's stead.
func s3Proxy(t *testing.T, target string, hook func(http.ResponseWriter, *http.Request) bool) {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", newS3Proxy(t, target, false, hook).URL)
}

// newS3Proxy starts a proxy of target, HTTPS if secure, whose hook sees
// every request first and may answer it (true) in the gateway's stead.
func newS3Proxy(t *testing.T, target string, secure bool, hook func(http.ResponseWriter, *http.Request) bool) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host // as signed
	}}
	proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook == nil || !hook(w, r) {
			rp.ServeHTTP(w, r)
		}
	}))
	if secure {
		proxy.StartTLS()
	} else {
		proxy.Start()
	}
	t.Cleanup(proxy.Close)
	return proxy
}

// TestS3ClientTransfers: a multipart upload, a ranged parallel download
// read back byte for byte, parts retried after 503 SlowDown, S3 to S3
// copies, whole and in parts, and the progress bar.
func TestS3ClientTransfers(t *testing.T) {
	_, run := s3CLI(t)
	dir := t.TempDir()
	data := payload(13<<20+5, 7) // three parts of 5 MiB
	src := filepath.Join(dir, "big.bin")
	require.NoError(t, os.WriteFile(src, data, 0o644))
	readBack := func(url string) []byte {
		t.Helper()
		out := filepath.Join(t.TempDir(), "back.bin")
		run("cp", "--part-size", "5MiB", "--concurrency", "3", url, out)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		return b
	}

	run("mb", "s3://mpu")
	got := jsonOf[[]s3Transfer](t, run("cp", "--part-size", "5MiB", "--multipart-threshold", "5MiB", "--concurrency", "3", "--json", src, "s3://mpu/"))
	require.Equal(t, []s3Transfer{{Source: src, Destination: "s3://mpu/big.bin", Bytes: int64(len(data))}}, got)
	c, err := (&s3ClientFlags{endpoint: os.Getenv("AWS_ENDPOINT_URL"), region: "us-east-1"}).client()
	require.NoError(t, err)
	head, err := c.HeadObject(t.Context(), &awss3.HeadObjectInput{Bucket: aws.String("mpu"), Key: aws.String("big.bin")})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(aws.ToString(head.ETag), `-3"`), "a multipart ETag: %s", aws.ToString(head.ETag))
	// The download goes through a proxy that counts its ranged GETs.
	var ranges atomic.Int32
	target := os.Getenv("AWS_ENDPOINT_URL")
	s3Proxy(t, target, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Header.Get("Range"), "bytes=") {
			ranges.Add(1)
		}
		return false
	})
	require.Equal(t, data, readBack("s3://mpu/big.bin"))
	require.EqualValues(t, 3, ranges.Load(), "ranges of 5 MiB")

	// Parts refused once with 503 SlowDown are sent again.
	var slowed atomic.Int32
	s3Proxy(t, target, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || r.URL.Query().Get("partNumber") == "" || slowed.Add(1) > 2 {
			return false
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return true
	})
	run("cp", "--part-size", "5MiB", "--multipart-threshold", "5MiB", src, "s3://mpu/retried.bin")
	require.EqualValues(t, 5, slowed.Load(), "two refused, three parts")
	t.Setenv("AWS_ENDPOINT_URL", target)
	require.Equal(t, data, readBack("s3://mpu/retried.bin"))

	// Server-side: one CopyObject, then UploadPartCopy in 5 MiB ranges.
	run("cp", "s3://mpu/big.bin", "s3://mpu/copies/whole.bin")
	run("cp", "--part-size", "5MiB", "--multipart-threshold", "5MiB", "s3://mpu/big.bin", "s3://mpu/copies/")
	require.Equal(t, data, readBack("s3://mpu/copies/whole.bin"))
	require.Equal(t, data, readBack("s3://mpu/copies/big.bin"))
	head, err = c.HeadObject(t.Context(), &awss3.HeadObjectInput{Bucket: aws.String("mpu"), Key: aws.String("copies/big.bin")})
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(aws.ToString(head.ETag), `-3"`), "copied in parts: %s", aws.ToString(head.ETag))

	// A progress bar on a terminal for uploads, downloads and copies, none
	// with --quiet.
	for _, args := range [][]string{
		{"s3", "cp", "--part-size", "5MiB", "--multipart-threshold", "5MiB", src, "s3://mpu/tty.bin"},
		{"s3", "cp", "--part-size", "5MiB", "s3://mpu/tty.bin", filepath.Join(dir, "tty.bin")},
		{"s3", "cp", "s3://mpu/tty.bin", "s3://mpu/tty2.bin"},
	} {
		code, _, screen := runOnTerminal(t, args...)
		require.Equal(t, 0, code, "%v: %q", args, screen)
		require.Regexp(t, `0 B / 13 MiB    0%  \[\.+\]  0 B/s  ETA -`, screen, args)
		require.Regexp(t, `\r\x1b\[K\S*tty2?\.bin  13 MiB  in \d[\d.]*(µs|ms|s)  [\d.]+ [KMG]?i?B/s\r?\n$`, screen, args)
		code, _, screen = runOnTerminal(t, append(args, "--quiet")...)
		require.Equal(t, 0, code, "%v --quiet: %q", args, screen)
		require.Empty(t, screen, args)
	}

	// An empty file, up and down.
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	run("cp", empty, "s3://mpu/empty")
	require.Empty(t, readBack("s3://mpu/empty"))

	// stdin up, stdout down.
	r := execute(bytes.NewReader(data[:1000]), "s3", "cp", "-", "s3://mpu/stdin")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, string(data[:1000]), run("cp", "s3://mpu/stdin", "-"))
}

// TestS3ClientRecursive: cp, ls and rm of a directory tree and a prefix.
func TestS3ClientRecursive(t *testing.T) {
	_, run := s3CLI(t)
	tree := t.TempDir()
	files := map[string][]byte{"a.txt": payload(10, 1), "sub/b.txt": payload(2000, 2), "sub/deep/c.bin": payload(70000, 3)}
	for name, b := range files {
		p := filepath.Join(tree, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	run("mb", "s3://rec")
	run("cp", "--recursive", tree, "s3://rec/p")
	require.Equal(t, "         PRE  p/sub/\n          10  p/a.txt\n", run("ls", "s3://rec/p/"))
	require.Equal(t, "          10  p/a.txt\n        2000  p/sub/b.txt\n       70000  p/sub/deep/c.bin\n", run("ls", "-r", "s3://rec/p"))
	rows := jsonOf[[]map[string]any](t, run("ls", "--json", "s3://rec/p/"))
	require.Len(t, rows, 2)
	require.Equal(t, map[string]any{"key": "p/sub/", "prefix": true, "size": 0.0}, rows[0])
	require.Equal(t, 10.0, rows[1]["size"])

	run("cp", "-r", "s3://rec/p", "s3://rec/q/")
	out := t.TempDir()
	run("cp", "-r", "s3://rec/q/", out)
	for name, b := range files {
		got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
		require.NoError(t, err)
		require.Equal(t, b, got, name)
	}
	del := jsonOf[map[string][]string](t, run("rm", "-r", "--json", "s3://rec/p"))
	require.Equal(t, []string{"s3://rec/p/a.txt", "s3://rec/p/sub/b.txt", "s3://rec/p/sub/deep/c.bin"}, del["deleted"])
	require.Equal(t, "", run("ls", "-r", "s3://rec/p/"))
	require.Equal(t, "delete: s3://rec/q/a.txt\n", run("rm", "s3://rec/q/a.txt"))
	require.Equal(t, "        2000  q/sub/b.txt\n       70000  q/sub/deep/c.bin\n", run("ls", "-r", "s3://rec/q/"))
}

// TestS3ClientBuckets: mb, ls of the buckets, rb (refused while the bucket
// holds keys, then --force), presign fetched without credentials, and the
// exit codes of usage errors (2) and failures (1).
func TestS3ClientBuckets(t *testing.T) {
	_, run := s3CLI(t)
	run("mb", "s3://bk1")
	src := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(src, []byte("presigned body"), 0o644))
	run("cp", src, "s3://bk1/dir/f")
	buckets := jsonOf[[]s3Bucket](t, run("ls", "--json"))
	require.Len(t, buckets, 1)
	require.Equal(t, "bk1", buckets[0].Name)
	require.Contains(t, run("ls"), "  bk1\n")

	signed := strings.TrimSpace(run("presign", "--expires-in", "60", "s3://bk1/dir/f"))
	resp, err := http.Get(signed) //nolint:gosec // the test's own gateway
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, "presigned body", string(body))

	// An https endpoint, its certificate checked against --tls-ca.
	secure := newS3Proxy(t, os.Getenv("AWS_ENDPOINT_URL"), true, nil)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: secure.Certificate().Raw}), 0o600))
	t.Setenv("AWS_CA_BUNDLE", "")
	require.Equal(t, "          14  dir/f\n", run("ls", "--endpoint", secure.URL, "--tls-ca", ca, "-r", "s3://bk1"))
	line := requireFailure(t, execute(nil, "s3", "ls", "--endpoint", secure.URL, "s3://bk1"), 1, []string{"s3", "ls"})
	require.Contains(t, line, "certificate")

	line = requireFailure(t, execute(nil, "s3", "rb", "s3://bk1"), 1, []string{"s3", "rb"})
	require.Contains(t, line, "BucketNotEmpty")
	run("rb", "--force", "s3://bk1")
	require.Equal(t, "", run("ls"))

	for _, args := range [][]string{
		{"s3", "cp", src},
		{"s3", "cp", src, src},
		{"s3", "cp", "--part-size", "1MiB", src, "s3://bk1/x"},
		{"s3", "cp", "s3://bk1", src},
		{"s3", "cp", "-r", "-", "s3://bk1/x"},
		{"s3", "cp", "-r", src, "s3://bk1/x"},
		{"s3", "rm", "s3://bk1"},
		{"s3", "mb", "s3://bk1/key"},
		{"s3", "ls", "bk1"},
		{"s3", "presign", "--expires-in", "0", "s3://bk1/k"},
		{"s3", "presign", "--nope", "s3://bk1/k"},
	} {
		requireFailure(t, execute(nil, args...), 2, args)
	}
	requireFailure(t, execute(nil, "s3", "cp", "s3://nobucket/k", src), 1, []string{"s3", "cp"})
	requireFailure(t, execute(nil, "s3", "rb", "s3://bk1"), 1, []string{"s3", "rb"})
}
