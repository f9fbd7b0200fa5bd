package s3

import (
	"encoding/xml"
	"net/http"
)

// Bucket ownership controls (docs/s3.md, "Bucket ACLs"): which ACLs a
// bucket takes. A bucket created through S3 gets AWS's default,
// BucketOwnerEnforced (ACLs disabled: only private and
// bucket-owner-full-control are taken), unless its CreateBucket names
// another in x-amz-object-ownership; a bucket without the attribute (made
// before the gateway knew ownership controls, or by strato's own tools)
// takes ACLs, as AWS's older buckets do. strato's keys always belong to
// whoever wrote them and the bucket's owner has every right on them (meta's
// rule), so ObjectWriter and BucketOwnerPreferred differ only in name.

const (
	// attrOwnership holds a bucket's ObjectOwnership.
	attrOwnership = "x-strato-acl-ownership"

	ownerEnforced  = "BucketOwnerEnforced"
	ownerPreferred = "BucketOwnerPreferred"
	objectWriter   = "ObjectWriter"
)

var (
	errOwnershipNotFound = s3err("OwnershipControlsNotFoundError", 404, "The bucket ownership controls were not found.")
	// errACLNotSupported: an ACL other than the owner's own on a bucket
	// whose ownership is BucketOwnerEnforced.
	errACLNotSupported = s3err("AccessControlListNotSupported", 400, "The bucket does not allow ACLs.")
	// errBucketACLWithEnforced: CreateBucket with both.
	errBucketACLWithEnforced = s3err("InvalidBucketAclWithObjectOwnership", 400,
		"Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting")
)

// validOwnership: one of AWS's three.
func validOwnership(s string) bool {
	return s == ownerEnforced || s == ownerPreferred || s == objectWriter
}

// ownershipOf is CreateBucket's x-amz-object-ownership (default
// BucketOwnerEnforced, as AWS's).
func ownershipOf(r *http.Request) (string, error) {
	v := r.Header.Get("X-Amz-Object-Ownership")
	if v == "" {
		return ownerEnforced, nil
	}
	if !validOwnership(v) {
		return "", withFields(errf(ErrInvalidArgument, "Invalid x-amz-object-ownership header: %s", v), "ArgumentName", "x-amz-object-ownership")
	}
	return v, nil
}

type ownershipControls struct {
	XMLName xml.Name        `xml:"OwnershipControls"`
	Rules   []ownershipRule `xml:"Rule"`
}

type ownershipRule struct {
	ObjectOwnership string
}

type ownershipControlsOut struct {
	XMLName xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ OwnershipControls"`
	Rules   []ownershipRule `xml:"Rule"`
}

// bucketOwnership serves Get, Put and DeleteBucketOwnershipControls.
// Changing them takes WRITE_ACL on the bucket (meta's rule for x-strato-acl-
// attributes), reading them READ_ACL.
func (g *Gateway) bucketOwnership(rq *request) error {
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetBucketOwnershipControls"
		b, err := g.readAccessConfig(rq)
		if err != nil {
			return err
		}
		v := bucketAttr(b, attrOwnership)
		if v == "" {
			return errOwnershipNotFound
		}
		return rq.writeXML(http.StatusOK, ownershipControlsOut{Rules: []ownershipRule{{ObjectOwnership: v}}})
	case http.MethodPut:
		rq.op = "PutBucketOwnershipControls"
		var oc ownershipControls
		if err := rq.decodeXML(&oc, 64<<10); err != nil {
			return err
		}
		if len(oc.Rules) != 1 || !validOwnership(oc.Rules[0].ObjectOwnership) {
			return ErrMalformedXML
		}
		return g.writeAccessConfig(rq, attrOwnership, oc.Rules[0].ObjectOwnership, http.StatusOK)
	case http.MethodDelete:
		rq.op = "DeleteBucketOwnershipControls"
		if err := rq.body.drain(); err != nil {
			return err
		}
		return g.writeAccessConfig(rq, attrOwnership, "", http.StatusNoContent)
	}
	return ErrMethodNotAllowed
}

// aclsAllowed refuses an ACL (canned or granted) other than the owner's own
// on a bucket whose ownership is BucketOwnerEnforced.
func aclsAllowed(ownership string, ownerOnly bool) error {
	if ownership == ownerEnforced && !ownerOnly {
		return errACLNotSupported
	}
	return nil
}
