package client

import (
	"context"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The S3 gateways' access keys, kept in meta (AdminService). Like the
// namespace's calls these are retry-safe: reads, and mutations with a
// request ID.

// admin runs fn against the meta leader's AdminService, retry-safe.
func admin[T any](ctx context.Context, c *Client, fn func(context.Context, stratov1.AdminServiceClient) (T, error)) (T, error) {
	return Cluster(RetrySafe(ctx), c, func(ctx context.Context, cl ClusterStubs) (T, error) { return fn(ctx, cl.AdminServiceClient) })
}

// CreateS3Key makes an access key of the S3 gateways for user and returns
// it with its secret; accessKey and secret are generated when empty.
// ErrExists if the access key exists.
func (c *Client) CreateS3Key(ctx context.Context, user, accessKey, secret string) (*stratov1.S3Key, string, error) {
	ctx = c.idempotent(ctx)
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.CreateS3KeyResponse, error) {
		return a.CreateS3Key(ctx, &stratov1.CreateS3KeyRequest{User: user, AccessKey: accessKey, Secret: secret})
	})
	return resp.GetKey(), resp.GetSecret(), err
}

// RevokeS3Key deletes an access key (ErrNotFound if there is none).
func (c *Client) RevokeS3Key(ctx context.Context, accessKey string) error {
	ctx = c.idempotent(ctx)
	_, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.RevokeS3KeyResponse, error) {
		return a.RevokeS3Key(ctx, &stratov1.RevokeS3KeyRequest{AccessKey: accessKey})
	})
	return err
}

// ListS3Keys returns every access key (without secrets), or user's only.
func (c *Client) ListS3Keys(ctx context.Context, user string) ([]*stratov1.S3Key, error) {
	var all []*stratov1.S3Key
	after := ""
	for {
		resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.ListS3KeysResponse, error) {
			return a.ListS3Keys(ctx, &stratov1.ListS3KeysRequest{User: user, StartAfter: after})
		})
		if err != nil {
			return nil, err
		}
		all = append(all, resp.Keys...)
		if !resp.Truncated || len(resp.Keys) == 0 {
			return all, nil
		}
		after = resp.Keys[len(resp.Keys)-1].AccessKey
	}
}

// S3Secret returns an access key's secret (ErrNotFound if there is none):
// what an S3 gateway checks a signature with.
func (c *Client) S3Secret(ctx context.Context, accessKey string) (string, error) {
	resp, err := admin(ctx, c, func(ctx context.Context, a stratov1.AdminServiceClient) (*stratov1.GetS3SecretResponse, error) {
		return a.GetS3Secret(ctx, &stratov1.GetS3SecretRequest{AccessKey: accessKey})
	})
	return resp.GetSecret(), err
}
