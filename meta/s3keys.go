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

func (s *Server) CreateS3Key(ctx context.Context, r *stratov1.CreateS3KeyRequest) (*stratov1.CreateS3KeyResponse, error) {
	return mutate[*stratov1.CreateS3KeyResponse](ctx, s, r)
}

func (s *Server) RevokeS3Key(ctx context.Context, r *stratov1.RevokeS3KeyRequest) (*stratov1.RevokeS3KeyResponse, error) {
	return mutate[*stratov1.RevokeS3KeyResponse](ctx, s, r)
}

func (s *Server) ListS3Keys(ctx context.Context, r *stratov1.ListS3KeysRequest) (*stratov1.ListS3KeysResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListS3KeysResponse, error) { return rd.ListS3Keys(r) })
}

func (s *Server) GetS3Secret(ctx context.Context, r *stratov1.GetS3SecretRequest) (*stratov1.GetS3SecretResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.GetS3SecretResponse, error) {
		return rd.S3Secret(r.GetAccessKey())
	})
}
