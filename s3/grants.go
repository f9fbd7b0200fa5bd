package s3

import (
	"encoding/xml"
	"net/http"
	"slices"
	"strings"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// S3 ACLs on strato's native ACLs (docs/s3.md, "Bucket and object ACLs").
// An ACL comes as a canned ACL (x-amz-acl), as grant headers
// (x-amz-grant-read: id="alice", uri="...AllUsers") or as an
// AccessControlPolicy document, one of the three. Each grant becomes an
// ACCESS entry: a CanonicalUser grantee (a strato user, or an access key,
// which names its user) a USER entry, the AllUsers and AuthenticatedUsers
// groups the WORLD entry. The owner always keeps an entry of every right,
// so that a bucket never falls back to its volume's entries. AllUsers'
// permissions on a bucket are recorded besides (attrPublic): strato's WORLD
// is every authenticated user, and only AllUsers opens the bucket to
// anonymous requests.

const (
	xsiNS              = "http://www.w3.org/2001/XMLSchema-instance"
	allUsers           = "http://acs.amazonaws.com/groups/global/AllUsers"
	authenticatedUsers = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers"
)

var (
	errCannedAndGrants = errf(ErrInvalidRequest, "Specifying both Canned ACLs and Header Grants is not allowed.")
	errUnexpectedACL   = s3err("UnexpectedContent", 400, "This request does not support content.")
	errMissingACL      = s3err("MissingSecurityHeader", 400, "Your request was missing a required header.")
	errMalformedACL    = s3err("MalformedACLError", 400, "The XML you provided was not well-formed or did not validate against our published schema.")
)

// s3ACL is an ACL asked for, before it is mapped to native entries.
type s3ACL struct {
	grants []aclGrant
	// owner: the document's Owner ID ("": none given).
	owner string
}

// aclGrant is one grant: to a user (ID) or a group (URI).
type aclGrant struct {
	user, group, permission string
}

// ownerOnly: the ACL gives no one but the owner anything (what a bucket
// whose ownership is BucketOwnerEnforced takes).
func (a *s3ACL) ownerOnly(owner string) bool {
	for _, g := range a.grants {
		if g.user != owner || g.permission != "FULL_CONTROL" {
			return false
		}
	}
	return true
}

// public is what AllUsers may do, for attrPublic ("": nothing).
func (a *s3ACL) public() string {
	var perms []string
	for _, g := range a.grants {
		if g.group == allUsers && !slices.Contains(perms, g.permission) {
			perms = append(perms, g.permission)
		}
	}
	slices.Sort(perms)
	return strings.Join(perms, ",")
}

// cannedGrants are the grants of each canned ACL besides the owner's.
var cannedGrants = map[string][]aclGrant{
	"private": nil, "bucket-owner-full-control": nil, "bucket-owner-read": nil,
	"aws-exec-read": nil, "log-delivery-write": nil,
	"public-read":        {{group: allUsers, permission: "READ"}},
	"public-read-write":  {{group: allUsers, permission: "READ"}, {group: allUsers, permission: "WRITE"}},
	"authenticated-read": {{group: authenticatedUsers, permission: "READ"}},
}

// grantHeaders are the grant headers and the permission of each.
var grantHeaders = []struct{ header, permission string }{
	{"X-Amz-Grant-Read", "READ"}, {"X-Amz-Grant-Write", "WRITE"}, {"X-Amz-Grant-Read-Acp", "READ_ACP"},
	{"X-Amz-Grant-Write-Acp", "WRITE_ACP"}, {"X-Amz-Grant-Full-Control", "FULL_CONTROL"},
}

// headerACL is the ACL of a request's x-amz-acl or grant headers (nil:
// neither).
func headerACL(h http.Header) (*s3ACL, error) {
	canned := h.Get("X-Amz-Acl")
	var a *s3ACL
	for _, gh := range grantHeaders {
		v := h.Get(gh.header)
		if v == "" {
			continue
		}
		if canned != "" {
			return nil, errCannedAndGrants
		}
		if a == nil {
			a = &s3ACL{}
		}
		for _, part := range strings.Split(v, ",") {
			g, err := parseGrantee(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			g.permission = gh.permission
			a.grants = append(a.grants, g)
		}
	}
	if canned == "" {
		return a, nil
	}
	grants, ok := cannedGrants[canned]
	if !ok {
		return nil, withFields(errf(ErrInvalidArgument, "Invalid canned ACL: %s", canned), "ArgumentName", "x-amz-acl", "ArgumentValue", canned)
	}
	return &s3ACL{grants: grants}, nil
}

// parseGrantee reads one grantee of a grant header: id="NAME",
// uri="GROUP" (emailAddress is not offered).
func parseGrantee(s string) (aclGrant, error) {
	k, v, ok := strings.Cut(s, "=")
	v = strings.Trim(strings.TrimSpace(v), `"`)
	if !ok || v == "" {
		return aclGrant{}, withFields(errf(ErrInvalidArgument, "Argument format not recognized"), "ArgumentName", s)
	}
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "id":
		return aclGrant{user: v}, nil
	case "uri":
		if v != allUsers && v != authenticatedUsers {
			return aclGrant{}, withFields(errf(ErrInvalidArgument, "Invalid group uri"), "ArgumentName", "uri", "ArgumentValue", v)
		}
		return aclGrant{group: v}, nil
	}
	return aclGrant{}, withFields(errf(ErrInvalidArgument, "Argument format not recognized"), "ArgumentName", s)
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

// aclInput is an AccessControlPolicy as sent (any namespace).
type aclInput struct {
	Owner *struct{ ID string }
	Grant []struct {
		Grantee struct {
			Type string `xml:"type,attr"`
			ID   string
			URI  string
		}
		Permission string
	} `xml:"AccessControlList>Grant"`
}

// bodyACL reads an AccessControlPolicy document.
func bodyACL(data []byte) (*s3ACL, error) {
	var in aclInput
	if err := xml.Unmarshal(data, &in); err != nil || in.Owner == nil || in.Owner.ID == "" {
		return nil, errMalformedACL
	}
	a := &s3ACL{owner: in.Owner.ID}
	for _, g := range in.Grant {
		switch g.Permission {
		case "READ", "WRITE", "READ_ACP", "WRITE_ACP", "FULL_CONTROL":
		default:
			return nil, errMalformedACL
		}
		switch {
		case g.Grantee.Type == "CanonicalUser" && g.Grantee.ID != "":
			a.grants = append(a.grants, aclGrant{user: g.Grantee.ID, permission: g.Permission})
		case g.Grantee.Type == "Group" && (g.Grantee.URI == allUsers || g.Grantee.URI == authenticatedUsers):
			a.grants = append(a.grants, aclGrant{group: g.Grantee.URI, permission: g.Permission})
		default:
			return nil, errMalformedACL
		}
	}
	return a, nil
}

// requestACL is the ACL a PutBucketAcl or PutObjectAcl asks for: headers
// or a body, not both, and one of them.
func (rq *request) requestACL() (*s3ACL, error) {
	data, err := rq.readAll(64 << 10)
	if err != nil {
		return nil, err
	}
	h := rq.r.Header
	if len(data) > 0 {
		if h.Get("X-Amz-Acl") != "" || slices.ContainsFunc(grantHeaders, func(g struct{ header, permission string }) bool { return h.Get(g.header) != "" }) {
			return nil, errUnexpectedACL
		}
		return bodyACL(data)
	}
	a, err := headerACL(h)
	if err == nil && a == nil {
		err = errMissingACL
	}
	return a, err
}

// rightsOf are the native rights of an S3 permission on a bucket (READ
// lists it and reads its objects, WRITE creates and deletes them) or on an
// object.
func rightsOf(permission string, bucket bool) string {
	switch permission {
	case "READ":
		if bucket {
			return "rl"
		}
		return "r"
	case "WRITE":
		if bucket {
			return "wcd"
		}
		return "w"
	case "READ_ACP":
		return "x"
	case "WRITE_ACP":
		return "y"
	}
	return "a"
}

// nativeACL maps an ACL to ACCESS entries, owner first; users are checked
// (unknown: InvalidArgument) and access keys replaced by their users.
func (g *Gateway) nativeACL(rq *request, a *s3ACL, owner string, bucket bool) ([]*stratov1.Acl, error) {
	var out []*stratov1.Acl
	add := func(typ stratov1.AclType, name, letters string) error {
		r, err := client.ParseRights(letters)
		if err != nil {
			return err
		}
		for _, e := range out {
			if e.GetType() == typ && e.GetName() == name {
				e.Rights |= r
				return nil
			}
		}
		out = append(out, &stratov1.Acl{Type: typ, Name: name, Rights: r})
		return nil
	}
	if owner != "" {
		if err := add(stratov1.AclType_ACL_USER, owner, "a"); err != nil {
			return nil, err
		}
	}
	for _, gr := range a.grants {
		if gr.group != "" {
			if err := add(stratov1.AclType_ACL_WORLD, "", rightsOf(gr.permission, bucket)); err != nil {
				return nil, err
			}
			continue
		}
		user, err := g.granteeUser(rq, gr.user, owner)
		if err != nil {
			return nil, err
		}
		if err := add(stratov1.AclType_ACL_USER, user, rightsOf(gr.permission, bucket)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// granteeUser is the strato user a CanonicalUser ID names: the owner or
// the caller (by name or access key), a user meta knows, or an access key
// of a user.
func (g *Gateway) granteeUser(rq *request, id, owner string) (string, error) {
	switch {
	case id == owner || id == rq.user && id != "":
		return id, nil
	case rq.auth != nil && id == rq.auth.accessKey && rq.user != "":
		return rq.user, nil
	}
	ctx := rq.gatewayCtx()
	if ku, ok := g.opts.Credentials.(KeyUsers); ok {
		if u, err := ku.KeyUser(ctx, id); err == nil && u != "" {
			return u, nil
		}
	}
	if g.userExists(ctx, id) {
		return id, nil
	}
	return "", withFields(errf(ErrInvalidArgument, "Invalid id"), "ArgumentName", "CanonicalUser/ID", "ArgumentValue", id)
}

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
	if has("r") {
		out = append(out, "READ")
	}
	if has("w") {
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

// aclDocument answers an object's ACL as S3 grants: its owner's full
// control, and its ACCESS entries for users and the world (as the group
// whose URI world is; group entries have no S3 grantee and are left out).
func aclDocument(own string, acls []*stratov1.Acl, world string) accessControlPolicy {
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
			ge = grantee{XMLNS: xsiNS, Type: "Group", URI: world}
		default:
			continue
		}
		for _, p := range s3Permissions(a.GetRights()) {
			res.Grants = append(res.Grants, grant{Grantee: ge, Permission: p})
		}
	}
	return res
}
