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

// checkExpectedOwners checks x-amz-expected-bucket-owner against the
// request's bucket and x-amz-source-expected-bucket-owner against a copy's
// source bucket: a bucket of another owner is AccessDenied, as at AWS (a
// bucket that does not exist is the handler's to answer).
func (g *Gateway) checkExpectedOwners(rq *request) error {
	if want := rq.r.Header.Get("X-Amz-Expected-Bucket-Owner"); want != "" && rq.bucket != "" {
		if err := g.expectOwner(rq, rq.bucket, want); err != nil {
			return err
		}
	}
	want := rq.r.Header.Get("X-Amz-Source-Expected-Bucket-Owner")
	if want == "" {
		return nil
	}
	sb, _, _, err := copySource(rq.r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return nil // the handler refuses the source
	}
	return g.expectOwner(rq, sb, want)
}

// expectOwner checks that id names bucket's owner: its user name, or an
// access key of that user. A bucket the gateway's own user made (without
// authentication) is the caller's, as in its ACL (aclOwner).
func (g *Gateway) expectOwner(rq *request, bucket, id string) error {
	bk, err := g.c.GetBucket(rq.ctx, g.volume, bucket)
	if err != nil {
		return nil
	}
	own := aclOwner(bk.GetOwner(), rq)
	switch {
	case id == bk.GetOwner() || id == own && own != "":
		return nil
	case rq.auth != nil && id == rq.auth.accessKey && rq.user == own:
		return nil
	}
	if ku, ok := g.opts.Credentials.(KeyUsers); ok {
		if u, err := ku.KeyUser(rq.gatewayCtx(), id); err == nil && u != "" && u == own {
			return nil
		}
	}
	return ErrAccessDenied
}
