package s3

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Multipart uploads live in Options.MultipartVolume, in a bucket named as
// the target bucket (made on first use with the target's replication and
// checksums, so that its keys' blocks can become the target key's): the
// upload's marker is the key UPLOADID, holding the target key's name and
// metadata as attributes; part N is the key UPLOADID/NNNNN. Complete makes
// the target key from the parts' blocks with one metadata operation
// (client.ComposeKey), which deletes the parts; Abort deletes them.
//
// The object a Complete makes carries its upload's ID (attrUploadID), so
// that a retried Complete, whose first attempt succeeded but whose answer
// the client never got, is answered 200 with that object's ETag as AWS
// does, from any gateway and after a restart or a meta failover: the
// memory is the object itself, kept (through Raft) for as long as the key
// is that object, and gone with it when the key is overwritten or deleted.

const (
	attrUploadKey  = "x-strato-upload-key"
	attrUploadAlgo = "x-strato-upload-checksum-algorithm"
	attrUploadID   = "x-strato-upload-id" // of a completed object: the upload it was made by
	maxParts       = 10000
)

func newUploadID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

func partKey(uploadID string, n int) string { return fmt.Sprintf("%s/%05d", uploadID, n) }

// partsBucket makes sure the parts bucket of a target bucket exists, with
// the target's redundancy, checksums and block size: Complete makes the
// key from the parts' blocks, which must be stored as the key is.
func (g *Gateway) partsBucket(ctx context.Context, bk *stratov1.BucketInfo) error {
	g.mu.Lock()
	ok := g.partBkts[bk.Name]
	g.mu.Unlock()
	if ok {
		return nil
	}
	_, err := g.c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: g.opts.MultipartVolume, Name: bk.Name,
		Layout: stratov1.BucketLayout_LAYOUT_OBS, Replication: bk.Replication, ErasureCoding: bk.ErasureCoding, ChecksumType: bk.ChecksumType,
		BytesPerChecksum: bk.BytesPerChecksum, BlockSize: bk.BlockSize, Owner: "s3"})
	if err != nil && !errors.Is(err, client.ErrExists) {
		return fromClient(err, nil)
	}
	g.mu.Lock()
	g.partBkts[bk.Name] = true
	g.mu.Unlock()
	return nil
}

// dropUploads deletes the parts bucket of a deleted bucket with every
// upload in it (markers and parts).
func (g *Gateway) dropUploads(ctx context.Context, bucket string) error {
	keys, err := g.listAll(ctx, bucket, "", "")
	if errors.Is(err, client.ErrBucketNotFound) || errors.Is(err, client.ErrNotFound) {
		err = nil // no upload was ever made in it
	}
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := g.c.DeleteKey(ctx, g.opts.MultipartVolume, bucket, k.Name); err != nil && !errors.Is(err, client.ErrNotFound) {
			return err
		}
	}
	err = g.c.DeleteBucket(ctx, g.opts.MultipartVolume, bucket)
	if err != nil && !errors.Is(err, client.ErrNotFound) {
		return err
	}
	g.mu.Lock()
	delete(g.partBkts, bucket)
	g.mu.Unlock()
	return nil
}

type initiateMultipartUploadResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ InitiateMultipartUploadResult"`
	Bucket   string
	Key      string
	UploadID string `xml:"UploadId"`
}

