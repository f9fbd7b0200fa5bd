// Lifecycle rounds: the leader carries out the buckets' S3 lifecycle rules
// (decision 0091). A round starts every Options.LifecycleInterval and walks
// every bucket that has rules, a bounded batch a tick: it lists the
// bucket's versions in key order (ListKeyVersions: an unversioned bucket's
// keys are its only versions) and, after that, its incomplete multipart
// uploads, and deletes what a rule says is due through the same commands
// a client sends, so that snapshots, versions and object lock hold for it
// as for anyone.

package meta

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

const (
	// DefaultLifecycleInterval is Options.LifecycleInterval's default.
	DefaultLifecycleInterval = time.Hour
	// DefaultLifecycleOpsPerTick is Options.LifecycleOpsPerTick's default:
	// a tick is a second by default, so up to 256 deletes a second.
	DefaultLifecycleOpsPerTick = 256
	// lifecycleScanPerTick bounds the versions (and uploads) one tick
	// looks at, and Options.LifecycleOpsPerTick the deletes it proposes: a
	// round over a big bucket spreads over ticks and never holds the
	// background loop.
	lifecycleScanPerTick = 4096
	lifecyclePage        = 256
	// attrTagging and the upload attributes are the S3 gateway's names
	// (s3/tagging.go, s3/multipart.go): the rules' tag filters read the
	// first; an upload's marker key names its object with the second.
	attrTagging   = "x-amz-tagging"
	attrUploadKey = "x-strato-upload-key"
)

// LifecycleStats counts what the lifecycle rounds did, since this replica
// started.
type LifecycleStats struct {
	Rounds            uint64 // rounds finished
	Active            bool   // a round is under way
	Buckets           uint64 // buckets with rules walked
	Scanned           uint64 // versions and uploads looked at
	Expired           uint64 // current versions expired (deleted, or a delete marker put on top)
	NoncurrentDeleted uint64 // noncurrent versions deleted
	MarkersRemoved    uint64 // expired delete markers removed
	UploadsAborted    uint64 // incomplete multipart uploads aborted
	Skipped           uint64 // deletes refused (e.g. retention) or overtaken by a newer write
}

// lifecycleRounds drives the rounds; its cursor says where the round is.
type lifecycleRounds struct {
	mu     sync.Mutex
	next   time.Time // when the next round starts
	active bool
	// The cursor: the bucket being walked (volume, bucket), whether its
	// versions are done (uploads), and where its listing goes on.
	volume, bucket           string
	started                  bool // the bucket's walk has begun (else: find the next bucket)
	uploads                  bool
	keyMarker, versionMarker string
	key                      lifecycleKey
	stats                    LifecycleStats
}

// lifecycleKey is what a round knows of the key whose versions it is
// going through (they come newest first, possibly over several pages).
type lifecycleKey struct {
	name       string
	versions   int               // seen so far
	newer      int64             // the newer version's time: when this one became noncurrent
	noncurrent int               // noncurrent versions seen
	marker     *stratov1.KeyInfo // the latest version, when a delete marker
}

// lifecycleOn reports whether lifecycle rounds run.
func (s *Server) lifecycleOn() bool { return s.opts.LifecycleInterval > 0 }

// LifecycleStats returns what the lifecycle rounds did.
func (s *Server) LifecycleStats() LifecycleStats {
	s.lifecycle.mu.Lock()
	defer s.lifecycle.mu.Unlock()
	st := s.lifecycle.stats
	st.Active = s.lifecycle.active
	return st
}

