package s3

import (
	"context"
	"crypto/sha256"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/reqid"
)

// Access decisions (decision 0089; docs/s3.md, "Bucket policies"). Every
// request to a bucket is decided in this order:
//
//  1. an explicit Deny of the bucket's policy that matches the request
//     refuses it (AccessDenied), whatever the ACLs say;
//  2. an Allow of the policy that matches it lets the gateway serve it
//     with its own rights in meta (the gateway's user is a proxy that owns
//     the S3 volume, or an administrator): meta then checks nothing of the
//     key's user, since the bucket's owner has said yes;
//  3. otherwise the request is made on behalf of the key's user and meta
//     checks the user's native ACLs, as without a policy.
//
// An anonymous request (no signature) is served only by 2, or when the
// bucket's ACL grants AllUsers (public-read, public-read-write; the
// attribute attrPublic records it) the right it needs, with the gateway's
// own rights; anything else is AccessDenied.
//
// The gateway reads a bucket's policy, ownership and AllUsers grants with
// its own rights and keeps them accessTTL: a change made through another
// gateway takes up to that long to apply here (one made here applies at
// once).

const (
	// attrPublic holds the S3 permissions the AllUsers group has on a
	// bucket ("READ", "READ,WRITE"), which anonymous requests may use.
	attrPublic = "x-strato-acl-public"
	// accessTTL is how long a gateway keeps what it read of a bucket's
	// access; maxAccessCached how many buckets it keeps.
	accessTTL       = time.Second
	maxAccessCached = 10000
)

// bucketAccess is what decides requests to a bucket besides meta's ACLs.
type bucketAccess struct {
	exists bool
	// unreadable: the gateway's user may not read the bucket (it neither
	// owns the volume nor is an administrator): no policy is enforced.
	unreadable bool
	policy     *policy // nil: none
	badPolicy  bool    // the attribute holds no readable policy: refuse all
	public     string  // attrPublic
	ownership  string  // attrOwnership ("": none set)
	read       time.Time
	cost       int64 // about what the entry takes in memory
}

// accessCache keeps bucketAccess by bucket for accessTTL, about bytes
// of them, at most max (Options.AccessCacheBytes).
type accessCache struct {
	mu         sync.Mutex
	m          map[string]*bucketAccess
	bytes, max int64
	warned     atomic.Bool // the unreadable buckets are logged once
}

func (c *accessCache) get(bucket string, now time.Time) *bucketAccess {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.m[bucket]; a != nil && now.Sub(a.read) < accessTTL && !now.Before(a.read) {
		return a
	}
	return nil
}

func (c *accessCache) put(bucket string, a *bucketAccess) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(bucket)
	if c.m == nil || len(c.m) >= maxAccessCached || c.bytes+a.cost > c.max {
		c.m, c.bytes = map[string]*bucketAccess{}, 0
	}
	if a.cost <= c.max {
		c.m[bucket] = a
		c.bytes += a.cost
	}
}

func (c *accessCache) dropLocked(bucket string) {
	if a := c.m[bucket]; a != nil {
		c.bytes -= a.cost
		delete(c.m, bucket)
	}
}

// held is about what the cache holds, and its bound.
func (c *accessCache) held() (held, bound int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.max
}

// forget drops a bucket whose access this gateway just changed.
func (c *accessCache) forget(bucket string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(bucket)
}

// accessOf reads a bucket's access with the gateway's own rights.
func (g *Gateway) accessOf(ctx context.Context, bucket string) (*bucketAccess, error) {
	now := g.opts.Now()
	if a := g.policies.get(bucket, now); a != nil {
		return a, nil
	}
	b, err := g.c.GetBucket(ctx, g.volume, bucket)
	a := &bucketAccess{read: now, cost: 256 + int64(len(bucket))}
	switch {
	case errors.Is(err, client.ErrNotFound) || errors.Is(err, client.ErrInvalid):
	case errors.Is(err, client.ErrPermission) && !errors.Is(err, client.ErrUnauthenticated):
		a.exists, a.unreadable = true, true
		if g.policies.warned.CompareAndSwap(false, true) {
			g.opts.Logger.Warn("s3: the gateway's user may not read the S3 buckets: bucket policies and public ACLs are not served (its user must own the volume or be an administrator; docs/s3.md)",
				"bucket", bucket, "err", err)
		}
	case err != nil:
		return nil, fromClient(err, nil)
	default:
		a.exists = true
		a.public, a.ownership = bucketAttr(b, attrPublic), bucketAttr(b, attrOwnership)
		if doc := bucketAttr(b, attrPolicy); doc != "" {
			// Principals were checked when the policy was put.
			p, err := parsePolicy([]byte(doc), bucket, func(string) bool { return true })
			a.policy, a.badPolicy = p, err != nil
			a.cost += 4 * int64(len(doc)) // the parsed policy, about
		}
	}
	g.policies.put(bucket, a)
	return a, nil
}

