package s3

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/reqid"
	"github.com/strato-io/strato/tracing"
)

// Options configure a gateway.
type Options struct {
	// Client reaches meta and the datanodes. Required; the caller closes it.
	Client *client.Client
	// Credentials look up the secret of an access key. Required.
	Credentials Credentials
	// Volume holds the S3 buckets. Default: "s3v" (created when missing).
	Volume string
	// MultipartVolume holds the parts of multipart uploads under way, one
	// bucket per target bucket. Default: Volume + "-multipart".
	MultipartVolume string
	// AccessCacheBytes bounds the cache of buckets' policies and public
	// grants (access.go), about, in bytes. Default 4 MiB.
	AccessCacheBytes int64
	// Domain enables virtual-host-style addressing: a request to
	// BUCKET.Domain addresses BUCKET. Default: "" (path style only, which
	// is always served).
	Domain string
	// Region is what GetBucketLocation answers and signatures may name.
	// Default: "us-east-1".
	Region string
	// MaxSkew is how far a signed request's time may be from the gateway's
	// clock. Default: 15 minutes (AWS's).
	MaxSkew time.Duration
	// MinPartSize is the smallest part but the last of a multipart upload.
	// Default: 5 MiB (AWS's).
	MinPartSize int64
	// MultipartExpiry is the age at which an upload never completed nor
	// aborted is aborted by the gateway's cleanup. Default: 7 days.
	MultipartExpiry time.Duration
	// CleanupInterval is how often the cleanup runs. Default: 1 hour;
	// negative: never.
	CleanupInterval time.Duration
	// Logger receives the gateway's logs (never a secret). Default: discard.
	Logger *slog.Logger
	// Observe, when set, is called once per request with its operation
	// (GetObject, ...; "" when it named none), HTTP status, latency and
	// the bytes of its request and response bodies (cmd/strato passes
	// telemetry.S3Metrics.Observe). Default: none.
	Observe func(op string, status int, d time.Duration, in, out int64)
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// AccessLog, when set, receives the access log: one JSON line a
	// request (AccessEntry; docs/s3.md, "Access log"). Default: none.
	AccessLog io.Writer
	// TracerProvider, when set, makes a span of every request ("S3
	// PutObject", ...), the parent of the spans of the client's calls to
	// meta and the datanodes for it (package tracing). Options.Client
	// should trace with the same provider. Default: nil, no tracing.
	TracerProvider trace.TracerProvider
}

