package s3_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"
)

// postForm is a browser form upload under test: its fields in order, the
// policy's conditions and expiration, and the file.
type postForm struct {
	fields     [][2]string
	conditions []any
	expires    time.Time
	file       []byte
	filename   string
	after      []byte // bytes after the file part's end
	v2         bool
	secret     string
	region     string
	tamper     func(fields map[string]string)
	rawPolicy  *string // signed in place of the policy made of conditions
}

// signed returns the form's fields in order, the signature fields (and
// the policy: the conditions, then one for each SigV4 signature field)
// after the test's own.
func (f *postForm) signed(t *testing.T) [][2]string {
	t.Helper()
	secret, region := testSecret, region
	if f.secret != "" {
		secret = f.secret
	}
	if f.region != "" {
		region = f.region
	}
	if f.expires.IsZero() {
		f.expires = time.Now().Add(10 * time.Minute)
	}
	now := time.Now().UTC()
	auth := map[string]string{}
	conds := append([]any(nil), f.conditions...)
	if f.v2 {
		auth["AWSAccessKeyId"] = testKey
	} else {
		auth["x-amz-algorithm"] = "AWS4-HMAC-SHA256"
		auth["x-amz-credential"] = testKey + "/" + now.Format("20060102") + "/" + region + "/s3/aws4_request"
		auth["x-amz-date"] = now.Format("20060102T150405Z")
		for _, k := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date"} {
			conds = append(conds, map[string]string{k: auth[k]})
		}
	}
	doc, err := json.Marshal(map[string]any{"expiration": f.expires.UTC().Format("2006-01-02T15:04:05.000Z"), "conditions": conds})
	require.NoError(t, err)
	auth["policy"] = base64.StdEncoding.EncodeToString(doc)
	if f.rawPolicy != nil {
		auth["policy"] = *f.rawPolicy
	}
	if f.v2 {
		mac := hmac.New(sha1.New, []byte(secret))
		mac.Write([]byte(auth["policy"]))
		auth["signature"] = base64.StdEncoding.EncodeToString(mac.Sum(nil))
	} else {
		key := []byte("AWS4" + secret)
		for _, s := range []string{now.Format("20060102"), region, "s3", "aws4_request", auth["policy"]} {
			mac := hmac.New(sha256.New, key)
			mac.Write([]byte(s))
			key = mac.Sum(nil)
		}
		auth["x-amz-signature"] = hex.EncodeToString(key)
	}
	if f.tamper != nil {
		f.tamper(auth)
	}
	fields := append([][2]string(nil), f.fields...)
	for _, k := range []string{"AWSAccessKeyId", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "policy", "x-amz-signature", "signature"} {
		if v, ok := auth[k]; ok {
			fields = append(fields, [2]string{k, v})
		}
	}
	return fields
}

// body is the form as multipart/form-data, and its content type.
func (f *postForm) body(t *testing.T) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, kv := range f.signed(t) {
		require.NoError(t, w.WriteField(kv[0], kv[1]))
	}
	name := f.filename
	if name == "" {
		name = "upload.bin"
	}
	fw, err := w.CreateFormFile("file", name)
	require.NoError(t, err)
	_, err = fw.Write(f.file)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	buf.Write(f.after)
	return &buf, w.FormDataContentType()
}

type postAnswer struct {
	status int
	header http.Header
	body   []byte
	code   string
	msg    string
}

