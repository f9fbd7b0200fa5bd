package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4 (docs: "Authenticating Requests (AWS Signature
// Version 4)"), as S3 uses it: the path is encoded once, the payload hash is
// the x-amz-content-sha256 header verbatim.

const (
	algorithm       = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	emptySHA256     = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	maxPresignSecs  = 7 * 24 * 3600

	streamingSigned          = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTrailer   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// authRequest is what a request says about its signature, parsed from the
// Authorization header or the query (presigned).
type authRequest struct {
	accessKey     string
	date          string // yyyymmdd of the scope
	region        string
	service       string
	signedHeaders []string
	signature     string
	amzDate       string // X-Amz-Date
	presigned     bool
	expires       int64 // presigned: seconds
	payloadHash   string
}

func (a *authRequest) scope() string {
	return a.date + "/" + a.region + "/" + a.service + "/aws4_request"
}

// parseCredential splits "AK/yyyymmdd/region/service/aws4_request".
func (a *authRequest) parseCredential(c string) error {
	// The access key may itself contain '/': split from the right.
	parts := strings.Split(c, "/")
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return errf(ErrAuthorizationHeaderMalformed, "bad credential %q", c)
	}
	n := len(parts)
	a.accessKey = strings.Join(parts[:n-4], "/")
	a.date, a.region, a.service = parts[n-4], parts[n-3], parts[n-2]
	if len(a.date) != 8 || a.accessKey == "" {
		return errf(ErrAuthorizationHeaderMalformed, "bad credential %q", c)
	}
	return nil
}

// parseAuthorization parses an Authorization header of SigV4.
func parseAuthorization(h string) (*authRequest, error) {
	rest, ok := strings.CutPrefix(h, algorithm)
	if !ok || (rest != "" && rest[0] != ' ') {
		return nil, errf(ErrAuthorizationHeaderMalformed, "only %s is supported", algorithm)
	}
	a := &authRequest{}
	var haveCred, haveSigned, haveSig bool
	for _, f := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return nil, errf(ErrAuthorizationHeaderMalformed, "bad field %q", f)
		}
		switch k {
		case "Credential":
			if err := a.parseCredential(v); err != nil {
				return nil, err
			}
			haveCred = true
		case "SignedHeaders":
			a.signedHeaders = strings.Split(v, ";")
			haveSigned = true
		case "Signature":
			a.signature = v
			haveSig = true
		}
	}
	if !haveCred || !haveSigned || !haveSig {
		return nil, errf(ErrAuthorizationHeaderMalformed, "Credential, SignedHeaders and Signature are required")
	}
	return a, nil
}

// parsePresigned parses the X-Amz-* query parameters of a presigned URL.
func parsePresigned(q url.Values) (*authRequest, error) {
	if q.Get("X-Amz-Algorithm") != algorithm {
		return nil, errf(ErrAuthorizationQueryParametersError, "X-Amz-Algorithm must be %s", algorithm)
	}
	a := &authRequest{presigned: true, amzDate: q.Get("X-Amz-Date"), signature: q.Get("X-Amz-Signature")}
	if a.parseCredential(q.Get("X-Amz-Credential")) != nil {
		return nil, errf(ErrAuthorizationQueryParametersError, "bad X-Amz-Credential %q", q.Get("X-Amz-Credential"))
	}
	sh := q.Get("X-Amz-SignedHeaders")
	if sh == "" || a.signature == "" || a.amzDate == "" {
		return nil, errf(ErrAuthorizationQueryParametersError, "X-Amz-SignedHeaders, X-Amz-Signature and X-Amz-Date are required")
	}
	a.signedHeaders = strings.Split(sh, ";")
	exp, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || exp < 0 {
		return nil, errf(ErrAuthorizationQueryParametersError, "X-Amz-Expires must be a number of seconds")
	}
	if exp > maxPresignSecs {
		return nil, errf(ErrAuthorizationQueryParametersError, "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds")
	}
	a.expires = exp
	a.payloadHash = q.Get("X-Amz-Content-Sha256")
	if a.payloadHash == "" {
		a.payloadHash = unsignedPayload
	}
	return a, nil
}

// uriEncode encodes s as SigV4 asks: every byte but the unreserved
// characters (and '/' when keepSlash) as %XX, upper case.
func uriEncode(s string, keepSlash bool) string {
	const hexd = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
	}
	return b.String()
}

// canonicalQuery is the sorted, encoded query without X-Amz-Signature.
func canonicalQuery(rawQuery string) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, p := range strings.Split(rawQuery, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			dv = v
		}
		if dk == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{uriEncode(dk, false), uriEncode(dv, false)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// headerValue is a signed header's canonical value: the values joined by
// ',', each trimmed with inner runs of spaces collapsed.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "content-length":
		if v := r.Header.Values("Content-Length"); len(v) > 0 {
			vals = v
		} else if r.ContentLength >= 0 && (r.ContentLength > 0 || r.Body != nil && r.Body != http.NoBody) {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		} else {
			vals = []string{"0"}
		}
	case "transfer-encoding":
		vals = r.TransferEncoding
	default:
		vals = r.Header.Values(name)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalRequest builds the canonical request of r as a describes it.
func canonicalRequest(r *http.Request, a *authRequest) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path := r.URL.Path
	if path == "" {
		path = "/"
	}
	b.WriteString(uriEncode(path, true))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	for _, h := range a.signedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(a.signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(a.payloadHash)
	return b.String()
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// signingKey derives the key of one day, region and service.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

// stringToSign of a canonical request.
func stringToSign(a *authRequest, canonical string) string {
	return algorithm + "\n" + a.amzDate + "\n" + a.scope() + "\n" + sha256Hex([]byte(canonical))
}

// signatureMatches compares hex signatures in constant time.
func signatureMatches(want []byte, got string) bool {
	g, err := hex.DecodeString(got)
	return err == nil && hmac.Equal(want, g)
}

// requestTime parses the request's X-Amz-Date (or Date).
func requestTime(r *http.Request, a *authRequest) (time.Time, error) {
	if a.amzDate == "" {
		a.amzDate = r.Header.Get("X-Amz-Date")
	}
	if a.amzDate != "" {
		t, err := time.Parse(amzDateFormat, a.amzDate)
		if err != nil {
			return time.Time{}, errf(ErrAccessDenied, "X-Amz-Date %q is not yyyymmddThhmmssZ", a.amzDate)
		}
		return t, nil
	}
	d := r.Header.Get("Date")
	t, err := http.ParseTime(d)
	if err != nil {
		return time.Time{}, errf(ErrAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
	}
	a.amzDate = t.UTC().Format(amzDateFormat)
	return t, nil
}