// EnsureDefaults fills in the defaults.
func (o *Options) EnsureDefaults() {
	if o.Volume == "" {
		o.Volume = "s3v"
	}
	if o.AccessCacheBytes <= 0 {
		o.AccessCacheBytes = 4 << 20
	}
	if o.MultipartVolume == "" {
		o.MultipartVolume = o.Volume + "-multipart"
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.MaxSkew == 0 {
		o.MaxSkew = 15 * time.Minute
	}
	if o.MinPartSize == 0 {
		o.MinPartSize = 5 << 20
	}
	if o.MultipartExpiry == 0 {
		o.MultipartExpiry = 7 * 24 * time.Hour
	}
	if o.CleanupInterval == 0 {
		o.CleanupInterval = time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch {
	case o.Client == nil:
		return errors.New("s3: Options.Client is required")
	case o.Credentials == nil:
		return errors.New("s3: Options.Credentials is required")
	case o.Volume == o.MultipartVolume:
		return errors.New("s3: Volume and MultipartVolume must differ")
	}
	return nil
}

// Credentials look up secrets by access key.
type Credentials interface {
	// Secret returns the secret of an access key, or ErrNoSuchAccessKey.
	Secret(ctx context.Context, accessKey string) (string, error)
}

// KeyUsers is implemented by Credentials that know the strato user an
// access key belongs to (MetaCredentials): the gateway then makes every
// call to meta for a request of that key on behalf of its user
// (client.OnBehalfOf), so that meta authorizes the user, not the gateway
// (docs/s3.md, "Users and ACLs").
type KeyUsers interface {
	// KeyUser returns the user of an access key ("": none).
	KeyUser(ctx context.Context, accessKey string) (string, error)
}

// ErrNoSuchAccessKey: the access key is unknown (or revoked).
var ErrNoSuchAccessKey = errors.New("s3: no such access key")

// StaticCredentials are fixed access keys and their secrets.
type StaticCredentials map[string]string

// Secret implements Credentials.
func (s StaticCredentials) Secret(_ context.Context, accessKey string) (string, error) {
	if v, ok := s[accessKey]; ok {
		return v, nil
	}
	return "", ErrNoSuchAccessKey
}

// Gateway serves the S3 REST API on strato's namespace. It keeps no state
// of its own (all of it is in meta), so any number may serve one cluster.
type Gateway struct {
	opts   Options
	c      *client.Client
	volume string

	mu       sync.Mutex
	partBkts map[string]bool // multipart buckets known to exist

	stop chan struct{}
	wg   sync.WaitGroup

	access   *accessLog   // nil: none
	policies accessCache  // buckets' policies and public grants (access.go)
	handler  http.Handler // serveHTTP, in a span when tracing

	// afterDeleteCheck, when set (tests only, export_test.go), runs between
	// a conditional delete's check and its delete; afterPutCheck between a
	// conditional write's check and its commit.
	afterDeleteCheck func()
	afterPutCheck    func()
}

// New makes a gateway and creates its volumes when missing; Close stops
// its background cleanup.
func New(ctx context.Context, opts Options) (*Gateway, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &Gateway{opts: opts, c: opts.Client, volume: opts.Volume, partBkts: map[string]bool{}, stop: make(chan struct{})}
	g.policies.max = opts.AccessCacheBytes
	g.handler = http.HandlerFunc(g.serveHTTP)
	if opts.TracerProvider != nil {
		g.handler = tracing.HTTPHandler(g.handler, "S3", opts.TracerProvider)
	}
	if opts.AccessLog != nil {
		g.access = &accessLog{w: opts.AccessLog}
	}
	for _, v := range []string{opts.Volume, opts.MultipartVolume} {
		// Looked up first: a proxy user may not create volumes (an
		// administrator makes them), nor perhaps read them (it exists).
		_, err := g.c.GetVolume(ctx, v)
		if errors.Is(err, client.ErrPermission) && !errors.Is(err, client.ErrUnauthenticated) {
			continue
		}
		if errors.Is(err, client.ErrVolumeNotFound) {
			_, err = g.c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: v, Owner: "s3"})
			if errors.Is(err, client.ErrPermission) {
				return nil, fmt.Errorf("s3: volume %s does not exist and this gateway's user may not create it (an administrator must; docs/s3.md): %w", v, err)
			}
		}
		if err != nil && !errors.Is(err, client.ErrExists) {
			return nil, fmt.Errorf("s3: volume %s: %w", v, err)
		}
	}
	if err := g.openVolumes(ctx); err != nil {
		return nil, err
	}
	if opts.CleanupInterval > 0 {
		g.wg.Add(1)
		go g.cleanupLoop()
	}
	return g, nil
}

// Close stops the background cleanup.
func (g *Gateway) Close() error {
	close(g.stop)
	g.wg.Wait()
	return nil
}

// request is one S3 request being served.
type request struct {
	r      *http.Request
	w      http.ResponseWriter
	ctx    context.Context
	id     string
	bucket string
	key    string
	op     string
	body   *body // the payload, decoded and checked (nil: none)
	auth   *authRequest
	user   string               // the access key's strato user ("": unknown)
	lock   *stratov1.ObjectLock // the object lock a write asks for (objectlock.go)
	cond   client.Condition     // what a PUT's commit needs of the key (conditional.go)
	// anonymous: the request carries no signature (access.go).
	anonymous bool
	status    int
	out       int64 // bytes of response body
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.handler.ServeHTTP(w, r) }

// serveHTTP serves a request under a new request ID (x-amz-request-id),
// which the calls to meta and the datanodes for it carry (package reqid).
func (g *Gateway) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := g.opts.Now()
	id := reqid.New()
	rq := &request{r: r, w: w, ctx: reqid.With(r.Context(), id), id: id, status: 200}
	rq.bucket, rq.key = g.route(r)
	var err error
	if r.Method == http.MethodOptions {
		err = g.preflight(rq)
	} else {
		g.corsHeaders(rq)
		err = g.serve(rq)
	}
	var errCode string
	if err != nil {
		e := fromClient(err, nil)
		if e.Status >= 500 {
			g.opts.Logger.Warn("s3: request failed", "op", rq.op, "bucket", rq.bucket, "key", rq.key, "request_id", rq.id, "err", err)
		}
		rq.status, errCode = e.Status, e.Code
		writeError(w, r, e, rq.id)
	}
	end := g.opts.Now()
	if obs := g.opts.Observe; obs != nil {
		var in int64
		if rq.body != nil {
			in = rq.body.n
		}
		obs(rq.op, rq.status, end.Sub(start), in, rq.out)
	}
	g.finish(rq, start, end, errCode)
}

