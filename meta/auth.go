package meta

// Authentication of clients (Options.Auth "token"; docs/security.md).
//
// Every NamespaceService and AdminService call carries the gRPC metadata
// "authorization: Bearer strato1.<token ID>.<secret>". An interceptor looks
// the token up in this replica's applied state (the namespace's user and
// token records, through a small cache), checks the secret against the
// stored SHA-256, the expiry and revocation, and puts the caller's Identity
// in the call's context; cluster administration needs an administrator.
// There is no Raft round trip per call: a replica refuses a revoked token
// as soon as it has applied (and committed) the revocation, which on a
// follower may be a moment after the leader.

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Auth modes (Options.Auth).
const (
	// AuthNone: clients present nothing; every call is served (the default).
	AuthNone = "none"
	// AuthToken: clients present a token meta issued.
	AuthToken = "token"
)

// TokenPrefix starts every token, so that a leaked one is easy to grep
// for: strato1.<token ID>.<secret>.
const TokenPrefix = "strato1"

// Identity is who a call was authenticated as (Options.Auth "token").
type Identity struct {
	User   string
	Admin  bool
	Groups []string
	// Proxy: the user may act on behalf of others (OnBehalfOf).
	Proxy bool
	// RealUser, when not empty, is the user whose token the call
	// presented, acting on behalf of User (gRPC metadata
	// "strato-on-behalf-of", honoured for administrators and proxies).
	RealUser string
	// TokenID and TokenExpires describe the token the call presented.
	TokenID      string
	TokenExpires time.Time
	// Delegation: the token presented is a delegation token of User
	// (delegation.go), which cannot get tokens (nor renew them).
	Delegation bool
}

type identityKey struct{}

// identitySlot is put in the context by the outermost interceptor and
// filled by the authenticating one, so that interceptors between them (the
// audit log) see who called once the handler has run.
type identitySlot struct{ id atomic.Pointer[Identity] }

type identitySlotKey struct{}

// IdentityFromContext returns the caller's identity: set for every call a
// server with Options.Auth "token" authenticated, nil otherwise. The
// interceptors of Options.UnaryInterceptors (which run outside the
// authentication) see it once their handler has returned.
func IdentityFromContext(ctx context.Context) *Identity {
	if id, ok := ctx.Value(identityKey{}).(*Identity); ok {
		return id
	}
	if slot, ok := ctx.Value(identitySlotKey{}).(*identitySlot); ok {
		return slot.id.Load()
	}
	return nil
}

// FormatToken is the token a client presents.
func FormatToken(id string, secret []byte) string {
	return TokenPrefix + "." + id + "." + base64.RawURLEncoding.EncodeToString(secret)
}

// ParseToken splits a token into its ID and secret.
func ParseToken(tok string) (id string, secret []byte, err error) {
	p, rest, ok := strings.Cut(tok, ".")
	if !ok || p != TokenPrefix {
		return "", nil, errors.New("not a strato token (want strato1.<id>.<secret>)")
	}
	id, sec, ok := strings.Cut(rest, ".")
	if !ok || id == "" || sec == "" {
		return "", nil, errors.New("not a strato token (want strato1.<id>.<secret>)")
	}
	if secret, err = base64.RawURLEncoding.DecodeString(sec); err != nil {
		return "", nil, errors.New("not a strato token: the secret is not base64url")
	}
	return id, secret, nil
}

// authCacheSize bounds the tokens remembered; the cache is emptied when it
// is full.
const authCacheSize = 4096

// authenticator checks tokens against the applied state.
type authenticator struct {
	s *Server
	// dirty: a user or token command was applied; Committed then empties
	// the cache.
	dirty atomic.Bool

	mu    sync.Mutex
	gen   uint64
	cache map[string]authEntry
}

type authEntry struct {
	tok  *stratov1.TokenRecord
	user *stratov1.UserRecord // nil: the user no longer exists
}

// invalidate empties the cache: a user or token changed in the database.
// A lookup that read the database before the change does not fill it (gen).
func (a *authenticator) invalidate() {
	a.mu.Lock()
	a.gen++
	a.cache = nil
	a.mu.Unlock()
}

