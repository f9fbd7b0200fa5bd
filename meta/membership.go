package meta

import (
	"context"

	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Membership of the meta Raft group (strato admin meta add|remove|
// transfer-leader): the leader runs each change through consensus, one at
// a time.

// AddMetaMember adds a replica started with --join: as a learner, then, once
// it has caught up, as a voter (unless req.Learner).
func (s *Server) AddMetaMember(ctx context.Context, req *stratov1.AddMetaMemberRequest) (*stratov1.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error {
		return s.node.AddMember(ctx, req.GetId(), req.GetAddr(), req.GetLearner())
	})
}

// RemoveMetaMember removes a replica (the leader first hands leadership over
// when it is the one removed, and answers NotLeader).
func (s *Server) RemoveMetaMember(ctx context.Context, req *stratov1.RemoveMetaMemberRequest) (*stratov1.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error { return s.node.RemoveMember(ctx, req.GetId()) })
}

// TransferMetaLeader makes another voter the leader.
func (s *Server) TransferMetaLeader(ctx context.Context, req *stratov1.TransferMetaLeaderRequest) (*stratov1.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error { return s.node.TransferLeadership(ctx, req.GetId()) })
}

func (s *Server) changeMembers(ctx context.Context, change func(context.Context) error) (*stratov1.MetaMembersResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := change(ctx); err != nil {
		return nil, toStatus(err)
	}
	ms, err := s.node.Members(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	lead, _ := s.node.Leader()
	return &stratov1.MetaMembersResponse{LeaderId: lead, Members: metaMembers(ms)}, nil
}

func metaMembers(ms []consensus.Member) []*stratov1.MetaMember {
	out := make([]*stratov1.MetaMember, 0, len(ms))
	for _, m := range ms {
		role := "voter"
		if m.Learner {
			role = "learner"
		}
		out = append(out, &stratov1.MetaMember{Id: m.ID, Addr: m.Addr, Role: role, Match: m.Match, Active: m.Active})
	}
	return out
}