// route splits the request into bucket and key: virtual-host style when
// the host is a subdomain of Options.Domain, else path style.
func (g *Gateway) route(r *http.Request) (bucket, key string) {
	p := strings.TrimPrefix(r.URL.Path, "/")
	if b, ok := g.hostBucket(r); ok {
		return b, p
	}
	bucket, key, _ = strings.Cut(p, "/")
	return bucket, key
}

// hostBucket is the bucket a virtual-host-style request names in its
// Host, a subdomain of Options.Domain.
func (g *Gateway) hostBucket(r *http.Request) (string, bool) {
	d := g.opts.Domain
	if d == "" {
		return "", false
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	b, ok := strings.CutSuffix(host, "."+d)
	return b, ok && b != ""
}

// authorize authenticates the request (or takes it as anonymous), makes
// its calls on behalf of the key's user for a key kept in meta, and
// decides it by its bucket's policy (access.go).
func (g *Gateway) authorize(rq *request) error {
	if isAnonymous(rq) {
		return g.setupAnonymous(rq)
	}
	if err := g.authenticate(rq); err != nil {
		rq.op = "Auth"
		return err
	}
	if err := g.actAs(rq); err != nil {
		return err
	}
	if err := g.checkAccess(rq); err != nil {
		return err
	}
	return g.checkExpectedOwners(rq)
}

// actAs makes an authenticated request's calls on behalf of its access
// key's user, for a key kept in meta.
func (g *Gateway) actAs(rq *request) error {
	if ku, ok := g.opts.Credentials.(KeyUsers); ok && rq.auth != nil {
		user, err := ku.KeyUser(rq.ctx, rq.auth.accessKey)
		if err != nil {
			rq.op = "Auth"
			return errf(ErrServiceUnavailable, "looking up the access key: %v", err)
		}
		rq.user = user
		rq.ctx = client.OnBehalfOf(rq.ctx, user)
	}
	return nil
}

// secretOf is an access key's secret, or the error a request signed with
// an unknown key gets.
func (g *Gateway) secretOf(rq *request, accessKey string) (string, error) {
	secret, err := g.opts.Credentials.Secret(rq.ctx, accessKey)
	if errors.Is(err, ErrNoSuchAccessKey) {
		return "", withFields(ErrInvalidAccessKeyID, "AWSAccessKeyId", accessKey)
	} else if err != nil {
		return "", errf(ErrServiceUnavailable, "looking up the access key: %v", err)
	}
	return secret, nil
}

func (g *Gateway) serve(rq *request) error {
	q := rq.r.URL.Query()
	if rq.bucket != "" && rq.key == "" && isPostObject(rq.r) {
		rq.op = "PostObject" // signed by its form's fields (post.go)
		return g.postObject(rq)
	}
	if err := g.authorize(rq); err != nil {
		return err
	}
	has := func(k string) bool { _, ok := q[k]; return ok }
	m := rq.r.Method
	switch {
	case rq.bucket == "":
		if m == http.MethodGet {
			rq.op = "ListBuckets"
			return g.listBuckets(rq)
		}
		return ErrMethodNotAllowed
	case rq.key == "":
		switch {
		case m == http.MethodGet && has("location"):
			rq.op = "GetBucketLocation"
			return g.getBucketLocation(rq)
		case m == http.MethodGet && has("uploads"):
			rq.op = "ListMultipartUploads"
			return g.listMultipartUploads(rq)
		case has("versioning") && (m == http.MethodGet || m == http.MethodPut):
			return g.bucketVersioning(rq)
		case has("object-lock") && (m == http.MethodGet || m == http.MethodPut):
			return g.bucketObjectLock(rq)
		case m == http.MethodGet && has("versions"):
			rq.op = "ListObjectVersions"
			return g.listObjectVersions(rq)
		case has("tagging") && (m == http.MethodGet || m == http.MethodPut || m == http.MethodDelete):
			return g.bucketTagging(rq)
		case has("acl"), has("policy"), has("policyStatus"), has("ownershipControls"):
			return g.bucketAccess(rq)
		case has("cors") && (m == http.MethodGet || m == http.MethodPut || m == http.MethodDelete):
			return g.bucketCors(rq)
		case has("lifecycle") && (m == http.MethodGet || m == http.MethodPut || m == http.MethodDelete):
			return g.bucketLifecycle(rq)
		case has("tagging"), has("cors"), has("lifecycle"), has("encryption"),
			has("website"), has("replication"), has("object-lock"), has("versioning"),
			has("notification"), has("logging"), has("publicAccessBlock"), has("accelerate"), has("requestPayment"):
			rq.op = "Unsupported"
			if _, err := g.getBucket(rq); err != nil {
				return err
			}
			return errf(ErrNotImplemented, "this bucket subresource is not implemented by strato's gateway (docs/s3.md)")
		case m == http.MethodGet && q.Get("list-type") == "2":
			rq.op = "ListObjectsV2"
			return g.listObjects(rq, true)
		case m == http.MethodGet:
			rq.op = "ListObjects"
			return g.listObjects(rq, false)
		case m == http.MethodPut:
			rq.op = "CreateBucket"
			return g.createBucket(rq)
		case m == http.MethodHead:
			rq.op = "HeadBucket"
			return g.headBucket(rq)
		case m == http.MethodDelete:
			rq.op = "DeleteBucket"
			return g.deleteBucket(rq)
		case m == http.MethodPost && has("delete"):
			rq.op = "DeleteObjects"
			return g.deleteObjects(rq)
		}
		return ErrMethodNotAllowed
	}
	if len(rq.key) > 1024 {
		return ErrKeyTooLong
	}
	switch {
	case has("tagging"):
		switch m {
		case http.MethodGet:
			rq.op = "GetObjectTagging"
			return g.getObjectTagging(rq)
		case http.MethodPut:
			rq.op = "PutObjectTagging"
			return g.putObjectTagging(rq)
		case http.MethodDelete:
			rq.op = "DeleteObjectTagging"
			return g.deleteObjectTagging(rq)
		}
		return ErrMethodNotAllowed
	case has("attributes") && m == http.MethodGet:
		rq.op = "GetObjectAttributes"
		return g.getObjectAttributes(rq)
	case has("retention") && (m == http.MethodGet || m == http.MethodPut):
		return g.objectRetention(rq)
	case has("legal-hold") && (m == http.MethodGet || m == http.MethodPut):
		return g.objectLegalHold(rq)
	case has("acl"):
		return g.objectAcl(rq)
	case has("retention"), has("legal-hold"), has("torrent"), has("restore"), has("select"), has("attributes"):
		rq.op = "Unsupported"
		if _, err := g.getBucket(rq); err != nil {
			return err
		}
		return errf(ErrNotImplemented, "this object subresource is not implemented by strato's gateway (docs/s3.md)")
	case m == http.MethodGet && has("uploadId"):
		rq.op = "ListParts"
		return g.listParts(rq)
	case m == http.MethodGet:
		rq.op = "GetObject"
		return g.getObject(rq, false)
	case m == http.MethodHead:
		rq.op = "HeadObject"
		return g.getObject(rq, true)
	case m == http.MethodPut && has("uploadId"):
		if rq.r.Header.Get("X-Amz-Copy-Source") != "" {
			rq.op = "UploadPartCopy"
		} else {
			rq.op = "UploadPart"
		}
		return g.uploadPart(rq)
	case m == http.MethodPut && rq.r.Header.Get("X-Amz-Copy-Source") != "":
		rq.op = "CopyObject"
		return g.withObjectACL(rq, g.copyObject)
	case m == http.MethodPut:
		rq.op = "PutObject"
		return g.withObjectACL(rq, g.putObject)
	case m == http.MethodDelete && has("uploadId"):
		rq.op = "AbortMultipartUpload"
		return g.abortUpload(rq)
	case m == http.MethodDelete:
		rq.op = "DeleteObject"
		return g.deleteObject(rq)
	case m == http.MethodPost && has("uploads"):
		rq.op = "CreateMultipartUpload"
		return g.withObjectACL(rq, g.createUpload)
	case m == http.MethodPost && has("uploadId"):
		rq.op = "CompleteMultipartUpload"
		return g.withUploadACL(rq, g.completeUpload)
	}
	return ErrMethodNotAllowed
}

// authenticate checks the request's signature (SigV4 or SigV2, header or
// presigned) and sets up its body: decoded (aws-chunked), hashed and checked against every
// digest it came with, at its end.
func (g *Gateway) authenticate(rq *request) error {
	r := rq.r
	var a *authRequest
	var err error
	q := r.URL.Query()
	switch {
	case r.Header.Get("X-Amz-Security-Token") != "" || q.Get("X-Amz-Security-Token") != "":
		// strato's keys are permanent: no session token is valid.
		return s3err("InvalidToken", 400, "The provided token is malformed or otherwise invalid.")
	case r.Header.Get("Authorization") != "":
		a, err = parseAuthorization(r.Header.Get("Authorization"))
	case q.Get("X-Amz-Algorithm") != "" || q.Get("X-Amz-Credential") != "":
		a, err = parsePresigned(q)
	case q.Get("AWSAccessKeyId") != "" || q.Get("Signature") != "":
		a, err = parsePresignedV2(q) // Signature Version 2
	default:
		return errf(ErrAccessDenied, "Anonymous access is not allowed")
	}
	if err != nil {
		return err
	}
	rq.auth = a
	if hs := unsignedHeaders(r, a); len(hs) > 0 {
		return withFields(errf(ErrAccessDenied, "There were headers present in the request which were not signed"),
			"HeadersNotSigned", strings.Join(hs, ", "))
	}
	secret, err := g.secretOf(rq, a.accessKey)
	if err != nil {
		return err
	}
	if a.v2 {
		return g.checkV2(rq, secret)
	}
	t, err := requestTime(r, a)
	if err != nil {
		return err
	}
	now := g.opts.Now()
	if a.presigned {
		switch {
		case now.After(t.Add(time.Duration(a.expires) * time.Second)):
			return withFields(errf(ErrAccessDenied, "Request has expired."), "X-Amz-Expires", strconv.FormatInt(a.expires, 10),
				"Expires", t.Add(time.Duration(a.expires)*time.Second).UTC().Format(time.RFC3339), "ServerTime", now.UTC().Format(time.RFC3339))
		case t.After(now.Add(g.opts.MaxSkew)):
			return errf(ErrAccessDenied, "Request is not valid yet")
		}
	} else {
		if d := now.Sub(t); d > g.opts.MaxSkew || d < -g.opts.MaxSkew {
			return ErrRequestTimeTooSkewed
		}
		a.payloadHash = r.Header.Get("X-Amz-Content-Sha256")
		switch a.payloadHash {
		case "":
			return errf(ErrInvalidRequest, "Missing required header for this request: x-amz-content-sha256")
		case unsignedPayload, streamingSigned, streamingSignedTrailer, streamingUnsignedTrailer:
		default:
			if err := checkPayloadHash(a.payloadHash); err != nil {
				return err
			}
		}
	}
	if !strings.HasPrefix(a.amzDate, a.date) {
		if a.presigned {
			return authErr(true, "Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", a.date, a.amzDate[:min(8, len(a.amzDate))])
		}
		return authErr(false, "Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	key := signingKey(secret, a.date, a.region, a.service)
	if !signatureMatches(hmacSHA256(key, stringToSign(a, canonicalRequest(r, a))), a.signature) {
		return ErrSignatureDoesNotMatch
	}
	return g.setupBody(rq, key)
}

// checkPayloadHash checks an x-amz-content-sha256 value that is not one of
// the payload modes: a SHA-256 in hex.
func checkPayloadHash(ph string) error {
	if _, err := hex.DecodeString(ph); err != nil || len(ph) != 64 {
		return withFields(errf(ErrInvalidArgument, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value."),
			"ArgumentName", "x-amz-content-sha256", "ArgumentValue", ph)
	}
	return nil
}

// errStreamingUse refuses an aws-chunked body where AWS takes none.
var errStreamingUse = errf(ErrInvalidRequest, "The value of x-amz-content-sha256 header is invalid.")

// streamsData says whether rq is a PutObject or an UploadPart, the only
// requests whose body may be aws-chunked.
func streamsData(rq *request) bool {
	q := rq.r.URL.Query()
	return rq.r.Method == http.MethodPut && rq.key != "" &&
		!q.Has("tagging") && !q.Has("acl") && !q.Has("retention") && !q.Has("legal-hold")
}

// setupBody makes rq.body from the request's payload mode.
func (g *Gateway) setupBody(rq *request, key []byte) error {
	r, a := rq.r, rq.auth
	checks, err := newPayloadChecks(r)
	if err != nil {
		return err
	}
	b := &body{checks: checks, size: r.ContentLength}
	var src io.Reader = r.Body
	if r.Body == nil {
		src = http.NoBody
	}
	switch ph := a.payloadHash; ph {
	case unsignedPayload:
	case streamingSigned, streamingSignedTrailer, streamingUnsignedTrailer:
		if a.presigned {
			return errf(ErrInvalidRequest, "streaming payloads need the Authorization header")
		}
		if !streamsData(rq) {
			return errStreamingUse
		}
		b.size = -1
		// The decoded length is required, as at AWS.
		n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
		if err != nil || n < 0 {
			return ErrMissingContentLength
		}
		b.size = n
		trailer := ph != streamingSigned
		if trailer && !checks.inTrailer {
			if ph == streamingSignedTrailer {
				return ErrMalformedTrailer // no x-amz-trailer
			}
			trailer = false // an unsigned stream may come without a trailer
		}
		src = newChunkedReader(src, ph != streamingUnsignedTrailer, trailer, key, a.amzDate, a.scope(), a.signature, checks.setTrailer)
	default:
		if err := checkPayloadHash(ph); err != nil {
			return err
		}
		b.sha256, b.wantSHA256 = sha256.New(), strings.ToLower(ph)
	}
	b.r = src
	rq.body = b
	return nil
}

// body is a request's payload as the handler reads it: decoded, counted,
// hashed; at its end it checks the length and every digest, and a failed
// check is the read's error instead of io.EOF (so a handler that copies it
// into a key never commits a bad payload).
type body struct {
	r          io.Reader
	checks     *payloadChecks
	size       int64 // expected length; -1 unknown
	n          int64
	sha256     hash.Hash
	wantSHA256 string
	err        error
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.size >= 0 && int64(len(p)) > b.size-b.n+1 {
		p = p[:b.size-b.n+1] // one byte more than expected shows excess
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	_, _ = b.checks.Write(p[:n])
	if b.sha256 != nil {
		b.sha256.Write(p[:n])
	}
	if b.size >= 0 && b.n > b.size {
		b.err = ErrIncompleteBody // longer than it said
		return n, b.err
	}
	if errors.Is(err, io.EOF) {
		err = b.finish()
		if err == nil {
			err = io.EOF
		}
		b.err = err
	} else if err != nil {
		b.err = err
	}
	return n, err
}

func (b *body) finish() error {
	if b.size >= 0 && b.n != b.size {
		return ErrIncompleteBody
	}
	if b.sha256 != nil {
		if got := hex.EncodeToString(b.sha256.Sum(nil)); got != b.wantSHA256 {
			return withFields(ErrXAmzContentSHA256Mismatch, "ClientComputedContentSHA256", b.wantSHA256, "S3ComputedContentSHA256", got)
		}
	}
	return b.checks.verify()
}

// readAll reads a small request body (XML) whole, at most limit bytes.
func (rq *request) readAll(limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(rq.body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errf(ErrMalformedXML, "the request body is larger than %d bytes", limit)
	}
	return data, nil
}

// writeXML answers v as an XML body.
func (rq *request) writeXML(status int, v any) error {
	out, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", "application/xml")
	rq.w.Header().Set("x-amz-request-id", rq.id)
	rq.w.WriteHeader(status)
	rq.status = status
	n, _ := rq.w.Write([]byte(xml.Header))
	m, _ := rq.w.Write(out)
	rq.out += int64(n + m)
	return nil
}

// writeEmpty answers a status with no body.
func (rq *request) writeEmpty(status int) error {
	rq.w.Header().Set("x-amz-request-id", rq.id)
	rq.w.WriteHeader(status)
	rq.status = status
	return nil
}

// decodeXML reads a request body of XML into v.
func (rq *request) decodeXML(v any, limit int64) error {
	data, err := rq.readAll(limit)
	if err != nil {
		return err
	}
	if err := xml.Unmarshal(data, v); err != nil {
		return errf(ErrMalformedXML, "%v", err)
	}
	return nil
}

// drain reads the rest of the body (checking it).
func (b *body) drain() error {
	_, err := io.Copy(io.Discard, b)
	return err
}

// AccessCacheBytes is about what the cache of buckets' policies and public
// grants holds, and its bound (Options.AccessCacheBytes).
func (g *Gateway) AccessCacheBytes() (held, bound int64) { return g.policies.held() }
