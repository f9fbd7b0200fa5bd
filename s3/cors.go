package s3

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/strato-io/strato/proto/strato/v1"
)

// CORS: a bucket's CORS configuration is stored as its attribute
// x-strato-cors, the configuration's XML as the gateway re-encodes it
// after checking it (PutBucketCors). A browser's preflight (OPTIONS, which
// carries no credentials) is answered from the first rule that allows the
// origin, the method and every header asked; a request with an Origin
// header gets the Access-Control-* headers of the first rule that allows
// its origin and method, whatever its outcome, as AWS does.

const (
	attrCORS = "x-strato-cors"
	// maxCORSXML bounds a CORS configuration (AWS: 64 KB); maxCORSRules
	// its rules (AWS: 100).
	maxCORSXML   = 64 << 10
	maxCORSRules = 100
	// maxCORSStored keeps room in the bucket's attributes (64 KiB in all)
	// for its tags.
	maxCORSStored = 48 << 10
)

var (
	// ErrNoSuchCORSConfiguration is GetBucketCors's answer for a bucket
	// without one.
	ErrNoSuchCORSConfiguration = s3err("NoSuchCORSConfiguration", 404, "The CORS configuration does not exist")
	// errCORSForbidden is a preflight no rule allows.
	errCORSForbidden = s3err("AccessForbidden", 403, "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.")
	// errCORSNotEnabled is a preflight to a bucket without a configuration.
	errCORSNotEnabled = s3err("AccessForbidden", 403, "CORSResponse: CORS is not enabled for this bucket.")
	// errCORSNoOrigin is a preflight without an Origin.
	errCORSNoOrigin = s3err("BadRequest", 400, "Insufficient information. Origin request header needed.")
)

// validHeaderName: an HTTP field name (RFC 9110's token), or with
// wildcard one holding *.
func validHeaderName(h string, wildcard bool) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'+-.^_`|~", c) >= 0:
		case c == '*' && wildcard:
		default:
			return false
		}
	}
	return true
}

// corsConfiguration is a CORSConfiguration document.
type corsConfiguration struct {
	XMLName xml.Name   `xml:"CORSConfiguration"`
	Rules   []corsRule `xml:"CORSRule"`
}

// corsRule is one CORSRule.
type corsRule struct {
	ID             string   `xml:"ID,omitempty"`
	AllowedHeaders []string `xml:"AllowedHeader,omitempty"`
	AllowedMethods []string `xml:"AllowedMethod"`
	AllowedOrigins []string `xml:"AllowedOrigin"`
	ExposeHeaders  []string `xml:"ExposeHeader,omitempty"`
	MaxAgeSeconds  *int     `xml:"MaxAgeSeconds,omitempty"`
}

// corsMethods are the methods a rule may allow.
var corsMethods = map[string]bool{"GET": true, "PUT": true, "POST": true, "DELETE": true, "HEAD": true}

// check applies AWS's rules to a configuration.
func (c *corsConfiguration) check() error {
	if len(c.Rules) == 0 || len(c.Rules) > maxCORSRules {
		return ErrMalformedXML
	}
	for _, r := range c.Rules {
		if len(r.AllowedMethods) == 0 || len(r.AllowedOrigins) == 0 || len(r.ID) > 255 {
			return ErrMalformedXML
		}
		for _, m := range r.AllowedMethods {
			if !corsMethods[m] {
				return errf(ErrInvalidRequest, "Found unsupported HTTP method in CORS config. Unsupported method is %s", m)
			}
		}
		for _, o := range r.AllowedOrigins {
			if strings.Count(o, "*") > 1 {
				return errf(ErrInvalidRequest, "AllowedOrigin \"%s\" can not have more than one wildcard.", o)
			}
		}
		for _, h := range r.AllowedHeaders {
			if strings.Count(h, "*") > 1 {
				return errf(ErrInvalidRequest, "AllowedHeader \"%s\" can not have more than one wildcard.", h)
			}
			if !validHeaderName(h, true) {
				return errf(ErrInvalidRequest, "AllowedHeader \"%s\" contains invalid character.", h)
			}
		}
		for _, h := range r.ExposeHeaders {
			if !validHeaderName(h, false) {
				return errf(ErrInvalidRequest, "AllowedHeader \"%s\" contains invalid character.", h)
			}
		}
	}
	return nil
}

