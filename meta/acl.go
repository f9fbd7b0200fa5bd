package meta

// Authorization of the namespace (docs/security.md, "ACLs"): meta/namespace
// decides (acl.go there); this file hands it the caller and serves the ACL
// calls.

import (
	"context"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// nsCaller is the caller as the namespace sees it: nil when the server
// does not authenticate (nothing is checked).
func nsCaller(ctx context.Context) *namespace.Caller {
	id := caller(ctx)
	if id == nil {
		return nil
	}
	return &namespace.Caller{User: id.User, Groups: id.Groups, Admin: id.Admin}
}

func (s *Server) GetAcl(ctx context.Context, r *stratov1.GetAclRequest) (*stratov1.GetAclResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.GetAclResponse, error) { return rd.GetAcl(r) })
}

func (s *Server) SetAcl(ctx context.Context, r *stratov1.SetAclRequest) (*stratov1.SetAclResponse, error) {
	return mutate[*stratov1.SetAclResponse](ctx, s, r)
}

func (s *Server) AddAcl(ctx context.Context, r *stratov1.AddAclRequest) (*stratov1.AddAclResponse, error) {
	return mutate[*stratov1.AddAclResponse](ctx, s, r)
}

func (s *Server) RemoveAcl(ctx context.Context, r *stratov1.RemoveAclRequest) (*stratov1.RemoveAclResponse, error) {
	return mutate[*stratov1.RemoveAclResponse](ctx, s, r)
}
