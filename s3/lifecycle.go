package s3

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Lifecycle (decision 0091): a bucket's LifecycleConfiguration becomes
// rules in its record in meta (UpdateBucket), which meta's leader carries
// out; the gateway only translates and checks the XML. Transitions are
// refused: strato has one storage class.

const maxLifecycleXML = 1 << 20

var ErrNoSuchLifecycleConfiguration = s3err("NoSuchLifecycleConfiguration", 404, "The lifecycle configuration does not exist")

// lifecycleConfiguration is S3's document, as clients send it and as the
// gateway answers it.
type lifecycleConfiguration struct {
	XMLName xml.Name        `xml:"LifecycleConfiguration" json:"-"`
	Rules   []lifecycleRule `xml:"Rule"`
}

type lifecycleRule struct {
	ID                             string                `xml:"ID,omitempty" json:",omitempty"`
	Filter                         *lifecycleFilter      `xml:"Filter" json:",omitempty"`
	Prefix                         *string               `xml:"Prefix" json:",omitempty"` // the older form of a prefix filter
	Status                         string                `xml:"Status"`
	Expiration                     *lifecycleExpiration  `xml:"Expiration" json:",omitempty"`
	NoncurrentVersionExpiration    *noncurrentExpiration `xml:"NoncurrentVersionExpiration" json:",omitempty"`
	AbortIncompleteMultipartUpload *abortIncomplete      `xml:"AbortIncompleteMultipartUpload" json:",omitempty"`
	Transitions                    []transition          `xml:"Transition" json:"Transitions,omitempty"`
	NoncurrentTransitions          []transition          `xml:"NoncurrentVersionTransition" json:"NoncurrentVersionTransitions,omitempty"`
}

// transition is a (Noncurrent)Transition, read only to be refused.
type transition struct {
	Days, NoncurrentDays, NewerNoncurrentVersions *int32  `json:",omitempty"`
	Date                                          *string `json:",omitempty"`
	StorageClass                                  string
}

type lifecycleExpiration struct {
	Days                      *int32  `xml:"Days" json:",omitempty"`
	Date                      *string `xml:"Date" json:",omitempty"`
	ExpiredObjectDeleteMarker *bool   `xml:"ExpiredObjectDeleteMarker" json:",omitempty"`
}

type noncurrentExpiration struct {
	NoncurrentDays          *int32 `xml:"NoncurrentDays" json:",omitempty"`
	NewerNoncurrentVersions *int32 `xml:"NewerNoncurrentVersions" json:",omitempty"`
}

type abortIncomplete struct {
	DaysAfterInitiation *int32 `xml:"DaysAfterInitiation" json:",omitempty"`
}

type lifecycleFilter struct {
	Prefix                *string       `xml:"Prefix" json:",omitempty"`
	Tag                   *tag          `xml:"Tag" json:",omitempty"`
	ObjectSizeGreaterThan *int64        `xml:"ObjectSizeGreaterThan" json:",omitempty"`
	ObjectSizeLessThan    *int64        `xml:"ObjectSizeLessThan" json:",omitempty"`
	And                   *lifecycleAnd `xml:"And" json:",omitempty"`
}

type lifecycleAnd struct {
	Prefix                *string `xml:"Prefix" json:",omitempty"`
	Tags                  []tag   `xml:"Tag" json:"Tags,omitempty"`
	ObjectSizeGreaterThan *int64  `xml:"ObjectSizeGreaterThan" json:",omitempty"`
	ObjectSizeLessThan    *int64  `xml:"ObjectSizeLessThan" json:",omitempty"`
}

// bucketLifecycle serves GET, PUT and DELETE of ?lifecycle.
func (g *Gateway) bucketLifecycle(rq *request) error {
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetBucketLifecycleConfiguration"
		return g.getBucketLifecycle(rq)
	case http.MethodPut:
		rq.op = "PutBucketLifecycleConfiguration"
		return g.putBucketLifecycle(rq)
	default:
		rq.op = "DeleteBucketLifecycle"
		return g.deleteBucketLifecycle(rq)
	}
}

