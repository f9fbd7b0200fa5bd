package meta

// Users and tokens (AdminService): namespace commands, replicated and
// applied like the S3 keys (s3keys.go). A token's secret is generated here,
// on the leader, and travels in the reply only: the command and the
// database hold its SHA-256.

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// tokenSecretBytes is the length of a token's secret (base64url: 43
// characters).
const tokenSecretBytes = 32

func (s *Server) CreateUser(ctx context.Context, r *stratov1.CreateUserRequest) (*stratov1.CreateUserResponse, error) {
	return mutate[*stratov1.CreateUserResponse](ctx, s, r)
}

func (s *Server) DeleteUser(ctx context.Context, r *stratov1.DeleteUserRequest) (*stratov1.DeleteUserResponse, error) {
	return mutate[*stratov1.DeleteUserResponse](ctx, s, r)
}

func (s *Server) ListUsers(ctx context.Context, r *stratov1.ListUsersRequest) (*stratov1.ListUsersResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListUsersResponse, error) { return rd.ListUsers(r) })
}

// IssueToken issues a token for the caller, or, for an administrator, for
// any user.
func (s *Server) IssueToken(ctx context.Context, r *stratov1.IssueTokenRequest) (*stratov1.IssueTokenResponse, error) {
	req := &stratov1.IssueTokenRequest{User: r.GetUser(), TtlMs: r.GetTtlMs()}
	if err := realCredential(ctx, "issuing a token"); err != nil {
		return nil, err
	}
	if req.User == "" {
		id := caller(ctx)
		if id == nil {
			return nil, errNoUser("issue token")
		}
		req.User = id.User
	}
	if err := authorize(ctx, req.User, "issuing a token"); err != nil {
		return nil, err
	}
	return s.issueToken(ctx, req)
}

func (s *Server) issueToken(ctx context.Context, req *stratov1.IssueTokenRequest) (*stratov1.IssueTokenResponse, error) {
	secret := make([]byte, tokenSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return nil, toStatus(err)
	}
	// No request ID: a recorded reply would keep the token for a retry.
	resp, err := mutateWith[*stratov1.IssueTokenResponse](ctx, s, req, mutation{secret: secret, noRequestID: true})
	if err != nil {
		return nil, err
	}
	return &stratov1.IssueTokenResponse{Info: resp.GetInfo(), Token: FormatToken(resp.GetInfo().GetId(), secret)}, nil
}

// RevokeToken revokes a token of the caller, or, for an administrator, any
// token.
func (s *Server) RevokeToken(ctx context.Context, r *stratov1.RevokeTokenRequest) (*stratov1.RevokeTokenResponse, error) {
	if id := caller(ctx); id != nil && !id.Admin {
		tok, err := s.ns.Reader(s.db).Token(r.GetId())
		if err != nil {
			return nil, toStatus(err)
		}
		if err := authorize(ctx, tok.GetUser(), "revoking a token"); err != nil {
			return nil, err
		}
	}
	return mutate[*stratov1.RevokeTokenResponse](ctx, s, r)
}

// ListTokens lists every token for an administrator, the caller's own for
// anyone else.
func (s *Server) ListTokens(ctx context.Context, r *stratov1.ListTokensRequest) (*stratov1.ListTokensResponse, error) {
	if id := caller(ctx); id != nil && !id.Admin {
		if r.GetUser() != "" {
			if err := authorize(ctx, r.GetUser(), "listing the tokens"); err != nil {
				return nil, err
			}
		}
		r = &stratov1.ListTokensRequest{User: id.User, StartAfter: r.GetStartAfter(), Limit: r.GetLimit()}
	}
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListTokensResponse, error) { return rd.ListTokens(r) })
}

// WhoAmI says who the caller's token names.
func (s *Server) WhoAmI(ctx context.Context, _ *stratov1.WhoAmIRequest) (*stratov1.WhoAmIResponse, error) {
	id := caller(ctx)
	if id == nil {
		return &stratov1.WhoAmIResponse{}, nil
	}
	return &stratov1.WhoAmIResponse{Authenticated: true, User: id.User, Admin: id.Admin, Groups: id.Groups,
		TokenId: id.TokenID, TokenExpiresUnixMs: id.TokenExpires.UnixMilli()}, nil
}

// AdminTokenFile is the file, in the data directory of the replica that
// bootstrapped a cluster with Options.Auth "token", that holds the first
// administrator's token.
const AdminTokenFile = "admin.token"

// AdminUser is the administrator a cluster with authentication starts with.
const AdminUser = "admin"

// bootstrapAuth makes the first administrator of a cluster with
// authentication and no user: the user "admin" and a token, written to
// Dir/admin.token (0600) on the replica that does it (the first leader).
// It returns once the cluster has a user, or the server closes.
func (s *Server) bootstrapAuth() {
	defer s.wg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		if has, err := s.ns.Reader(s.db).HasUsers(); err == nil && has {
			return
		}
		if !s.leading() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done, err := s.bootstrapAdmin(ctx)
		cancel()
		if done {
			return
		}
		if err != nil && !s.closed.Load() {
			s.opts.Logger.Warn("meta: making the first administrator", "err", err)
		}
	}
}

func (s *Server) bootstrapAdmin(ctx context.Context) (done bool, err error) {
	if err := s.readBarrier(ctx); err != nil {
		return false, err
	}
	if has, err := s.ns.Reader(s.db).HasUsers(); err != nil || has {
		return has, err
	}
	if _, err := mutate[*stratov1.CreateUserResponse](ctx, s, &stratov1.CreateUserRequest{Name: AdminUser, Admin: true}); err != nil {
		if status.Code(err) == codes.AlreadyExists {
			return true, nil // another leader made it
		}
		return false, err
	}
	resp, err := s.issueToken(ctx, &stratov1.IssueTokenRequest{User: AdminUser})
	if err != nil {
		return true, fmt.Errorf("the user %q exists but its first token could not be issued: %w", AdminUser, err)
	}
	path := filepath.Join(s.opts.Dir, AdminTokenFile)
	if err := writeSecretFile(path, []byte(resp.GetToken()+"\n")); err != nil {
		s.opts.Logger.Error("meta: the first administrator's token could not be written (see docs/security.md to issue another)",
			"path", path, "err", err)
		return true, nil
	}
	s.opts.Logger.Info("meta: authentication on; made the administrator and wrote its token (mode 0600; strato login --token - < FILE)",
		"user", AdminUser, "token_id", resp.GetInfo().GetId(), "path", path)
	return true, nil
}

// writeSecretFile writes data to path with mode 0600, atomically (a
// temporary file renamed over it).
func writeSecretFile(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
