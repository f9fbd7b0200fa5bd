package s3

import (
	"encoding/xml"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// PostObject: a browser form's upload (AWS's "POST Object", multipart
// form-data to the bucket's URL). The form's fields come first: the key
// (${filename} stands for the file's name), the signature fields (SigV4:
// x-amz-algorithm, x-amz-credential, x-amz-date, x-amz-signature; SigV2:
// AWSAccessKeyId, signature) over the policy field, which lists what the
// fields may hold (postpolicy.go), and the object's headers (Content-Type,
// Cache-Control, x-amz-meta-*, tagging, x-amz-checksum-*, ...). Then the
// file, written as a PUT of the key with those headers would be; anything
// after it is ignored.

// maxPostFields bounds the bytes of the fields before the file (AWS
// allows 20 KB of them).
const maxPostFields = 20 << 10

// The fields of a signed POST, as SigV4 names them.
var postAuthFields = []string{"x-amz-algorithm", "x-amz-credential", "x-amz-date", "policy", "x-amz-signature"}

var (
	errMalformedPost = s3err("MalformedPOSTRequest", 400, "The body of your POST request is not well-formed multipart/form-data.")
	errPostFields    = s3err("MaxPostPreDataLengthExceededError", 400, "Your POST request fields preceding the upload file were too large.")
)

func postArgErr(format string, args ...any) *Error { return errf(ErrInvalidArgument, format, args...) }

// postFieldErr is InvalidArgument naming the field and its value.
func postFieldErr(name, value, format string, args ...any) *Error {
	return withFields(postArgErr(format, args...), "ArgumentName", name, "ArgumentValue", value)
}

// missingPostField is AWS's answer to a form without a field it needs.
func missingPostField(name string) *Error {
	return postFieldErr(name, "", "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", name)
}

// postForm is a POST's fields (names lower-case, each one's first value)
// and its file part, unread.
type postForm struct {
	fields   map[string]string
	file     *multipart.Part
	filename string
}

// isPostObject says whether a request to a bucket is a form upload: a
// POST that is not DeleteObjects.
func isPostObject(r *http.Request) bool {
	_, del := r.URL.Query()["delete"]
	return r.Method == http.MethodPost && !del
}

// postObject serves a form upload.
func (g *Gateway) postObject(rq *request) error {
	mt, params, err := mime.ParseMediaType(rq.r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return withFields(ErrPreconditionFailed, "Condition", "Bucket POST must be of the enclosure-type multipart/form-data")
	}
	if params["boundary"] == "" {
		return errMalformedPost
	}
	form, err := readPostForm(multipart.NewReader(rq.r.Body, params["boundary"]))
	if err != nil {
		return err
	}
	if err := g.postAuth(rq, form.fields); err != nil {
		return err
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	minLen, maxLen, err := g.postPolicyOf(rq, form)
	if err != nil {
		return err
	}
	key := form.fields["key"]
	if key == "" {
		return missingPostField("key")
	}
	rq.key = strings.ReplaceAll(key, "${filename}", form.filename)
	if len(rq.key) > 1024 {
		return ErrKeyTooLong
	}
	return g.postWrite(rq, form, minLen, maxLen)
}

// readPostForm reads the fields up to the file part.
func readPostForm(mr *multipart.Reader) (*postForm, error) {
	f := &postForm{fields: map[string]string{}}
	size := 0
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, postArgErr("POST requires exactly one file upload per request.")
		}
		if err != nil {
			return nil, errMalformedPost
		}
		name := strings.ToLower(p.FormName())
		if name == "file" {
			f.file, f.filename = p, p.FileName()
			return f, nil
		}
		v, err := io.ReadAll(io.LimitReader(p, int64(maxPostFields-size)+1))
		if err != nil {
			return nil, errMalformedPost
		}
		if size += len(name) + len(v); size > maxPostFields {
			return nil, errPostFields
		}
		if _, dup := f.fields[name]; !dup && name != "" {
			f.fields[name] = string(v)
		}
	}
}