func (g *Gateway) putBucketLifecycle(rq *request) error {
	var c lifecycleConfiguration
	if err := rq.decodeXML(&c, maxLifecycleXML); err != nil {
		return err
	}
	lc, err := c.rules()
	if err != nil {
		return err
	}
	lc.MultipartVolume = g.opts.MultipartVolume
	return g.updateLifecycle(rq, &stratov1.UpdateBucketRequest{Volume: g.volume, Name: rq.bucket, Lifecycle: lc}, http.StatusOK)
}

func (g *Gateway) deleteBucketLifecycle(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	return g.updateLifecycle(rq, &stratov1.UpdateBucketRequest{Volume: g.volume, Name: rq.bucket, ClearLifecycle: true}, http.StatusNoContent)
}

func (g *Gateway) updateLifecycle(rq *request, req *stratov1.UpdateBucketRequest, code int) error {
	_, err := g.c.UpdateBucket(rq.ctx, req)
	switch {
	case errors.Is(err, client.ErrInvalid):
		return errf(ErrInvalidArgument, "%s", metaMessage(err))
	case errors.Is(err, client.ErrPrecondition):
		return errf(ErrInvalidBucketState, "%s", metaMessage(err)) // a file-system bucket
	case err != nil:
		return fromClient(err, ErrNoSuchBucket)
	}
	return rq.writeEmpty(code)
}

func (g *Gateway) getBucketLifecycle(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	b, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	if b.GetLifecycle() == nil {
		return ErrNoSuchLifecycleConfiguration
	}
	out := lifecycleOut{}
	for _, r := range b.GetLifecycle().GetRules() {
		out.Rules = append(out.Rules, lifecycleRuleOf(r))
	}
	return rq.writeXML(http.StatusOK, out)
}

// lifecycleOut is the configuration as the gateway answers it.
type lifecycleOut struct {
	XMLName xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LifecycleConfiguration"`
	Rules   []lifecycleRule `xml:"Rule"`
}

// rules checks the document as S3 does and turns it into meta's rules
// (meta checks them again: limits, IDs, combinations).
func (c *lifecycleConfiguration) rules() (*stratov1.Lifecycle, error) {
	if len(c.Rules) == 0 {
		return nil, ErrMalformedXML
	}
	lc := &stratov1.Lifecycle{}
	for i := range c.Rules {
		r, err := c.Rules[i].rule()
		if err != nil {
			return nil, err
		}
		lc.Rules = append(lc.Rules, r)
	}
	return lc, nil
}

func (x *lifecycleRule) rule() (*stratov1.LifecycleRule, error) {
	r := &stratov1.LifecycleRule{Id: x.ID}
	switch x.Status {
	case "Enabled":
		r.Enabled = true
	case "Disabled":
	default:
		return nil, ErrMalformedXML
	}
	if len(x.ID) > 255 {
		return nil, errf(ErrInvalidArgument, "ID length should not exceed allowed limit of 255")
	}
	if len(x.Transitions) > 0 || len(x.NoncurrentTransitions) > 0 {
		return nil, errf(ErrNotImplemented, "strato has one storage class (STANDARD): lifecycle transitions are not implemented")
	}
	if err := x.filter(r); err != nil {
		return nil, err
	}
	if e := x.Expiration; e != nil {
		if err := expiration(r, e.Days, e.Date, e.ExpiredObjectDeleteMarker); err != nil {
			return nil, err
		}
	}
	if n := x.NoncurrentVersionExpiration; n != nil {
		if n.NoncurrentDays == nil || *n.NoncurrentDays <= 0 {
			return nil, errf(ErrInvalidArgument, "'NoncurrentDays' for NoncurrentVersionExpiration action must be a positive integer")
		}
		r.NoncurrentDays = *n.NoncurrentDays
		if v := n.NewerNoncurrentVersions; v != nil {
			if *v <= 0 || *v > 100 {
				return nil, errf(ErrInvalidArgument, "'NewerNoncurrentVersions' for NoncurrentVersionExpiration action must be a positive integer up to 100")
			}
			r.NewerNoncurrentVersions = *v
		}
	}
	if a := x.AbortIncompleteMultipartUpload; a != nil {
		if a.DaysAfterInitiation == nil || *a.DaysAfterInitiation <= 0 {
			return nil, errf(ErrInvalidArgument, "'DaysAfterInitiation' for AbortIncompleteMultipartUpload action must be a positive integer")
		}
		r.AbortIncompleteMultipartDays = *a.DaysAfterInitiation
	}
	if r.ExpirationDays == 0 && r.ExpirationDateUnixMs == 0 && !r.ExpiredObjectDeleteMarker && r.NoncurrentDays == 0 &&
		r.AbortIncompleteMultipartDays == 0 {
		return nil, errf(ErrInvalidRequest, "At least one action needs to be specified in a rule")
	}
	return r, nil
}