// wildcardMatch matches s against a pattern with at most one *.
func wildcardMatch(pattern, s string) bool {
	before, after, ok := strings.Cut(pattern, "*")
	if !ok {
		return pattern == s
	}
	return len(s) >= len(before)+len(after) && strings.HasPrefix(s, before) && strings.HasSuffix(s, after)
}

// match returns the first rule that allows origin, method and every one of
// headers (lower case), or nil.
func (c *corsConfiguration) match(origin, method string, headers []string) *corsRule {
	for i := range c.Rules {
		r := &c.Rules[i]
		if !anyMatch(r.AllowedOrigins, origin, false) || !anyMatch(r.AllowedMethods, method, false) {
			continue
		}
		ok := true
		for _, h := range headers {
			if !anyMatch(r.AllowedHeaders, h, true) {
				ok = false
				break
			}
		}
		if ok {
			return r
		}
	}
	return nil
}

func anyMatch(patterns []string, s string, fold bool) bool {
	for _, p := range patterns {
		if fold {
			p = strings.ToLower(p)
		}
		if wildcardMatch(p, s) {
			return true
		}
	}
	return false
}

// setHeaders writes the rule's answer to origin: the origin allowed (*
// when the rule allows any, as AWS answers), the methods, what the
// response may expose, how long a preflight may be cached; allowHeaders
// are the preflight's requested headers.
func (r *corsRule) setHeaders(h http.Header, origin string, allowHeaders []string) {
	h.Add("Vary", "Origin, Access-Control-Request-Headers, Access-Control-Request-Method")
	if slices.Contains(r.AllowedOrigins, "*") {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Credentials", "false")
	} else {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	h.Set("Access-Control-Allow-Methods", strings.Join(r.AllowedMethods, ", "))
	if len(allowHeaders) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(allowHeaders, ", "))
	}
	// ETag is always exposed: a page uploading parts needs it to complete.
	expose := r.ExposeHeaders
	if !slices.ContainsFunc(expose, func(e string) bool { return strings.EqualFold(e, "ETag") }) {
		expose = append(slices.Clip(expose), "ETag")
	}
	h.Set("Access-Control-Expose-Headers", strings.Join(expose, ", "))
	if r.MaxAgeSeconds != nil {
		h.Set("Access-Control-Max-Age", strconv.Itoa(*r.MaxAgeSeconds))
	}
}

// bucketCORS returns the bucket's CORS configuration (nil: none).
func bucketCORS(b *stratov1.BucketInfo) (*corsConfiguration, error) {
	v := bucketAttr(b, attrCORS)
	if v == "" {
		return nil, nil
	}
	var c corsConfiguration
	if err := xml.Unmarshal([]byte(v), &c); err != nil {
		return nil, fmt.Errorf("s3: bucket's stored CORS configuration: %w", err)
	}
	return &c, nil
}

// bucketAttr returns one of a bucket's attributes ("": not set).
func bucketAttr(b *stratov1.BucketInfo, name string) string {
	for _, a := range b.GetAttributes() {
		if a.GetName() == name {
			return a.GetValue()
		}
	}
	return ""
}

// corsOf reads the CORS configuration of the request's bucket (nil: none)
// with the gateway's own credentials: a preflight carries none.
func (g *Gateway) corsOf(rq *request) (*corsConfiguration, error) {
	b, err := g.c.GetBucket(rq.ctx, g.volume, rq.bucket)
	if err != nil {
		return nil, fromClient(err, ErrNoSuchBucket)
	}
	return bucketCORS(b)
}

func (g *Gateway) getBucketCors(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	b, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	c, err := bucketCORS(b)
	if err != nil {
		return err
	}
	if c == nil {
		return ErrNoSuchCORSConfiguration
	}
	return rq.writeXML(http.StatusOK, corsOut{Rules: c.Rules})
}

