package client

// Tokens (meta's --auth token; docs/security.md): the client presents
// Options.Token on every call to meta, as the gRPC metadata
// "authorization: Bearer <token>". Datanodes get no token (block tokens
// come later).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TokenEnv names the environment variable a client takes its token from
// when Options.Token is empty.
const TokenEnv = "STRATO_TOKEN"

// TokenFile is the file `strato login` stores the token in and a client
// reads when neither Options.Token nor $STRATO_TOKEN gives one:
// $XDG_CONFIG_HOME/strato/token, or ~/.config/strato/token.
func TokenFile() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("client: no home directory for the token file: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "strato", "token"), nil
}

// FindToken returns the token a client presents: tok when not empty, else
// $STRATO_TOKEN, else the content of TokenFile; "" (no token) when none
// gives one. A token file that exists but cannot be read is an error.
func FindToken(tok string) (string, error) {
	if tok = strings.TrimSpace(tok); tok != "" {
		return tok, nil
	}
	if tok = strings.TrimSpace(os.Getenv(TokenEnv)); tok != "" {
		return tok, nil
	}
	path, err := TokenFile()
	if err != nil {
		return "", nil
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("client: reading the token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// tokenCredentials sends the token with every call on a meta connection.
type tokenCredentials string

func (t tokenCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

// RequireTransportSecurity is false: a cluster may authenticate clients
// without TLS (a test, a trusted network), though the token then crosses
// the network in the clear.
func (t tokenCredentials) RequireTransportSecurity() bool { return false }

var _ credentials.PerRPCCredentials = tokenCredentials("")

// TokenCredentials is what New adds to its meta connection for a token:
// for callers that dial meta's gRPC API themselves.
func TokenCredentials(tok string) credentials.PerRPCCredentials { return tokenCredentials(tok) }

// ---- Users and tokens (AdminService) ----------------------------------------------

// CreateUser makes a user (ErrExists if the name is taken).
func (c *Client) CreateUser(ctx context.Context, name string, isAdmin bool, groups []string) (*stratov1.User, error) {
	ctx = c.idempotent(ctx)
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.CreateUserResponse, error) {
		return a.CreateUser(ctx, &stratov1.CreateUserRequest{Name: name, Admin: isAdmin, Groups: groups})
	})
	return resp.GetUser(), err
}

// DeleteUser deletes a user and revokes its tokens; it returns how many it
// revoked (ErrNotFound if there is no such user).
func (c *Client) DeleteUser(ctx context.Context, name string) (int, error) {
	ctx = c.idempotent(ctx)
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.DeleteUserResponse, error) {
		return a.DeleteUser(ctx, &stratov1.DeleteUserRequest{Name: name})
	})
	return int(resp.GetRevokedTokens()), err
}

// ListUsers returns every user.
func (c *Client) ListUsers(ctx context.Context) ([]*stratov1.User, error) {
	return allAdminPages(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient, after string) ([]*stratov1.User, bool, error) {
		resp, err := a.ListUsers(ctx, &stratov1.ListUsersRequest{StartAfter: after})
		return resp.GetUsers(), resp.GetTruncated(), err
	}, (*stratov1.User).GetName)
}

// IssueToken issues a token for user ("": the caller) valid for ttl (0:
// meta's default, 30 days) and returns it (the only time it is seen) with
// its description. It is not retried after an attempt whose outcome is
// unknown: a token issued twice is one too many.
func (c *Client) IssueToken(ctx context.Context, user string, ttl time.Duration) (string, *stratov1.Token, error) {
	resp, err := Cluster(ctx, c, func(ctx context.Context, cl ClusterStubs) (*stratov1.IssueTokenResponse, error) {
		return cl.IssueToken(ctx, &stratov1.IssueTokenRequest{User: user, TtlMs: ttl.Milliseconds()})
	})
	return resp.GetToken(), resp.GetInfo(), err
}

// RevokeToken revokes a token (ErrNotFound if there is none).
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	ctx = c.idempotent(ctx)
	_, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.RevokeTokenResponse, error) {
		return a.RevokeToken(ctx, &stratov1.RevokeTokenRequest{Id: id})
	})
	return err
}

// ListTokens returns the tokens (never their secrets) of user, or every
// token ("": an administrator sees all, anyone else its own).
func (c *Client) ListTokens(ctx context.Context, user string) ([]*stratov1.Token, error) {
	return allAdminPages(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient, after string) ([]*stratov1.Token, bool, error) {
		resp, err := a.ListTokens(ctx, &stratov1.ListTokensRequest{User: user, StartAfter: after})
		return resp.GetTokens(), resp.GetTruncated(), err
	}, (*stratov1.Token).GetId)
}

// allAdminPages reads a paged admin listing to its end: page returns the
// items after a key and whether more follow; key is an item's key.
func allAdminPages[T any](ctx context.Context, c *Client, page func(context.Context, stratov1.AdminServiceClient, string) ([]T, bool, error),
	key func(T) string) ([]T, error) {
	var all []T
	after := ""
	for {
		var more bool
		items, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) ([]T, error) {
			items, truncated, err := page(ctx, a, after)
			more = truncated
			return items, err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if !more || len(items) == 0 {
			return all, nil
		}
		after = key(items[len(items)-1])
	}
}

// WhoAmI says who meta takes the client for (Authenticated false: meta
// does not authenticate clients).
func (c *Client) WhoAmI(ctx context.Context) (*stratov1.WhoAmIResponse, error) {
	return admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.WhoAmIResponse, error) {
		return a.WhoAmI(ctx, &stratov1.WhoAmIRequest{})
	})
}