// expiration reads an Expiration element: days, a date, or the removal
// of expired delete markers, one of them.
func expiration(r *stratov1.LifecycleRule, days *int32, date *string, marker *bool) error {
	n := 0
	if days != nil {
		n++
		if *days <= 0 {
			return errf(ErrInvalidArgument, "'Days' for Expiration action must be a positive integer")
		}
		r.ExpirationDays = *days
	}
	if date != nil {
		n++
		t, err := time.Parse(time.RFC3339, *date)
		if err != nil {
			return errf(ErrInvalidArgument, "'Date' must be in ISO 8601 format")
		}
		if !t.Equal(t.UTC().Truncate(24 * time.Hour)) {
			return errf(ErrInvalidArgument, "'Date' must be at midnight GMT")
		}
		r.ExpirationDateUnixMs = t.UnixMilli()
	}
	if marker != nil {
		n++
		r.ExpiredObjectDeleteMarker = *marker
	}
	if n != 1 {
		return ErrMalformedXML
	}
	return nil
}

// filter reads the rule's filter: Filter (one of Prefix, Tag, a size, or
// And) or the older top-level Prefix, not both.
func (x *lifecycleRule) filter(r *stratov1.LifecycleRule) error {
	if x.Prefix != nil {
		if x.Filter != nil {
			return ErrMalformedXML
		}
		r.Prefix = *x.Prefix
		return nil
	}
	f := x.Filter
	if f == nil {
		return nil
	}
	set := 0
	for _, ok := range []bool{f.Prefix != nil, f.Tag != nil, f.ObjectSizeGreaterThan != nil, f.ObjectSizeLessThan != nil, f.And != nil} {
		if ok {
			set++
		}
	}
	if set > 1 {
		return ErrMalformedXML
	}
	tags := []tag{}
	prefix, gt, lt := f.Prefix, f.ObjectSizeGreaterThan, f.ObjectSizeLessThan
	if f.Tag != nil {
		tags = append(tags, *f.Tag)
	}
	if a := f.And; a != nil {
		prefix, gt, lt, tags = a.Prefix, a.ObjectSizeGreaterThan, a.ObjectSizeLessThan, a.Tags
	}
	if prefix != nil {
		r.Prefix = *prefix
	}
	if gt != nil {
		r.SizeGreaterThan = *gt
	}
	if lt != nil {
		r.SizeLessThan = *lt
	}
	for _, t := range tags {
		if err := checkTag(t.Key, t.Value); err != nil {
			return err
		}
		r.Tags = append(r.Tags, &stratov1.KeyAttribute{Name: t.Key, Value: t.Value})
	}
	if r.SizeGreaterThan < 0 || r.SizeLessThan < 0 {
		return errf(ErrInvalidArgument, "Object size filters must be non-negative")
	}
	return nil
}