func (g *Gateway) createUpload(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	m, err := userAttrs(rq.r)
	if err != nil {
		return err
	}
	sum, err := createChecksum(rq.r.Header.Get("X-Amz-Checksum-Algorithm"), rq.r.Header.Get("X-Amz-Checksum-Type"), m)
	if err != nil {
		return err
	}
	m[attrUploadKey] = rq.key
	lock, err := g.lockHeaders(rq)
	if err != nil {
		return err
	}
	uploadLockAttrs(m, lock)
	if v := uploadACL(rq.r.Header); v != "" {
		m[attrUploadACL] = v // set on the object by withUploadACL
	}
	if err := g.partsBucket(rq.ctx, bk); err != nil {
		return err
	}
	id := newUploadID()
	w, err := g.c.CreateKey(rq.ctx, g.opts.MultipartVolume, rq.bucket, id, client.WriteOptions{})
	if err != nil {
		return fromClient(err, nil)
	}
	w.SetAttributes(m.list())
	if err := w.Close(); err != nil {
		return fromClient(err, nil)
	}
	if sum.algo != "" {
		rq.w.Header().Set("x-amz-checksum-algorithm", upperAlgo(sum.algo))
		rq.w.Header().Set("x-amz-checksum-type", sum.typ)
	}
	return rq.writeXML(200, initiateMultipartUploadResult{Bucket: rq.bucket, Key: rq.key, UploadID: id})
}

// upload looks up an upload's marker; it must be for rq.key.
func (g *Gateway) upload(rq *request, id string) (*stratov1.KeyInfo, attrs, error) {
	noUpload := func() error {
		if _, err := g.getBucket(rq); err != nil {
			return err // NoSuchBucket first, as AWS
		}
		return ErrNoSuchUpload
	}
	if !validUploadID(id) {
		return nil, nil, noUpload()
	}
	ki, err := g.c.LookupKey(rq.ctx, g.opts.MultipartVolume, rq.bucket, id)
	if err != nil {
		if errors.Is(err, client.ErrNotFound) {
			return nil, nil, noUpload()
		}
		return nil, nil, fromClient(err, nil)
	}
	m := attrsOf(ki)
	if m[attrUploadKey] != rq.key {
		return nil, nil, ErrNoSuchUpload
	}
	return ki, m, nil
}

type copyPartResult struct {
	XMLName      xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyPartResult"`
	ETag         string
	LastModified string
	checksumFields
}

func (g *Gateway) uploadPart(rq *request) error {
	q := rq.r.URL.Query()
	n, err := strconv.Atoi(q.Get("partNumber"))
	if err != nil || n < 1 || n > maxParts {
		return errf(ErrInvalidArgument, "Part number must be an integer between 1 and 10000, inclusive.")
	}
	if err := g.checkCopyHeaders(rq, true); err != nil {
		return err
	}
	_, m, err := g.upload(rq, q.Get("uploadId"))
	if err != nil {
		return err
	}
	if rq.r.Header.Get("X-Amz-Copy-Source") == "" {
		b := rq.body
		if b.size < 0 && rq.r.ContentLength < 0 && len(rq.r.TransferEncoding) == 0 {
			return ErrMissingContentLength
		}
		if b.size > maxObjectSize {
			return ErrEntityTooLarge
		}
		if err := uploadChecksumOf(m).partChecks(b.checks); err != nil {
			return err
		}
		etag, err := g.writeKey(rq, g.opts.MultipartVolume, rq.bucket, partKey(q.Get("uploadId"), n), b, b.size, attrs{})
		if err != nil {
			return err
		}
		rq.w.Header().Set("ETag", etag)
		if algo, v := b.checks.checksum(); algo != "" {
			rq.w.Header().Set(checksumHeader(algo), v)
		}
		return rq.writeEmpty(200)
	}
	if err := rq.body.drain(); err != nil {
		return err
	}
	rd, ki, _, err := g.openSource(rq)
	if err != nil {
		return err
	}
	defer func() { _ = rd.Close() }()
	start, length := int64(0), ki.GetSize()
	if cr := rq.r.Header.Get("X-Amz-Copy-Source-Range"); cr != "" {
		first, last, _ := copyRange(cr) // checked by checkCopyHeaders
		if last >= ki.GetSize() {
			size := strconv.FormatInt(ki.GetSize(), 10)
			return withFields(errf(ErrInvalidArgument, "Range specified is not valid for source object of size: %s", size),
				"ArgumentName", "x-amz-copy-source-range", "ArgumentValue", size)
		}
		start, length = first, last-first+1
		if _, err := rd.Seek(start, io.SeekStart); err != nil {
			return fromClient(err, nil)
		}
	}
	if length > maxObjectSize {
		return ErrEntityTooLarge
	}
	// A copied part gets the upload's checksum; of an upload without an
	// algorithm, only the hidden default its object's CRC is made of.
	checks := &payloadChecks{md5: md5.New(), def: newChecksum(defaultAlgorithm)}
	if a := m[attrUploadAlgo]; a != "" {
		checks.algo, checks.sum, checks.def = a, newChecksum(a), nil
	}
	src := &body{r: io.LimitReader(rd, length), checks: checks, size: length}
	etag, err := g.writeKey(rq, g.opts.MultipartVolume, rq.bucket, partKey(q.Get("uploadId"), n), src, length, attrs{})
	if err != nil {
		return err
	}
	res := copyPartResult{ETag: etag, LastModified: g.opts.Now().UTC().Format(timeFormat)}
	if a, v := checks.checksum(); a != "" {
		res.set(a, v)
	}
	return rq.writeXML(200, res)
}

