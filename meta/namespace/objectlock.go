package namespace

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// S3 object lock (WORM; decision 0088, docs/s3.md "Object lock"). A bucket
// created with object lock (CreateBucketRequest.object_lock) is versioned
// (ENABLED) from the start and for good, and keeps an optional default
// retention (a mode and days or years) in its BucketRecord and, for the
// commit path, in its SnapshotState. Each version carries its lock in its
// KeyRecord (object_lock): a retention (GOVERNANCE or COMPLIANCE until a
// date) and a legal hold, written with the version by the commit (the
// commit's own, or the bucket's default) and changed by SetObjectLock, all
// in Raft commands: a new leader keeps every lock.
//
// Apply refuses whatever would destroy a locked version's data, from any
// client: a delete by version ID (DeleteKey, DeleteObjects, the CLI, a
// lifecycle expiry to come), an overwrite that replaces rather than
// versions, an append, truncate or concat, a compose that takes it as a
// source. A version is locked while it has a legal hold or while its
// retention's date is after the command's time (the leader's clock, fixed
// at prepare). A GOVERNANCE retention gives way to bypass_governance,
// which prepare clears unless the caller owns the bucket (or its volume)
// or is an administrator. A delete without a version ID only makes a
// delete marker, and is always allowed, as at AWS.

const (
	retentionNone       = stratov1.RetentionMode_RETENTION_UNSPECIFIED
	retentionGovernance = stratov1.RetentionMode_RETENTION_GOVERNANCE
	retentionCompliance = stratov1.RetentionMode_RETENTION_COMPLIANCE
)

// Limits of a default retention (AWS's).
const (
	maxRetentionDays  = 36500
	maxRetentionYears = 100
)

// ErrObjectLocked: a version's object lock forbids the change.
var ErrObjectLocked = sentinel("namespace: object locked", ErrFailedPrecondition)

// ErrNoObjectLock: the bucket was not created with object lock.
var ErrNoObjectLock = sentinel("namespace: the bucket has no object lock", ErrFailedPrecondition)

// ObjectLockInfo is the API's view of a version's lock (nil: none).
func ObjectLockInfo(r *stratov1.ObjectLockRecord) *stratov1.ObjectLock {
	if r == nil || (r.Mode == retentionNone && !r.LegalHold) {
		return nil
	}
	return &stratov1.ObjectLock{Mode: r.Mode, RetainUntilUnixMs: r.RetainUntilUnixMs, LegalHold: r.LegalHold}
}

// BucketObjectLockInfo is the API's view of a bucket's object lock.
func BucketObjectLockInfo(r *stratov1.BucketObjectLockRecord) *stratov1.BucketObjectLock {
	if r == nil || !r.Enabled {
		return nil
	}
	return &stratov1.BucketObjectLock{Enabled: true, DefaultMode: r.DefaultMode, DefaultDays: r.DefaultDays, DefaultYears: r.DefaultYears}
}

func objectLockRecord(l *stratov1.ObjectLock) *stratov1.ObjectLockRecord {
	if l == nil {
		return nil
	}
	return &stratov1.ObjectLockRecord{Mode: l.GetMode(), RetainUntilUnixMs: l.GetRetainUntilUnixMs(), LegalHold: l.GetLegalHold()}
}

func bucketObjectLockRecord(l *stratov1.BucketObjectLock) *stratov1.BucketObjectLockRecord {
	if l == nil {
		return nil
	}
	return &stratov1.BucketObjectLockRecord{Enabled: l.GetEnabled(), DefaultMode: l.GetDefaultMode(),
		DefaultDays: l.GetDefaultDays(), DefaultYears: l.GetDefaultYears()}
}

func validMode(m stratov1.RetentionMode) bool {
	return m == retentionGovernance || m == retentionCompliance
}

// checkBucketLock checks a bucket's object lock configuration: enabled,
// and a default retention of a mode with days or years, or none.
func checkBucketLock(l *stratov1.BucketObjectLockRecord) error {
	switch {
	case !l.GetEnabled():
		return fmt.Errorf("%w: object lock cannot be disabled", ErrInvalid)
	case l.GetDefaultMode() == retentionNone:
		if l.GetDefaultDays() != 0 || l.GetDefaultYears() != 0 {
			return fmt.Errorf("%w: a default retention of days or years needs a mode", ErrInvalid)
		}
		return nil
	case !validMode(l.GetDefaultMode()):
		return fmt.Errorf("%w: retention mode %v", ErrInvalid, l.GetDefaultMode())
	case (l.GetDefaultDays() != 0) == (l.GetDefaultYears() != 0):
		return fmt.Errorf("%w: a default retention has days or years, not both nor neither", ErrInvalid)
	case l.GetDefaultDays() < 0 || l.GetDefaultDays() > maxRetentionDays:
		return fmt.Errorf("%w: default retention of %d days (1 to %d)", ErrInvalid, l.GetDefaultDays(), maxRetentionDays)
	case l.GetDefaultYears() < 0 || l.GetDefaultYears() > maxRetentionYears:
		return fmt.Errorf("%w: default retention of %d years (1 to %d)", ErrInvalid, l.GetDefaultYears(), maxRetentionYears)
	}
	return nil
}