// lifecycleRuleOf is meta's rule as S3's document gives it.
func lifecycleRuleOf(r *stratov1.LifecycleRule) lifecycleRule {
	x := lifecycleRule{ID: r.GetId(), Status: "Disabled", Filter: &lifecycleFilter{}}
	if r.GetEnabled() {
		x.Status = "Enabled"
	}
	prefix := r.GetPrefix()
	var tags []tag
	for _, t := range r.GetTags() {
		tags = append(tags, tag{Key: t.GetName(), Value: t.GetValue()})
	}
	var gt, lt *int64
	if v := r.GetSizeGreaterThan(); v > 0 {
		gt = &v
	}
	if v := r.GetSizeLessThan(); v > 0 {
		lt = &v
	}
	parts := len(tags)
	for _, ok := range []bool{prefix != "", gt != nil, lt != nil} {
		if ok {
			parts++
		}
	}
	switch {
	case parts > 1:
		a := &lifecycleAnd{Tags: tags, ObjectSizeGreaterThan: gt, ObjectSizeLessThan: lt}
		if prefix != "" {
			a.Prefix = &prefix
		}
		x.Filter.And = a
	case len(tags) == 1:
		x.Filter.Tag = &tags[0]
	case gt != nil || lt != nil:
		x.Filter.ObjectSizeGreaterThan, x.Filter.ObjectSizeLessThan = gt, lt
	default:
		x.Filter.Prefix = &prefix
	}
	if r.GetExpirationDays() > 0 || r.GetExpirationDateUnixMs() > 0 || r.GetExpiredObjectDeleteMarker() {
		x.Expiration = &lifecycleExpiration{}
		switch {
		case r.GetExpirationDays() > 0:
			d := r.GetExpirationDays()
			x.Expiration.Days = &d
		case r.GetExpirationDateUnixMs() > 0:
			d := time.UnixMilli(r.GetExpirationDateUnixMs()).UTC().Format("2006-01-02T15:04:05.000Z")
			x.Expiration.Date = &d
		default:
			t := true
			x.Expiration.ExpiredObjectDeleteMarker = &t
		}
	}
	if r.GetNoncurrentDays() > 0 {
		d, v := r.GetNoncurrentDays(), r.GetNewerNoncurrentVersions()
		x.NoncurrentVersionExpiration = &noncurrentExpiration{NoncurrentDays: &d}
		if v > 0 {
			x.NoncurrentVersionExpiration.NewerNoncurrentVersions = &v
		}
	}
	if d := r.GetAbortIncompleteMultipartDays(); d > 0 {
		x.AbortIncompleteMultipartUpload = &abortIncomplete{DaysAfterInitiation: &d}
	}
	return x
}

// LifecycleFromJSON reads a lifecycle configuration in the JSON of S3's
// API (as `aws s3api put-bucket-lifecycle-configuration
// --lifecycle-configuration` takes it: {"Rules": [{"ID", "Status",
// "Filter", "Expiration", ...}]}) and checks it as PutBucketLifecycle
// does; multipartVolume is where the gateway keeps the uploads its abort
// rules apply to.
func LifecycleFromJSON(data []byte, multipartVolume string) (*stratov1.Lifecycle, error) {
	var c lifecycleConfiguration
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("lifecycle configuration: %w", err)
	}
	lc, err := c.rules()
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, fmt.Errorf("lifecycle configuration: %s: %s", e.Code, e.Message)
		}
		return nil, err
	}
	lc.MultipartVolume = multipartVolume
	return lc, nil
}

// LifecycleJSON is a bucket's rules in the JSON of S3's API.
func LifecycleJSON(lc *stratov1.Lifecycle) ([]byte, error) {
	out := struct {
		Rules []lifecycleRule
	}{}
	for _, r := range lc.GetRules() {
		out.Rules = append(out.Rules, lifecycleRuleOf(r))
	}
	return json.MarshalIndent(out, "", "  ")
}