type completeRequest struct {
	XMLName xml.Name       `xml:"CompleteMultipartUpload"`
	Parts   []completePart `xml:"Part"`
}

type completePart struct {
	PartNumber int
	ETag       string
	checksumFields
}

// multipartETag is the ETag of the object made of parts: the MD5 of their
// MD5s, and their count.
func multipartETag(parts []completePart) string {
	h := md5.New()
	for _, p := range parts {
		raw, _ := hex.DecodeString(normETag(p.ETag))
		h.Write(raw)
	}
	return fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(h.Sum(nil)), len(parts))
}

type completeResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUploadResult"`
	Location string
	Bucket   string
	Key      string
	ETag     string
	checksumFields
	ChecksumType string `xml:",omitempty"`
}

// listAll lists every key of the multipart bucket under prefix.
func (g *Gateway) listAll(ctx context.Context, bucket, prefix, delimiter string) ([]*stratov1.KeyInfo, error) {
	var all []*stratov1.KeyInfo
	after := ""
	for {
		resp, err := g.c.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: g.opts.MultipartVolume, Bucket: bucket,
			Prefix: prefix, StartAfter: after, Delimiter: delimiter})
		if err != nil {
			return nil, err
		}
		all = append(all, resp.Keys...)
		if !resp.Truncated || resp.NextStartAfter == "" {
			return all, nil
		}
		after = resp.NextStartAfter
	}
}

func normETag(e string) string { return strings.Trim(strings.TrimSpace(e), `"`) }

// errInvalidPartComplete is InvalidPart as CompleteMultipartUpload words it.
var errInvalidPartComplete = errf(ErrInvalidPart, "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")