// postAuth checks the form's signature over its policy (SigV4, or SigV2
// with AWSAccessKeyId) and makes the request act as the key's user.
func (g *Gateway) postAuth(rq *request, fields map[string]string) error {
	rq.op = "Auth"
	if fields["awsaccesskeyid"] != "" || fields["signature"] != "" {
		return g.postAuthV2(rq, fields)
	}
	var missing string
	for _, f := range postAuthFields {
		if _, ok := fields[f]; !ok && missing == "" {
			missing = f
		}
	}
	switch {
	case missing == "":
	case noneOf(fields, postAuthFields):
		return errf(ErrAccessDenied, "Anonymous access is not allowed")
	default:
		return missingPostField(missing)
	}
	if alg := fields["x-amz-algorithm"]; alg != algorithm {
		return postFieldErr("x-amz-algorithm", alg, "Only AWS4-HMAC-SHA256 is supported")
	}
	cred := fields["x-amz-credential"]
	a := &authRequest{}
	if err := a.parseCredential(cred, credentialOfPost); err != nil {
		var e *Error
		if errors.As(err, &e) {
			return withFields(e, "ArgumentName", "x-amz-credential", "ArgumentValue", cred)
		}
		return err
	}
	if a.region != g.opts.Region {
		return postFieldErr("x-amz-credential", cred, "the region %q is wrong; expecting %q", a.region, g.opts.Region)
	}
	if d := fields["x-amz-date"]; !validAmzDate(d) {
		return postFieldErr("x-amz-date", d, "Invalid x-amz-date %q: it must be in the format yyyyMMdd'T'HHmmss'Z'.", d)
	}
	secret, err := g.secretOf(rq, a.accessKey)
	if err != nil {
		return err
	}
	rq.auth = a
	key := signingKey(secret, a.date, a.region, a.service)
	if !signatureMatches(hmacSHA256(key, fields["policy"]), fields["x-amz-signature"]) {
		return withFields(ErrSignatureDoesNotMatch, "AWSAccessKeyId", a.accessKey, "StringToSign", fields["policy"],
			"SignatureProvided", fields["x-amz-signature"])
	}
	return g.actAs(rq)
}

// postAuthV2 checks a SigV2 form: the base64 HMAC-SHA1 of the policy.
func (g *Gateway) postAuthV2(rq *request, fields map[string]string) error {
	for _, f := range []string{"awsaccesskeyid", "policy", "signature"} {
		if _, ok := fields[f]; !ok {
			return missingPostField(f)
		}
	}
	a := &authRequest{accessKey: fields["awsaccesskeyid"], v2: true}
	secret, err := g.secretOf(rq, a.accessKey)
	if err != nil {
		return err
	}
	rq.auth = a
	if !signatureMatchesV2(hmacSHA1(secret, fields["policy"]), fields["signature"]) {
		return withFields(ErrSignatureDoesNotMatch, "AWSAccessKeyId", a.accessKey, "StringToSign", fields["policy"],
			"SignatureProvided", fields["signature"])
	}
	return g.actAs(rq)
}

// noneOf says whether the form has none of the fields names.
func noneOf(fields map[string]string, names []string) bool {
	for _, n := range names {
		if _, ok := fields[n]; ok {
			return false
		}
	}
	return true
}

func validAmzDate(d string) bool {
	_, err := time.Parse(amzDateFormat, d)
	return err == nil
}

// postPolicyOf parses the form's policy and checks its fields, the bucket
// among them, against it; it returns the file's length range.
func (g *Gateway) postPolicyOf(rq *request, form *postForm) (minLen, maxLen int64, err error) {
	rq.op = "PostObject"
	p, err := parsePostPolicy(form.fields["policy"])
	if err != nil {
		return 0, 0, err
	}
	fields := make(map[string]string, len(form.fields)+1)
	for k, v := range form.fields {
		fields[k] = v
	}
	fields["bucket"] = rq.bucket
	return p.check(fields, g.opts.Now())
}

// postHeaders maps the form's fields onto the headers a PUT of the object
// would carry.
func postHeaders(fields map[string]string) (http.Header, error) {
	h := http.Header{}
	for name, v := range fields {
		switch {
		case name == "tagging":
			var body taggingBody
			if err := xml.Unmarshal([]byte(v), &body); err != nil {
				return nil, ErrMalformedXML
			}
			tags, err := body.encode(maxObjectTags)
			if err != nil {
				return nil, err
			}
			h.Set("X-Amz-Tagging", tags)
		case strings.HasPrefix(name, "x-amz-checksum-") && !validAlgorithm(strings.TrimPrefix(name, "x-amz-checksum-")):
			return nil, errf(ErrInvalidRequest, "The algorithm type you specified in x-amz-checksum- header is invalid.")
		case name == "content-md5", name == "x-amz-storage-class", strings.HasPrefix(name, "x-amz-checksum-"),
			strings.HasPrefix(name, metaPrefix), isStoredHeader(name),
			strings.HasPrefix(name, "x-amz-object-lock-"): // object lock (objectlock.go)
			h.Set(name, v)
		}
	}
	return h, nil
}