// gatewayCtx is the request's context without the key's user: calls made
// with it use the gateway's own rights.
func (rq *request) gatewayCtx() context.Context { return reqid.With(rq.r.Context(), rq.id) }

// checkAccess decides an authenticated or anonymous request by its
// bucket's policy and public grants, before it is served (see above).
func (g *Gateway) checkAccess(rq *request) error {
	action := requestAction(rq.r, rq.key)
	switch {
	case rq.anonymous && rq.bucket == "":
		return ErrAccessDenied
	case rq.anonymous && action == "":
		return errAnonymousNotAllowed
	case action == "":
		return nil
	}
	if rq.anonymous {
		if err := anonymousRefusal(rq, action); err != nil {
			return err
		}
	}
	if rq.key == "" && actions[action] {
		// DeleteObjects: deleteOneOf decides each key; the bucket is
		// looked up with the gateway's rights.
		rq.ctx = rq.gatewayCtx()
		return nil
	}
	a, err := g.accessOf(rq.gatewayCtx(), rq.bucket)
	if err != nil {
		return err
	}
	switch {
	case rq.anonymous && (!a.exists || a.unreadable):
		return ErrAccessDenied
	case !a.exists, a.unreadable:
		return nil // the handler answers NoSuchBucket; or meta decides as the user
	case a.badPolicy && changesAccess[action]:
		return nil // its owner may put it again, or delete it
	case a.badPolicy:
		return errf(ErrAccessDenied, "the bucket's policy cannot be read; its owner must put it again")
	}
	e := effectNone
	if a.policy != nil {
		e = a.policy.decide(rq, action, g.conditionContext(rq))
	}
	switch {
	case e == effectDeny:
		return ErrAccessDenied
	case e == effectAllow && rq.anonymous && strings.HasSuffix(action, "BucketPolicy"):
		return errPolicyNotAnonymous // only the owner's users, as AWS
	case e == effectAllow && !changesAccess[action]:
		rq.ctx = rq.gatewayCtx()
		return g.checkCopySource(rq)
	case rq.anonymous:
		return g.publicAccess(rq, a, action)
	}
	return nil
}

// changesAccess are the actions that change who may do what: a policy
// never lets the gateway serve them with its own rights (an Allow of
// s3:* to "*" would let anyone rewrite the policy); they take WRITE_ACL in
// meta, as the key's user.
var changesAccess = map[string]bool{
	"s3:PutBucketPolicy": true, "s3:DeleteBucketPolicy": true, "s3:PutBucketOwnershipControls": true,
	"s3:PutBucketAcl": true, "s3:PutObjectAcl": true, "s3:PutObjectVersionAcl": true,
}

// effect is a policy's decision on a request.
type effect int

const (
	effectNone effect = iota
	effectAllow
	effectDeny
)

// decide evaluates the policy (nil: none) on a request: a matching Deny
// wins over any Allow.
func (p *policy) decide(rq *request, action string, ctx map[string]string) effect {
	if p == nil {
		return effectNone
	}
	resource := rq.bucket
	if actions[action] {
		resource += "/" + rq.key
	}
	out := effectNone
	for _, s := range p.Statements {
		if !s.matches(rq, action, resource, ctx) {
			continue
		}
		if s.Deny {
			return effectDeny
		}
		out = effectAllow
	}
	return out
}

// matches: the statement names the request's principal, action and
// resource, and its conditions hold.
func (s *statement) matches(rq *request, action, resource string, ctx map[string]string) bool {
	if !s.Anyone {
		if rq.anonymous {
			return false
		}
		named := false
		for _, p := range s.Principals {
			if p == rq.user && rq.user != "" || rq.auth != nil && p == rq.auth.accessKey {
				named = true
				break
			}
		}
		if !named {
			return false
		}
	}
	if !anyGlob(s.Actions, action) || !anyGlob(s.Resources, resource) {
		return false
	}
	for _, c := range s.Conditions {
		if !c.holds(ctx) {
			return false
		}
	}
	return true
}

func anyGlob(patterns []string, s string) bool {
	for _, p := range patterns {
		if globMatch(p, s) {
			return true
		}
	}
	return false
}

