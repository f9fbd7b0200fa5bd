package meta

import (
	"context"

	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/proto/stratopb"
)

// Membership of the meta Raft group (strato admin meta add|remove|
// transfer-leader): the leader runs each change through consensus, one at
// a time.

// AddMetaMember adds a replica started with --join: as a learner, then, once
// it has caught up, as a voter (unless req.Learner).
func (s *Server) AddMetaMember(ctx context.Context, req *stratopb.AddMetaMemberRequest) (*stratopb.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error {
		return s.node.AddMember(ctx, req.GetId(), req.GetAddr(), req.GetLearner())
	})
}

// RemoveMetaMember removes a replica (the leader first hands leadership over
// when it is the one removed, and answers NotLeader).
func (s *Server) RemoveMetaMember(ctx context.Context, req *stratopb.RemoveMetaMemberRequest) (*stratopb.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error { return s.node.RemoveMember(ctx, req.GetId()) })
}

// TransferMetaLeader makes another voter the leader.
func (s *Server) TransferMetaLeader(ctx context.Context, req *stratopb.TransferMetaLeaderRequest) (*stratopb.MetaMembersResponse, error) {
	return s.changeMembers(ctx, func(ctx context.Context) error { return s.node.TransferLeadership(ctx, req.GetId()) })
}

func (s *Server) changeMembers(ctx context.Context, change func(context.Context) error) (*stratopb.MetaMembersResponse, error) {
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
	return &stratopb.MetaMembersResponse{LeaderId: lead, Members: metaMembers(ms)}, nil
}

func metaMembers(ms []consensus.Member) []*stratopb.MetaMember {
	out := make([]*stratopb.MetaMember, 0, len(ms))
	for _, m := range ms {
		role := "voter"
		if m.Learner {
			role = "learner"
		}
		out = append(out, &stratopb.MetaMember{Id: m.ID, Addr: m.Addr, Role: role, Match: m.Match, Active: m.Active})
	}
	return out
}