// lifecycleTick does a bounded step of the current round, or starts one.
func (s *Server) lifecycleTick(ctx context.Context) error {
	if !s.lifecycleOn() {
		return nil
	}
	l := &s.lifecycle
	l.mu.Lock()
	defer l.mu.Unlock()
	now := s.now()
	if !l.active {
		if now.Before(l.next) {
			return nil
		}
		l.active, l.volume, l.bucket, l.started = true, "", "", false
		l.next = now.Add(s.opts.LifecycleInterval)
	}
	w := &lifecycleWork{s: s, l: l, now: now}
	defer func() { l.stats.Scanned += uint64(w.scanned) }()
	for w.scanned < lifecycleScanPerTick && w.ops < s.opts.LifecycleOpsPerTick && ctx.Err() == nil {
		if !l.started {
			b, done, err := s.nextLifecycleBucket(l.volume, l.bucket)
			if err != nil {
				return fmt.Errorf("lifecycle: listing buckets: %w", err)
			}
			if done {
				l.active = false
				l.stats.Rounds++
				return nil
			}
			l.volume, l.bucket, l.started, l.uploads = b.GetVolume(), b.GetName(), true, false
			l.keyMarker, l.versionMarker, l.key = "", "", lifecycleKey{}
			l.stats.Buckets++
		}
		finished, err := w.step(ctx)
		if err != nil {
			// The bucket is tried again next round; the rest go on.
			s.opts.Logger.Warn("lifecycle", "volume", l.volume, "bucket", l.bucket, "err", err)
			finished = true
		}
		if finished {
			l.started = false
		}
	}
	return nil
}

// nextLifecycleBucket finds the first bucket with lifecycle rules after
// (volume, bucket); done says there is none.
func (s *Server) nextLifecycleBucket(volume, bucket string) (*stratov1.BucketInfo, bool, error) {
	for {
		page, done, err := s.bucketsAfter(volume, bucket, bucketsPerTick)
		if err != nil {
			return nil, false, err
		}
		for _, b := range page {
			if b.GetLifecycle() != nil && b.GetLayout() != stratov1.BucketLayout_LAYOUT_FSO {
				return b, false, nil
			}
			volume, bucket = b.GetVolume(), b.GetName()
		}
		if done || len(page) == 0 {
			return nil, true, nil
		}
	}
}

// lifecycleWork is one tick's work on the round's current bucket.
type lifecycleWork struct {
	s            *Server
	l            *lifecycleRounds
	now          time.Time
	b            *stratov1.BucketInfo
	scanned, ops int
}

// step walks one page of the current bucket; finished says the bucket is
// done (or gone).
func (w *lifecycleWork) step(ctx context.Context) (finished bool, err error) {
	l := w.l
	b, err := w.s.ns.Reader(w.s.db).Bucket(l.volume, l.bucket)
	if errors.Is(err, namespace.ErrNotFound) || (err == nil && b.GetLifecycle() == nil) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	w.b = b
	if l.uploads {
		return w.uploadsPage(ctx)
	}
	resp, err := w.s.ns.Reader(w.s.db).ListKeyVersions(&stratov1.ListKeyVersionsRequest{Volume: l.volume, Bucket: l.bucket,
		KeyMarker: l.keyMarker, VersionIdMarker: l.versionMarker, Limit: lifecyclePage})
	if err != nil {
		return false, err
	}
	for _, v := range resp.GetVersions() {
		w.scanned++
		if err := w.version(ctx, v); err != nil {
			return false, err
		}
		if w.ops >= w.s.opts.LifecycleOpsPerTick {
			// The tick's deletes are done: on from this version next
			// tick (a version deleted meanwhile still marks its place).
			l.keyMarker, l.versionMarker = v.GetName(), v.GetVersionId()
			return false, nil
		}
	}
	l.keyMarker, l.versionMarker = resp.GetNextKeyMarker(), resp.GetNextVersionIdMarker()
	if resp.GetTruncated() {
		return false, nil
	}
	if err := w.endKey(ctx); err != nil {
		return false, err
	}
	l.uploads, l.keyMarker = true, ""
	return false, nil
}