// conditionContext is the request's values of the condition keys.
func (g *Gateway) conditionContext(rq *request) map[string]string {
	r := rq.r
	now := g.opts.Now().UTC()
	ctx := map[string]string{
		"aws:securetransport": strconv.FormatBool(r.TLS != nil),
		"aws:currenttime":     now.Format(time.RFC3339),
		"aws:epochtime":       strconv.FormatInt(now.Unix(), 10),
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ctx["aws:sourceip"] = host
	}
	if v := r.UserAgent(); v != "" {
		ctx["aws:useragent"] = v
	}
	if v := r.Referer(); v != "" {
		ctx["aws:referer"] = v
	}
	if rq.user != "" {
		ctx["aws:username"], ctx["aws:userid"] = rq.user, rq.user
		ctx["aws:principalarn"] = "arn:aws:iam::000000000000:user/" + rq.user
	}
	q := r.URL.Query()
	for _, k := range []string{"prefix", "delimiter", "max-keys"} {
		if _, ok := q[k]; ok && rq.key == "" {
			ctx["s3:"+k] = q.Get(k)
		}
	}
	if v := q.Get("versionId"); v != "" {
		ctx["s3:versionid"] = v
	}
	if v := r.Header.Get("X-Amz-Acl"); v != "" {
		ctx["s3:x-amz-acl"] = v
	}
	return ctx
}

// checkCopySource keeps a copy that a policy lets the gateway make from
// reading a source the key's user may not read: the source bucket's policy
// must allow it, or meta must let the user read it (as the user, whatever
// the answer but a refusal: a missing source is the handler's to answer).
func (g *Gateway) checkCopySource(rq *request) error {
	src := rq.r.Header.Get("X-Amz-Copy-Source")
	if src == "" {
		return nil
	}
	if rq.anonymous {
		return ErrAccessDenied // an anonymous request copies nothing
	}
	bucket, key, version, err := copySource(src)
	if err != nil {
		return nil // the handler refuses it, once it knows the bucket exists
	}
	a, err := g.accessOf(rq.gatewayCtx(), bucket)
	switch {
	case err != nil:
		return err
	case !a.exists:
		return nil // the handler answers NoSuchBucket
	case a.badPolicy:
		return ErrAccessDenied
	}
	srq := *rq
	srq.bucket, srq.key = bucket, key
	action := "s3:GetObject"
	if version != "" {
		action = "s3:GetObjectVersion"
	}
	switch a.policy.decide(&srq, action, g.conditionContext(rq)) {
	case effectDeny:
		return ErrAccessDenied
	case effectAllow:
		return nil
	}
	_, err = g.c.LookupKeyVersion(client.OnBehalfOf(rq.gatewayCtx(), rq.user), g.volume, bucket, key, client.KeyVersion{ID: version})
	if errors.Is(err, client.ErrPermission) {
		return fromClient(err, nil)
	}
	return nil
}

// anonymousRights are the native rights (strato's letters) an anonymous
// request needs of the world entries, by action; an action not here is
// never served by an ACL to anonymous requests.
var anonymousRights = map[string]string{
	"s3:ListBucket": "l", "s3:ListBucketVersions": "l", "s3:ListBucketMultipartUploads": "l",
	"s3:GetObject": "r", "s3:GetObjectVersion": "r", "s3:GetObjectAttributes": "r", "s3:GetObjectTagging": "r",
	"s3:PutObject": "c", "s3:ListMultipartUploadParts": "c", "s3:AbortMultipartUpload": "c",
	"s3:DeleteObject": "d", "s3:DeleteObjectVersion": "d",
}

// publicAccess serves an anonymous request no policy allows when the
// bucket's ACL grants AllUsers, and the world entries of the ACL that
// governs the object (its own, else its bucket's, as meta decides) have
// the right it needs.
func (g *Gateway) publicAccess(rq *request, a *bucketAccess, action string) error {
	need, ok := anonymousRights[action]
	if !ok || a.public == "" {
		return ErrAccessDenied
	}
	right, err := client.ParseRights(need)
	if err != nil {
		return err
	}
	ctx := rq.gatewayCtx()
	var acls []*stratov1.Acl
	if actions[action] && rq.key != "" {
		if _, keyAcls, err := g.c.GetAcl(ctx, client.KeyObject(g.volume, rq.bucket, rq.key)); err == nil && hasAccessEntries(keyAcls) {
			acls = keyAcls
		}
	}
	if acls == nil {
		if _, acls, err = g.c.GetAcl(ctx, client.BucketObject(g.volume, rq.bucket)); err != nil {
			return fromClient(err, nil)
		}
	}
	var have uint32
	for _, e := range acls {
		if e.GetType() == stratov1.AclType_ACL_WORLD && e.GetScope() == stratov1.AclScope_ACL_ACCESS {
			have |= e.GetRights()
		}
	}
	if have&right != right {
		return ErrAccessDenied
	}
	rq.ctx = ctx
	return nil
}

