// Delegation tokens (docs/decisions/0082-delegation-tokens.md), as HDFS's
// and Ozone's: a user with its own token gets one for a job, names who
// may renew it (YARN's resource manager), and the job's tasks present it
// in place of the user's token. A delegation token is a token record
// (meta/namespace/delegation.go) with an owner, a renewer, a real user, an
// issue date, a max date, a renew interval and a sequence number; its
// identifier is those fields in the encoding of Hadoop's
// AbstractDelegationTokenIdentifier, and its secret (Hadoop's password)
// the HMAC-SHA256 of the identifier with the block token key signing at
// the time. Meta keeps the secret's SHA-256 only, as for every token, so
// the key's later rotation does not matter. Authentication is the one of
// every token (auth.go): an expired or cancelled delegation token is
// refused by every replica that applied the change, and a call with one
// acts as its owner.

package meta

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"math"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// DelegationTokenKind is the kind of a strato delegation token in
// Hadoop's credentials (the connector's TokenIdentifier).
const DelegationTokenKind = "STRATO_DELEGATION_TOKEN"

// Defaults of Options.DelegationTokenMaxLifetime and
// DelegationTokenRenewInterval: HDFS's.
const (
	DefaultDelegationTokenMaxLifetime   = 7 * 24 * time.Hour
	DefaultDelegationTokenRenewInterval = 24 * time.Hour
)

// errNoAuthDelegation: delegation tokens mean nothing on an open cluster.
var errNoAuthDelegation = status.Error(codes.FailedPrecondition,
	"meta: delegation tokens need authentication (this meta runs with --auth none)")

// realCredential refuses a call authenticated by a delegation token:
// getting a token, or renewing one, needs the user's own.
func realCredential(ctx context.Context, what string) error {
	if id := caller(ctx); id != nil && id.Delegation {
		return status.Errorf(codes.PermissionDenied, "meta: %s needs a real credential, not a delegation token (%s)", what, id.TokenID)
	}
	return nil
}

// ShortUserName is the strato user a renewer names: a Kerberos-style
// principal's first component (yarn/host@REALM → yarn), as Hadoop's
// short names.
func ShortUserName(principal string) string {
	if i := strings.IndexAny(principal, "/@"); i >= 0 {
		return principal[:i]
	}
	return principal
}

// GetDelegationToken issues a delegation token for the caller.
func (s *Server) GetDelegationToken(ctx context.Context, r *stratov1.GetDelegationTokenRequest) (*stratov1.GetDelegationTokenResponse, error) {
	id := caller(ctx)
	if id == nil {
		return nil, errNoAuthDelegation
	}
	if err := realCredential(ctx, "getting a delegation token"); err != nil {
		return nil, err
	}
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	renewer := ShortUserName(r.GetRenewer())
	if renewer == "" {
		renewer = id.User
	}
	if err := namespace.ValidateUserName("renewer", renewer); err != nil {
		return nil, toStatus(err)
	}
	key, err := s.delegationKey(ctx)
	if err != nil {
		return nil, err
	}
	s.dtMu.Lock()
	defer s.dtMu.Unlock()
	last, err := s.ns.Reader(s.db).DelegationSequence()
	if err != nil {
		return nil, toStatus(err)
	}
	seq := max(last, s.dtSeq) + 1
	if seq > math.MaxInt32 {
		return nil, status.Error(codes.ResourceExhausted, "meta: delegation token sequence numbers are exhausted")
	}
	s.dtSeq = seq
	now := s.now().UnixMilli()
	maxDate := now + s.opts.DelegationTokenMaxLifetime.Milliseconds()
	d := &stratov1.DelegationRecord{Renewer: renewer, RealUser: id.RealUser, MaxUnixMs: maxDate,
		RenewIntervalMs: s.opts.DelegationTokenRenewInterval.Milliseconds(), Sequence: seq}
	d.Identifier = DelegationIdentifier(id.User, renewer, id.RealUser, now, maxDate, seq, key.Id)
	mac := hmac.New(sha256.New, key.Secret)
	mac.Write(d.Identifier)
	secret := mac.Sum(nil)
	rec := &stratov1.TokenRecord{Id: namespace.DelegationTokenID(seq), User: id.User, SecretSha256: namespace.HashTokenSecret(secret),
		CreatedUnixMs: now, ExpiresUnixMs: min(now+d.RenewIntervalMs, maxDate), Delegation: d}
	if _, err := mutateWith[*stratov1.IssueTokenResponse](ctx, s, rec, mutation{noRequestID: true}); err != nil {
		return nil, err
	}
	return &stratov1.GetDelegationTokenResponse{Info: namespace.DelegationToken(rec), Token: FormatToken(rec.Id, secret),
		Identifier: d.Identifier, Password: secret}, nil
}