// version judges one version (the listing's next) against the rules.
func (w *lifecycleWork) version(ctx context.Context, v *stratov1.KeyInfo) error {
	k := &w.l.key
	if v.GetName() != k.name || v.GetIsLatest() {
		if err := w.endKey(ctx); err != nil {
			return err
		}
		*k = lifecycleKey{name: v.GetName()}
	}
	k.versions++
	defer func() { k.newer = v.GetModificationTimeUnixMs() }()
	if k.versions == 1 {
		if v.GetDeleteMarker() {
			k.marker = v
			return nil
		}
		if w.currentDue(v) {
			return w.delete(ctx, &stratov1.DeleteKeyRequest{Volume: w.b.GetVolume(), Bucket: w.b.GetName(), Key: v.GetName(),
				IfObjectId: v.GetObjectId()}, &w.l.stats.Expired)
		}
		return nil
	}
	newer := k.noncurrent
	k.noncurrent++
	if w.noncurrentDue(v, time.UnixMilli(k.newer), newer) {
		return w.delete(ctx, &stratov1.DeleteKeyRequest{Volume: w.b.GetVolume(), Bucket: w.b.GetName(), Key: v.GetName(),
			VersionId: v.GetVersionId()}, &w.l.stats.NoncurrentDeleted)
	}
	return nil
}

// endKey ends the key the round was in: a delete marker that was its only
// version is removed when a rule says so.
func (w *lifecycleWork) endKey(ctx context.Context) error {
	k := &w.l.key
	m := k.marker
	if m == nil || k.versions != 1 {
		return nil
	}
	k.marker = nil
	for _, r := range w.b.GetLifecycle().GetRules() {
		if r.GetEnabled() && r.GetExpiredObjectDeleteMarker() && strings.HasPrefix(m.GetName(), r.GetPrefix()) {
			return w.delete(ctx, &stratov1.DeleteKeyRequest{Volume: w.b.GetVolume(), Bucket: w.b.GetName(), Key: m.GetName(),
				VersionId: m.GetVersionId()}, &w.l.stats.MarkersRemoved)
		}
	}
	return nil
}

// currentDue reports whether a rule expires v, a key's latest version.
func (w *lifecycleWork) currentDue(v *stratov1.KeyInfo) bool {
	written := time.UnixMilli(v.GetModificationTimeUnixMs())
	for _, r := range w.b.GetLifecycle().GetRules() {
		if !lifecycleMatch(r, v) {
			continue
		}
		if d := r.GetExpirationDateUnixMs(); d > 0 && !w.now.Before(time.UnixMilli(d)) {
			return true
		}
		if n := r.GetExpirationDays(); n > 0 && !w.now.Before(namespace.LifecycleDue(written, n, w.s.opts.LifecycleDay)) {
			return true
		}
	}
	return false
}

// noncurrentDue reports whether a rule deletes v, a noncurrent version
// since noncurrent, with newer noncurrent versions of its key before it.
func (w *lifecycleWork) noncurrentDue(v *stratov1.KeyInfo, noncurrent time.Time, newer int) bool {
	for _, r := range w.b.GetLifecycle().GetRules() {
		n := r.GetNoncurrentDays()
		if n == 0 || !lifecycleMatch(r, v) || newer < int(r.GetNewerNoncurrentVersions()) {
			continue
		}
		if !w.now.Before(namespace.LifecycleDue(noncurrent, n, w.s.opts.LifecycleDay)) {
			return true
		}
	}
	return false
}

// lifecycleMatch reports whether rule r's filter matches version v. A
// delete marker has no tags and no size: only a prefix filter matches it.
func lifecycleMatch(r *stratov1.LifecycleRule, v *stratov1.KeyInfo) bool {
	if !r.GetEnabled() || !strings.HasPrefix(v.GetName(), r.GetPrefix()) {
		return false
	}
	if v.GetDeleteMarker() {
		return len(r.GetTags()) == 0 && r.GetSizeGreaterThan() == 0 && r.GetSizeLessThan() == 0
	}
	if g := r.GetSizeGreaterThan(); g > 0 && v.GetSize() <= g {
		return false
	}
	if lt := r.GetSizeLessThan(); lt > 0 && v.GetSize() >= lt {
		return false
	}
	if len(r.GetTags()) == 0 {
		return true
	}
	var tags url.Values
	for _, a := range v.GetAttributes() {
		if a.GetName() == attrTagging {
			tags, _ = url.ParseQuery(a.GetValue())
		}
	}
	for _, t := range r.GetTags() {
		if !tags.Has(t.GetName()) || tags.Get(t.GetName()) != t.GetValue() {
			return false
		}
	}
	return true
}

