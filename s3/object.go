package s3

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Attribute names the gateway stores with a key (docs/s3.md): the HTTP
// header names, lower case.
const (
	attrETag     = "etag"
	attrTagging  = "x-amz-tagging"
	attrParts    = "x-amz-mp-parts"      // the part count of a multipart object
	attrPartSize = "x-amz-mp-part-sizes" // their sizes, comma-separated
	metaPrefix   = "x-amz-meta-"
)

// redirectAttr is the object's website redirect, which a copy does not
// keep.
const redirectAttr = "x-amz-website-redirect-location"

// storedHeaders are the request headers stored with an object and returned
// with it.
var storedHeaders = []string{"content-type", "content-encoding", "content-disposition", "content-language", "cache-control", "expires", "x-amz-website-redirect-location"}

// maxUserMetadata is AWS's limit of the x-amz-meta-* headers.
const maxUserMetadata = 2 << 10

// maxObjectSize is the largest single PUT (AWS's: 5 GiB).
const maxObjectSize = 5 << 30

type attrs map[string]string

func attrsOf(ki *stratov1.KeyInfo) attrs {
	m := make(attrs, len(ki.GetAttributes()))
	for _, a := range ki.GetAttributes() {
		m[a.Name] = a.Value
	}
	return m
}

func (m attrs) list() []*stratov1.KeyAttribute {
	out := make([]*stratov1.KeyAttribute, 0, len(m))
	for k, v := range m {
		out = append(out, &stratov1.KeyAttribute{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// userAttrs reads the stored headers, user metadata and tags of a request.
func userAttrs(r *http.Request) (attrs, error) {
	m := attrs{}
	for _, h := range storedHeaders {
		if v := r.Header.Get(h); v != "" {
			m[h] = v
		}
	}
	// aws-chunked is the request's transfer coding, not the object's.
	if ce := m["content-encoding"]; ce != "" {
		var keep []string
		for _, c := range strings.Split(ce, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "aws-chunked") {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			delete(m, "content-encoding")
		} else {
			m["content-encoding"] = strings.Join(keep, ",")
		}
	}
	size := 0
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, metaPrefix) && len(lk) > len(metaPrefix) {
			v := strings.Join(vs, ",")
			m[lk] = v
			size += len(lk) - len(metaPrefix) + len(v)
		}
	}
	if size > maxUserMetadata {
		return nil, ErrMetadataTooLarge
	}
	if sc := r.Header.Get("X-Amz-Storage-Class"); sc != "" && sc != "STANDARD" {
		return nil, errf(ErrInvalidStorageClass, "strato stores every object as STANDARD, not %s", sc)
	}
	if loc := r.Header.Get("X-Amz-Website-Redirect-Location"); loc != "" &&
		!strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "http://") && !strings.HasPrefix(loc, "https://") {
		return nil, ErrInvalidRedirectLocation
	}
	if t := r.Header.Get("X-Amz-Tagging"); t != "" {
		tags, err := parseTagging(t)
		if err != nil {
			return nil, err
		}
		m[attrTagging] = tags.Encode()
	}
	return m, nil
}

// parseTagging parses and checks a tag set given as a query string (the
// x-amz-tagging header): "k1=v1&k2", URL-encoded, no key twice.
func parseTagging(s string) (url.Values, error) {
	bad := errf(ErrInvalidArgument, "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
	v := url.Values{}
	for _, part := range strings.Split(s, "&") {
		if part == "" {
			continue
		}
		ek, ev, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(ek)
		val, err2 := url.QueryUnescape(ev)
		if err1 != nil || err2 != nil || k == "" || v.Has(k) {
			return nil, bad
		}
		v.Set(k, val)
	}
	if len(v) > maxObjectTags {
		return nil, tooManyTags(maxObjectTags)
	}
	for k, vs := range v {
		if err := checkTag(k, vs[0]); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// etagOf is the key's ETag: the one the gateway stored, or, for keys
// written by other clients, one made of its identity and size.
func etagOf(ki *stratov1.KeyInfo, m attrs) string {
	if e := m[attrETag]; e != "" {
		return e
	}
	sum := md5.Sum(fmt.Appendf(nil, "%d/%d/%d", ki.GetObjectId(), ki.GetSize(), ki.GetModificationTimeUnixMs()))
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// isDirKey: a key ending in '/', which on an FSO bucket names a directory.
func isDirKey(key string) bool { return strings.HasSuffix(key, "/") }

func (g *Gateway) fsPath(bucket, key string) string { return "/" + g.volume + "/" + bucket + "/" + key }

// putObject streams the body into a new key, committed only when the body
// was read whole and every digest it came with matched.
func (g *Gateway) putObject(rq *request) error {
	b := rq.body
	if b.size < 0 && rq.r.ContentLength < 0 && len(rq.r.TransferEncoding) == 0 {
		return ErrMissingContentLength
	}
	if b.size > maxObjectSize {
		return ErrEntityTooLarge
	}
	m, err := userAttrs(rq.r)
	if err != nil {
		return err
	}
	if rq.cond, err = g.putConditions(rq); err != nil {
		return err
	}
	if rq.lock, err = g.lockHeaders(rq); err != nil {
		return err
	}
	if isDirKey(rq.key) {
		bk, err := g.getBucket(rq)
		if err != nil {
			return err
		}
		if bk.Layout == stratov1.BucketLayout_LAYOUT_FSO {
			if b.size != 0 {
				return errf(ErrInvalidRequest, "a key ending in '/' is a directory of this file-system bucket and holds no data")
			}
			if err := b.drain(); err != nil {
				return err
			}
			if err := g.c.Mkdirs(rq.ctx, g.fsPath(rq.bucket, rq.key)); err != nil {
				return fromClient(err, nil)
			}
			rq.w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
			return rq.writeEmpty(200)
		}
	}
	if b.checks.algo == "" {
		// No checksum sent: the object gets S3's default.
		b.checks.algo, b.checks.sum = defaultAlgorithm, newChecksum(defaultAlgorithm)
	}
	etag, err := g.writeKey(rq, g.volume, rq.bucket, rq.key, b, b.size, m)
	if err != nil {
		return err
	}
	rq.w.Header().Set("ETag", etag)
	rq.w.Header().Set("x-amz-object-size", strconv.FormatInt(b.n, 10))
	if algo, v := b.checks.checksum(); algo != "" {
		rq.w.Header().Set(checksumHeader(algo), v)
		rq.w.Header().Set("x-amz-checksum-type", "FULL_OBJECT")
	}
	return rq.writeEmpty(200)
}

// writeKey copies src into a key and commits it with m plus the ETag (MD5)
// and checksum of the body; on any error the key is left uncommitted.
func (g *Gateway) writeKey(rq *request, volume, bucket, key string, b *body, sizeHint int64, m attrs) (string, error) {
	w, err := g.c.CreateKey(rq.ctx, volume, bucket, key, client.WriteOptions{SizeHint: max(sizeHint, 0)})
	if err != nil {
		return "", fromClient(err, nil)
	}
	if _, err := io.Copy(w, b); err != nil {
		w.Abort()
		return "", fromClient(err, nil)
	}
	etag := `"` + hex.EncodeToString(b.checks.md5.Sum(nil)) + `"`
	m[attrETag] = etag
	if algo, v := b.checks.checksum(); algo != "" {
		m[checksumHeader(algo)] = v
	}
	if d := b.checks.def; d != nil {
		m[attrPartDefault] = base64.StdEncoding.EncodeToString(d.Sum(nil))
	}
	w.SetAttributes(m.list())
	w.SetObjectLock(rq.lock)
	w.SetCondition(rq.cond)
	if err := w.Close(); err != nil {
		return "", g.conditionFailed(rq, rq.cond, err)
	}
	if v := w.VersionID(); v != "" {
		rq.w.Header().Set(headerVersionID, v)
	}
	return etag, nil
}

// parseRange parses a single "bytes=" range of a key of size bytes; ok is
// false when the header asks for none (absent, or several ranges, which S3
// ignores).
func parseRange(h string, size int64) (start, length int64, ok bool, err error) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if h == "" || !found || strings.ContainsAny(spec, ", ") {
		return 0, 0, false, nil // not a range S3 serves: the whole object
	}
	a, b, dash := strings.Cut(spec, "-")
	if !dash {
		return 0, 0, false, nil
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, nil
		}
		if n == 0 {
			return 0, 0, false, ErrInvalidRange
		}
		if size == 0 {
			return 0, 0, false, nil // AWS: the whole (empty) object
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	{
		s, err := strconv.ParseInt(a, 10, 64)
		if err != nil || s < 0 {
			return 0, 0, false, nil
		}
		end := size - 1
		if b != "" {
			e, err := strconv.ParseInt(b, 10, 64)
			if err != nil || e < s {
				return 0, 0, false, nil
			}
			end = min(e, size-1)
		}
		if s >= size {
			return 0, 0, false, ErrInvalidRange
		}
		return s, end - s + 1, true, nil
	}
}

// objectHeaders sets the headers describing a key.
func objectHeaders(h http.Header, ki *stratov1.KeyInfo, m attrs, etag string) {
	ct := m["content-type"]
	if ct == "" {
		ct = "binary/octet-stream"
	}
	h.Set("Content-Type", ct)
	for _, sh := range storedHeaders[1:] {
		if v := m[sh]; v != "" {
			h.Set(sh, v)
		}
	}
	for k, v := range m {
		if strings.HasPrefix(k, metaPrefix) {
			h[k] = []string{v} // lower case, as AWS sends them (boto3 keeps the case it gets)
		}
	}
	if t := m[attrTagging]; t != "" {
		if v, err := url.ParseQuery(t); err == nil {
			h.Set("x-amz-tagging-count", strconv.Itoa(len(v)))
		}
	}
	h.Set("ETag", etag)
	h.Set("Last-Modified", time.UnixMilli(ki.GetModificationTimeUnixMs()).UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	h.Set("x-amz-storage-class", "STANDARD")
}

// responseOverrides are the response-* query parameters of a GET.
var responseOverrides = map[string]string{
	"response-content-type": "Content-Type", "response-content-language": "Content-Language",
	"response-expires": "Expires", "response-cache-control": "Cache-Control",
	"response-content-disposition": "Content-Disposition", "response-content-encoding": "Content-Encoding",
}

// partRange is where part n of a multipart object lies.
// errInvalidPartNumber: a part the object does not have.
var errInvalidPartNumber = s3err("InvalidPartNumber", 416, "The requested partnumber is not satisfiable.")

func partRange(m attrs, n int, size int64) (start, length int64, count int, err error) {
	parts, _ := strconv.Atoi(m[attrParts])
	if parts == 0 {
		if n == 1 {
			return 0, size, 1, nil
		}
		return 0, 0, 0, errInvalidPartNumber
	}
	if n > parts {
		return 0, 0, 0, errInvalidPartNumber
	}
	sizes := strings.Split(m[attrPartSize], ",")
	if len(sizes) != parts {
		return 0, 0, 0, errf(ErrNotImplemented, "this object's part sizes are not recorded")
	}
	for i := 0; i < n; i++ {
		s, _ := strconv.ParseInt(sizes[i], 10, 64)
		if i == n-1 {
			return start, s, parts, nil
		}
		start += s
	}
	return 0, 0, 0, errInvalidPartNumber
}

// keyError is the S3 answer to a failed read of a key: a path that is a
// directory, runs through a file, or is no valid path holds no key.
func keyError(err error) error {
	if errors.Is(err, client.ErrIsADirectory) || errors.Is(err, client.ErrNotADirectory) || errors.Is(err, client.ErrInvalid) {
		return ErrNoSuchKey
	}
	return fromClient(err, nil)
}

// getObject serves GetObject and HeadObject.
func (g *Gateway) getObject(rq *request, head bool) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	q := rq.r.URL.Query()
	part := 0
	if pn := q.Get("partNumber"); pn != "" {
		n, err := strconv.Atoi(pn)
		if err != nil || n < 1 || n > 10000 {
			return withFields(errf(ErrInvalidArgument, "Part number must be an integer between 1 and 10000, inclusive."),
				"ArgumentName", "partNumber", "ArgumentValue", pn)
		}
		if rq.r.Header.Get("Range") != "" {
			return errf(ErrInvalidRequest, "Cannot specify both Range header and partNumber query parameter")
		}
		part = n
	}
	if isDirKey(rq.key) {
		if done, err := g.getDirectory(rq, head); done || err != nil {
			return err
		}
	}
	vid, err := versionParam(rq)
	if err != nil {
		return err
	}
	rd, err := g.c.OpenKeyVersion(rq.ctx, g.volume, rq.bucket, rq.key, client.KeyVersion{ID: vid, DeleteMarkers: true})
	if err != nil {
		return versionError(err, vid)
	}
	defer func() { _ = rd.Close() }()
	ki := rd.Info()
	h := rq.w.Header()
	if ki.GetDeleteMarker() {
		return markerError(h, ki, vid)
	}
	setVersion(h, ki)
	setLockHeaders(h, ki.GetObjectLock())
	m := attrsOf(ki)
	etag := etagOf(ki, m)
	size := ki.GetSize()
	mtime := time.UnixMilli(ki.GetModificationTimeUnixMs())
	if err := checkConditions(rq.r.Header, "", etag, mtime); err != nil {
		if errors.Is(err, errNotModified) {
			h.Set("ETag", etag)
			h.Set("Last-Modified", mtime.UTC().Format(http.TimeFormat))
		}
		return err
	}
	start, length, ranged := int64(0), size, false
	if part > 0 {
		var count int
		if start, length, count, err = partRange(m, part, size); err != nil {
			return err
		}
		ranged = size > 0
		if m[attrParts] != "" {
			h.Set("x-amz-mp-parts-count", strconv.Itoa(count))
		}
	} else if s, l, ok, err := parseRange(rq.r.Header.Get("Range"), size); err != nil {
		h.Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		return err
	} else if ok {
		start, length, ranged = s, l, true
	}
	objectHeaders(h, ki, m, etag)
	if strings.EqualFold(rq.r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") && !ranged {
		for _, algo := range checksumAlgorithms {
			if v := m[checksumHeader(algo)]; v != "" {
				h.Set(checksumHeader(algo), v)
				if strings.Contains(v, "-") {
					h.Set("x-amz-checksum-type", "COMPOSITE")
				} else {
					h.Set("x-amz-checksum-type", "FULL_OBJECT")
				}
			}
		}
	}
	for p, hn := range responseOverrides {
		if v := q.Get(p); v != "" {
			h.Set(hn, v)
		}
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	h.Set("x-amz-request-id", rq.id)
	status := http.StatusOK
	if ranged {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, start+length-1, size))
	}
	rq.status = status
	if head {
		rq.w.WriteHeader(status)
		return nil
	}
	if start > 0 {
		if _, err := rd.Seek(start, io.SeekStart); err != nil {
			return fromClient(err, nil)
		}
	}
	rq.w.WriteHeader(status)
	n, err := rd.CopyTo(rq.w, length)
	rq.out += n
	if err != nil {
		// The status is sent: all that is left is to cut the response short.
		g.opts.Logger.Warn("s3: GET cut short", "bucket", rq.bucket, "key", rq.key, "at", start+n, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// getDirectory answers a GET or HEAD of "dir/" on an FSO bucket: an empty
// object when the directory exists (done), else not done.
func (g *Gateway) getDirectory(rq *request, head bool) (done bool, err error) {
	bk, err := g.getBucket(rq)
	if err != nil {
		return true, err
	}
	if bk.Layout != stratov1.BucketLayout_LAYOUT_FSO {
		return false, nil
	}
	st, err := g.c.Stat(rq.ctx, g.fsPath(rq.bucket, rq.key))
	if err != nil || !st.IsDirectory {
		return true, ErrNoSuchKey
	}
	h := rq.w.Header()
	h.Set("Content-Type", "application/x-directory")
	h.Set("Content-Length", "0")
	h.Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	h.Set("Last-Modified", time.UnixMilli(st.ModificationTimeUnixMs).UTC().Format(http.TimeFormat))
	return true, rq.writeEmpty(200)
}

// deleteKey deletes a key (on an FSO bucket, "dir/" deletes an empty
// directory), or, with versionID, that version of it; a key or version
// that does not exist is no error (S3's rule). The reply names the version
// deleted or the delete marker made (nil when there is none).
func (g *Gateway) deleteKey(rq *request, key, versionID string, ifObject uint64) (*stratov1.DeleteKeyResponse, error) {
	var err error
	if isDirKey(key) && versionID == "" {
		bk, berr := g.getBucket(rq)
		if berr != nil {
			return nil, berr
		}
		if bk.Layout == stratov1.BucketLayout_LAYOUT_FSO {
			st, serr := g.c.Stat(rq.ctx, g.fsPath(rq.bucket, key))
			if serr != nil || !st.IsDirectory {
				return nil, nil
			}
			err = g.c.Delete(rq.ctx, g.fsPath(rq.bucket, key), false)
			if errors.Is(err, client.ErrDirectoryNotEmpty) {
				return nil, nil // its keys keep it; S3 has no directories to delete
			}
			if errors.Is(err, client.ErrNotFound) {
				return nil, nil
			}
			return nil, fromClient(err, nil)
		}
	}
	res, err := g.c.DeleteKeyWith(rq.ctx, &stratov1.DeleteKeyRequest{Volume: g.volume, Bucket: rq.bucket, Key: key,
		VersionId: versionID, BypassGovernance: bypass(rq), IfObjectId: ifObject})
	if ifObject != 0 && errors.Is(err, client.ErrPrecondition) && !errors.Is(err, client.ErrObjectLocked) {
		return nil, ErrPreconditionFailed // replaced since deleteConditions looked
	}
	if errors.Is(err, client.ErrBucketNotFound) || errors.Is(err, client.ErrVolumeNotFound) {
		return nil, ErrNoSuchBucket
	}
	if errors.Is(err, client.ErrObjectLocked) {
		return nil, ErrObjectLocked
	}
	if versionID != "" {
		switch {
		case errors.Is(err, client.ErrNotFound), errors.Is(err, client.ErrInvalid) && foreignVersionID(versionID):
			return &stratov1.DeleteKeyResponse{VersionId: versionID}, nil
		case err != nil:
			return nil, versionError(err, versionID)
		}
		return res, nil
	}
	if err == nil || errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrInvalid) ||
		errors.Is(err, client.ErrIsADirectory) || errors.Is(err, client.ErrNotADirectory) || errors.Is(err, client.ErrDirectoryNotEmpty) {
		return res, nil
	}
	return nil, fromClient(err, nil)
}

func (g *Gateway) deleteObject(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	vid, err := versionParam(rq)
	if err != nil {
		return err
	}
	ifObject, err := g.deleteConditions(rq, vid)
	if err != nil {
		return err
	}
	if g.afterDeleteCheck != nil && ifObject != 0 {
		g.afterDeleteCheck()
	}
	res, err := g.deleteKey(rq, rq.key, vid, ifObject)
	if err != nil {
		return err
	}
	if res != nil {
		setVersion(rq.w.Header(), &stratov1.KeyInfo{VersionId: res.VersionId, DeleteMarker: res.DeleteMarker})
	}
	return rq.writeEmpty(http.StatusNoContent)
}

type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool
	Objects []struct {
		Key       string
		VersionID string `xml:"VersionId"`
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ DeleteResult"`
	Deleted []deletedObject `xml:"Deleted"`
	Errors  []deleteError   `xml:"Error"`
}

type deletedObject struct {
	Key                   string
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          bool   `xml:",omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type deleteError struct {
	Key       string
	VersionID string `xml:"VersionId,omitempty"`
	Code      string
	Message   string
}

// deleteObjects deletes up to 1,000 keys or versions named in the body.
func (g *Gateway) deleteObjects(rq *request) error {
	var req deleteRequest
	if err := rq.decodeXML(&req, 2<<20); err != nil {
		return err
	}
	if len(req.Objects) > 1000 {
		return errf(ErrMalformedXML, "at most 1000 keys may be deleted at once")
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	res := deleteResult{}
	for _, o := range req.Objects {
		var r *stratov1.DeleteKeyResponse
		var err error
		if o.Key == "" {
			err = ErrInvalidObjectName
		} else {
			r, err = g.deleteOneOf(rq, o.Key, o.VersionID)
		}
		if err != nil {
			e := fromClient(err, nil)
			res.Errors = append(res.Errors, deleteError{Key: o.Key, VersionID: o.VersionID, Code: e.Code, Message: e.Message})
			continue
		}
		if req.Quiet {
			continue
		}
		d := deletedObject{Key: o.Key, VersionID: o.VersionID}
		if r != nil && r.DeleteMarker {
			d.DeleteMarker, d.DeleteMarkerVersionID = true, r.VersionId
		}
		res.Deleted = append(res.Deleted, d)
	}
	return rq.writeXML(200, res)
}

// checksumFields are the checksum elements of S3's XML results.
type checksumFields struct {
	ChecksumCRC32     string `xml:",omitempty"`
	ChecksumCRC32C    string `xml:",omitempty"`
	ChecksumCRC64NVME string `xml:",omitempty"`
	ChecksumSHA1      string `xml:",omitempty"`
	ChecksumSHA256    string `xml:",omitempty"`
	ChecksumSHA512    string `xml:",omitempty"`
	ChecksumMD5       string `xml:",omitempty"`
	ChecksumXXHASH64  string `xml:",omitempty"`
	ChecksumXXHASH3   string `xml:",omitempty"`
	ChecksumXXHASH128 string `xml:",omitempty"`
}

func (f *checksumFields) set(algo, v string) {
	if p := f.field(algo); p != nil {
		*p = v
	}
}

// field is algo's element (nil: none).
func (f *checksumFields) field(algo string) *string {
	return map[string]*string{"crc32": &f.ChecksumCRC32, "crc32c": &f.ChecksumCRC32C, "crc64nvme": &f.ChecksumCRC64NVME,
		"sha1": &f.ChecksumSHA1, "sha256": &f.ChecksumSHA256, "sha512": &f.ChecksumSHA512, "md5": &f.ChecksumMD5,
		"xxhash64": &f.ChecksumXXHASH64, "xxhash3": &f.ChecksumXXHASH3, "xxhash128": &f.ChecksumXXHASH128}[algo]
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
