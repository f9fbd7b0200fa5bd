package s3

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// openVolumes grants, when meta authenticates its callers, what S3's users
// need on the gateway's volumes: every user may list and create buckets
// (world::lc on Volume; a bucket is then its creator's), and the parts of
// multipart uploads, kept in buckets of MultipartVolume that the gateway
// mediates, are open to every user (world::c on it, world::a[DEFAULT] for
// the part buckets). A gateway whose user may not change these ACLs says
// so in its log and goes on: an administrator sets them.
func (g *Gateway) openVolumes(ctx context.Context) error {
	who, err := g.c.WhoAmI(ctx)
	if err != nil || !who.GetAuthenticated() {
		return nil // an older meta, or no authentication: nothing to do
	}
	for _, v := range []struct{ volume, acls string }{
		{g.opts.Volume, "world::lc"},
		{g.opts.MultipartVolume, "world::c,world::a[DEFAULT]"},
	} {
		acls, err := client.ParseAcls(v.acls)
		if err != nil {
			return err
		}
		err = g.c.AddAcl(ctx, client.VolumeObject(v.volume), acls)
		if errors.Is(err, client.ErrPermission) && !errors.Is(err, client.ErrUnauthenticated) {
			g.opts.Logger.Warn("s3: cannot open the volume to S3's users; an administrator must", "volume", v.volume,
				"acl", v.acls, "err", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// aclOwner is the user who keeps every right in an ACL the gateway sets:
// the object's owner, or for one the gateway's own user made (without
// authentication, "s3"), the caller.
func aclOwner(own string, rq *request) string {
	if own == "s3" || own == "" {
		return rq.user
	}
	return own
}

// bucketAccess serves the subresources of a bucket's access: its ACL,
// policy (policyapi.go) and ownership controls (ownership.go).
func (g *Gateway) bucketAccess(rq *request) error {
	q := rq.r.URL.Query()
	switch {
	case q.Has("policy"), q.Has("policyStatus"):
		return g.bucketPolicy(rq)
	case q.Has("ownershipControls"):
		return g.bucketOwnership(rq)
	case rq.r.Method == http.MethodGet:
		rq.op = "GetBucketAcl"
		return g.getBucketAcl(rq)
	case rq.r.Method == http.MethodPut:
		rq.op = "PutBucketAcl"
		return g.putBucketAcl(rq)
	}
	return ErrMethodNotAllowed
}

// objectAcl serves GetObjectAcl and PutObjectAcl.
func (g *Gateway) objectAcl(rq *request) error {
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetObjectAcl"
		return g.getObjectAcl(rq)
	case http.MethodPut:
		rq.op = "PutObjectAcl"
		return g.putObjectAcl(rq)
	}
	return ErrMethodNotAllowed
}

// getBucketAcl answers the bucket's ACL (READ_ACL on the bucket).
func (g *Gateway) getBucketAcl(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	own, acls, err := g.c.GetAcl(rq.ctx, client.BucketObject(g.volume, rq.bucket))
	if err != nil {
		return fromClient(err, ErrNoSuchBucket)
	}
	a, err := g.accessOf(rq.gatewayCtx(), rq.bucket)
	if err != nil {
		return err
	}
	world := authenticatedUsers
	if a.public != "" {
		world = allUsers
	}
	return rq.writeXML(200, aclDocument(own, acls, world))
}

// putBucketAcl replaces the bucket's ACL (WRITE_ACL on the bucket): a
// canned ACL, grant headers or a document, which a bucket whose ownership
// is BucketOwnerEnforced takes only when it gives the owner alone
// anything.
func (g *Gateway) putBucketAcl(rq *request) error {
	b, err := g.getBucket(rq)
	if err != nil {
		_ = rq.body.drain()
		return err
	}
	if bucketAttr(b, attrOwnership) == ownerEnforced && rq.r.Header.Get("X-Amz-Acl") != "" {
		if c := rq.r.Header.Get("X-Amz-Acl"); c != "private" && c != "bucket-owner-full-control" {
			_ = rq.body.drain()
			return errACLNotSupported
		}
	}
	a, err := rq.requestACL()
	if err != nil {
		return err
	}
	owner := aclOwner(b.GetOwner(), rq)
	if a.owner != "" && a.owner != owner && a.owner != b.GetOwner() && (rq.auth == nil || a.owner != rq.auth.accessKey) {
		return withFields(errf(ErrInvalidArgument, "Invalid id"), "ArgumentName", "CanonicalUser/ID", "ArgumentValue", a.owner)
	}
	if err := aclsAllowed(bucketAttr(b, attrOwnership), a.ownerOnly(owner)); err != nil {
		return err
	}
	acls, err := g.nativeACL(rq, a, owner, true)
	if err != nil {
		return err
	}
	if err := g.c.SetAcl(rq.ctx, client.BucketObject(g.volume, rq.bucket), acls); err != nil {
		return fromClient(err, nil)
	}
	if bucketAttr(b, attrPublic) == a.public() {
		return rq.writeEmpty(200)
	}
	return g.writeAccessConfig(rq, attrPublic, a.public(), 200)
}

// getObjectAcl answers a key's ACL (READ_ACL on it): its owner and its own
// entries (none: it takes its bucket's).
func (g *Gateway) getObjectAcl(rq *request) error {
	if err := rq.body.drain(); err != nil {
		return err
	}
	own, acls, err := g.c.GetAcl(rq.ctx, client.KeyObject(g.volume, rq.bucket, rq.key))
	if err != nil {
		return fromClient(err, ErrNoSuchKey)
	}
	// An object's WORLD entries show as AllUsers' (the gateway marks
	// AllUsers on buckets only).
	return rq.writeXML(200, aclDocument(own, acls, allUsers))
}

// putObjectAcl replaces a key's ACL (WRITE_ACL on it).
func (g *Gateway) putObjectAcl(rq *request) error {
	a, err := g.objectACLAllowed(rq, true)
	if err != nil {
		return err
	}
	if err := g.setObjectAcl(rq, a); err != nil {
		return err
	}
	return rq.writeEmpty(200)
}

// objectACLAllowed reads the ACL a request asks of an object (body: a
// PutObjectAcl, which may carry a document) and checks that the bucket's
// ownership takes it; nil: none asked.
func (g *Gateway) objectACLAllowed(rq *request, body bool) (*s3ACL, error) {
	var a *s3ACL
	var err error
	if body {
		a, err = rq.requestACL()
	} else {
		a, err = headerACL(rq.r.Header)
	}
	if err != nil || a == nil {
		return nil, err
	}
	acc, err := g.accessOf(rq.gatewayCtx(), rq.bucket)
	if err != nil {
		return nil, err
	}
	if !acc.exists {
		return nil, ErrNoSuchBucket
	}
	if err := aclsAllowed(acc.ownership, a.ownerOnly(rq.user) || a.owner != "" && a.ownerOnly(a.owner)); err != nil {
		return nil, err
	}
	return a, nil
}

// setObjectAcl sets a key's ACL.
func (g *Gateway) setObjectAcl(rq *request, a *s3ACL) error {
	obj := client.KeyObject(g.volume, rq.bucket, rq.key)
	own, _, err := g.c.GetAcl(rq.gatewayCtx(), obj)
	if err != nil {
		return fromClient(err, ErrNoSuchKey)
	}
	acls, err := g.nativeACL(rq, a, aclOwner(own, rq), false)
	if err != nil {
		return err
	}
	if err := g.c.SetAcl(rq.ctx, obj, acls); err != nil {
		return fromClient(err, ErrNoSuchKey)
	}
	return nil
}

// withObjectACL serves a write of an object (PutObject, CopyObject,
// CreateMultipartUpload) that may ask for an ACL: checked before, set on
// the key once it is written (its answer is sent by then: an ACL that
// cannot be set leaves the object with its bucket's rights, and the
// gateway logs it). CreateMultipartUpload keeps it in the upload's marker
// (attrUploadACL) for withUploadACL.
func (g *Gateway) withObjectACL(rq *request, serve func(*request) error) error {
	a, err := g.objectACLAllowed(rq, false)
	if err != nil {
		_ = rq.body.drain()
		return err
	}
	if err := serve(rq); err != nil || a == nil || rq.status != http.StatusOK || rq.op == "CreateMultipartUpload" {
		return err
	}
	g.setWrittenAcl(rq, a)
	return nil
}

// setWrittenAcl sets the ACL of an object just written and answered: a
// failure is logged.
func (g *Gateway) setWrittenAcl(rq *request, a *s3ACL) {
	if err := g.setObjectAcl(rq, a); err != nil {
		g.opts.Logger.Warn("s3: the object is written, its ACL is not", "bucket", rq.bucket, "key", rq.key, "request_id", rq.id, "err", err)
	}
}

// attrUploadACL keeps, in a multipart upload's marker, the ACL headers of
// its CreateMultipartUpload (as a query string).
const attrUploadACL = "x-strato-upload-acl"

// uploadACL encodes the ACL headers of a request ("": none).
func uploadACL(h http.Header) string {
	v := url.Values{}
	for _, name := range append([]string{"X-Amz-Acl"}, grantHeaderNames()...) {
		if x := h.Get(name); x != "" {
			v.Set(name, x)
		}
	}
	return v.Encode()
}

func grantHeaderNames() []string {
	var out []string
	for _, gh := range grantHeaders {
		out = append(out, gh.header)
	}
	return out
}

// withUploadACL serves a CompleteMultipartUpload and sets on the object
// the ACL its CreateMultipartUpload asked for, read from the upload's
// marker before the Complete removes it.
func (g *Gateway) withUploadACL(rq *request, serve func(*request) error) error {
	var a *s3ACL
	if id := rq.r.URL.Query().Get("uploadId"); validUploadID(id) {
		if _, m, err := g.upload(rq, id); err == nil && m[attrUploadACL] != "" {
			q, _ := url.ParseQuery(m[attrUploadACL])
			h := http.Header{}
			for k, vs := range q {
				h[http.CanonicalHeaderKey(k)] = vs
			}
			a, _ = headerACL(h) // checked when the upload began
		}
	}
	if err := serve(rq); err != nil || a == nil || rq.status != http.StatusOK {
		return err
	}
	g.setWrittenAcl(rq, a)
	return nil
}

// newBucketAccess is the ACL and the access attributes (ownership, AllUsers'
// permissions) of a bucket CreateBucket makes: its x-amz-object-ownership
// (default BucketOwnerEnforced) and its canned ACL or grant headers.
func (g *Gateway) newBucketAccess(rq *request) ([]*stratov1.Acl, map[string]string, error) {
	ownership, err := ownershipOf(rq.r)
	if err != nil {
		return nil, nil, err
	}
	a, err := headerACL(rq.r.Header)
	if err != nil {
		return nil, nil, err
	}
	if a == nil {
		a = &s3ACL{}
	}
	if ownership == ownerEnforced && !a.ownerOnly(rq.user) {
		return nil, nil, errBucketACLWithEnforced
	}
	acls, err := g.nativeACL(rq, a, rq.user, true)
	if err != nil {
		return nil, nil, err
	}
	return acls, map[string]string{attrOwnership: ownership, attrPublic: a.public()}, nil
}