// delegationKey is the block token key that signs a new delegation token.
func (s *Server) delegationKey(ctx context.Context) (*stratov1.BlockTokenKeyCommand, error) {
	if k := s.btKeys.newest(); k != nil {
		return k, nil
	}
	if err := s.rotateBlockTokenKey(ctx); err != nil {
		return nil, toStatus(err)
	}
	if k := s.btKeys.newest(); k != nil {
		return k, nil
	}
	return nil, status.Error(codes.Unavailable, errNoBlockTokenKey.Error())
}

// delegationRecord returns the record of the delegation token tok after
// checking its secret; NotFound (as for an unknown token) otherwise.
func (s *Server) delegationRecord(tok string) (*stratov1.TokenRecord, error) {
	tid, secret, err := ParseToken(strings.TrimSpace(tok))
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "meta: %v", err)
	}
	rec, err := s.ns.Reader(s.db).Token(tid)
	if errors.Is(err, namespace.ErrTokenNotFound) || err == nil && (rec.GetDelegation() == nil ||
		subtle.ConstantTimeCompare(namespace.HashTokenSecret(secret), rec.GetSecretSha256()) != 1) {
		return nil, status.Errorf(codes.NotFound, "meta: unknown delegation token %s", tid)
	}
	if err != nil {
		return nil, toStatus(err)
	}
	return rec, nil
}

// RenewDelegationToken moves a delegation token's expiry to now plus its
// renew interval, never past its max date; only its renewer may.
func (s *Server) RenewDelegationToken(ctx context.Context, r *stratov1.RenewDelegationTokenRequest) (*stratov1.RenewDelegationTokenResponse, error) {
	id := caller(ctx)
	if id == nil {
		return nil, errNoAuthDelegation
	}
	if err := realCredential(ctx, "renewing a delegation token"); err != nil {
		return nil, err
	}
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	rec, err := s.delegationRecord(r.GetToken())
	if err != nil {
		return nil, err
	}
	d, now := rec.GetDelegation(), s.now().UnixMilli()
	switch {
	case id.User != d.GetRenewer():
		return nil, status.Errorf(codes.PermissionDenied, "meta: %s may not renew delegation token %s: only its renewer (%s) may", id.User, rec.GetId(), d.GetRenewer())
	case rec.GetRevokedUnixMs() != 0:
		return nil, status.Errorf(codes.PermissionDenied, "meta: delegation token %s was cancelled at %s", rec.GetId(), unixMs(rec.GetRevokedUnixMs()))
	case rec.GetExpiresUnixMs() <= now:
		return nil, status.Errorf(codes.PermissionDenied, "meta: delegation token %s expired at %s", rec.GetId(), unixMs(rec.GetExpiresUnixMs()))
	}
	exp := min(now+d.GetRenewIntervalMs(), d.GetMaxUnixMs())
	return mutate[*stratov1.RenewDelegationTokenResponse](ctx, s, &stratov1.RenewTokenCommand{Id: rec.GetId(), ExpiresUnixMs: exp})
}