func (g *Gateway) completeUpload(rq *request) error {
	var req completeRequest
	if err := rq.decodeXML(&req, 4<<20); err != nil {
		return err
	}
	id := rq.r.URL.Query().Get("uploadId")
	_, m, err := g.upload(rq, id)
	if errors.Is(err, ErrNoSuchUpload) {
		return g.completedBefore(rq, id, req.Parts, err)
	} else if err != nil {
		return err
	}
	if len(req.Parts) == 0 {
		return ErrMalformedXML
	}
	cond, err := g.putConditions(rq)
	if err != nil {
		return err
	}
	sum := uploadChecksumOf(m)
	if err := sum.checkCompleteHeaders(rq.r.Header); err != nil {
		return err
	}
	for i, p := range req.Parts {
		switch {
		case p.ETag == "" || p.PartNumber == 0: // an element missing
			return ErrMalformedXML
		case p.PartNumber < 1:
			return withFields(errf(ErrInvalidArgument, "PartNumber must be >= 1"), "ArgumentName", "PartNumber", "ArgumentValue", strconv.Itoa(p.PartNumber))
		case p.PartNumber > maxParts:
			return errInvalidPartComplete
		}
		if i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
			return ErrInvalidPartOrder
		}
	}
	keys, err := g.listAll(rq.ctx, rq.bucket, id+"/", "")
	if err != nil {
		return fromClient(err, ErrNoSuchUpload)
	}
	parts := make(map[string]*stratov1.KeyInfo, len(keys))
	for _, k := range keys {
		parts[k.Name] = k
	}
	var sources []*stratov1.KeySource
	var sizes []string
	var partAttrs []attrs
	var partSizes []int64
	used := map[string]bool{}
	for i, p := range req.Parts {
		ki := parts[partKey(id, p.PartNumber)]
		if ki == nil {
			// Gone with the Complete that made the object, cut short
			// before it deleted the upload's marker?
			return g.completedBefore(rq, id, req.Parts, errInvalidPartComplete)
		}
		pa := attrsOf(ki)
		if normETag(pa[attrETag]) != normETag(p.ETag) {
			return errInvalidPartComplete
		}
		if ki.Size < g.opts.MinPartSize && i < len(req.Parts)-1 {
			return ErrEntityTooSmall
		}
		if err := sum.checkPartChecksum(p.PartNumber, p, pa); err != nil {
			return err
		}
		partAttrs, partSizes = append(partAttrs, pa), append(partSizes, ki.Size)
		sources = append(sources, &stratov1.KeySource{Volume: g.opts.MultipartVolume, Bucket: rq.bucket, Key: ki.Name, ObjectId: ki.ObjectId})
		sizes = append(sizes, strconv.FormatInt(ki.Size, 10))
		used[ki.Name] = true
	}
	if err := checkObjectSize(rq.r.Header.Get("X-Amz-Mp-Object-Size"), partSizes); err != nil {
		return err
	}
	etag := multipartETag(req.Parts)
	lock := uploadLock(m)
	final := attrs{attrUploadID: id}
	for k, v := range m {
		if k != attrUploadKey && k != attrUploadAlgo && k != attrUploadType && k != attrUploadACL {
			final[k] = v
		}
	}
	final[attrETag] = etag
	final[attrParts] = strconv.Itoa(len(req.Parts))
	if len(req.Parts) <= 2000 {
		final[attrPartSize] = strings.Join(sizes, ",")
	}
	algo, v := sum.finalChecksum(partAttrs, partSizes)
	if err := sum.checkFinal(rq.r.Header.Get, algo, v); err != nil {
		return err
	}
	if algo != "" {
		final[checksumHeader(algo)] = v
	}
	done, err := g.c.ComposeKeyLocked(rq.ctx, g.volume, rq.bucket, rq.key, sources, final.list(), lock, cond)
	if err != nil {
		if errors.Is(err, client.ErrNotFound) && !errors.Is(err, client.ErrBucketNotFound) {
			// A concurrent Complete of this upload (a retry) may have
			// taken the parts first.
			return g.completedBefore(rq, id, req.Parts, errf(ErrInvalidPart, "a part went away while completing: %v", err))
		}
		// The upload stays whole when its condition failed: it may be
		// completed again without one.
		return g.conditionFailed(rq, cond, err)
	}
	if v := done.GetVersionId(); v != "" {
		rq.w.Header().Set(headerVersionID, v)
	}
	// The parts left out, and the marker.
	for _, k := range keys {
		if !used[k.Name] {
			_ = g.c.DeleteKey(rq.ctx, g.opts.MultipartVolume, rq.bucket, k.Name)
		}
	}
	_ = g.c.DeleteKey(rq.ctx, g.opts.MultipartVolume, rq.bucket, id)
	return rq.writeXML(200, completeResultOf(rq, final))
}

// checkObjectSize checks a Complete's x-amz-mp-object-size ("": none)
// against the sum of its parts' sizes. The mismatch is worded as
// versitygw's suite has AWS word it: the computed size first.
func checkObjectSize(h string, sizes []int64) error {
	if h == "" {
		return nil
	}
	want, err := strconv.ParseInt(h, 10, 64)
	if err != nil {
		return errf(ErrInvalidRequest, "Value for x-amz-mp-object-size header is invalid: '%s'", h)
	}
	if want < 0 {
		return errf(ErrInvalidRequest, "Value for x-amz-mp-object-size header is less than zero: '%d'", want)
	}
	var total int64
	for _, n := range sizes {
		total += n
	}
	if total != want {
		return errf(ErrInvalidRequest, "The provided 'x-amz-mp-object-size' header value %d does not match what was computed: %d", total, want)
	}
	return nil
}

