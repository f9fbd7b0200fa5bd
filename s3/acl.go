package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"net/http"

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

// Bucket ACLs (docs/s3.md, "Users and ACLs"): S3's canned ACLs, mapped to
// strato's ACL of the bucket; grants of other kinds are not implemented.
// Every canned ACL gives the key's user (the bucket's creator) every
// right, so that a bucket never falls back to its volume's entries.

// cannedAcls is the ACL of a bucket created or set with r's x-amz-acl
// (default private) by user ("": no user known, no entry).
func cannedAcls(r *http.Request, user string) ([]*stratov1.Acl, error) {
	for _, h := range []string{"X-Amz-Grant-Full-Control", "X-Amz-Grant-Read", "X-Amz-Grant-Write", "X-Amz-Grant-Read-Acp", "X-Amz-Grant-Write-Acp"} {
		if r.Header.Get(h) != "" {
			return nil, errf(ErrNotImplemented, "%s: only canned ACLs (x-amz-acl) are implemented by strato's gateway (docs/s3.md)", h)
		}
	}
	var acls []*stratov1.Acl
	if user != "" {
		acls = append(acls, &stratov1.Acl{Type: stratov1.AclType_ACL_USER, Name: user, Rights: uint32(stratov1.AclRight_ACL_ALL)})
	}
	world := func(rights string) {
		r, _ := client.ParseRights(rights)
		acls = append(acls, &stratov1.Acl{Type: stratov1.AclType_ACL_WORLD, Rights: r})
	}
	switch canned := r.Header.Get("X-Amz-Acl"); canned {
	case "", "private", "bucket-owner-full-control":
	case "public-read", "authenticated-read":
		world("rl")
	case "public-read-write":
		world("rlwcd")
	default:
		return nil, errf(ErrNotImplemented, "canned ACL %q is not implemented by strato's gateway (docs/s3.md)", canned)
	}
	return acls, nil
}

type accessControlPolicy struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ AccessControlPolicy"`
	Owner   *owner
	Grants  []grant `xml:"AccessControlList>Grant"`
}

type grant struct {
	Grantee    grantee
	Permission string
}

type grantee struct {
	XMLNS       string `xml:"xmlns:xsi,attr"`
	Type        string `xml:"xsi:type,attr"`
	ID          string `xml:",omitempty"`
	DisplayName string `xml:",omitempty"`
	URI         string `xml:",omitempty"`
}

const (
	xsiNS    = "http://www.w3.org/2001/XMLSchema-instance"
	allUsers = "http://acs.amazonaws.com/groups/global/AllUsers"
)

// s3Permissions are the S3 permissions of strato rights.
func s3Permissions(rights uint32) []string {
	has := func(s string) bool {
		r, _ := client.ParseRights(s)
		return rights&r == r
	}
	if has("a") {
		return []string{"FULL_CONTROL"}
	}
	var out []string
	if has("rl") {
		out = append(out, "READ")
	}
	if has("wcd") {
		out = append(out, "WRITE")
	}
	if has("x") {
		out = append(out, "READ_ACP")
	}
	if has("y") {
		out = append(out, "WRITE_ACP")
	}
	return out
}

// getBucketAcl answers the bucket's ACL as S3 grants: its owner's full
// control, and its ACCESS entries for users and the world (group entries
// have no S3 grantee and are left out).
func (g *Gateway) getBucketAcl(rq *request) error {
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	own, acls, err := g.c.GetAcl(rq.ctx, client.BucketObject(g.volume, rq.bucket))
	if err != nil {
		return fromClient(err, nil)
	}
	res := accessControlPolicy{Owner: ownerOf(own)}
	res.Grants = append(res.Grants, grant{Grantee: grantee{XMLNS: xsiNS, Type: "CanonicalUser", ID: res.Owner.ID, DisplayName: res.Owner.DisplayName},
		Permission: "FULL_CONTROL"})
	for _, a := range acls {
		if a.GetScope() != stratov1.AclScope_ACL_ACCESS {
			continue
		}
		var ge grantee
		switch a.GetType() {
		case stratov1.AclType_ACL_USER:
			if a.GetName() == own {
				continue
			}
			ge = grantee{XMLNS: xsiNS, Type: "CanonicalUser", ID: a.GetName(), DisplayName: a.GetName()}
		case stratov1.AclType_ACL_WORLD:
			ge = grantee{XMLNS: xsiNS, Type: "Group", URI: allUsers}
		default:
			continue
		}
		for _, p := range s3Permissions(a.GetRights()) {
			res.Grants = append(res.Grants, grant{Grantee: ge, Permission: p})
		}
	}
	return rq.writeXML(200, res)
}

// putBucketAcl replaces the bucket's ACL with a canned ACL (x-amz-acl);
// an ACL in the body, or grant headers, are not implemented.
func (g *Gateway) putBucketAcl(rq *request) error {
	b, err := g.getBucket(rq)
	if err != nil {
		return err
	}
	if rq.body.size != 0 || rq.r.Header.Get("X-Amz-Acl") == "" {
		_ = rq.body.drain()
		return errf(ErrNotImplemented, "only canned ACLs (x-amz-acl) are implemented by strato's gateway (docs/s3.md)")
	}
	if err := rq.body.drain(); err != nil {
		return err
	}
	// The entry of full control goes to the bucket's owner (its creator),
	// or, for a bucket an administrator made for the gateway, the caller.
	user := b.GetOwner()
	if user == "s3" || user == "" {
		user = rq.user
	}
	acls, err := cannedAcls(rq.r, user)
	if err != nil {
		return err
	}
	if err := g.c.SetAcl(rq.ctx, client.BucketObject(g.volume, rq.bucket), acls); err != nil {
		return fromClient(err, nil)
	}
	return rq.writeEmpty(200)
}
