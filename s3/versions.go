package s3

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Bucket versioning (docs/s3.md, "Versioning"; decision 0086): meta keeps
// the versions; the gateway names them by the versionId query parameter
// and answers x-amz-version-id.

var (
	ErrNoSuchVersion                    = s3err("NoSuchVersion", 404, "The specified version does not exist.")
	ErrIllegalVersioningConfiguration   = s3err("IllegalVersioningConfigurationException", 400, "The Versioning element must be specified")
	ErrInvalidBucketState               = s3err("InvalidBucketState", 409, "The request is not valid with the current state of the bucket.")
	errInvalidVersionID                 = s3err("InvalidArgument", 400, "Invalid version id specified")
	headerVersionID, headerDeleteMarker = "x-amz-version-id", "x-amz-delete-marker"
)

// versionParam is the request's versionId query parameter ("": none); an
// empty one is an error, as at AWS.
func versionParam(rq *request) (string, error) {
	q := rq.r.URL.Query()
	if !q.Has("versionId") {
		return "", nil
	}
	v := q.Get("versionId")
	if v == "" {
		return "", withFields(errf(ErrInvalidArgument, "Version id cannot be the empty string"), "ArgumentName", "versionId", "ArgumentValue", "")
	}
	return v, nil
}

// versionError is the S3 answer to a failed read or write of version
// versionID ("": the latest) of a key.
func versionError(err error, versionID string) error {
	switch {
	case versionID == "":
		return keyError(err)
	case errors.Is(err, client.ErrInvalid) && foreignVersionID(versionID):
		return ErrNoSuchVersion
	case errors.Is(err, client.ErrInvalid), errors.Is(err, client.ErrPrecondition):
		return withFields(errInvalidVersionID, "ArgumentName", "versionId", "ArgumentValue", versionID)
	}
	return fromClient(err, ErrNoSuchVersion)
}

// foreignVersionID says whether id, not one of strato's, is still of the
// form other stores give their version IDs (16 to 128 letters and digits,
// as the ULIDs of MinIO and versitygw): such an ID names no version here
// (NoSuchVersion, as at AWS), where another is malformed (InvalidArgument).
func foreignVersionID(id string) bool {
	if strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		return false
	}
	return len(id) >= 16 && len(id) <= 128
}

// setVersion sets the headers that name version ki.
func setVersion(h http.Header, ki *stratov1.KeyInfo) {
	if v := ki.GetVersionId(); v != "" {
		h.Set(headerVersionID, v)
	}
	if ki.GetDeleteMarker() {
		h.Set(headerDeleteMarker, "true")
	}
}

// markerError is the answer to a read that found delete marker ki: the
// key's latest version (404), or the version named (405).
func markerError(h http.Header, ki *stratov1.KeyInfo, versionID string) error {
	setVersion(h, ki)
	h.Set("Last-Modified", time.UnixMilli(ki.GetModificationTimeUnixMs()).UTC().Format(http.TimeFormat))
	if versionID != "" {
		return ErrMethodNotAllowed
	}
	return ErrNoSuchKey
}

// lookupVersion reads the version of rq's key that its versionId names;
// a delete marker is an error (markerError).
func (g *Gateway) lookupVersion(rq *request) (*stratov1.KeyInfo, string, error) {
	vid, err := versionParam(rq)
	if err != nil {
		return nil, "", err
	}
	ki, err := g.c.LookupKeyVersion(rq.ctx, g.volume, rq.bucket, rq.key, client.KeyVersion{ID: vid, DeleteMarkers: true})
	if err != nil {
		return nil, vid, versionError(err, vid)
	}
	if ki.GetDeleteMarker() {
		return nil, vid, markerError(rq.w.Header(), ki, vid)
	}
	return ki, vid, nil
}

type versioningConfiguration struct {
	XMLName   xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ VersioningConfiguration"`
	Status    string   `xml:",omitempty"`
	MfaDelete string   `xml:",omitempty"`
}

// bucketVersioning serves GetBucketVersioning and PutBucketVersioning.
func (g *Gateway) bucketVersioning(rq *request) error {
	if rq.r.Method == http.MethodPut {
		rq.op = "PutBucketVersioning"
		return g.putBucketVersioning(rq)
	}
	rq.op = "GetBucketVersioning"
	return g.getBucketVersioning(rq)
}

func (g *Gateway) getBucketVersioning(rq *request) error {
	bk, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	res := versioningConfiguration{}
	switch bk.GetVersioning() {
	case stratov1.BucketVersioning_VERSIONING_ENABLED:
		res.Status = "Enabled"
	case stratov1.BucketVersioning_VERSIONING_SUSPENDED:
		res.Status = "Suspended"
	}
	return rq.writeXML(200, res)
}

func (g *Gateway) putBucketVersioning(rq *request) error {
	var c struct {
		XMLName   xml.Name `xml:"VersioningConfiguration"`
		Status    string
		MfaDelete string
	}
	if err := rq.decodeXML(&c, 64<<10); err != nil {
		return err
	}
	if rq.r.Header.Get("X-Amz-Mfa") != "" || c.MfaDelete == "Enabled" {
		return errf(ErrNotImplemented, "strato has no MFA delete: MfaDelete must be Disabled and x-amz-mfa absent")
	}
	if c.MfaDelete != "" && c.MfaDelete != "Disabled" {
		return ErrMalformedXML
	}
	var v stratov1.BucketVersioning
	switch c.Status {
	case "Enabled":
		v = stratov1.BucketVersioning_VERSIONING_ENABLED
	case "Suspended":
		v = stratov1.BucketVersioning_VERSIONING_SUSPENDED
	default:
		return ErrIllegalVersioningConfiguration
	}
	if v != stratov1.BucketVersioning_VERSIONING_ENABLED {
		if bk, err := g.getBucket(rq); err != nil {
			return err
		} else if bk.GetObjectLock().GetEnabled() {
			return errLockKeepsVersioning
		}
	}
	_, err := g.c.UpdateBucket(rq.ctx, &stratov1.UpdateBucketRequest{Volume: g.volume, Name: rq.bucket, Versioning: v})
	switch {
	case errors.Is(err, client.ErrInvalid), errors.Is(err, client.ErrNotFound):
		return ErrNoSuchBucket
	case errors.Is(err, client.ErrPrecondition):
		// A file-system bucket, or one with snapshots.
		return errf(ErrInvalidBucketState, "%s", metaMessage(err))
	case err != nil:
		return fromClient(err, nil)
	}
	return rq.writeEmpty(200)
}