// retained reports whether lock l's retention is in force at now.
func retained(l *stratov1.ObjectLockRecord, now int64) bool {
	return l.GetMode() != retentionNone && l.GetRetainUntilUnixMs() > now
}

// Locked reports whether version r may not be destroyed at now (unix ms)
// without bypassing a GOVERNANCE retention.
func Locked(r *stratov1.KeyRecord, now int64) bool {
	l := r.GetObjectLock()
	return l.GetLegalHold() || retained(l, now)
}

// checkDestroy refuses to destroy version r (label names it) when its lock
// forbids it at the command's time: a legal hold, a COMPLIANCE retention,
// or a GOVERNANCE retention without bypass.
func (a *applier) checkDestroy(r *stratov1.KeyRecord, bypass bool, label string) error {
	l := r.GetObjectLock()
	switch {
	case l.GetLegalHold():
		return fmt.Errorf("%w: %s has a legal hold", ErrObjectLocked, label)
	case !retained(l, a.now):
	case l.GetMode() == retentionGovernance && bypass:
	default:
		return fmt.Errorf("%w: %s is under %s retention until %s", ErrObjectLocked, label, modeName(l.GetMode()),
			time.UnixMilli(l.GetRetainUntilUnixMs()).UTC().Format(time.RFC3339))
	}
	return nil
}

func modeName(m stratov1.RetentionMode) string {
	if m == retentionCompliance {
		return "COMPLIANCE"
	}
	return "GOVERNANCE"
}

// defaultRetention is the lock a bucket's default retention gives a
// version written at now (nil: none).
func defaultRetention(bl *stratov1.BucketObjectLockRecord, now int64) *stratov1.ObjectLockRecord {
	if !bl.GetEnabled() || bl.GetDefaultMode() == retentionNone {
		return nil
	}
	t := time.UnixMilli(now).UTC()
	if bl.GetDefaultYears() > 0 {
		t = t.AddDate(int(bl.GetDefaultYears()), 0, 0)
	} else {
		t = t.Add(time.Duration(bl.GetDefaultDays()) * 24 * time.Hour)
	}
	return &stratov1.ObjectLockRecord{Mode: bl.GetDefaultMode(), RetainUntilUnixMs: t.UnixMilli()}
}

// commitLock is the lock of a version committed at a.now to a bucket with
// snapshot state st: the commit's own (want), or the bucket's default.
func (a *applier) commitLock(st snapState, want *stratov1.ObjectLockRecord, label string) (*stratov1.ObjectLockRecord, error) {
	if want == nil {
		return defaultRetention(st.lock, a.now), nil
	}
	if !st.lock.GetEnabled() {
		return nil, fmt.Errorf("%w: %s: an object lock on a bucket created without it", ErrNoObjectLock, label)
	}
	if err := a.checkRetention(want.Mode, want.RetainUntilUnixMs); err != nil {
		return nil, err
	}
	if want.Mode == retentionNone && !want.LegalHold {
		return defaultRetention(st.lock, a.now), nil
	}
	if want.Mode == retentionNone {
		// A legal hold alone: the default retention still applies.
		if d := defaultRetention(st.lock, a.now); d != nil {
			d.LegalHold = true
			return d, nil
		}
	}
	return proto.CloneOf(want), nil
}

// checkRetention checks a retention asked for at a.now: a mode and a date
// after now, or no mode and no date.
func (a *applier) checkRetention(mode stratov1.RetentionMode, until int64) error {
	switch {
	case mode == retentionNone && until == 0:
	case mode == retentionNone:
		return fmt.Errorf("%w: a retention date without a mode", ErrInvalid)
	case !validMode(mode):
		return fmt.Errorf("%w: retention mode %v", ErrInvalid, mode)
	case until <= a.now:
		return fmt.Errorf("%w: the retain-until date %s is not in the future", ErrInvalid,
			time.UnixMilli(until).UTC().Format(time.RFC3339))
	}
	return nil
}

// checkRetentionChange refuses replacing retention old with mode until
// date, at a.now, when old is in force and the change would weaken it: a
// COMPLIANCE retention is only extended (as COMPLIANCE), a GOVERNANCE one
// only extended as GOVERNANCE unless the caller bypasses it.
func (a *applier) checkRetentionChange(old *stratov1.ObjectLockRecord, mode stratov1.RetentionMode, until int64, bypass bool, label string) error {
	if !retained(old, a.now) {
		return nil
	}
	if mode == old.GetMode() && until >= old.GetRetainUntilUnixMs() {
		return nil // kept or extended
	}
	if old.GetMode() == retentionGovernance && bypass {
		return nil
	}
	return fmt.Errorf("%w: %s is under %s retention until %s: it may only be extended", ErrObjectLocked, label,
		modeName(old.GetMode()), time.UnixMilli(old.GetRetainUntilUnixMs()).UTC().Format(time.RFC3339))
}

