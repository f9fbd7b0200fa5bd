package meta

import (
	"context"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The S3 gateways' access keys (AdminService): namespace commands, so
// they are replicated and recorded like any mutation, and reads after the
// read barrier. Secrets travel in replies only; the request fields that
// hold one are marked debug_redact, which the audit log leaves out.
//
// With Options.Auth "token" a key belongs to a strato user (the request's
// user, which must exist; the caller when empty), and a user who is not an
// administrator creates, lists, reads and revokes its own keys only.

func (s *Server) CreateS3Key(ctx context.Context, r *stratov1.CreateS3KeyRequest) (*stratov1.CreateS3KeyResponse, error) {
	if id := caller(ctx); id != nil {
		req := &stratov1.CreateS3KeyRequest{User: r.GetUser(), AccessKey: r.GetAccessKey(), Secret: r.GetSecret()}
		if req.User == "" {
			req.User = id.User
		}
		if err := authorize(ctx, req.User, "an S3 key"); err != nil {
			return nil, err
		}
		if _, err := s.ns.Reader(s.db).User(req.User); err != nil {
			return nil, toStatus(err)
		}
		r = req
	}
	return mutate[*stratov1.CreateS3KeyResponse](ctx, s, r)
}

func (s *Server) RevokeS3Key(ctx context.Context, r *stratov1.RevokeS3KeyRequest) (*stratov1.RevokeS3KeyResponse, error) {
	if err := s.authorizeS3Key(ctx, r.GetAccessKey(), "revoking an S3 key"); err != nil {
		return nil, err
	}
	return mutate[*stratov1.RevokeS3KeyResponse](ctx, s, r)
}

func (s *Server) ListS3Keys(ctx context.Context, r *stratov1.ListS3KeysRequest) (*stratov1.ListS3KeysResponse, error) {
	if id := caller(ctx); id != nil && !id.Admin {
		if r.GetUser() != "" {
			if err := authorize(ctx, r.GetUser(), "listing the S3 keys"); err != nil {
				return nil, err
			}
		}
		r = &stratov1.ListS3KeysRequest{User: id.User, StartAfter: r.GetStartAfter(), Limit: r.GetLimit()}
	}
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListS3KeysResponse, error) { return rd.ListS3Keys(r) })
}

func (s *Server) GetS3Secret(ctx context.Context, r *stratov1.GetS3SecretRequest) (*stratov1.GetS3SecretResponse, error) {
	resp, err := read(ctx, s, func(rd *namespace.Reader) (*stratov1.GetS3SecretResponse, error) {
		return rd.S3Secret(r.GetAccessKey())
	})
	if err != nil {
		return nil, err
	}
	if id := caller(ctx); id != nil && id.Proxy && id.RealUser == "" {
		// A proxy user (an S3 gateway's) authenticates the requests of
		// the keys' users, and then acts on their behalf.
		return resp, nil
	}
	if err := authorize(ctx, resp.GetKey().GetUser(), "the secret of an S3 key"); err != nil {
		return nil, err
	}
	return resp, nil
}

// authorizeS3Key refuses a caller who is neither an administrator nor the
// key's user.
func (s *Server) authorizeS3Key(ctx context.Context, accessKey, what string) error {
	id := caller(ctx)
	if id == nil || id.Admin {
		return nil
	}
	k, err := s.ns.Reader(s.db).S3Secret(accessKey)
	if err != nil {
		return toStatus(err)
	}
	return authorize(ctx, k.GetKey().GetUser(), what)
}
