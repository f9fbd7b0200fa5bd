package namespace

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Users and their tokens (meta's --auth token; docs/security.md): one
// record per user, "NU<name>" → UserRecord, and one per token,
// "NT<token ID>" → TokenRecord. A token record holds the SHA-256 of the
// token's secret, never the secret: meta generates the secret, hands it to
// Prepare in PrepareEnv.TokenSecret, and returns it to the caller once;
// neither the Raft log nor the database sees it. A revoked token keeps its
// record (marked revoked), so that a client presenting it is told it was
// revoked rather than unknown.

const (
	// DefaultTokenTTL is a token's lifetime when the request gives none.
	DefaultTokenTTL = 30 * 24 * time.Hour
	// MaxTokenTTL is the longest lifetime a token may be issued with.
	MaxTokenTTL = 366 * 24 * time.Hour
	// MinTokenSecret is the least number of random bytes of a secret.
	MinTokenSecret = 32
	// tokenIDBytes: a token ID is 16 hex digits.
	tokenIDBytes = 8
)

func userKey(buf []byte, name string) []byte { return append(tableKey(buf, tagUser), name...) }
func tokenKey(buf []byte, id string) []byte  { return append(tableKey(buf, tagToken), id...) }

// ValidateUserName checks a user's (or a group's) name: 1 to 64 of
// [a-z0-9._-], starting with a letter or a digit.
func ValidateUserName(kind, name string) error {
	if len(name) < 1 || len(name) > 64 {
		return invalidName(kind, name, "must be 1 to 64 characters")
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return invalidName(kind, name, "may hold only lowercase letters, digits, '.', '_' and '-', and starts with a letter or a digit")
		}
	}
	return nil
}

// HashTokenSecret is what a token record keeps of its secret.
func HashTokenSecret(secret []byte) []byte {
	h := sha256.Sum256(secret)
	return h[:]
}

func prepareUser(r *stratov1.CreateUserRequest, env PrepareEnv) (*stratov1.UserRecord, error) {
	if err := ValidateUserName("user", r.GetName()); err != nil {
		return nil, err
	}
	for _, g := range r.GetGroups() {
		if err := ValidateUserName("group", g); err != nil {
			return nil, err
		}
	}
	return &stratov1.UserRecord{Name: r.GetName(), Admin: r.GetAdmin(), Groups: r.GetGroups(), CreatedUnixMs: env.Now.UnixMilli(),
		Proxy: r.GetProxy()}, nil
}

// prepareToken makes the record of a new token for r.User (which the
// server fills in with the caller when the request leaves it empty).
func prepareToken(r *stratov1.IssueTokenRequest, env PrepareEnv) (*stratov1.TokenRecord, error) {
	if err := ValidateUserName("user", r.GetUser()); err != nil {
		return nil, err
	}
	ttl := time.Duration(r.GetTtlMs()) * time.Millisecond
	switch {
	case r.GetTtlMs() == 0:
		ttl = DefaultTokenTTL
	case r.GetTtlMs() < 0 || ttl > MaxTokenTTL:
		return nil, fmt.Errorf("%w: a token's lifetime must be positive and at most %v (%d days)", ErrInvalid, MaxTokenTTL, int(MaxTokenTTL/(24*time.Hour)))
	}
	if len(env.TokenSecret) < MinTokenSecret {
		return nil, fmt.Errorf("namespace: a token needs a secret of at least %d random bytes", MinTokenSecret)
	}
	if env.Rand == nil {
		return nil, fmt.Errorf("namespace: no random source to generate a token ID")
	}
	id := make([]byte, tokenIDBytes)
	if _, err := io.ReadFull(env.Rand, id); err != nil {
		return nil, err
	}
	now := env.Now.UnixMilli()
	return &stratov1.TokenRecord{Id: hex.EncodeToString(id), User: r.GetUser(), SecretSha256: HashTokenSecret(env.TokenSecret),
		CreatedUnixMs: now, ExpiresUnixMs: now + ttl.Milliseconds()}, nil
}

func (a *applier) createUser(c *stratov1.UserRecord) (proto.Message, error) {
	if err := ValidateUserName("user", c.GetName()); err != nil {
		return nil, err
	}
	key := userKey(nil, c.GetName())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrUserExists, c.GetName())
	}
	rec := &stratov1.UserRecord{Name: c.GetName(), Admin: c.GetAdmin(), Groups: c.GetGroups(), CreatedUnixMs: c.GetCreatedUnixMs(),
		Proxy: c.GetProxy()}
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.CreateUserResponse{User: user(rec)}, nil
}

