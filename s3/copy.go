package s3

import (
	"crypto/md5"
	"encoding/xml"
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// CopyObject: a key copied from x-amz-copy-source under the copy-source
// conditions, its data read and written again through the gateway
// (checksummed with the algorithm asked for, else the source's), its
// metadata and tags copied or replaced as the directives say.

type copyObjectResult struct {
	XMLName      xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyObjectResult"`
	ETag         string
	LastModified string
	checksumFields
}

// copySource parses x-amz-copy-source ("bucket/key", URL-encoded, maybe
// with a leading '/' and "?versionId=..."). A source that cannot name an
// object is InvalidArgument, as AWS answers it, before anything is looked
// up.
func copySource(h string) (bucket, key, versionID string, err error) {
	src, ver, _ := strings.Cut(h, "?")
	if ver != "" {
		q, qerr := url.ParseQuery(ver)
		if qerr != nil || !q.Has("versionId") || len(q) != 1 || q.Get("versionId") == "" {
			return "", "", "", errf(ErrInvalidArgument, "Invalid version id specified")
		}
		versionID = q.Get("versionId")
	}
	bad := func(msg, value string) error {
		return withFields(errf(ErrInvalidArgument, "%s", msg), "ArgumentName", "x-amz-copy-source", "ArgumentValue", value)
	}
	src, uerr := url.PathUnescape(src)
	if uerr != nil || !utf8.ValidString(src) {
		return "", "", "", bad("Invalid copy source encoding", h)
	}
	src = strings.TrimPrefix(src, "/")
	bucket, key, _ = strings.Cut(src, "/")
	if !sourceBucketName(bucket) {
		return "", "", "", bad("Invalid copy source bucket name", h)
	}
	if key == "" || key == "." || climbsOut(key) {
		return "", "", "", bad("Invalid copy source object key", key)
	}
	return bucket, key, versionID, nil
}

// sourceBucketName says whether a copy source's bucket could be a bucket:
// S3's characters, and not an IP address (meta holds the whole rule).
func sourceBucketName(b string) bool {
	if b == "" || strings.Trim(b, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return false
	}
	_, err := netip.ParseAddr(b)
	return err != nil
}

// climbsOut says whether key, read as a path, climbs above its bucket
// ("..", "../x", "a/../../x").
func climbsOut(key string) bool {
	depth := 0
	for _, seg := range strings.Split(key, "/") {
		switch seg {
		case "..":
			if depth--; depth < 0 {
				return true
			}
		case ".", "":
		default:
			depth++
		}
	}
	return false
}

// checkCopyHeaders checks a copy's x-amz-copy-source and, of an
// UploadPartCopy (part), its x-amz-copy-source-range, once the bucket is
// known to exist (NoSuchBucket first, as AWS) but before the source or the
// upload is looked up. No x-amz-copy-source: nothing to check.
func (g *Gateway) checkCopyHeaders(rq *request, part bool) error {
	h := rq.r.Header
	src := h.Get("X-Amz-Copy-Source")
	if src == "" {
		return nil
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	if _, _, _, err := copySource(src); err != nil {
		return err
	}
	if cr := h.Get("X-Amz-Copy-Source-Range"); cr != "" && part {
		_, _, err := copyRange(cr)
		return err
	}
	return nil
}

// copyRange parses an UploadPartCopy's x-amz-copy-source-range, which AWS
// takes only as "bytes=first-last".
func copyRange(h string) (first, last int64, err error) {
	spec, ok := strings.CutPrefix(h, "bytes=")
	f, l, dash := strings.Cut(spec, "-")
	first, ferr := strconv.ParseInt(f, 10, 64)
	last, lerr := strconv.ParseInt(l, 10, 64)
	if !ok || !dash || ferr != nil || lerr != nil || first < 0 || last < first {
		return 0, 0, withFields(errf(ErrInvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"),
			"ArgumentName", "x-amz-copy-source-range", "ArgumentValue", h)
	}
	return first, last, nil
}

// openSource opens a copy's source (the version named, else the latest)
// and checks its conditions.
func (g *Gateway) openSource(rq *request) (*client.Reader, *stratov1.KeyInfo, attrs, error) {
	sb, sk, sv, err := copySource(rq.r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return nil, nil, nil, err
	}
	rd, err := g.c.OpenKeyVersion(rq.ctx, g.volume, sb, sk, client.KeyVersion{ID: sv})
	if err != nil {
		if sv != "" {
			return nil, nil, nil, versionError(err, sv)
		}
		if errors.Is(err, client.ErrIsADirectory) || errors.Is(err, client.ErrInvalid) {
			return nil, nil, nil, ErrNoSuchKey
		}
		return nil, nil, nil, fromClient(err, nil)
	}
	ki := rd.Info()
	if ki.GetDeleteMarker() {
		_ = rd.Close()
		return nil, nil, nil, errf(ErrInvalidRequest, "The source of a copy request may not specifically refer to a delete marker by version id.")
	}
	m := attrsOf(ki)
	if err := checkConditions(rq.r.Header, "X-Amz-Copy-Source-", etagOf(ki, m), time.UnixMilli(ki.GetModificationTimeUnixMs())); err != nil {
		_ = rd.Close()
		return nil, nil, nil, err
	}
	if v := ki.GetVersionId(); v != "" {
		rq.w.Header().Set("x-amz-copy-source-version-id", v)
	}
	return rd, ki, m, nil
}

// copyObject copies a key (its data streamed through the gateway).
func (g *Gateway) copyObject(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	if a := strings.ToLower(rq.r.Header.Get("X-Amz-Checksum-Algorithm")); a != "" && !validAlgorithm(a) {
		return errUnsupportedAlgorithm
	}
	if err := g.checkCopyHeaders(rq, false); err != nil {
		return err
	}
	rd, ki, srcAttrs, err := g.openSource(rq)
	if err != nil {
		return err
	}
	defer func() { _ = rd.Close() }()
	if ki.GetSize() > maxObjectSize {
		return errf(ErrInvalidRequest, "The specified copy source is larger than the maximum allowable size for a copy source: 5368709120")
	}
	directive := rq.r.Header.Get("X-Amz-Metadata-Directive")
	tagDirective := rq.r.Header.Get("X-Amz-Tagging-Directive")
	reqAttrs, err := userAttrs(rq.r)
	if err != nil {
		return err
	}
	if rq.lock, err = g.lockHeaders(rq); err != nil {
		return err
	}
	m := attrs{}
	switch directive {
	case "", "COPY":
		for k, v := range srcAttrs {
			if k == "content-type" || strings.HasPrefix(k, metaPrefix) || slicesContains(storedHeaders, k) {
				m[k] = v
			}
		}
		// The website redirect is never copied (AWS): the copy has the
		// request's, if any.
		delete(m, redirectAttr)
		if v := reqAttrs[redirectAttr]; v != "" {
			m[redirectAttr] = v
		}
	case "REPLACE":
		for k, v := range reqAttrs {
			if k != attrTagging {
				m[k] = v
			}
		}
	default:
		return errf(ErrInvalidArgument, "Unknown metadata directive.")
	}
	switch tagDirective {
	case "", "COPY":
		if t := srcAttrs[attrTagging]; t != "" {
			m[attrTagging] = t
		}
	case "REPLACE":
		if t := reqAttrs[attrTagging]; t != "" {
			m[attrTagging] = t
		}
	default:
		return errf(ErrInvalidArgument, "Unknown tagging directive.")
	}
	sb, sk, sv, _ := copySource(rq.r.Header.Get("X-Amz-Copy-Source"))
	if sb == rq.bucket && sk == rq.key && sv == "" && directive != "REPLACE" && tagDirective != "REPLACE" {
		return errf(ErrInvalidRequest, "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.")
	}
	// The copy is checksummed with the algorithm asked for, else the
	// source's.
	algo := strings.ToLower(rq.r.Header.Get("X-Amz-Checksum-Algorithm"))
	if algo == "" {
		for _, a := range checksumAlgorithms {
			if v := srcAttrs[checksumHeader(a)]; v != "" && !strings.Contains(v, "-") {
				algo = a
			}
		}
	}
	if algo == "" {
		algo = defaultAlgorithm
	}
	checks := &payloadChecks{md5: md5.New(), algo: algo, sum: newChecksum(algo)}
	src := &body{r: rd, checks: checks, size: ki.GetSize()}
	etag, err := g.writeKey(rq, g.volume, rq.bucket, rq.key, src, ki.GetSize(), m)
	if err != nil {
		return err
	}
	res := copyObjectResult{ETag: etag, LastModified: g.opts.Now().UTC().Format(timeFormat)}
	if a, v := checks.checksum(); a != "" {
		res.set(a, v)
	}
	return rq.writeXML(200, res)
}
