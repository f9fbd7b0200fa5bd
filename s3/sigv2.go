package s3

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 2 ("Signing and authenticating REST requests (AWS
// signature version 2)"): the Authorization header "AWS AccessKey:Signature"
// and presigned URLs (AWSAccessKeyId, Signature and Expires in the query),
// which boto3 still makes by default for us-east-1. The signature is the
// base64 HMAC-SHA1, under the secret, of
//
//	Method \n Content-MD5 \n Content-Type \n Date \n CanonicalizedAmzHeaders CanonicalizedResource
//
// where Date is the Date header (empty when the request has x-amz-date,
// which is among the x-amz-* headers then) or, presigned, the Expires
// parameter. No payload hash is signed: the body is checked as an
// UNSIGNED-PAYLOAD's (Content-MD5, x-amz-checksum-*, and a hex
// x-amz-content-sha256 when sent, which is signed as an x-amz-* header).

// signedSubresources are the query parameters the canonical resource
// holds: AWS's list (acl, lifecycle, location, logging, notification,
// partNumber, policy, requestPayment, torrent, uploadId, uploads,
// versionId, versioning, versions, website, delete, the response-*
// overrides) and those S3 added since, as botocore signs them.
var signedSubresources = map[string]bool{
	"accelerate": true, "acl": true, "analytics": true, "cors": true, "defaultObjectAcl": true, "delete": true,
	"inventory": true, "lifecycle": true, "location": true, "logging": true, "metrics": true, "notification": true,
	"object-lock": true, "partNumber": true, "policy": true, "replication": true, "requestPayment": true,
	"response-cache-control": true, "response-content-disposition": true, "response-content-encoding": true,
	"response-content-language": true, "response-content-type": true, "response-expires": true, "restore": true,
	"select": true, "select-type": true, "storageClass": true, "tagging": true, "torrent": true, "uploadId": true,
	"uploads": true, "versionId": true, "versioning": true, "versions": true, "website": true,
}

// parseAuthorizationV2 parses the credential of an Authorization header
// "AWS AccessKey:Signature" (h whole, cred after "AWS ").
func parseAuthorizationV2(h, cred string) (*authRequest, error) {
	ak, sig, ok := strings.Cut(cred, ":")
	if !ok || ak == "" || sig == "" || strings.ContainsAny(cred, " \t") {
		return nil, withFields(errf(ErrInvalidArgument, "AWS authorization header is invalid.  Expected AwsAccessKeyId:signature"),
			"ArgumentName", "Authorization", "ArgumentValue", h)
	}
	return &authRequest{v2: true, accessKey: ak, signature: sig}, nil
}

// parsePresignedV2 parses the query parameters of a presigned URL of
// Signature Version 2.
func parsePresignedV2(q url.Values) (*authRequest, error) {
	ak, sig, exp := q.Get("AWSAccessKeyId"), q.Get("Signature"), q.Get("Expires")
	if ak == "" || sig == "" || exp == "" {
		return nil, errf(ErrAccessDenied, "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters")
	}
	e, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || e < 0 {
		return nil, errf(ErrAccessDenied, "Invalid date (should be seconds since epoch): %s", exp)
	}
	// Expires is signed as sent.
	return &authRequest{v2: true, presigned: true, accessKey: ak, signature: sig, expires: e, amzDate: exp}, nil
}

// checkV2 checks a request of Signature Version 2 (rq.auth): its time
// (presigned: not expired; else its Date or x-amz-date within MaxSkew of
// the gateway's clock), then its signature; it sets up the body.
func (g *Gateway) checkV2(rq *request, secret string) error {
	r, a := rq.r, rq.auth
	now := g.opts.Now()
	if a.presigned {
		if exp := time.Unix(a.expires, 0); now.After(exp) {
			return withFields(errf(ErrAccessDenied, "Request has expired"),
				"Expires", exp.UTC().Format(time.RFC3339), "ServerTime", now.UTC().Format(time.RFC3339))
		}
	} else {
		t, err := requestTimeV2(r.Header)
		if err != nil {
			return err
		}
		if d := now.Sub(t); d > g.opts.MaxSkew || d < -g.opts.MaxSkew {
			return ErrRequestTimeTooSkewed
		}
	}
	resources := []string{g.resourceV2(r)}
	if bucket, key := g.route(r); bucket != "" && key == "" && !strings.HasSuffix(r.URL.Path, "/") {
		// botocore signs a path-style request to a bucket, "/bucket",
		// as virtual-host style's "/bucket/".
		resources = append(resources, "/"+bucket+"/"+subresourcesV2(r.URL.RawQuery))
	}
	match := false
	for _, res := range resources {
		match = signatureMatchesV2(hmacSHA1(secret, stringToSignV2(r, a, res)), a.signature) || match
	}
	if !match {
		return ErrSignatureDoesNotMatch
	}
	a.payloadHash = r.Header.Get("X-Amz-Content-Sha256")
	switch a.payloadHash {
	case "":
		a.payloadHash = unsignedPayload
	case streamingSigned, streamingSignedTrailer:
		// Its chunks' signatures chain from a SigV4 signature.
		return errf(ErrInvalidRequest, "x-amz-content-sha256 %s needs AWS Signature Version 4", a.payloadHash)
	}
	return g.setupBody(rq, nil)
}

// requestTimeV2 is a header-signed request's time: its x-amz-date, else
// its Date (HTTP dates, RFC 1123 with a zone name or a numeric offset).
func requestTimeV2(h http.Header) (time.Time, error) {
	v := h.Get("X-Amz-Date")
	if v == "" {
		v = h.Get("Date")
	}
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC, amzDateFormat} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errMissingDate
}

