package client

import (
	"context"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Delegation tokens (docs/decisions/0082-delegation-tokens.md): a token a
// user gets for a job, that acts as the user, that its renewer renews and
// its owner or renewer cancels. A client presents one as any token
// (Options.Token).

// GetDelegationToken issues a delegation token for the caller (which must
// present its own token, not a delegation token), renewable by renewer (a
// user name or a principal whose short name is one; "": the caller). It
// is not retried after an attempt whose outcome is unknown.
func (c *Client) GetDelegationToken(ctx context.Context, renewer string) (*stratov1.GetDelegationTokenResponse, error) {
	return Cluster(ctx, c, func(ctx context.Context, cl ClusterStubs) (*stratov1.GetDelegationTokenResponse, error) {
		return cl.GetDelegationToken(ctx, &stratov1.GetDelegationTokenRequest{Renewer: renewer})
	})
}

// RenewDelegationToken renews a delegation token (the whole token,
// strato1.dt<N>.<secret>) and returns its new expiry in Unix ms; only its
// renewer may.
func (c *Client) RenewDelegationToken(ctx context.Context, token string) (int64, error) {
	ctx = c.idempotent(ctx)
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.RenewDelegationTokenResponse, error) {
		return a.RenewDelegationToken(ctx, &stratov1.RenewDelegationTokenRequest{Token: token})
	})
	return resp.GetExpiresUnixMs(), err
}

// CancelDelegationToken cancels a delegation token; its owner or its
// renewer may.
func (c *Client) CancelDelegationToken(ctx context.Context, token string) error {
	ctx = c.idempotent(ctx)
	_, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.CancelDelegationTokenResponse, error) {
		return a.CancelDelegationToken(ctx, &stratov1.CancelDelegationTokenRequest{Token: token})
	})
	return err
}

// ListDelegationTokens returns every delegation token (administrators).
func (c *Client) ListDelegationTokens(ctx context.Context) ([]*stratov1.DelegationToken, error) {
	return allAdminPages(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient, after string) ([]*stratov1.DelegationToken, bool, error) {
		resp, err := a.ListDelegationTokens(ctx, &stratov1.ListDelegationTokensRequest{StartAfter: after})
		return resp.GetTokens(), resp.GetTruncated(), err
	}, (*stratov1.DelegationToken).GetId)
}