// CancelDelegationToken cancels a delegation token: its owner (with any
// credential, the token itself too) or its renewer may.
func (s *Server) CancelDelegationToken(ctx context.Context, r *stratov1.CancelDelegationTokenRequest) (*stratov1.CancelDelegationTokenResponse, error) {
	id := caller(ctx)
	if id == nil {
		return nil, errNoAuthDelegation
	}
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	rec, err := s.delegationRecord(r.GetToken())
	if err != nil {
		return nil, err
	}
	if id.User != rec.GetUser() && id.User != rec.GetDelegation().GetRenewer() {
		return nil, status.Errorf(codes.PermissionDenied, "meta: %s may not cancel delegation token %s: only its owner (%s) or renewer (%s) may",
			id.User, rec.GetId(), rec.GetUser(), rec.GetDelegation().GetRenewer())
	}
	if _, err := mutate[*stratov1.RevokeTokenResponse](ctx, s, &stratov1.RevokeTokenRequest{Id: rec.GetId()}); err != nil {
		return nil, err
	}
	return &stratov1.CancelDelegationTokenResponse{}, nil
}

// ListDelegationTokens lists the delegation tokens (administrators: auth.go).
func (s *Server) ListDelegationTokens(ctx context.Context, r *stratov1.ListDelegationTokensRequest) (*stratov1.ListDelegationTokensResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListDelegationTokensResponse, error) {
		return rd.ListDelegationTokens(r)
	})
}

// delegationPurgeGrace is how long the record of an expired delegation
// token is kept, so that a task presenting it meanwhile is told it expired
// (or was cancelled) rather than that it is unknown.
const delegationPurgeGrace = time.Hour

// purgeDelegationTokens deletes the records of delegation tokens expired
// for delegationPurgeGrace (leader, from the background tick), a page at
// a time.
func (s *Server) purgeDelegationTokens(ctx context.Context) error {
	now := s.now().Add(-delegationPurgeGrace).UnixMilli()
	res, err := s.ns.Reader(s.db).ListDelegationTokens(&stratov1.ListDelegationTokensRequest{})
	if err != nil {
		return err
	}
	var ids []string
	for _, t := range res.GetTokens() {
		if t.GetExpiresUnixMs() <= now {
			ids = append(ids, t.GetId())
		}
	}
	if len(ids) == 0 {
		return nil
	}
	cmd, err := s.ns.Prepare(ctx, &stratov1.PurgeTokensCommand{Ids: ids}, s.db, namespace.PrepareEnv{Now: s.now()})
	if err != nil {
		return err
	}
	_, err = s.proposeNamespace(ctx, cmd)
	return err
}

// DelegationIdentifier encodes a delegation token's fields as Hadoop's
// AbstractDelegationTokenIdentifier.write does: a version byte (0), the
// owner, renewer and real user as Text (a vint length and UTF-8), the
// issue and max dates as vlongs (ms), the sequence number and the key ID
// as vints.
func DelegationIdentifier(owner, renewer, realUser string, issueMs, maxMs int64, seq uint64, keyID uint32) []byte {
	b := []byte{0}
	for _, t := range []string{owner, renewer, realUser} {
		b = appendVLong(b, int64(len(t)))
		b = append(b, t...)
	}
	b = appendVLong(b, issueMs)
	b = appendVLong(b, maxMs)
	b = appendVLong(b, int64(int32(seq)))
	return appendVLong(b, int64(int32(keyID)))
}

// appendVLong is Hadoop's WritableUtils.writeVLong (writeVInt is the same
// encoding).
func appendVLong(b []byte, i int64) []byte {
	if i >= -112 && i <= 127 {
		return append(b, byte(i))
	}
	n := -112
	if i < 0 {
		i ^= -1
		n = -120
	}
	for tmp := i; tmp != 0; tmp >>= 8 {
		n--
	}
	b = append(b, byte(n))
	if n < -120 {
		n = -(n + 120)
	} else {
		n = -(n + 112)
	}
	for idx := n; idx != 0; idx-- {
		b = append(b, byte(i>>((idx-1)*8)))
	}
	return b
}
