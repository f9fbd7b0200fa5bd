package s3

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// S3 object lock (docs/s3.md "Object lock", decision 0088). Meta keeps and
// enforces the locks: the gateway parses and checks what a request asks
// for, with AWS's errors, and names meta's refusals as AWS does
// (AccessDenied, "Access Denied because object protected by object
// lock.").

var (
	ErrObjectLocked                    = s3err("AccessDenied", 403, "Access Denied because object protected by object lock.")
	errObjectLockConfigurationNotFound = s3err("ObjectLockConfigurationNotFoundError", 404, "Object Lock configuration does not exist for this bucket.")
	errNoSuchObjectLockConfiguration   = s3err("NoSuchObjectLockConfiguration", 400, "The specified object does not have a ObjectLock configuration.")
	errMissingLockConfiguration        = s3err("InvalidRequest", 400, "Bucket is missing Object Lock Configuration")
	errMissingLockConfigurationHeaders = s3err("InvalidRequest", 400, "Bucket is missing ObjectLockConfiguration")
	errMissingRequestBody              = s3err("MissingRequestBodyError", 400, "Request Body is empty")
	errLockNeedsVersioning             = s3err("InvalidBucketState", 409, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
	errLockKeepsVersioning             = s3err("InvalidBucketState", 409, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
)

const (
	headerLockMode      = "X-Amz-Object-Lock-Mode"
	headerLockUntil     = "X-Amz-Object-Lock-Retain-Until-Date"
	headerLegalHold     = "X-Amz-Object-Lock-Legal-Hold"
	headerBypass        = "X-Amz-Bypass-Governance-Retention"
	headerBucketLockOn  = "X-Amz-Bucket-Object-Lock-Enabled"
	attrUploadLockMode  = "x-strato-upload-lock-mode"
	attrUploadLockUntil = "x-strato-upload-lock-until"
	attrUploadLegalHold = "x-strato-upload-legal-hold"
)

// lockTimeFormat is how retain-until dates are written (ISO 8601, UTC).
const lockTimeFormat = "2006-01-02T15:04:05.000Z"

func modeOf(s string) (stratov1.RetentionMode, bool) {
	switch s {
	case "GOVERNANCE":
		return stratov1.RetentionMode_RETENTION_GOVERNANCE, true
	case "COMPLIANCE":
		return stratov1.RetentionMode_RETENTION_COMPLIANCE, true
	}
	return stratov1.RetentionMode_RETENTION_UNSPECIFIED, false
}

func modeString(m stratov1.RetentionMode) string {
	switch m {
	case stratov1.RetentionMode_RETENTION_GOVERNANCE:
		return "GOVERNANCE"
	case stratov1.RetentionMode_RETENTION_COMPLIANCE:
		return "COMPLIANCE"
	}
	return ""
}

// parseLockDate parses a retain-until date: ISO 8601 (RFC 3339, with or
// without fractions of a second).
func parseLockDate(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// bypass says whether the request asks to bypass GOVERNANCE retention
// (meta grants it to the bucket's owner and administrators only).
func bypass(rq *request) bool {
	return strings.EqualFold(strings.TrimSpace(rq.r.Header.Get(headerBypass)), "true")
}

// lockHeaders is the object lock a PUT, copy or CreateMultipartUpload asks
// for in its x-amz-object-lock-* headers (nil: none), checked as AWS does;
// the bucket must have object lock.
func (g *Gateway) lockHeaders(rq *request) (*stratov1.ObjectLock, error) {
	h := rq.r.Header
	ms, us, hs := h.Get(headerLockMode), h.Get(headerLockUntil), h.Get(headerLegalHold)
	if ms == "" && us == "" && hs == "" {
		return nil, nil
	}
	l := &stratov1.ObjectLock{}
	switch hs {
	case "", "OFF":
	case "ON":
		l.LegalHold = true
	default:
		return nil, withFields(errf(ErrInvalidArgument, "Legal Hold must be either of 'ON' or 'OFF'"),
			"ArgumentName", "x-amz-object-lock-legal-hold", "ArgumentValue", hs)
	}
	if ms != "" {
		m, ok := modeOf(ms)
		if !ok {
			return nil, withFields(errf(ErrInvalidArgument, "Unknown wormMode directive."),
				"ArgumentName", "x-amz-object-lock-mode", "ArgumentValue", ms)
		}
		l.Mode = m
	}
	var until time.Time
	if us != "" {
		t, ok := parseLockDate(us)
		if !ok {
			return nil, withFields(errf(ErrInvalidArgument, "The retain until date must be provided in ISO 8601 format"),
				"ArgumentName", "x-amz-object-lock-retain-until-date", "ArgumentValue", us)
		}
		until = t
	}
	switch {
	case ms != "" && us == "":
		return nil, withFields(errf(ErrInvalidArgument, "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied."),
			"ArgumentName", "x-amz-object-lock-retain-until-date", "ArgumentValue", "")
	case ms == "" && us != "":
		return nil, withFields(errf(ErrInvalidArgument, "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied."),
			"ArgumentName", "x-amz-object-lock-mode", "ArgumentValue", "")
	case us != "" && !until.After(g.opts.Now()):
		return nil, withFields(errf(ErrInvalidArgument, "The retain until date must be in the future!"),
			"ArgumentName", "x-amz-object-lock-retain-until-date", "ArgumentValue", us)
	}
	if us != "" {
		l.RetainUntilUnixMs = until.UnixMilli()
	}
	bk, err := g.getBucket(rq)
	if err != nil {
		return nil, err
	}
	if !bk.GetObjectLock().GetEnabled() {
		return nil, errMissingLockConfigurationHeaders
	}
	return l, nil
}

// lockError is the S3 answer to a change meta refused for an object lock.
func lockError(err error) error {
	if errors.Is(err, client.ErrObjectLocked) {
		return ErrObjectLocked
	}
	return err
}

// setLockHeaders sets the x-amz-object-lock-* headers of a GET or HEAD.
func setLockHeaders(h http.Header, l *stratov1.ObjectLock) {
	if l == nil {
		return
	}
	if m := modeString(l.GetMode()); m != "" {
		h.Set(headerLockMode, m)
		h.Set(headerLockUntil, time.UnixMilli(l.GetRetainUntilUnixMs()).UTC().Format(lockTimeFormat))
	}
	if l.GetLegalHold() {
		h.Set(headerLegalHold, "ON")
	} else {
		h.Set(headerLegalHold, "OFF")
	}
}

// uploadLockAttrs records an upload's object lock with its marker, for
// its Complete.
func uploadLockAttrs(m attrs, l *stratov1.ObjectLock) {
	if l == nil {
		return
	}
	if l.GetMode() != stratov1.RetentionMode_RETENTION_UNSPECIFIED {
		m[attrUploadLockMode] = modeString(l.GetMode())
		m[attrUploadLockUntil] = strconv.FormatInt(l.GetRetainUntilUnixMs(), 10)
	}
	m[attrUploadLegalHold] = strconv.FormatBool(l.GetLegalHold())
}

// uploadLock is the object lock an upload's marker recorded (nil: none),
// taken out of m.
func uploadLock(m attrs) *stratov1.ObjectLock {
	ms, us, hs := m[attrUploadLockMode], m[attrUploadLockUntil], m[attrUploadLegalHold]
	delete(m, attrUploadLockMode)
	delete(m, attrUploadLockUntil)
	delete(m, attrUploadLegalHold)
	if ms == "" && hs == "" {
		return nil
	}
	l := &stratov1.ObjectLock{LegalHold: hs == "true"}
	l.Mode, _ = modeOf(ms)
	l.RetainUntilUnixMs, _ = strconv.ParseInt(us, 10, 64)
	return l
}

// ---- bucket configuration ---------------------------------------------------

type objectLockConfiguration struct {
	XMLName           xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ObjectLockConfiguration"`
	ObjectLockEnabled string          `xml:",omitempty"`
	Rule              *objectLockRule `xml:",omitempty"`
}

type objectLockRule struct {
	DefaultRetention *defaultRetention
}

type defaultRetention struct {
	Mode  string `xml:",omitempty"`
	Days  *int32 `xml:",omitempty"`
	Years *int32 `xml:",omitempty"`
}

// bucketObjectLock serves Get/PutObjectLockConfiguration.
func (g *Gateway) bucketObjectLock(rq *request) error {
	if rq.r.Method == http.MethodPut {
		rq.op = "PutObjectLockConfiguration"
		return g.putObjectLockConfiguration(rq)
	}
	rq.op = "GetObjectLockConfiguration"
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	l := bk.GetObjectLock()
	if !l.GetEnabled() {
		return errObjectLockConfigurationNotFound
	}
	res := objectLockConfiguration{ObjectLockEnabled: "Enabled"}
	if m := modeString(l.GetDefaultMode()); m != "" {
		dr := &defaultRetention{Mode: m}
		if l.GetDefaultYears() > 0 {
			dr.Years = proto.Int32(l.GetDefaultYears())
		} else {
			dr.Days = proto.Int32(l.GetDefaultDays())
		}
		res.Rule = &objectLockRule{DefaultRetention: dr}
	}
	return rq.writeXML(200, res)
}

func (g *Gateway) putObjectLockConfiguration(rq *request) error {
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	data, err := rq.readAll(64 << 10)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return errMissingRequestBody
	}
	var c struct {
		XMLName           xml.Name `xml:"ObjectLockConfiguration"`
		ObjectLockEnabled string
		Rule              *struct {
			DefaultRetention *struct {
				Mode  string
				Days  *int32
				Years *int32
			}
		}
	}
	if err := xml.Unmarshal(data, &c); err != nil {
		return errf(ErrMalformedXML, "%s", ErrMalformedXML.Message)
	}
	want := &stratov1.BucketObjectLock{Enabled: true}
	if c.ObjectLockEnabled != "Enabled" {
		return ErrMalformedXML
	}
	if c.Rule != nil {
		dr := c.Rule.DefaultRetention
		if dr == nil {
			return ErrMalformedXML
		}
		m, ok := modeOf(dr.Mode)
		if !ok || (dr.Days == nil) == (dr.Years == nil) {
			return ErrMalformedXML
		}
		switch {
		case dr.Days != nil && *dr.Days <= 0:
			return withFields(errf(ErrInvalidArgument, "Default retention period must be a positive integer value."),
				"ArgumentName", "Days", "ArgumentValue", strconv.Itoa(int(*dr.Days)))
		case dr.Days != nil && *dr.Days > 36500:
			return withFields(errf(ErrInvalidArgument, "Default retention period too large."),
				"ArgumentName", "Days", "ArgumentValue", strconv.Itoa(int(*dr.Days)))
		case dr.Years != nil && *dr.Years <= 0:
			return withFields(errf(ErrInvalidArgument, "Default retention period must be a positive integer value."),
				"ArgumentName", "Years", "ArgumentValue", strconv.Itoa(int(*dr.Years)))
		case dr.Years != nil && *dr.Years > 100:
			return withFields(errf(ErrInvalidArgument, "Default retention period too large."),
				"ArgumentName", "Years", "ArgumentValue", strconv.Itoa(int(*dr.Years)))
		}
		want.DefaultMode = m
		if dr.Days != nil {
			want.DefaultDays = *dr.Days
		} else {
			want.DefaultYears = *dr.Years
		}
	}
	if !bk.GetObjectLock().GetEnabled() {
		// Only at creation (as MinIO; AWS also lets a versioned bucket
		// take it later).
		if bk.GetVersioning() != stratov1.BucketVersioning_VERSIONING_ENABLED {
			return errLockNeedsVersioning
		}
		return errf(ErrInvalidBucketState, "Object Lock configuration cannot be enabled on existing buckets")
	}
	_, err = g.c.UpdateBucket(rq.ctx, &stratov1.UpdateBucketRequest{Volume: g.volume, Name: rq.bucket, ObjectLock: want})
	if err != nil {
		return fromClient(err, nil)
	}
	return rq.writeEmpty(200)
}

// ---- retention and legal hold of a version ----------------------------------

type retentionXML struct {
	XMLName         xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ Retention"`
	Mode            string   `xml:",omitempty"`
	RetainUntilDate string   `xml:",omitempty"`
}

type legalHoldXML struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LegalHold"`
	Status  string
}

// latestIfEmpty drops an empty versionId from rq's query: the retention
// and legal hold calls take it as the latest version (SDKs send
// "versionId=" for an empty string, which GET and DELETE refuse).
func latestIfEmpty(rq *request) {
	q := rq.r.URL.Query()
	if q.Has("versionId") && q.Get("versionId") == "" {
		q.Del("versionId")
		rq.r.URL.RawQuery = q.Encode()
	}
}

// objectRetention serves Get/PutObjectRetention.
func (g *Gateway) objectRetention(rq *request) error {
	latestIfEmpty(rq)
	if rq.r.Method == http.MethodPut {
		rq.op = "PutObjectRetention"
		return g.putObjectLock(rq, true)
	}
	rq.op = "GetObjectRetention"
	l, err := g.versionLock(rq)
	if err != nil {
		return err
	}
	m := modeString(l.GetMode())
	if m == "" {
		return errNoSuchObjectLockConfiguration
	}
	return rq.writeXML(200, retentionXML{Mode: m,
		RetainUntilDate: time.UnixMilli(l.GetRetainUntilUnixMs()).UTC().Format(lockTimeFormat)})
}

// objectLegalHold serves Get/PutObjectLegalHold.
func (g *Gateway) objectLegalHold(rq *request) error {
	latestIfEmpty(rq)
	if rq.r.Method == http.MethodPut {
		rq.op = "PutObjectLegalHold"
		return g.putObjectLock(rq, false)
	}
	rq.op = "GetObjectLegalHold"
	l, err := g.versionLock(rq)
	if err != nil {
		return err
	}
	if l == nil {
		return errNoSuchObjectLockConfiguration
	}
	status := "OFF"
	if l.GetLegalHold() {
		status = "ON"
	}
	return rq.writeXML(200, legalHoldXML{Status: status})
}

// lockedBucket checks that rq's bucket exists and has object lock.
func (g *Gateway) lockedBucket(rq *request) error {
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	if !bk.GetObjectLock().GetEnabled() {
		return errMissingLockConfiguration
	}
	return nil
}

// versionLock is the lock of the version rq names, in a bucket with
// object lock (the version is looked up first: NoSuchKey before a bucket
// without object lock, as AWS answers).
func (g *Gateway) versionLock(rq *request) (*stratov1.ObjectLock, error) {
	if err := rq.body.drain(); err != nil {
		return nil, err
	}
	ki, _, err := g.lookupVersion(rq)
	if err != nil {
		return nil, err
	}
	if err := g.lockedBucket(rq); err != nil {
		return nil, err
	}
	return ki.GetObjectLock(), nil
}

// putObjectLock serves PutObjectRetention (retention) and
// PutObjectLegalHold.
func (g *Gateway) putObjectLock(rq *request, retention bool) error {
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	data, err := rq.readAll(64 << 10)
	if err != nil {
		return err
	}
	req := &stratov1.SetObjectLockRequest{Volume: g.volume, Bucket: rq.bucket, Key: rq.key, BypassGovernance: bypass(rq)}
	if retention {
		var c struct {
			XMLName         xml.Name `xml:"Retention"`
			Mode            string
			RetainUntilDate string
		}
		if len(strings.TrimSpace(string(data))) == 0 || xml.Unmarshal(data, &c) != nil {
			return ErrMalformedXML
		}
		req.SetRetention = true
		if c.Mode != "" || c.RetainUntilDate != "" {
			m, ok := modeOf(c.Mode)
			if !ok {
				return ErrMalformedXML
			}
			t, ok := parseLockDate(c.RetainUntilDate)
			if !ok {
				return ErrMalformedXML
			}
			if !t.After(g.opts.Now()) {
				return withFields(errf(ErrInvalidArgument, "The retain until date must be in the future!"),
					"ArgumentName", "RetainUntilDate", "ArgumentValue", c.RetainUntilDate)
			}
			req.Mode, req.RetainUntilUnixMs = m, t.UnixMilli()
		}
	} else {
		var c struct {
			XMLName xml.Name `xml:"LegalHold"`
			Status  string
		}
		if len(strings.TrimSpace(string(data))) == 0 || xml.Unmarshal(data, &c) != nil {
			return ErrMalformedXML
		}
		switch c.Status {
		case "ON":
			req.LegalHold = proto.Bool(true)
		case "OFF":
			req.LegalHold = proto.Bool(false)
		default:
			return ErrMalformedXML
		}
	}
	if err := g.lockedBucket(rq); err != nil {
		return err
	}
	ki, vid, err := g.lookupVersion(rq)
	if err != nil {
		return err
	}
	req.VersionId = ki.GetVersionId()
	res, err := g.c.SetObjectLock(rq.ctx, req)
	if err != nil {
		return lockError(versionErrorOr(err, vid))
	}
	if v := res.GetVersionId(); v != "" {
		rq.w.Header().Set(headerVersionID, v)
	}
	return rq.writeEmpty(200)
}

// versionErrorOr is versionError for every error but an object lock's.
func versionErrorOr(err error, vid string) error {
	if errors.Is(err, client.ErrObjectLocked) {
		return err
	}
	return versionError(err, vid)
}