func (f *postForm) send(t *testing.T, bucket string) postAnswer {
	t.Helper()
	body, ct := f.body(t)
	req, err := http.NewRequest(http.MethodPost, env.http.URL+"/"+bucket, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", ct)
	return sendPost(t, req)
}

func sendPost(t *testing.T, req *http.Request) postAnswer {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var e struct{ Code, Message string }
	_ = xml.Unmarshal(data, &e)
	return postAnswer{status: resp.StatusCode, header: resp.Header, body: data, code: e.Code, msg: e.Message}
}

// bucketAndKey are the conditions every successful form below starts
// with.
func bucketAndKey(b, keyPrefix string) []any {
	return []any{map[string]string{"bucket": b}, []any{"starts-with", "$key", keyPrefix}}
}

// TestPostObject: browser form uploads signed with SigV4 and SigV2, their
// answers (204, 200, 201 with a PostResponse, a 303 redirect), the
// object's headers, metadata and tags taken from the fields, ${filename},
// and what follows the file ignored.
func TestPostObject(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	get := func(key string) (*awss3.GetObjectOutput, []byte) {
		t.Helper()
		out, err := c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(key)})
		require.NoError(t, err)
		data, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		require.NoError(t, err)
		return out, data
	}

	f := &postForm{fields: [][2]string{{"key", "up/${filename}"}, {"Content-Type", "text/plain"}, {"x-amz-meta-color", "blue"},
		{"Cache-Control", "max-age=100"}, {"x-ignore-note", "anything"}},
		conditions: append(bucketAndKey(b, "up/"), []any{"starts-with", "$Content-Type", "text/"},
			map[string]string{"x-amz-meta-color": "blue"}, []any{"eq", "$Cache-Control", "max-age=100"}, []any{"content-length-range", 1, 1 << 20}),
		file: []byte("hello from a form"), filename: "notes.txt", after: []byte("trailing bytes after the form's end")}
	a := f.send(t, b)
	require.Equal(t, 204, a.status, "%s", a.body)
	require.Equal(t, env.http.URL+"/"+b+"/up/notes.txt", a.header.Get("Location"))
	require.NotEmpty(t, a.header.Get("ETag"))
	out, data := get("up/notes.txt")
	require.Equal(t, "hello from a form", string(data))
	require.Equal(t, "text/plain", aws.ToString(out.ContentType))
	require.Equal(t, "max-age=100", aws.ToString(out.CacheControl))
	require.Equal(t, map[string]string{"color": "blue"}, out.Metadata)
	require.Equal(t, a.header.Get("ETag"), aws.ToString(out.ETag))

	tagging := `<Tagging><TagSet><Tag><Key>env</Key><Value>test</Value></Tag></TagSet></Tagging>`
	f = &postForm{fields: [][2]string{{"key", "created"}, {"success_action_status", "201"}, {"tagging", tagging}},
		conditions: append(bucketAndKey(b, ""), map[string]string{"success_action_status": "201"}, map[string]string{"tagging": tagging}),
		file:       []byte("two")}
	a = f.send(t, b)
	require.Equal(t, 201, a.status, "%s", a.body)
	var pr struct{ Location, Bucket, Key, ETag string }
	require.NoError(t, xml.Unmarshal(a.body, &pr))
	require.Equal(t, b, pr.Bucket)
	require.Equal(t, "created", pr.Key)
	require.Equal(t, env.http.URL+"/"+b+"/created", pr.Location)
	require.Equal(t, a.header.Get("ETag"), pr.ETag)
	tags, err := c.GetObjectTagging(ctx, &awss3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("created")})
	require.NoError(t, err)
	require.Len(t, tags.TagSet, 1)
	require.Equal(t, "env", aws.ToString(tags.TagSet[0].Key))

	f = &postForm{fields: [][2]string{{"key", "ok200"}, {"success_action_status", "200"}},
		conditions: append(bucketAndKey(b, ""), []any{"starts-with", "$success_action_status", ""}), file: []byte("x"), v2: true}
	a = f.send(t, b)
	require.Equal(t, 200, a.status, "SigV2: %s", a.body)
	_, data = get("ok200")
	require.Equal(t, "x", string(data))

	f = &postForm{fields: [][2]string{{"key", "redirected"}, {"success_action_redirect", "http://app.example/done?x=1"}},
		conditions: append(bucketAndKey(b, ""), []any{"starts-with", "$success_action_redirect", "http://app.example/"}), file: []byte("y")}
	a = f.send(t, b)
	require.Equal(t, 303, a.status, "%s", a.body)
	loc, err := url.Parse(a.header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "app.example", loc.Host)
	require.Equal(t, url.Values{"x": {"1"}, "bucket": {b}, "key": {"redirected"}, "etag": {a.header.Get("ETag")}}, loc.Query())
}

