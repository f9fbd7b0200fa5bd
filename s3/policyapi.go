package s3

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// PutBucketPolicy, GetBucketPolicy, DeleteBucketPolicy and
// GetBucketPolicyStatus. A bucket's policy and ownership controls are its
// access configuration: changing them takes WRITE_ACL on the bucket (meta
// asks it of whoever changes an x-strato-acl- attribute), reading them
// READ_ACL, as AWS keeps them to the bucket's owner unless it grants more.

// bucketPolicy serves the policy and policyStatus subresources.
func (g *Gateway) bucketPolicy(rq *request) error {
	q := rq.r.URL.Query()
	if _, ok := q["policyStatus"]; ok {
		if rq.r.Method != http.MethodGet {
			return ErrMethodNotAllowed
		}
		rq.op = "GetBucketPolicyStatus"
		return g.getBucketPolicyStatus(rq)
	}
	switch rq.r.Method {
	case http.MethodGet:
		rq.op = "GetBucketPolicy"
		doc, err := g.policyDoc(rq)
		if err != nil {
			return err
		}
		rq.w.Header().Set("Content-Type", "application/json")
		rq.w.Header().Set("x-amz-request-id", rq.id)
		n, _ := io.WriteString(rq.w, doc)
		rq.out += int64(n)
		return nil
	case http.MethodPut:
		rq.op = "PutBucketPolicy"
		return g.putBucketPolicy(rq)
	case http.MethodDelete:
		rq.op = "DeleteBucketPolicy"
		if err := rq.body.drain(); err != nil {
			return err
		}
		return g.writeAccessConfig(rq, attrPolicy, "", http.StatusNoContent)
	}
	return ErrMethodNotAllowed
}

func (g *Gateway) putBucketPolicy(rq *request) error {
	doc, err := io.ReadAll(io.LimitReader(rq.body, maxPolicy+1))
	if err != nil {
		return err
	}
	if len(doc) > maxPolicy {
		return malformedPolicy("Policies must not exceed 20480 bytes")
	}
	if _, err := g.getBucket(rq); err != nil {
		return err
	}
	if a, err := g.accessOf(rq.gatewayCtx(), rq.bucket); err != nil {
		return err
	} else if a.unreadable {
		return errf(ErrAccessDenied, "this gateway's user may not read the bucket, so it could not enforce a policy: its user must own the S3 volume or be an administrator (docs/s3.md)")
	}
	if _, err := parsePolicy(doc, rq.bucket, g.knownPrincipal(rq)); err != nil {
		return err
	}
	return g.writeAccessConfig(rq, attrPolicy, string(doc), http.StatusNoContent)
}

type policyStatus struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ PolicyStatus"`
	IsPublic bool
}

// getBucketPolicyStatus answers whether the policy opens the bucket to
// everyone: an Allow to Principal "*" without conditions, as AWS judges.
func (g *Gateway) getBucketPolicyStatus(rq *request) error {
	doc, err := g.policyDoc(rq)
	if err != nil {
		return err
	}
	p, err := parsePolicy([]byte(doc), rq.bucket, func(string) bool { return true })
	if err != nil {
		return err
	}
	public := slices.ContainsFunc(p.Statements, func(s statement) bool { return !s.Deny && s.Anyone && len(s.Conditions) == 0 })
	return rq.writeXML(http.StatusOK, policyStatus{IsPublic: public})
}

// policyDoc is the bucket's policy document, for whoever may read it.
func (g *Gateway) policyDoc(rq *request) (string, error) {
	b, err := g.readAccessConfig(rq)
	if err != nil {
		return "", err
	}
	doc := bucketAttr(b, attrPolicy)
	if doc == "" {
		return "", errNoSuchBucketPolicy
	}
	return doc, nil
}

// knownPrincipal tells whether a policy's principal is an access key the
// gateway knows or a strato user.
func (g *Gateway) knownPrincipal(rq *request) func(string) bool {
	ctx := rq.gatewayCtx()
	return func(name string) bool {
		if _, err := g.opts.Credentials.Secret(ctx, name); err == nil {
			return true
		}
		return g.userExists(ctx, name)
	}
}

// userExists asks meta whether a user exists: a proxy (or an
// administrator) may act on behalf of any user that does (an
// administrator excepted, which exists too); without authentication, the
// list of users.
func (g *Gateway) userExists(ctx context.Context, name string) bool {
	who, err := g.c.WhoAmI(client.OnBehalfOf(ctx, name))
	if err != nil {
		return strings.Contains(err.Error(), "an administrator")
	}
	if who.GetAuthenticated() {
		return true
	}
	users, err := g.c.ListUsers(ctx)
	return err == nil && slices.ContainsFunc(users, func(u *stratov1.User) bool { return u.GetName() == name })
}

// readAccessConfig checks that the request may read the bucket's access
// configuration (READ_ACL, by reading its ACL) and returns the bucket,
// read with the gateway's rights.
func (g *Gateway) readAccessConfig(rq *request) (*stratov1.BucketInfo, error) {
	if err := rq.body.drain(); err != nil {
		return nil, err
	}
	if _, _, err := g.c.GetAcl(rq.ctx, client.BucketObject(g.volume, rq.bucket)); err != nil {
		return nil, fromClient(err, ErrNoSuchBucket)
	}
	b, err := g.c.GetBucket(rq.gatewayCtx(), g.volume, rq.bucket)
	if err != nil {
		return nil, fromClient(err, ErrNoSuchBucket)
	}
	return b, nil
}

// writeAccessConfig sets (value "": removes) one attribute of the
// bucket's access configuration as the request's user, and forgets what
// this gateway kept of the bucket's access.
func (g *Gateway) writeAccessConfig(rq *request, name, value string, status int) error {
	err := g.setBucketAttr(rq, name, value)
	g.policies.forget(rq.bucket)
	if err != nil {
		return err
	}
	return rq.writeEmpty(status)
}