func hasAccessEntries(acls []*stratov1.Acl) bool {
	for _, e := range acls {
		if e.GetScope() == stratov1.AclScope_ACL_ACCESS {
			return true
		}
	}
	return false
}

// isAnonymous: the request carries no signature of any kind.
func isAnonymous(rq *request) bool {
	r := rq.r
	q := r.URL.Query()
	return r.Header.Get("Authorization") == "" && r.Header.Get("X-Amz-Security-Token") == "" &&
		q.Get("X-Amz-Algorithm") == "" && q.Get("X-Amz-Credential") == "" && q.Get("X-Amz-Security-Token") == "" &&
		q.Get("AWSAccessKeyId") == "" && q.Get("Signature") == ""
}

// errAnonymousSignedStreaming: an anonymous request cannot sign chunks.
var errAnonymousSignedStreaming = errf(ErrInvalidRequest,
	"Anonymous requests don't support this x-amz-content-sha256 value. Please use UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER.")

// setupAnonymous takes an anonymous request's body as it comes (its
// x-amz-content-sha256, if any, checked at its end), then decides it.
func (g *Gateway) setupAnonymous(rq *request) error {
	rq.anonymous = true
	ph := rq.r.Header.Get("X-Amz-Content-Sha256")
	switch ph {
	case "":
		ph = unsignedPayload
	case streamingSigned, streamingSignedTrailer:
		return errAnonymousSignedStreaming
	}
	// An anonymous request's hash is not checked for its form: whatever
	// it is, the body must hash to it.
	want := ""
	if ph != unsignedPayload && ph != streamingUnsignedTrailer {
		want, ph = ph, unsignedPayload
	}
	rq.auth = &authRequest{payloadHash: ph}
	if err := g.setupBody(rq, nil); err != nil {
		return err
	}
	rq.auth = nil
	if want != "" {
		rq.body.sha256, rq.body.wantSHA256 = sha256.New(), want
	}
	return g.checkAccess(rq)
}

// anonymousRefusal refuses, before any policy is read, what AWS serves no
// anonymous request: changes of ACLs, ownership controls, copies, the
// start of a multipart upload, the response-* overrides of a GET.
func anonymousRefusal(rq *request, action string) error {
	r := rq.r
	q := r.URL.Query()
	copySource := r.Header.Get("X-Amz-Copy-Source") != ""
	switch {
	case action == "s3:GetBucketOwnershipControls":
		return errf(ErrAccessDenied, "s3:GetBucketOwnershipControls does not support Anonymous requests!")
	case action == "s3:PutBucketOwnershipControls":
		return errf(ErrAccessDenied, "s3:PutBucketOwnershipControls does not support Anonymous requests!")
	case action == "s3:PutBucketAcl", action == "s3:PutObjectAcl", action == "s3:PutObjectVersionAcl":
		return errAnonymousNotAllowed
	case copySource && q.Has("uploadId"), r.Method == http.MethodPost && q.Has("delete"):
		return ErrAccessDenied
	case copySource:
		return errf(ErrAccessDenied, "Anonymous users cannot copy objects. Please authenticate.")
	case r.Method == http.MethodPost && q.Has("uploads"):
		return errf(ErrAccessDenied, "Anonymous users cannot initiate multipart uploads. Please authenticate.")
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		for k := range q {
			if _, ok := responseOverrides[k]; ok {
				return errf(ErrInvalidRequest, "Request specific response headers cannot be used for anonymous GET requests.")
			}
		}
	}
	return nil
}

// deleteOneOf deletes one key of a DeleteObjects as the bucket's policy
// decides for that key: refused by a Deny, deleted with the gateway's
// rights by an Allow, else as the key's user.
func (g *Gateway) deleteOneOf(rq *request, key, versionID string) (*stratov1.DeleteKeyResponse, error) {
	a, err := g.accessOf(rq.gatewayCtx(), rq.bucket)
	if err != nil {
		return nil, err
	}
	if a.badPolicy {
		return nil, ErrAccessDenied
	}
	krq := *rq
	krq.ctx = client.OnBehalfOf(rq.gatewayCtx(), rq.user)
	if a.policy == nil {
		return g.deleteKey(&krq, key, versionID, 0)
	}
	krq.key = key
	action := "s3:DeleteObject"
	if versionID != "" {
		action = "s3:DeleteObjectVersion"
	}
	switch a.policy.decide(&krq, action, g.conditionContext(rq)) {
	case effectDeny:
		return nil, ErrAccessDenied
	case effectAllow:
		krq.ctx = rq.gatewayCtx()
	}
	return g.deleteKey(&krq, key, versionID, 0)
}
