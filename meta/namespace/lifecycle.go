package namespace

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Lifecycle rules (decision 0091) are part of an OBS bucket's record: set
// and removed by UpdateBucket, carried out by meta's leader (meta's
// lifecycle rounds), which deletes through the same commands as any
// client, so that every rule of the namespace (snapshots, versions,
// retention) holds for them too.

// Lifecycle limits (S3's).
const (
	MaxLifecycleRules  = 1000
	maxLifecycleRuleID = 255
	maxLifecycleTags   = 10
)

// CheckLifecycle checks a lifecycle configuration as S3 checks one: every
// rule does something, its numbers are positive, and its IDs are unique.
func CheckLifecycle(l *stratov1.Lifecycle) error {
	rules := l.GetRules()
	if len(rules) == 0 {
		return fmt.Errorf("%w: a lifecycle configuration needs at least one rule", ErrInvalid)
	}
	if len(rules) > MaxLifecycleRules {
		return fmt.Errorf("%w: %d lifecycle rules: at most %d", ErrInvalid, len(rules), MaxLifecycleRules)
	}
	ids := make(map[string]bool, len(rules))
	for i, r := range rules {
		if err := checkLifecycleRule(r); err != nil {
			return fmt.Errorf("%w (rule %d, ID %q)", err, i+1, r.GetId())
		}
		if r.GetId() != "" {
			if ids[r.GetId()] {
				return fmt.Errorf("%w: lifecycle rule ID %q is used twice", ErrInvalid, r.GetId())
			}
			ids[r.GetId()] = true
		}
	}
	return nil
}

func checkLifecycleRule(r *stratov1.LifecycleRule) error {
	switch {
	case len(r.GetId()) > maxLifecycleRuleID:
		return fmt.Errorf("%w: a lifecycle rule ID is at most %d characters", ErrInvalid, maxLifecycleRuleID)
	case len(r.GetTags()) > maxLifecycleTags:
		return fmt.Errorf("%w: a lifecycle rule's filter has at most %d tags", ErrInvalid, maxLifecycleTags)
	case r.GetExpirationDays() < 0 || r.GetNoncurrentDays() < 0 || r.GetNewerNoncurrentVersions() < 0 ||
		r.GetAbortIncompleteMultipartDays() < 0 || r.GetSizeGreaterThan() < 0 || r.GetSizeLessThan() < 0 ||
		r.GetExpirationDateUnixMs() < 0:
		return fmt.Errorf("%w: a lifecycle rule's days, counts and sizes cannot be negative", ErrInvalid)
	case r.GetExpirationDays() > 0 && r.GetExpirationDateUnixMs() > 0:
		return fmt.Errorf("%w: a lifecycle expiration has days or a date, not both", ErrInvalid)
	case r.GetExpiredObjectDeleteMarker() && (r.GetExpirationDays() > 0 || r.GetExpirationDateUnixMs() > 0):
		return fmt.Errorf("%w: ExpiredObjectDeleteMarker cannot be specified with Days or Date in a Lifecycle Expiration Policy", ErrInvalid)
	case r.GetExpiredObjectDeleteMarker() && len(r.GetTags()) > 0:
		return fmt.Errorf("%w: ExpiredObjectDeleteMarker cannot be specified with a tag filter", ErrInvalid)
	case r.GetAbortIncompleteMultipartDays() > 0 && (len(r.GetTags()) > 0 || r.GetSizeGreaterThan() > 0 || r.GetSizeLessThan() > 0):
		return fmt.Errorf("%w: AbortIncompleteMultipartUpload cannot be specified with a tag or size filter", ErrInvalid)
	case r.GetNewerNoncurrentVersions() > 0 && r.GetNoncurrentDays() == 0:
		return fmt.Errorf("%w: NewerNoncurrentVersions needs NoncurrentDays", ErrInvalid)
	case r.GetSizeGreaterThan() > 0 && r.GetSizeLessThan() > 0 && r.GetSizeLessThan() <= r.GetSizeGreaterThan():
		return fmt.Errorf("%w: ObjectSizeLessThan must be greater than ObjectSizeGreaterThan", ErrInvalid)
	case r.GetExpirationDays() == 0 && r.GetExpirationDateUnixMs() == 0 && !r.GetExpiredObjectDeleteMarker() &&
		r.GetNoncurrentDays() == 0 && r.GetAbortIncompleteMultipartDays() == 0:
		return fmt.Errorf("%w: a lifecycle rule must specify at least one action", ErrInvalid)
	}
	seen := make(map[string]bool, len(r.GetTags()))
	for _, t := range r.GetTags() {
		if t.GetName() == "" {
			return fmt.Errorf("%w: a lifecycle filter's tag has an empty key", ErrInvalid)
		}
		if seen[t.GetName()] {
			return fmt.Errorf("%w: a lifecycle filter names tag %q twice", ErrInvalid, t.GetName())
		}
		seen[t.GetName()] = true
	}
	return nil
}

// setLifecycle applies an UpdateCommand's lifecycle part to bk (a clone).
func setLifecycle(bk *stratov1.BucketRecord, c *stratov1.UpdateCommand) error {
	if c.GetLifecycle() == nil && !c.GetClearLifecycle() {
		return nil
	}
	if isFSO(bk) {
		return fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: lifecycle rules are for OBS buckets", ErrWrongLayout, bk.Volume, bk.Name)
	}
	bk.Lifecycle = nil
	if c.GetLifecycle() != nil {
		bk.Lifecycle = proto.CloneOf(c.GetLifecycle())
	}
	return nil
}

// LifecycleDue is when a version written (or made noncurrent) at t is due
// after days lifecycle days of length day: t plus the days, rounded up to
// the next multiple of day since the Unix epoch (midnight UTC for S3's
// 24-hour day).
func LifecycleDue(t time.Time, days int32, day time.Duration) time.Time {
	due := t.Add(time.Duration(days) * day)
	if r := due.Truncate(day); !r.Equal(due) {
		return r.Add(day)
	}
	return due
}