// corsOut is a CORSConfiguration as the gateway answers it.
type corsOut struct {
	XMLName xml.Name   `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CORSConfiguration"`
	Rules   []corsRule `xml:"CORSRule"`
}

func (g *Gateway) putBucketCors(rq *request) error {
	var c corsConfiguration
	if err := rq.decodeXML(&c, maxCORSXML); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	out, err := xml.Marshal(c)
	if err != nil {
		return err
	}
	if len(out) > maxCORSStored {
		return errf(ErrInvalidRequest, "The CORS configuration is larger than %d bytes once encoded", maxCORSStored)
	}
	if err := g.setBucketAttr(rq, attrCORS, string(out)); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusOK)
}

func (g *Gateway) deleteBucketCors(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if err := g.setBucketAttr(rq, attrCORS, ""); err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// preflight answers a browser's OPTIONS request, which carries no
// credentials: from the bucket's CORS rules, read with the gateway's own.
func (g *Gateway) preflight(rq *request) error {
	rq.op = "PreflightCORS"
	h := rq.r.Header
	origin, method := h.Get("Origin"), h.Get("Access-Control-Request-Method")
	switch {
	case rq.bucket == "":
		return ErrMethodNotAllowed
	case origin == "":
		return errCORSNoOrigin
	case !corsMethods[method]:
		if method == "" {
			method = "null"
		}
		return s3err("BadRequest", 400, "Invalid Access-Control-Request-Method: "+method)
	}
	var headers []string
	for _, v := range h.Values("Access-Control-Request-Headers") {
		for _, raw := range strings.Split(v, ",") {
			f := strings.TrimSpace(raw)
			if f == "" {
				continue
			}
			if !validHeaderName(f, false) {
				return s3err("BadRequest", 400, fmt.Sprintf("Access-Control-Request-Headers \"%s\" contains invalid character.", raw))
			}
			headers = append(headers, strings.ToLower(f))
		}
	}
	c, err := g.corsOf(rq)
	if err != nil {
		return err
	}
	if c == nil {
		return errCORSNotEnabled
	}
	r := c.match(origin, method, headers)
	if r == nil {
		return errCORSForbidden
	}
	r.setHeaders(rq.w.Header(), origin, headers)
	return rq.writeEmpty(http.StatusOK)
}

// corsHeaders sets the Access-Control-* headers of a request that names an
// origin, when the bucket's rules allow it: before the request is served,
// so that its answer (an error too) carries them.
func (g *Gateway) corsHeaders(rq *request) {
	origin := rq.r.Header.Get("Origin")
	if origin == "" || rq.bucket == "" {
		return
	}
	c, err := g.corsOf(rq)
	if err != nil || c == nil {
		return
	}
	if r := c.match(origin, rq.r.Method, nil); r != nil {
		r.setHeaders(rq.w.Header(), origin, nil)
	}
}

// setBucketAttr sets (value "": removes) one of a bucket's attributes,
// keeping the others.
func (g *Gateway) setBucketAttr(rq *request, name, value string) error {
	return g.setBucketAttrs(rq, map[string]string{name: value})
}

// setBucketAttrs sets (a value "": removes) some of a bucket's attributes
// in one change, keeping the others.
func (g *Gateway) setBucketAttrs(rq *request, set map[string]string) error {
	b, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	m := attrs{}
	for _, a := range b.GetAttributes() {
		m[a.GetName()] = a.GetValue()
	}
	for name, value := range set {
		if value == "" {
			delete(m, name)
		} else {
			m[name] = value
		}
	}
	if err := g.c.SetAttributes(rq.ctx, g.volume, rq.bucket, "", 0, m.list()); err != nil {
		return fromClient(err, ErrNoSuchBucket)
	}
	return nil
}

// bucketCors serves GET, PUT and DELETE of ?cors.
func (g *Gateway) bucketCors(rq *request) error {
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetBucketCors"
		return g.getBucketCors(rq)
	case http.MethodPut:
		rq.op = "PutBucketCors"
		return g.putBucketCors(rq)
	default:
		rq.op = "DeleteBucketCors"
		return g.deleteBucketCors(rq)
	}
}