// completeResultOf is the answer to a Complete that made an object whose
// attributes are m.
func completeResultOf(rq *request, m attrs) completeResult {
	scheme := "http"
	if rq.r.TLS != nil {
		scheme = "https"
	}
	loc := url.URL{Scheme: scheme, Host: rq.r.Host, Path: "/" + rq.bucket + "/" + rq.key}
	res := completeResult{Location: loc.String(), Bucket: rq.bucket, Key: rq.key, ETag: m[attrETag]}
	for _, a := range checksumAlgorithms {
		if v := m[checksumHeader(a)]; v != "" {
			res.set(a, v)
			res.ChecksumType = checksumTypeOf(v)
		}
	}
	return res
}

// completedBefore answers a Complete of an upload that is no longer under
// way, or whose parts are gone. When rq.key is still the object this
// upload made (it carries the upload's ID) and the request lists the parts
// it was made of (the same ETag), the Complete is a retry of one that
// succeeded: the answer is that object's, as AWS answers (SDKs retry a
// Complete that timed out), and what the upload left (its marker, when
// the first Complete was cut short before deleting it) is removed. Else
// err, what the Complete is answered otherwise: a Complete with another
// part list gets NoSuchUpload once the upload is gone, as from AWS after
// its retention and from MinIO. The object is never changed.
func (g *Gateway) completedBefore(rq *request, id string, parts []completePart, err error) error {
	if !validUploadID(id) || len(parts) == 0 {
		return err
	}
	ki, lerr := g.c.LookupKey(rq.ctx, g.volume, rq.bucket, rq.key)
	if errors.Is(lerr, client.ErrNotFound) {
		return err
	} else if lerr != nil {
		return fromClient(lerr, nil) // unknown (meta unavailable, ...): not NoSuchUpload, which a client takes as final
	}
	m := attrsOf(ki)
	if m[attrUploadID] != id || m[attrETag] != multipartETag(parts) {
		return err
	}
	if aerr := g.abort(rq.ctx, rq.bucket, id); aerr != nil {
		g.opts.Logger.Warn("s3: removing a completed upload's marker", "bucket", rq.bucket, "upload", id, "err", aerr)
	}
	setVersion(rq.w.Header(), ki)
	return rq.writeXML(200, completeResultOf(rq, m))
}

// abort deletes an upload's parts, then its marker.
func (g *Gateway) abort(ctx context.Context, bucket, id string) error {
	keys, err := g.listAll(ctx, bucket, id+"/", "")
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := g.c.DeleteKey(ctx, g.opts.MultipartVolume, bucket, k.Name); err != nil && !errors.Is(err, client.ErrNotFound) {
			return err
		}
	}
	if err := g.c.DeleteKey(ctx, g.opts.MultipartVolume, bucket, id); err != nil && !errors.Is(err, client.ErrNotFound) {
		return err
	}
	return nil
}

func (g *Gateway) abortUpload(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	id := rq.r.URL.Query().Get("uploadId")
	ki, _, err := g.upload(rq, id)
	if err != nil {
		return err
	}
	if err := initiatedBy(rq.r.Header.Get("X-Amz-If-Match-Initiated-Time"), ki); err != nil {
		return err
	}
	if err := g.abort(rq.ctx, rq.bucket, id); err != nil {
		return fromClient(err, nil)
	}
	return rq.writeEmpty(204)
}

type partEntry struct {
	PartNumber   int
	LastModified string
	ETag         string
	Size         int64
	checksumFields
}