func isStoredHeader(name string) bool {
	for _, s := range storedHeaders {
		if s == name {
			return true
		}
	}
	return false
}

// postWrite writes the file as a PUT of rq.key with the form's headers
// would, its length within [minLen, maxLen] (maxLen -1: any), and answers
// as success_action_redirect or success_action_status ask.
func (g *Gateway) postWrite(rq *request, form *postForm, minLen, maxLen int64) error {
	h, err := postHeaders(form.fields)
	if err != nil {
		return err
	}
	put := rq.r.Clone(rq.ctx)
	put.Method, put.Header, put.ContentLength, put.TransferEncoding = http.MethodPut, h, -1, []string{"chunked"}
	checks, err := newPayloadChecks(put)
	if err != nil {
		return err
	}
	w := rq.w
	cw := &capturedWriter{header: http.Header{}}
	prq := *rq
	prq.r, prq.w = put, cw
	prq.body = &body{r: &rangeReader{r: form.file, min: minLen, max: maxLen}, checks: checks, size: -1}
	if err := g.putObject(&prq); err != nil {
		return err
	}
	rq.body = prq.body
	etag := cw.header.Get("ETag")
	for k, v := range cw.header {
		w.Header()[k] = v
	}
	loc := objectURL(rq)
	w.Header().Set("Location", loc)
	if redirect := form.fields["success_action_redirect"]; redirect != "" {
		if u, err := url.Parse(redirect); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			q := u.Query()
			q.Set("bucket", rq.bucket)
			q.Set("key", rq.key)
			q.Set("etag", etag)
			u.RawQuery = q.Encode()
			w.Header().Set("Location", u.String())
			return rq.writeEmpty(http.StatusSeeOther)
		}
	}
	switch form.fields["success_action_status"] {
	case "200":
		return rq.writeEmpty(http.StatusOK)
	case "201":
		return rq.writeXML(http.StatusCreated, postResponse{Location: loc, Bucket: rq.bucket, Key: rq.key, ETag: etag})
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// postResponse is the answer of success_action_status 201.
type postResponse struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PostResponse"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// objectURL is the URL of rq's object, in the request's style.
func objectURL(rq *request) string {
	scheme := "http"
	if rq.r.TLS != nil {
		scheme = "https"
	}
	path := "/" + rq.bucket + "/" + uriEncode(rq.key, true)
	if !strings.HasPrefix(strings.TrimPrefix(rq.r.URL.Path, "/"), rq.bucket) {
		path = "/" + uriEncode(rq.key, true) // virtual-host style
	}
	return scheme + "://" + rq.r.Host + path
}

// rangeReader fails a file longer than max (EntityTooLarge) or, at its
// end, shorter than min (EntityTooSmall): the write is then dropped.
type rangeReader struct {
	r        io.Reader
	n        int64
	min, max int64
}

func (r *rangeReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	switch {
	case r.max >= 0 && r.n > r.max:
		// The rest of the file, up to a bound, is read to say its size.
		more, _ := io.Copy(io.Discard, io.LimitReader(r.r, maxSizeProbe))
		return n, withFields(ErrEntityTooLarge, "ProposedSize", strconv.FormatInt(r.n+more, 10), "MaxSizeAllowed", strconv.FormatInt(r.max, 10))
	case errors.Is(err, io.EOF) && r.n < r.min:
		return n, withFields(ErrEntityTooSmall, "ProposedSize", strconv.FormatInt(r.n, 10), "MinSizeAllowed", strconv.FormatInt(r.min, 10))
	}
	return n, err
}

// maxSizeProbe bounds what is read past a form's length range to report
// the file's size.
const maxSizeProbe = 1 << 20

// capturedWriter keeps what a handler answers, for postWrite to answer
// otherwise.
type capturedWriter struct {
	header http.Header
	status int
}

func (c *capturedWriter) Header() http.Header         { return c.header }
func (c *capturedWriter) Write(p []byte) (int, error) { return len(p), nil }
func (c *capturedWriter) WriteHeader(status int)      { c.status = status }