// lookup returns the token's record and its user's, from the cache or the
// database.
func (a *authenticator) lookup(id string) (authEntry, error) {
	a.mu.Lock()
	e, ok := a.cache[id]
	gen := a.gen
	a.mu.Unlock()
	if ok {
		return e, nil
	}
	rd := a.s.ns.Reader(a.s.db)
	tok, err := rd.Token(id)
	if err != nil {
		return authEntry{}, err
	}
	e = authEntry{tok: tok}
	if e.user, err = rd.User(tok.GetUser()); err != nil && !errors.Is(err, namespace.ErrUserNotFound) {
		return authEntry{}, err
	}
	a.mu.Lock()
	if a.gen == gen {
		if a.cache == nil || len(a.cache) >= authCacheSize {
			a.cache = map[string]authEntry{}
		}
		a.cache[id] = e
	}
	a.mu.Unlock()
	return e, nil
}

// authenticate checks the token of a call.
func (a *authenticator) authenticate(ctx context.Context) (*Identity, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) == 0 {
		return nil, status.Error(codes.Unauthenticated, "meta: no token (strato login)")
	}
	scheme, tok, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, status.Error(codes.Unauthenticated, "meta: no token (strato login): the authorization metadata is not \"Bearer <token>\"")
	}
	id, secret, err := ParseToken(strings.TrimSpace(tok))
	if err != nil {
		return nil, status.Errorf(codes.Unauthenticated, "meta: no token (strato login): %v", err)
	}
	e, err := a.lookup(id)
	switch {
	case errors.Is(err, namespace.ErrTokenNotFound):
		return nil, status.Errorf(codes.Unauthenticated, "meta: unknown token %s (strato login)", id)
	case err != nil:
		return nil, toStatus(err)
	}
	if subtle.ConstantTimeCompare(namespace.HashTokenSecret(secret), e.tok.GetSecretSha256()) != 1 {
		// The ID exists but the secret is wrong: said as of an unknown
		// token, so that IDs cannot be probed.
		return nil, status.Errorf(codes.Unauthenticated, "meta: unknown token %s (strato login)", id)
	}
	if e.tok.GetRevokedUnixMs() != 0 {
		if e.tok.GetDelegation() != nil {
			return nil, status.Errorf(codes.Unauthenticated, "meta: delegation token %s was cancelled at %s", id, unixMs(e.tok.GetRevokedUnixMs()))
		}
		return nil, status.Errorf(codes.Unauthenticated, "meta: token %s was revoked at %s (strato login)", id, unixMs(e.tok.GetRevokedUnixMs()))
	}
	if exp := e.tok.GetExpiresUnixMs(); a.s.now().UnixMilli() >= exp {
		return nil, status.Errorf(codes.Unauthenticated, "meta: token %s expired at %s (strato login)", id, unixMs(exp))
	}
	if e.user == nil {
		return nil, status.Errorf(codes.Unauthenticated, "meta: token %s: its user %q no longer exists", id, e.tok.GetUser())
	}
	ident := &Identity{User: e.user.GetName(), Admin: e.user.GetAdmin(), Groups: e.user.GetGroups(), Proxy: e.user.GetProxy(),
		TokenID: id, TokenExpires: time.UnixMilli(e.tok.GetExpiresUnixMs()), Delegation: e.tok.GetDelegation() != nil}
	if obo := md.Get(OnBehalfOfMetadata); len(obo) > 0 {
		if ident.Delegation {
			return nil, status.Errorf(codes.PermissionDenied, "meta: a delegation token (%s) may not act on behalf of another user", id)
		}
		return a.onBehalfOf(ident, obo[0])
	}
	return ident, nil
}

// OnBehalfOfMetadata is the gRPC metadata by which a proxy (the S3
// gateway) names the user it acts for.
const OnBehalfOfMetadata = "strato-on-behalf-of"