type listPartsResult struct {
	XMLName              xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListPartsResult"`
	Bucket               string
	Key                  string
	UploadID             string `xml:"UploadId"`
	Initiator            *owner
	Owner                *owner
	StorageClass         string
	PartNumberMarker     int
	NextPartNumberMarker int
	MaxParts             int
	IsTruncated          bool
	ChecksumAlgorithm    string      `xml:",omitempty"`
	ChecksumType         string      `xml:",omitempty"`
	Parts                []partEntry `xml:"Part"`
}

func (g *Gateway) listParts(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	q := rq.r.URL.Query()
	id := q.Get("uploadId")
	_, m, err := g.upload(rq, id)
	if err != nil {
		return err
	}
	maxP, marker := 1000, 0
	if v := q.Get("max-parts"); v != "" {
		if maxP, err = parseCount("max-parts", v); err != nil {
			return err
		}
		maxP = min(maxP, 1000)
	}
	if v := q.Get("part-number-marker"); v != "" {
		if marker, err = parseCount("part-number-marker", v); err != nil {
			return err
		}
	}
	res := listPartsResult{Bucket: rq.bucket, Key: rq.key, UploadID: id, Initiator: ownerOf("s3"), Owner: ownerOf("s3"),
		StorageClass: "STANDARD", PartNumberMarker: marker, MaxParts: maxP, ChecksumAlgorithm: "null", ChecksumType: "null"}
	if u := uploadChecksumOf(m); u.algo != "" {
		res.ChecksumAlgorithm, res.ChecksumType = upperAlgo(u.algo), u.typ
	}
	after := ""
	if marker > 0 {
		after = partKey(id, marker)
	}
	resp, err := g.c.ListKeys(rq.ctx, &stratov1.ListKeysRequest{Volume: g.opts.MultipartVolume, Bucket: rq.bucket,
		Prefix: id + "/", StartAfter: after, Limit: int32(maxP + 1)})
	if err != nil {
		return fromClient(err, nil)
	}
	for i, k := range resp.Keys {
		if i == maxP {
			res.IsTruncated = true
			break
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(k.Name, id+"/"))
		pa := attrsOf(k)
		e := partEntry{PartNumber: n, LastModified: xmlTime(k.ModificationTimeUnixMs), ETag: pa[attrETag], Size: k.Size}
		for _, a := range checksumAlgorithms {
			if v := pa[checksumHeader(a)]; v != "" {
				e.set(a, v)
			}
		}
		res.Parts = append(res.Parts, e)
		res.NextPartNumberMarker = n
	}
	if resp.Truncated && len(resp.Keys) <= maxP {
		res.IsTruncated = true
	}
	return rq.writeXML(200, res)
}

// cleanupLoop aborts, every CleanupInterval, the uploads older than
// MultipartExpiry.
func (g *Gateway) cleanupLoop() {
	defer g.wg.Done()
	t := time.NewTicker(g.opts.CleanupInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), g.opts.CleanupInterval)
			if n, err := g.CleanupUploads(ctx); err != nil {
				g.opts.Logger.Warn("s3: multipart cleanup", "err", err)
			} else if n > 0 {
				g.opts.Logger.Info("s3: aborted abandoned multipart uploads", "count", n)
			}
			cancel()
		}
	}
}

// CleanupUploads aborts every multipart upload begun more than
// MultipartExpiry ago (their parts' blocks go to block deletion) and
// returns how many it aborted. Gateways may run it at once: an abort is
// idempotent.
func (g *Gateway) CleanupUploads(ctx context.Context) (int, error) {
	bs, err := g.c.ListBuckets(ctx, g.opts.MultipartVolume, "")
	if err != nil {
		return 0, err
	}
	cutoff := g.opts.Now().Add(-g.opts.MultipartExpiry).UnixMilli()
	n := 0
	for _, b := range bs {
		markers, err := g.listAll(ctx, b.Name, "", "/")
		if err != nil {
			return n, err
		}
		for _, k := range markers {
			if k.CreationTimeUnixMs > cutoff {
				continue
			}
			if err := g.abort(ctx, b.Name, k.Name); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