func (a *applier) deleteUser(c *stratov1.DeleteUserCommand) (proto.Message, error) {
	key := userKey(nil, c.GetName())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUserNotFound, c.GetName())
	}
	var revoke []*stratov1.TokenRecord
	err := scan(a.b, tableKey(nil, tagToken), "", "", func(_, v []byte) (bool, error) {
		rec := &stratov1.TokenRecord{}
		if err := proto.Unmarshal(v, rec); err != nil {
			return false, fmt.Errorf("%w: token: %w", ErrCorrupt, err)
		}
		if rec.User == c.GetName() && rec.RevokedUnixMs == 0 {
			revoke = append(revoke, rec)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	for _, rec := range revoke {
		rec.RevokedUnixMs = max(a.now, 1)
		if err := put(a.b, tokenKey(nil, rec.Id), rec); err != nil {
			return nil, err
		}
	}
	return &stratov1.DeleteUserResponse{RevokedTokens: uint32(len(revoke))}, a.b.Delete(key, nil)
}

func (a *applier) issueToken(c *stratov1.TokenRecord) (proto.Message, error) {
	if len(c.GetSecretSha256()) != sha256.Size || c.GetId() == "" || c.GetExpiresUnixMs() <= c.GetCreatedUnixMs() {
		return nil, fmt.Errorf("%w: a token record needs an ID, a SHA-256 and an expiry after its creation", ErrInvalid)
	}
	if ok, err := exists(a.b, userKey(nil, c.GetUser())); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUserNotFound, c.GetUser())
	}
	key := tokenKey(nil, c.GetId())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: token %s", ErrExists, c.GetId())
	}
	rec := &stratov1.TokenRecord{Id: c.GetId(), User: c.GetUser(), SecretSha256: c.GetSecretSha256(),
		CreatedUnixMs: c.GetCreatedUnixMs(), ExpiresUnixMs: c.GetExpiresUnixMs(), Delegation: c.GetDelegation()}
	if rec.Delegation != nil {
		if err := a.takeDelegationSequence(rec); err != nil {
			return nil, err
		}
	}
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.IssueTokenResponse{Info: token(rec)}, nil
}

func (a *applier) revokeToken(c *stratov1.RevokeTokenCommand) (proto.Message, error) {
	key := tokenKey(nil, c.GetId())
	rec := &stratov1.TokenRecord{}
	if ok, err := get(a.b, key, rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrTokenNotFound, c.GetId())
	}
	if rec.RevokedUnixMs != 0 {
		return &stratov1.RevokeTokenResponse{}, nil
	}
	rec.RevokedUnixMs = max(a.now, 1)
	return &stratov1.RevokeTokenResponse{}, put(a.b, key, rec)
}

// user is the API's view of a user.
func user(r *stratov1.UserRecord) *stratov1.User {
	return &stratov1.User{Name: r.GetName(), Admin: r.GetAdmin(), Groups: r.GetGroups(), CreatedUnixMs: r.GetCreatedUnixMs(),
		Proxy: r.GetProxy()}
}

// token is the API's view of a token: never its secret's hash.
func token(r *stratov1.TokenRecord) *stratov1.Token {
	return &stratov1.Token{Id: r.GetId(), User: r.GetUser(), CreatedUnixMs: r.GetCreatedUnixMs(),
		ExpiresUnixMs: r.GetExpiresUnixMs(), RevokedUnixMs: r.GetRevokedUnixMs()}
}

// User returns a user's record (ErrUserNotFound if there is none).
func (rd *Reader) User(name string) (*stratov1.UserRecord, error) {
	rec := &stratov1.UserRecord{}
	if name == "" {
		return nil, fmt.Errorf("%w: an empty name", ErrUserNotFound)
	}
	if ok, err := get(rd.r, userKey(nil, name), rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUserNotFound, name)
	}
	return rec, nil
}

// Token returns a token's record, with its secret's hash
// (ErrTokenNotFound if there is none).
func (rd *Reader) Token(id string) (*stratov1.TokenRecord, error) {
	rec := &stratov1.TokenRecord{}
	if id == "" {
		return nil, fmt.Errorf("%w: an empty ID", ErrTokenNotFound)
	}
	if ok, err := get(rd.r, tokenKey(nil, id), rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrTokenNotFound, id)
	}
	return rec, nil
}

// HasUsers reports whether any user exists.
func (rd *Reader) HasUsers() (bool, error) {
	found := false
	err := scan(rd.r, tableKey(nil, tagUser), "", "", func(_, _ []byte) (bool, error) {
		found = true
		return false, nil
	})
	return found, err
}

// ListUsers lists users in name order.
func (rd *Reader) ListUsers(req *stratov1.ListUsersRequest) (*stratov1.ListUsersResponse, error) {
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListUsersResponse{}
	err := scan(rd.r, tableKey(nil, tagUser), "", req.GetStartAfter(), func(_, v []byte) (bool, error) {
		rec := &stratov1.UserRecord{}
		if err := proto.Unmarshal(v, rec); err != nil {
			return false, fmt.Errorf("%w: user: %w", ErrCorrupt, err)
		}
		if len(res.Users) == limit {
			res.Truncated = true
			return false, nil
		}
		res.Users = append(res.Users, user(rec))
		return true, nil
	})
	return res, err
}

// ListTokens lists tokens (without their hashes) in ID order, those of one
// user when req names one.
func (rd *Reader) ListTokens(req *stratov1.ListTokensRequest) (*stratov1.ListTokensResponse, error) {
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListTokensResponse{}
	err := scan(rd.r, tableKey(nil, tagToken), "", req.GetStartAfter(), func(_, v []byte) (bool, error) {
		rec := &stratov1.TokenRecord{}
		if err := proto.Unmarshal(v, rec); err != nil {
			return false, fmt.Errorf("%w: token: %w", ErrCorrupt, err)
		}
		if req.GetUser() != "" && rec.User != req.GetUser() || rec.Delegation != nil {
			return true, nil // delegation tokens: ListDelegationTokens
		}
		if len(res.Tokens) == limit {
			res.Truncated = true
			return false, nil
		}
		res.Tokens = append(res.Tokens, token(rec))
		return true, nil
	})
	return res, err
}
