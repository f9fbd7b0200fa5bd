package s3

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Conditional requests: the preconditions of reads (RFC 7232's headers,
// and CopyObject's x-amz-copy-source-if-* of the source), of writes
// (PutObject and CompleteMultipartUpload's If-Match and If-None-Match: *)
// and of deletes (DeleteObject's If-Match, x-amz-if-match-size and
// x-amz-if-match-last-modified-time), as AWS answers them.

// putConditions checks If-None-Match: * and If-Match of a PUT or of a
// CompleteMultipartUpload and returns the condition the commit carries to
// meta, which checks it again in the commit's own apply: a writer that
// commits between this look and the commit makes the commit fail
// (ErrKeyReplaced, answered 412 PreconditionFailed as AWS answers the
// second of two conditional writes). Looking first refuses at once what
// would fail, before the body is stored. AWS offers no other If-None-Match
// and not both headers together: NotImplemented.
func (g *Gateway) putConditions(rq *request) (client.Condition, error) {
	inm, im := rq.r.Header.Get("If-None-Match"), rq.r.Header.Get("If-Match")
	if inm == "" && im == "" {
		return client.Condition{}, nil
	}
	if (inm != "" && inm != "*") || (inm != "" && im != "") {
		return client.Condition{}, ErrNotImplemented
	}
	ki, err := g.c.LookupKey(rq.ctx, g.volume, rq.bucket, rq.key)
	exists := err == nil
	if err != nil && !errors.Is(err, client.ErrNotFound) {
		return client.Condition{}, fromClient(err, nil)
	}
	var cond client.Condition
	switch {
	case inm == "*" && exists:
		return cond, ErrPreconditionFailed
	case inm == "*":
		cond.IfAbsent = true
	case !exists:
		return cond, ErrNoSuchKey
	case !etagMatches(im, etagOf(ki, attrsOf(ki))):
		return cond, ErrPreconditionFailed
	default:
		cond.IfObjectID = ki.GetObjectId()
	}
	if g.afterPutCheck != nil {
		g.afterPutCheck()
	}
	return cond, nil
}

// conditionFailed is the answer to a commit of rq's key that meta refused
// with err. A condition that no longer held is PreconditionFailed, as AWS
// answers the loser of two conditional writes; but an If-Match whose key
// was deleted since putConditions looked is ConditionalRequestConflict
// (409), as AWS answers a delete landing during a conditional write.
func (g *Gateway) conditionFailed(rq *request, cond client.Condition, err error) error {
	if !errors.Is(err, client.ErrKeyReplaced) {
		return fromClient(err, nil)
	}
	if cond.IfObjectID != 0 {
		if _, lerr := g.c.LookupKey(rq.ctx, g.volume, rq.bucket, rq.key); errors.Is(lerr, client.ErrNotFound) {
			return ErrConditionalRequestConflict
		}
	}
	return ErrPreconditionFailed
}

// deleteConditions checks a DeleteObject's If-Match, x-amz-if-match-size
// and x-amz-if-match-last-modified-time against the key (or the version
// versionID names). It returns the object ID it checked, for the delete to
// be made only while the key is still that object (meta's if_object_id),
// so that a write between the check and the delete is not deleted; 0 when
// there is nothing to hold (no condition, or a version, which never
// changes).
func (g *Gateway) deleteConditions(rq *request, versionID string) (uint64, error) {
	h := rq.r.Header
	im, size, mtime := h.Get("If-Match"), h.Get("X-Amz-If-Match-Size"), h.Get("X-Amz-If-Match-Last-Modified-Time")
	if im == "" && size == "" && mtime == "" {
		return 0, nil
	}
	ki, err := g.c.LookupKeyVersion(rq.ctx, g.volume, rq.bucket, rq.key, client.KeyVersion{ID: versionID})
	if err != nil {
		return 0, versionError(err, versionID)
	}
	if err := matchKey(ki, im, size, mtime); err != nil {
		return 0, err
	}
	if versionID != "" {
		return 0, nil
	}
	return ki.GetObjectId(), nil
}

// matchKey checks the delete conditions that are set ("": none) against ki.
func matchKey(ki *stratov1.KeyInfo, im, size, mtime string) error {
	if im != "" && !etagMatches(im, etagOf(ki, attrsOf(ki))) {
		return ErrPreconditionFailed
	}
	if size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil {
			return withFields(errf(ErrInvalidArgument, "Invalid x-amz-if-match-size"), "ArgumentName", "x-amz-if-match-size", "ArgumentValue", size)
		}
		if n != ki.GetSize() {
			return ErrPreconditionFailed
		}
	}
	if mtime != "" {
		t, err := http.ParseTime(mtime)
		if err != nil {
			t, err = time.Parse(time.RFC3339, mtime)
		}
		if err != nil {
			return withFields(errf(ErrInvalidArgument, "Invalid x-amz-if-match-last-modified-time"),
				"ArgumentName", "x-amz-if-match-last-modified-time", "ArgumentValue", mtime)
		}
		// Last-Modified is given to the second: compare at that grain.
		if !time.UnixMilli(ki.GetModificationTimeUnixMs()).Truncate(time.Second).Equal(t.Truncate(time.Second)) {
			return ErrPreconditionFailed
		}
	}
	return nil
}

// etagMatches says whether an If-Match/If-None-Match list names etag.
func etagMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		e = strings.TrimPrefix(e, "W/")
		if e == "*" || e == etag || `"`+e+`"` == etag {
			return true
		}
	}
	return false
}

// checkConditions applies If-Match, If-Unmodified-Since, If-None-Match and
// If-Modified-Since (RFC 7232's order) to a key.
func checkConditions(h http.Header, prefix string, etag string, mtime time.Time) error {
	get := func(k string) string { return h.Get(prefix + k) }
	mtime = mtime.Truncate(time.Second)
	if im := get("If-Match"); im != "" {
		if !etagMatches(im, etag) {
			return ErrPreconditionFailed
		}
	} else if ius := get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && mtime.After(t) {
			return ErrPreconditionFailed
		}
	}
	// A copy's source answers as a GET of it would (304 NotModified), as
	// versitygw's suite expects; AWS's documents give 412 there.
	if inm := get("If-None-Match"); inm != "" {
		if etagMatches(inm, etag) {
			return errNotModified
		}
	} else if ims := get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !mtime.After(t) {
			return errNotModified
		}
	}
	return nil
}

// initiatedBy checks an AbortMultipartUpload's
// x-amz-if-match-initiated-time ("": none) against the upload's marker ki:
// a time before the upload began does not hold; a later one is ignored, as
// AWS ignores it.
func initiatedBy(v string, ki *stratov1.KeyInfo) error {
	if v == "" {
		return nil
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return withFields(errf(ErrInvalidArgument, "Invalid x-amz-if-match-initiated-time"),
			"ArgumentName", "x-amz-if-match-initiated-time", "ArgumentValue", v)
	}
	if t.Before(time.UnixMilli(ki.GetCreationTimeUnixMs()).Truncate(time.Second)) {
		return ErrPreconditionFailed
	}
	return nil
}