// TestPostObjectRefused: every way a form can fail its signature or its
// policy is refused with AWS's error, and nothing is written.
func TestPostObjectRefused(t *testing.T) {
	ctx := context.Background()
	c := sdk(t, false)
	b := newBucket(t, c)
	key := [][2]string{{"key", "k"}}
	base := bucketAndKey(b, "")
	for _, tc := range []struct {
		name      string
		form      postForm
		status    int
		code, msg string
	}{
		{"signature", postForm{fields: key, conditions: base, tamper: func(m map[string]string) { m["x-amz-signature"] = strings.Repeat("0", 64) }},
			403, "SignatureDoesNotMatch", ""},
		{"secret", postForm{fields: key, conditions: base, secret: "wrong"}, 403, "SignatureDoesNotMatch", ""},
		{"v2 signature", postForm{fields: key, conditions: base, v2: true, secret: "wrong"}, 403, "SignatureDoesNotMatch", ""},
		{"unknown key", postForm{fields: key, conditions: base, tamper: func(m map[string]string) {
			m["x-amz-credential"] = strings.Replace(m["x-amz-credential"], testKey, "AKIDNOSUCH", 1)
		}}, 403, "InvalidAccessKeyId", ""},
		{"anonymous", postForm{fields: key, conditions: base, tamper: func(m map[string]string) {
			for _, k := range []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date", "policy", "x-amz-signature"} {
				delete(m, k)
			}
		}}, 403, "AccessDenied", "Anonymous access is not allowed"},
		{"missing date", postForm{fields: key, conditions: base, tamper: func(m map[string]string) { delete(m, "x-amz-date") }},
			400, "InvalidArgument", "Bucket POST must contain a field named 'x-amz-date'.  If it is specified, please check the order of the fields."},
		{"bad date", postForm{fields: key, conditions: base, tamper: func(m map[string]string) { m["x-amz-date"] = "yesterday" }},
			400, "InvalidArgument", `Invalid x-amz-date "yesterday": it must be in the format yyyyMMdd'T'HHmmss'Z'.`},
		{"algorithm", postForm{fields: key, conditions: base, tamper: func(m map[string]string) { m["x-amz-algorithm"] = "AWS4-HMAC-SHA1" }},
			400, "InvalidArgument", "Only AWS4-HMAC-SHA256 is supported"},
		{"credential", postForm{fields: key, conditions: base, tamper: func(m map[string]string) { m["x-amz-credential"] = "nope" }},
			400, "InvalidArgument", `the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`},
		{"region", postForm{fields: key, conditions: base, region: "eu-west-1"}, 400, "InvalidArgument", `the region "eu-west-1" is wrong; expecting "us-east-1"`},
		{"expired", postForm{fields: key, conditions: base, expires: time.Now().Add(-time.Minute)}, 403, "AccessDenied", "Invalid according to Policy: Policy expired."},
		{"condition", postForm{fields: key, conditions: bucketAndKey(b, "uploads/")}, 403, "AccessDenied",
			`Invalid according to Policy: Policy Condition failed: ["starts-with","$key","uploads/"]`},
		{"extra field", postForm{fields: append(key, [2]string{"Content-Type", "text/plain"}), conditions: base}, 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: content-type"},
		{"no bucket condition", postForm{fields: key, conditions: []any{[]any{"starts-with", "$key", ""}}}, 403, "AccessDenied",
			"Invalid according to Policy: Extra input fields: bucket"},
		{"wrong bucket", postForm{fields: key, conditions: bucketAndKey("another", "")}, 403, "AccessDenied",
			`Invalid according to Policy: Policy Condition failed: ["eq", "$bucket", "another"]`},
		{"too large", postForm{fields: key, conditions: append(base, []any{"content-length-range", 0, 5}), file: []byte("0123456789")},
			400, "EntityTooLarge", ""},
		{"empty policy", postForm{fields: key, rawPolicy: aws.String("")},
			400, "InvalidPolicyDocument", "Invalid Policy: Expecting '{' but found End-of-Input"},
		{"checksum value", postForm{fields: append(key, [2]string{"x-amz-checksum-crc32", "nope"}), conditions: append(base, map[string]string{"x-amz-checksum-crc32": "nope"})},
			400, "InvalidRequest", "Value for x-amz-checksum-crc32 header is invalid."},
		{"checksum algorithm", postForm{fields: append(key, [2]string{"x-amz-checksum-crc99", "AAAA"}), conditions: append(base, map[string]string{"x-amz-checksum-crc99": "AAAA"})},
			400, "InvalidRequest", "The algorithm type you specified in x-amz-checksum- header is invalid."},
		{"checksum mismatch", postForm{fields: append(key, [2]string{"x-amz-checksum-crc32", "AAAAAA=="}), conditions: append(base, map[string]string{"x-amz-checksum-crc32": "AAAAAA=="}), file: []byte("data")},
			400, "BadDigest", ""},
		{"too small", postForm{fields: key, conditions: append(base, []any{"content-length-range", 100, 1000}), file: []byte("hi")},
			400, "EntityTooSmall", ""},
		{"bad condition", postForm{fields: key, conditions: append(base, []any{"matches", "$key", "k"})}, 400, "InvalidPolicyDocument",
			"Invalid Policy: Invalid Condition: unknown operation 'matches'."},
		{"bad tagging", postForm{fields: append(key, [2]string{"tagging", "not xml"}), conditions: append(base, map[string]string{"tagging": "not xml"})},
			400, "MalformedXML", ""},
		{"no key", postForm{conditions: base}, 400, "InvalidArgument",
			"Bucket POST must contain a field named 'key'.  If it is specified, please check the order of the fields."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.form.send(t, b)
			require.Equal(t, tc.status, a.status, "%s", a.body)
			require.Equal(t, tc.code, a.code, "%s", a.body)
			if tc.msg != "" {
				require.Equal(t, tc.msg, a.msg)
			}
			_, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("k")})
			require.Error(t, err, "nothing written")
		})
	}

	req, err := http.NewRequest(http.MethodPost, env.http.URL+"/"+b, strings.NewReader("{}"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	a := sendPost(t, req)
	require.Equal(t, 412, a.status)
	require.Equal(t, "PreconditionFailed", a.code)
	req, err = http.NewRequest(http.MethodPost, env.http.URL+"/"+b, strings.NewReader("body"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "multipart/form-data")
	require.Equal(t, "MalformedPOSTRequest", sendPost(t, req).code)
	f := &postForm{fields: [][2]string{{"key", "k"}}, conditions: base}
	a = f.send(t, "no-such-bucket-here")
	require.Equal(t, "NoSuchBucket", a.code, "%s", a.body)
}