// uploadsPage looks at a page of the bucket's incomplete multipart uploads
// (the gateway's upload markers: keys without a "/" in the bucket of the
// same name in the rules' multipart volume) and aborts the ones due.
func (w *lifecycleWork) uploadsPage(ctx context.Context) (finished bool, err error) {
	l, lc := w.l, w.b.GetLifecycle()
	var rules []*stratov1.LifecycleRule
	for _, r := range lc.GetRules() {
		if r.GetEnabled() && r.GetAbortIncompleteMultipartDays() > 0 {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 || lc.GetMultipartVolume() == "" {
		return true, nil
	}
	resp, err := w.s.ns.Reader(w.s.db).ListKeys(&stratov1.ListKeysRequest{Volume: lc.GetMultipartVolume(), Bucket: w.b.GetName(),
		StartAfter: l.keyMarker, Delimiter: "/", Limit: lifecyclePage})
	if errors.Is(err, namespace.ErrNotFound) {
		return true, nil // no upload was ever made
	}
	if err != nil {
		return false, err
	}
	for _, u := range resp.GetKeys() {
		w.scanned++
		if w.uploadDue(u, rules) {
			if err := w.abort(ctx, lc.GetMultipartVolume(), u.GetName()); err != nil {
				return false, err
			}
		}
	}
	l.keyMarker = resp.GetNextStartAfter()
	return !resp.GetTruncated(), nil
}

// uploadDue reports whether a rule aborts upload marker u.
func (w *lifecycleWork) uploadDue(u *stratov1.KeyInfo, rules []*stratov1.LifecycleRule) bool {
	key := ""
	for _, a := range u.GetAttributes() {
		if a.GetName() == attrUploadKey {
			key = a.GetValue()
		}
	}
	begun := time.UnixMilli(u.GetCreationTimeUnixMs())
	for _, r := range rules {
		if strings.HasPrefix(key, r.GetPrefix()) &&
			!w.now.Before(namespace.LifecycleDue(begun, r.GetAbortIncompleteMultipartDays(), w.s.opts.LifecycleDay)) {
			return true
		}
	}
	return false
}

// abort deletes an upload's parts, then its marker, as the gateway's
// AbortMultipartUpload does.
func (w *lifecycleWork) abort(ctx context.Context, volume, id string) error {
	for after := ""; ; {
		resp, err := w.s.ns.Reader(w.s.db).ListKeys(&stratov1.ListKeysRequest{Volume: volume, Bucket: w.b.GetName(),
			Prefix: id + "/", StartAfter: after, Limit: lifecyclePage})
		if err != nil {
			return err
		}
		for _, p := range resp.GetKeys() {
			if err := w.delete(ctx, &stratov1.DeleteKeyRequest{Volume: volume, Bucket: w.b.GetName(), Key: p.GetName()}, nil); err != nil {
				return err
			}
		}
		if !resp.GetTruncated() {
			break
		}
		after = resp.GetNextStartAfter()
	}
	return w.delete(ctx, &stratov1.DeleteKeyRequest{Volume: volume, Bucket: w.b.GetName(), Key: id}, &w.l.stats.UploadsAborted)
}

// delete proposes one of the round's deletes as meta itself (no caller:
// the namespace checks no rights, but every rule of the data: a version
// under retention stays). A key deleted or rewritten meanwhile, or a
// refusal, is counted and skipped; counter, when set, counts a success.
func (w *lifecycleWork) delete(ctx context.Context, req *stratov1.DeleteKeyRequest, counter *uint64) error {
	w.ops++
	_, err := mutate[*stratov1.DeleteResponse](ctx, w.s, req)
	switch status.Code(err) {
	case codes.OK:
		if counter != nil {
			*counter++
		}
		return nil
	case codes.NotFound, codes.FailedPrecondition, codes.PermissionDenied:
		w.l.stats.Skipped++
		w.s.opts.Logger.Debug("lifecycle: delete skipped", "volume", req.GetVolume(), "bucket", req.GetBucket(),
			"key", req.GetKey(), "version", req.GetVersionId(), "err", err)
		return nil
	}
	return err
}