// stringToSignV2 is the string a's signature signs, resource being r's
// canonical resource. Its Date line is the Date header, "" when the request
// has x-amz-date, or, presigned, the Expires parameter. A presigned URL made
// by botocore carries the Content-MD5, Content-Type and x-amz-* headers it
// signed as query parameters: those count where the request lacks the
// header.
func stringToSignV2(r *http.Request, a *authRequest, resource string) string {
	var q url.Values
	date := r.Header.Get("Date")
	if a.presigned {
		q = lowerKeys(r.URL.Query())
		date = a.amzDate
	} else if r.Header.Get("X-Amz-Date") != "" {
		date = ""
	}
	value := func(name string) string {
		vs := r.Header.Values(name)
		if len(vs) == 0 && q != nil {
			vs = q[strings.ToLower(name)]
		}
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = strings.TrimSpace(v)
		}
		return strings.Join(out, ",")
	}
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(value("Content-MD5"))
	b.WriteByte('\n')
	b.WriteString(value("Content-Type"))
	b.WriteByte('\n')
	b.WriteString(date)
	b.WriteByte('\n')
	var names []string
	seen := map[string]bool{}
	add := func(k string) {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") && !seen[lk] {
			seen[lk] = true
			names = append(names, lk)
		}
	}
	for k := range r.Header {
		add(k)
	}
	for k := range q {
		add(k)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte(':')
		b.WriteString(value(n))
		b.WriteByte('\n')
	}
	b.WriteString(resource)
	return b.String()
}

// lowerKeys is q with its names in lower case.
func lowerKeys(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, vs := range q {
		lk := strings.ToLower(k)
		out[lk] = append(out[lk], vs...)
	}
	return out
}

// resourceV2 is the canonical resource of r: "/" and the bucket of a
// virtual-host-style request, the path as sent (encoded), and the
// subresources it addresses.
func (g *Gateway) resourceV2(r *http.Request) string {
	p := r.URL.EscapedPath()
	if p == "" {
		p = "/"
	}
	if b, ok := g.hostBucket(r); ok {
		p = "/" + b + p
	}
	return p + subresourcesV2(r.URL.RawQuery)
}

// subresourcesV2 is the canonical resource's query: the signed
// subresources of rawQuery sorted by name (stable), decoded, "name" or
// "name=value" as the query has them; "" when none.
func subresourcesV2(rawQuery string) string {
	type kv struct{ name, pair string }
	var subs []kv
	for _, p := range strings.Split(rawQuery, "&") {
		k, v, hasValue := strings.Cut(p, "=")
		name, err := url.PathUnescape(k)
		if err != nil || !signedSubresources[name] {
			continue
		}
		pair := name
		if hasValue {
			if dv, err := url.PathUnescape(v); err == nil {
				v = dv
			}
			pair += "=" + v
		}
		subs = append(subs, kv{name, pair})
	}
	if len(subs) == 0 {
		return ""
	}
	sort.SliceStable(subs, func(i, j int) bool { return subs[i].name < subs[j].name })
	var b strings.Builder
	for i, s := range subs {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(s.pair)
	}
	return b.String()
}

func hmacSHA1(secret, data string) []byte {
	h := hmac.New(sha1.New, []byte(secret))
	h.Write([]byte(data))
	return h.Sum(nil)
}

// signatureMatchesV2 compares a base64 signature in constant time. A '+'
// left unencoded in a query reads as ' ' (base64 has no spaces).
func signatureMatchesV2(want []byte, got string) bool {
	g, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(got, " ", "+"))
	return err == nil && hmac.Equal(want, g)
}