// onBehalfOf is the identity of user as acted for by real: an
// administrator may act for anyone, a proxy for any user who is not an
// administrator.
func (a *authenticator) onBehalfOf(real *Identity, user string) (*Identity, error) {
	if !real.Admin && !real.Proxy {
		return nil, status.Errorf(codes.PermissionDenied, "meta: %s may not act on behalf of %s (neither an administrator nor a proxy user)", real.User, user)
	}
	rec, err := a.s.ns.Reader(a.s.db).User(user)
	switch {
	case errors.Is(err, namespace.ErrUserNotFound):
		return nil, status.Errorf(codes.PermissionDenied, "meta: %s acts on behalf of %s: no such user", real.User, user)
	case err != nil:
		return nil, toStatus(err)
	}
	if rec.GetAdmin() && !real.Admin {
		return nil, status.Errorf(codes.PermissionDenied, "meta: proxy %s may not act on behalf of %s, an administrator", real.User, user)
	}
	return &Identity{User: rec.GetName(), Admin: rec.GetAdmin(), Groups: rec.GetGroups(), RealUser: real.User,
		TokenID: real.TokenID, TokenExpires: real.TokenExpires}, nil
}

func unixMs(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

var (
	namespacePrefix = "/" + stratov1.NamespaceService_ServiceDesc.ServiceName + "/"
	adminPrefix     = "/" + stratov1.AdminService_ServiceDesc.ServiceName + "/"
)

// selfService are the AdminService methods any user may call: each handler
// lets a user act on its own tokens and S3 keys only (authorize).
var selfService = map[string]bool{
	"WhoAmI": true, "IssueToken": true, "RevokeToken": true, "ListTokens": true,
	"CreateS3Key": true, "ListS3Keys": true, "RevokeS3Key": true, "GetS3Secret": true,
	"GetDelegationToken": true, "RenewDelegationToken": true, "CancelDelegationToken": true,
}

// check authenticates a call to method, if it is one that needs a token,
// and returns ctx with the caller's identity.
func (a *authenticator) check(ctx context.Context, method string) (context.Context, error) {
	var admin bool
	switch {
	case strings.HasPrefix(method, namespacePrefix):
	case strings.HasPrefix(method, adminPrefix):
		admin = !selfService[strings.TrimPrefix(method, adminPrefix)]
	default:
		return ctx, nil // node services: their certificate (tls.go)
	}
	id, err := a.authenticate(ctx)
	if err != nil {
		// This replica's state may lag the group's (a follower, or a new
		// leader still applying): a token issued, or a user made, before
		// the call may not be applied here yet. A refusal is the caller's
		// answer only once confirmed against a state that holds every
		// change acknowledged before the call, as Prepare's refusals are
		// (mutateWith).
		if a.s.catchUp(ctx) == nil {
			id, err = a.authenticate(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	if slot, ok := ctx.Value(identitySlotKey{}).(*identitySlot); ok {
		slot.id.Store(id)
	}
	if admin && !id.Admin {
		return nil, status.Errorf(codes.PermissionDenied, "meta: %s is for administrators; %s is not one", method, id.User)
	}
	return context.WithValue(ctx, identityKey{}, id), nil
}

// authOptions are the interceptors of Options.Auth "token": the outer
// unary one (before Options.UnaryInterceptors) makes room for the
// identity, the inner one (after them) authenticates, so that the audit
// log records refused calls too, and who made each call; stream is the
// streams' option.
func (a *authenticator) authOptions() (outer, inner grpc.UnaryServerInterceptor, stream grpc.ServerOption) {
	outer = func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(context.WithValue(ctx, identitySlotKey{}, &identitySlot{}), req)
	}
	inner = func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := a.check(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
	stream = grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := a.check(ss.Context(), info.FullMethod)
		if err != nil {
			return err
		}
		return h(srv, &identityStream{ServerStream: ss, ctx: ctx})
	})
	return outer, inner, stream
}

// identityStream is a server stream whose context carries the identity.
type identityStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *identityStream) Context() context.Context { return s.ctx }

// caller is the identity of the call's caller; nil when the server does
// not authenticate (everything is allowed).
func caller(ctx context.Context) *Identity {
	return IdentityFromContext(ctx)
}

// authorize refuses a call that acts on user's tokens or keys unless the
// caller is that user or an administrator.
func authorize(ctx context.Context, user, what string) error {
	id := caller(ctx)
	if id == nil || id.Admin || id.User == user {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "meta: %s of another user (%s) is for administrators; %s is not one", what, user, id.User)
}

// errNoUser: user management on a server without authentication needs
// names, since there is no caller to default to.
func errNoUser(what string) error {
	return status.Errorf(codes.InvalidArgument, "meta: %s: name a user (this meta runs without authentication: there is no caller to default to)", what)
}
