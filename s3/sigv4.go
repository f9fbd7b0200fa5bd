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
	expires       int64 // presigned: seconds of validity (SigV4), the second it expires (SigV2)
	payloadHash   string
	v2            bool // Signature Version 2 (sigv2.go): accessKey, signature, presigned, expires
}

func (a *authRequest) scope() string {
	return a.date + "/" + a.region + "/" + a.service + "/aws4_request"
}

// authErr is a malformed signature's error, worded as AWS words it: of
// the Authorization header, or (query) of a presigned URL's parameters.
func authErr(query bool, format string, args ...any) *Error {
	if query {
		return errf(ErrAuthorizationQueryParametersError, format, args...)
	}
	return errf(ErrAuthorizationHeaderMalformed, "The authorization header is malformed; "+format, args...)
}

// Where a credential comes from, for the wording of its errors.
type credentialOf int

const (
	credentialOfHeader credentialOf = iota // the Authorization header
	credentialOfQuery                      // a presigned URL's X-Amz-Credential
	credentialOfPost                       // a form's x-amz-credential field (post.go)
)

// parseCredential splits "AK/yyyymmdd/region/service/aws4_request".
func (a *authRequest) parseCredential(c string, of credentialOf) error {
	fail := func(format string, args ...any) error {
		switch of {
		case credentialOfQuery:
			return authErr(true, "Error parsing the X-Amz-Credential parameter; "+format, args...)
		case credentialOfPost:
			return postArgErr(format, args...)
		}
		return authErr(false, format, args...)
	}
	// Access keys hold no '/' (ValidateAccessKey in meta; AWS's neither).
	parts := strings.Split(c, "/")
	n := len(parts)
	if n != 5 || parts[0] == "" {
		return fail(`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`)
	}
	a.accessKey = strings.Join(parts[:n-4], "/")
	a.date, a.region, a.service = parts[n-4], parts[n-3], parts[n-2]
	switch {
	case parts[n-1] != "aws4_request":
		return fail(`incorrect terminal %q. This endpoint uses "aws4_request".`, parts[n-1])
	case a.service != "s3":
		return fail(`incorrect service %q. This endpoint belongs to "s3".`, a.service)
	}
	if _, err := time.Parse("20060102", a.date); err != nil || len(a.date) != 8 {
		return fail(`incorrect date format %q. This date in the credential must be in the format "yyyyMMdd".`, a.date)
	}
	return nil
}

// parseAuthorization parses an Authorization header of SigV4 (or SigV2,
// "AWS AccessKey:Signature").
func parseAuthorization(h string) (*authRequest, error) {
	alg, rest, ok := strings.Cut(h, " ")
	switch {
	case !ok:
		return nil, withFields(errf(ErrInvalidArgument, "Authorization header is invalid -- one and only one ' ' (space) required."),
			"ArgumentName", "Authorization", "ArgumentValue", h)
	case alg == "AWS":
		return parseAuthorizationV2(h, rest)
	case alg != algorithm:
		return nil, withFields(errf(ErrInvalidArgument, "Unsupported Authorization Type"), "ArgumentName", "Authorization", "ArgumentValue", alg)
	}
	comps := strings.Split(rest, ",")
	if len(comps) != 3 {
		return nil, authErr(false, "the authorization header requires three components: Credential, SignedHeaders, and Signature.")
	}
	a := &authRequest{}
	var cred string
	var haveCred, haveSigned, haveSig bool
	for _, f := range comps {
		f = strings.TrimSpace(f)
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, authErr(false, "the authorization component %q is malformed.", f)
		}
		switch k {
		case "Credential":
			cred, haveCred = v, true
		case "SignedHeaders":
			a.signedHeaders = strings.Split(v, ";")
			haveSigned = true
		case "Signature":
			a.signature = v
			haveSig = true
		}
	}
	switch {
	case !haveCred:
		return nil, authErr(false, "missing Credential.")
	case !haveSigned:
		return nil, authErr(false, "missing SignedHeaders.")
	case !haveSig:
		return nil, authErr(false, "missing Signature.")
	}
	if err := a.parseCredential(cred, credentialOfHeader); err != nil {
		return nil, err
	}
	return a, nil
}

// parsePresigned parses the X-Amz-* query parameters of a presigned URL.
func parsePresigned(q url.Values) (*authRequest, error) {
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Date", "X-Amz-SignedHeaders", "X-Amz-Expires"} {
		if q.Get(p) == "" {
			return nil, authErr(true, "Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.")
		}
	}
	switch alg := q.Get("X-Amz-Algorithm"); alg {
	case algorithm:
	case "AWS4-ECDSA-P256-SHA256":
		return nil, authErr(true, `X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`)
	default:
		return nil, authErr(true, `X-Amz-Algorithm only supports "AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256"`)
	}
	a := &authRequest{presigned: true, amzDate: q.Get("X-Amz-Date"), signature: q.Get("X-Amz-Signature")}
	if err := a.parseCredential(q.Get("X-Amz-Credential"), credentialOfQuery); err != nil {
		return nil, err
	}
	a.signedHeaders = strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	exp, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	switch {
	case err != nil:
		return nil, authErr(true, "X-Amz-Expires should be a number")
	case exp < 0:
		return nil, authErr(true, "X-Amz-Expires must be non-negative")
	case exp > maxPresignSecs:
		return nil, authErr(true, "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds")
	}
	a.expires = exp
	a.payloadHash = q.Get("X-Amz-Content-Sha256")
	if a.payloadHash == "" {
		a.payloadHash = unsignedPayload
	}
	return a, nil
}

// unsignedHeaders are the x-amz-* headers of r its signature does not
// cover (AWS refuses them: a proxy could add them). SigV2 signs them all.
func unsignedHeaders(r *http.Request, a *authRequest) []string {
	if a.v2 {
		return nil
	}
	var out []string
	for k := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") || slicesContains(a.signedHeaders, lk) {
			continue
		}
		if lk == "x-amz-content-sha256" && a.presigned || lk == "x-amz-date" && a.presigned {
			continue
		}
		out = append(out, lk)
	}
	sort.Strings(out)
	return out
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

var errMissingDate = errf(ErrAccessDenied, "AWS authentication requires a valid Date or x-amz-date header.")

// requestTime parses the request's X-Amz-Date (or Date).
func requestTime(r *http.Request, a *authRequest) (time.Time, error) {
	if a.amzDate == "" {
		a.amzDate = r.Header.Get("X-Amz-Date")
	}
	if a.amzDate != "" {
		t, err := time.Parse(amzDateFormat, a.amzDate)
		if err != nil && a.presigned {
			return time.Time{}, authErr(true, `X-Amz-Date must be in the ISO8601 Long Format "yyyyMMdd'T'HHmmss'Z'"`)
		} else if err != nil {
			return time.Time{}, errMissingDate
		}
		return t, nil
	}
	d := r.Header.Get("Date")
	t, err := http.ParseTime(d)
	if err != nil {
		return time.Time{}, errMissingDate
	}
	a.amzDate = t.UTC().Format(amzDateFormat)
	return t, nil
}
