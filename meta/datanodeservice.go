// DatanodeService: datanodes register and heartbeat to the leader, whose
// soft state (health, replicas, queued commands) lives in memory.

package meta

import (
	"context"
	"crypto/rand"
	"errors"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/meta/cluster"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func (s *Server) Register(ctx context.Context, req *stratov1.RegisterRequest) (*stratov1.RegisterResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.ensureClusterID(ctx); err != nil {
		return nil, err
	}
	req = s.placeInTopology(ctx, req)
	if err := s.cl.Register(s.now(), req); err != nil {
		if errors.Is(err, cluster.ErrOtherCluster) {
			s.opts.Logger.Error("meta: refused a datanode of another cluster", "datanode", req.GetDetails().GetId(),
				"addr", req.GetDetails().GetDataAddr(), "err", err)
		}
		return nil, toStatus(err)
	}
	if s.blockTokensOn() && s.btKeys.newest() == nil {
		// The datanode learns the keys now, before clients bring it
		// tokens signed with the first one.
		if err := s.rotateBlockTokenKey(ctx); err != nil {
			return nil, toStatus(err)
		}
	}
	return &stratov1.RegisterResponse{ClusterId: s.cl.ClusterID(), BlockTokens: s.blockTokenKeysFor()}, nil
}

// placeInTopology returns req with the rack Options.Topology gives the
// datanode, when it names one. A mapping that fails is logged, and the
// datanode keeps its own rack, as Hadoop falls back to its default rack.
func (s *Server) placeInTopology(ctx context.Context, req *stratov1.RegisterRequest) *stratov1.RegisterRequest {
	d := req.GetDetails()
	if s.opts.Topology == nil || d == nil {
		return req
	}
	host, _, err := net.SplitHostPort(d.GetDataAddr())
	if err != nil {
		host = d.GetDataAddr()
	}
	rack, err := s.opts.Topology.Rack(ctx, d.GetId(), host)
	if err != nil {
		s.opts.Logger.Warn("meta: topology: no rack for datanode; keeping its own", "datanode", d.GetId(), "host", host, "rack", d.GetRack(), "err", err)
		return req
	}
	if rack == "" || rack == d.GetRack() {
		return req
	}
	req = proto.Clone(req).(*stratov1.RegisterRequest)
	req.Details.Rack = rack
	return req
}

// ensureClusterID gives the cluster its identity the first time a datanode
// registers: a random ID through Raft (apply keeps the first one set, so
// two leaders racing agree).
func (s *Server) ensureClusterID(ctx context.Context) error {
	if s.cl.ClusterID() != "" {
		return nil
	}
	id := "CID-" + rand.Text()
	if _, err := s.proposeCluster(ctx, &stratov1.ClusterCommand{NowUnixMs: s.now().UnixMilli(),
		Op: &stratov1.ClusterCommand_SetClusterId{SetClusterId: id}}); err != nil {
		return toStatus(err)
	}
	s.opts.Logger.Info("meta: cluster ID set", "cluster_id", s.cl.ClusterID())
	return nil
}

func (s *Server) Heartbeat(ctx context.Context, req *stratov1.HeartbeatRequest) (*stratov1.HeartbeatResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	for _, f := range req.FailedCommands {
		s.opts.Logger.Warn("meta: a datanode command failed", "datanode", req.DatanodeId, "command", f.CommandId,
			"container", f.ContainerId, "reason", f.Reason)
	}
	resp, err := s.cl.Heartbeat(s.now(), req)
	if resp != nil && resp.Reregister {
		return resp, nil // the datanode registers again
	}
	if resp != nil {
		resp.BlockTokens = s.blockTokenKeysFor()
		cmds, serr := s.signCommands(ctx, req.GetDatanodeId(), resp.Commands)
		if serr != nil {
			return nil, toStatus(serr)
		}
		resp.Commands = cmds
	}
	return resp, toStatus(err)
}