// setObjectLock applies SetObjectLock: the version's retention, legal hold
// or both change, in its record (the key table's, or the version table's).
func (a *applier) setObjectLock(c *stratov1.SetObjectLockCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	label := bk.Volume + "/" + bk.Name + "/" + c.GetKey()
	switch {
	case isFSO(bk) || !bk.GetObjectLock().GetEnabled():
		return nil, fmt.Errorf("%w: %s/%s", ErrNoObjectLock, bk.Volume, bk.Name)
	case !c.GetSetRetention() && c.LegalHold == nil:
		return nil, fmt.Errorf("%w: SetObjectLock of %s changes nothing", ErrInvalid, label)
	}
	if err := ValidateKeyName(c.GetKey()); err != nil {
		return nil, err
	}
	if c.GetSetRetention() {
		if err := a.checkRetention(c.GetMode(), c.GetRetainUntilUnixMs()); err != nil {
			return nil, err
		}
	}
	key := childKey(nil, tagKey, bk.Id, c.GetKey())
	rec := &stratov1.KeyRecord{}
	found, err := get(a.b, key, rec)
	if err != nil {
		return nil, err
	}
	if vid := c.GetVersionId(); vid != "" && (!found || VersionID(rec) != vid) {
		seq, null, err := parseVersionID(vid)
		if err != nil {
			return nil, err
		}
		if key, rec, err = a.findVersion(bk.Id, c.GetKey(), seq, null); err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, fmt.Errorf("%w: %s has no version %s", ErrKeyNotFound, label, vid)
		}
		label += " version " + vid
	} else if !found {
		return nil, fmt.Errorf("%w: %s", ErrKeyNotFound, label)
	}
	if rec.DeleteMarker {
		return nil, fmt.Errorf("%w: version %s of %s is a delete marker", ErrFailedPrecondition, VersionID(rec), label)
	}
	l := proto.CloneOf(rec.GetObjectLock())
	if l == nil {
		l = &stratov1.ObjectLockRecord{}
	}
	if c.GetSetRetention() {
		if err := a.checkRetentionChange(l, c.GetMode(), c.GetRetainUntilUnixMs(), c.GetBypassGovernance(), label); err != nil {
			return nil, err
		}
		l.Mode, l.RetainUntilUnixMs = c.GetMode(), c.GetRetainUntilUnixMs()
	}
	if c.LegalHold != nil {
		l.LegalHold = c.GetLegalHold()
	}
	if l.Mode == retentionNone && !l.LegalHold {
		l = nil
	}
	rec.ObjectLock = l
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.SetObjectLockResponse{VersionId: versionIDOf(rec), ObjectLock: ObjectLockInfo(l)}, nil
}

// versionIDOf is a record's version ID, "" in a bucket never versioned.
func versionIDOf(r *stratov1.KeyRecord) string {
	if r.VersionSeq != 0 || r.NullVersion {
		return VersionID(r)
	}
	return ""
}

// setBucketLock replaces bucket bk's default retention (bk is written by
// the caller), in its snapshot state too.
func (a *applier) setBucketLock(bk *stratov1.BucketRecord, l *stratov1.BucketObjectLockRecord) error {
	if !bk.GetObjectLock().GetEnabled() {
		return fmt.Errorf("%w: %s/%s was not created with object lock", ErrNoObjectLock, bk.Volume, bk.Name)
	}
	if err := checkBucketLock(l); err != nil {
		return err
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return err
	}
	bk.ObjectLock = proto.CloneOf(l)
	st.lock, st.volumeID = bk.ObjectLock, bk.VolumeId
	return a.putSnapState(bk.Id, st)
}

// mayBypass says whether caller c may bypass a GOVERNANCE retention in a
// bucket (S3's s3:BypassGovernanceRetention): an administrator, the
// bucket's owner or its volume's, or anyone when there is no
// authorization (c nil). Prepare clears the bypass of anyone else, whose
// request then meets the retention (decision 0088).
func (ns *Namespace) mayBypass(view pebble.Reader, c *Caller, volume, bucket string) bool {
	if c == nil || c.Admin {
		return true
	}
	ch, err := ns.Reader(view).chain(stratov1.AclObjectKind_ACL_OBJECT_BUCKET, volume, bucket, "")
	if err != nil {
		return false
	}
	for _, n := range ch.nodes {
		if n.owner != "" && n.owner == c.User {
			return true
		}
	}
	return false
}

// commitKeyLock is the object lock of the version a commit writes (its
// own, or the bucket's default), once it has checked that the version it
// replaces (destroys: not kept as a noncurrent version) may go.
func (a *applier) commitKeyLock(c *stratov1.CommitKeyCommand, st snapState, old *stratov1.KeyRecord, destroys bool, label string) (*stratov1.ObjectLockRecord, error) {
	if destroys && old.ObjectLock != nil {
		if err := a.checkDestroy(old, false, label); err != nil {
			return nil, err
		}
	}
	if c.GetObjectLock() == nil && st.lock == nil {
		return nil, nil
	}
	return a.commitLock(st, c.GetObjectLock(), label)
}
