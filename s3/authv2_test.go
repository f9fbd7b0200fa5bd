package s3_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sigV2 is the Signature Version 2 of a request, written from AWS's page
// for these tests: date is the Date line, resource the canonical
// resource.
func sigV2(secret string, req *http.Request, date, resource string) string {
	var amz []string
	for k, vs := range req.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") {
			amz = append(amz, lk+":"+strings.Join(vs, ","))
		}
	}
	sort.Strings(amz)
	s := req.Method + "\n" + req.Header.Get("Content-MD5") + "\n" + req.Header.Get("Content-Type") + "\n" + date + "\n"
	for _, h := range amz {
		s += h + "\n"
	}
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(s + resource))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// doV2 sends a request signed with SigV2 in the Authorization header (its
// Date at), after edit (which may change it after signing); it returns the
// status and body.
func doV2(t *testing.T, method, path string, body []byte, secret string, at time.Time, hdr http.Header, edit func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, env.http.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header[k] = v
	}
	if !at.IsZero() {
		req.Header.Set("Date", at.UTC().Format(http.TimeFormat))
	}
	resource := req.URL.EscapedPath()
	if q := req.URL.RawQuery; q != "" && !strings.Contains(q, "=") {
		resource += "?" + q // one subresource without a value (?uploads, ?acl)
	}
	return sendV2(t, req, secret, resource, edit)
}

// sendV2 signs req (resource its canonical resource) and sends it.
func sendV2(t *testing.T, req *http.Request, secret, resource string, edit func(*http.Request)) (int, string) {
	t.Helper()
	req.Header.Set("Authorization", "AWS "+testKey+":"+sigV2(secret, req, req.Header.Get("Date"), resource))
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

// TestSignatureV2: requests signed with AWS Signature Version 2, in the
// Authorization header and presigned, are served; forged, expired or
// skewed ones are refused, and no answer carries the secret or the
// signature the gateway computed.
func TestSignatureV2(t *testing.T) {
	c := sdk(t, false)
	b := newBucket(t, c)
	now := time.Now()
	body := []byte("signed with SigV2")
	sum := md5.Sum(body)
	hdr := http.Header{"Content-Type": {"text/x-v2"}, "Content-Md5": {base64.StdEncoding.EncodeToString(sum[:])}, "X-Amz-Meta-V": {"2"}}

	code, out := doV2(t, "PUT", "/"+b+"/k%20v2", body, testSecret, now, hdr, nil)
	require.Equal(t, 200, code, out)
	code, out = doV2(t, "GET", "/"+b+"/k%20v2", nil, testSecret, now, nil, nil)
	require.Equal(t, 200, code)
	require.Equal(t, string(body), out)
	code, out = doV2(t, "GET", "/"+b, nil, testSecret, now, nil, nil)
	require.Equal(t, 200, code)
	require.Contains(t, out, "<Key>k v2</Key>")
	code, out = doV2(t, "POST", "/"+b+"/mp?uploads", nil, testSecret, now, nil, nil) // a subresource signed
	require.Equal(t, 200, code, out)
	// x-amz-date instead of Date: the Date line is empty.
	code, out = doV2(t, "GET", "/"+b+"/k%20v2", nil, testSecret, time.Time{},
		http.Header{"X-Amz-Date": {now.UTC().Format(http.TimeFormat)}}, nil)
	require.Equal(t, 200, code, out)
	// Virtual-host style: the bucket in the Host is in the resource.
	req, err := http.NewRequest("GET", env.http.URL+"/k%20v2", nil)
	require.NoError(t, err)
	req.Host = b + ".s3.test"
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	code, out = sendV2(t, req, testSecret, "/"+b+"/k%20v2", nil)
	require.Equal(t, 200, code, out)
	// A path-style request to a bucket signed as botocore signs it: "/bucket/".
	req, err = http.NewRequest("GET", env.http.URL+"/"+b+"?list-type=2&prefix=k", nil)
	require.NoError(t, err)
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	code, out = sendV2(t, req, testSecret, "/"+b+"/", nil)
	require.Equal(t, 200, code, out)

	// Refused: the wrong secret, a header added after signing, another
	// body, a skewed clock, no date.
	refused := func(want string, code int, out string) {
		t.Helper()
		require.Equal(t, want, errorCodeOf(out), out)
		require.GreaterOrEqual(t, code, 400)
		require.NotContains(t, out, testSecret)
	}
	var good string
	code, out = doV2(t, "GET", "/"+b+"/k%20v2", nil, "wrong", now, nil, func(r *http.Request) {
		good = sigV2(testSecret, r, r.Header.Get("Date"), "/"+b+"/k%20v2")
	})
	refused("SignatureDoesNotMatch", code, out)
	require.NotContains(t, out, good)
	code, out = doV2(t, "PUT", "/"+b+"/k%20v2", body, testSecret, now, hdr, func(r *http.Request) { r.Header.Set("X-Amz-Meta-V", "3") })
	refused("SignatureDoesNotMatch", code, out)
	code, out = doV2(t, "PUT", "/"+b+"/k%20v2", []byte("another body"), testSecret, now, hdr, nil)
	refused("BadDigest", code, out)
	code, out = doV2(t, "GET", "/"+b+"/k%20v2", nil, testSecret, now.Add(-20*time.Minute), nil, nil)
	refused("RequestTimeTooSkewed", code, out)
	code, out = doV2(t, "GET", "/"+b+"/k%20v2", nil, testSecret, time.Time{}, nil, nil)
	refused("AccessDenied", code, out)
	require.Contains(t, out, "Date or x-amz-date")
	require.Equal(t, body, get(t, c, b, "k v2"))

	// Presigned.
	presign := func(path string, expires int64, secret string) string {
		r, _ := http.NewRequest("GET", env.http.URL+path, nil)
		sig := sigV2(secret, r, strconv.FormatInt(expires, 10), path)
		return env.http.URL + path + "?AWSAccessKeyId=" + testKey + "&Expires=" + strconv.FormatInt(expires, 10) +
			"&Signature=" + url.QueryEscape(sig)
	}
	fetch := func(u string) (int, string) {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	code, out = fetch(presign("/"+b+"/k%20v2", now.Unix()+60, testSecret))
	require.Equal(t, 200, code, out)
	require.Equal(t, string(body), out)
	code, out = fetch(presign("/"+b+"/k%20v2", now.Unix()-1, testSecret))
	refused("AccessDenied", code, out)
	require.Contains(t, out, "Request has expired")
	code, out = fetch(presign("/"+b+"/k%20v2", now.Unix()+60, "wrong"))
	refused("SignatureDoesNotMatch", code, out)
	code, out = fetch(strings.Replace(presign("/"+b+"/k%20v2", now.Unix()+60, testSecret), "/k%20v2?", "/other?", 1))
	refused("SignatureDoesNotMatch", code, out)
	code, out = fetch(env.http.URL + "/" + b + "/k%20v2?AWSAccessKeyId=" + testKey + "&Expires=9")
	refused("AccessDenied", code, out)
}
