// AdminService, and the calls only an in-process server offers (the
// benchmarks' Decommission, ReplicationWork, CloseAllContainers).

package meta

import (
	"context"
	"time"

	"github.com/strato-io/strato/meta/cluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// ListDatanodes lists a page of the datanodes, by ID (the default page
// is 1000: with ten thousand datanodes one answer of them all held the
// cluster manager for as long as the heartbeats of a second take).
func (s *Server) ListDatanodes(ctx context.Context, req *stratov1.ListDatanodesRequest) (*stratov1.ListDatanodesResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	limit := int(req.GetLimit())
	if limit <= 0 || limit > 10000 {
		limit = 1000
	}
	return &stratov1.ListDatanodesResponse{Datanodes: s.cl.Datanodes(req.GetStartAfter(), limit)}, nil
}

func (s *Server) ListPipelines(ctx context.Context, _ *stratov1.ListPipelinesRequest) (*stratov1.ListPipelinesResponse, error) {
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	return &stratov1.ListPipelinesResponse{Pipelines: s.cl.Pipelines()}, nil
}

func (s *Server) ListContainers(ctx context.Context, req *stratov1.ListContainersRequest) (*stratov1.ListContainersResponse, error) {
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	limit := int(req.Limit)
	if limit <= 0 || limit > 10000 {
		limit = 1000
	}
	f := cluster.ContainerFilter{States: req.States, Datanode: req.DatanodeId, Problems: req.Problems}
	infos, reps := s.cl.ListContainers(req.StartAfter, limit, f, req.WithReplicas)
	return &stratov1.ListContainersResponse{Containers: infos, Replicas: reps}, nil
}

func (s *Server) GetClusterSummary(ctx context.Context, _ *stratov1.GetClusterSummaryRequest) (*stratov1.ClusterSummary, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	return s.cl.Summary(), nil
}

func (s *Server) ContainerReplicas(ctx context.Context, req *stratov1.ContainerReplicasRequest) (*stratov1.ContainerReplicasResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	// The container's record is durable state: read it linearizably.
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	info, reps, err := s.cl.Replicas(req.ContainerId)
	if err != nil {
		return nil, toStatus(err)
	}
	return &stratov1.ContainerReplicasResponse{Container: info, Replicas: reps}, nil
}

func (s *Server) GetSafeMode(ctx context.Context, _ *stratov1.GetSafeModeRequest) (*stratov1.SafeModeStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	return s.cl.SafeMode(), nil
}

func (s *Server) ExitSafeMode(ctx context.Context, _ *stratov1.ExitSafeModeRequest) (*stratov1.SafeModeStatus, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	s.opts.Logger.Info("safe mode exited by an administrator")
	return s.cl.ExitSafeMode(), nil
}

// DecommissionDatanode takes a datanode out of service (decommissioning
// it, or into maintenance) or back in.
func (s *Server) DecommissionDatanode(ctx context.Context, req *stratov1.DecommissionDatanodeRequest) (*stratov1.DecommissionDatanodeResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	now, id := s.now(), req.GetDatanodeId()
	var err error
	switch {
	case req.GetMaintenance() && req.GetRecommission():
		err = s.cl.EndMaintenance(ctx, now, id)
	case req.GetMaintenance():
		var end time.Time
		if ms := req.GetMaintenanceEndUnixMs(); ms != 0 {
			end = time.UnixMilli(ms)
		}
		err = s.cl.StartMaintenance(ctx, now, id, end)
	default:
		err = s.cl.Decommission(ctx, now, id, req.GetRecommission())
	}
	if err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("datanode operational state changed", "datanode", id, "recommission", req.GetRecommission(),
		"maintenance", req.GetMaintenance(), "maintenance_end_unix_ms", req.GetMaintenanceEndUnixMs())
	d, _ := s.cl.Datanode(req.GetDatanodeId())
	return &stratov1.DecommissionDatanodeResponse{Datanode: d}, nil
}

// ScanContainer asks the datanodes holding a container's replicas to scan
// them next.
func (s *Server) ScanContainer(ctx context.Context, req *stratov1.ScanContainerRequest) (*stratov1.ScanContainerResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	ids, err := s.cl.ScanContainer(req.GetContainerId(), !req.GetMetadataOnly())
	if err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("container scan requested", "container", req.GetContainerId(), "metadata_only", req.GetMetadataOnly(), "datanodes", ids)
	return &stratov1.ScanContainerResponse{DatanodeIds: ids}, nil
}

// DiskBalancer starts or stops a datanode's disk balancer.
func (s *Server) DiskBalancer(ctx context.Context, req *stratov1.DiskBalancerRequest) (*stratov1.DiskBalancerResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	cmd := req.GetCommand()
	if cmd == nil {
		cmd = &stratov1.DiskBalancerCommand{}
	}
	if err := s.cl.DiskBalancer(req.GetDatanodeId(), cmd); err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("disk balancer requested", "datanode", req.GetDatanodeId(), "stop", cmd.GetStop(),
		"threshold", cmd.GetThreshold(), "bandwidth", cmd.GetBandwidth())
	d, _ := s.cl.Datanode(req.GetDatanodeId())
	return &stratov1.DiskBalancerResponse{Datanode: d}, nil
}

// ClosePipeline closes a pipeline and its open containers at an operator's
// request.
func (s *Server) ClosePipeline(ctx context.Context, req *stratov1.ClosePipelineRequest) (*stratov1.ClosePipelineResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	cmds, closed, err := s.cl.ClosePipeline(s.now(), req.GetPipelineId())
	if err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("closing pipeline at an operator's request", "pipeline", req.GetPipelineId(), "reason", req.GetReason(),
		"containers", closed)
	for _, cmd := range cmds {
		if _, err := s.proposeCluster(ctx, cmd); err != nil {
			return nil, toStatus(err)
		}
	}
	return &stratov1.ClosePipelineResponse{ContainerIds: closed}, nil
}

// MetaStatus answers for this replica, whether it leads or not.
func (s *Server) MetaStatus(ctx context.Context, _ *stratov1.MetaStatusRequest) (*stratov1.MetaStatusResponse, error) {
	if s.closed.Load() {
		return nil, toStatus(ErrClosed)
	}
	st := s.node.Status()
	ms, err := s.node.Members(ctx)
	if err != nil {
		ms = st.Members
	}
	return &stratov1.MetaStatusResponse{Id: st.ID, Role: st.Role, LeaderId: st.LeaderID, LeaderAddr: st.LeaderAddr,
		Term: st.Term, Commit: st.Commit, Applied: st.Applied, FirstIndex: st.FirstIndex, LastIndex: st.LastIndex, Voters: st.Voters,
		Members: metaMembers(ms)}, nil
}

// Decommission starts decommissioning a datanode.
func (s *Server) Decommission(ctx context.Context, datanodeID string) error {
	if err := s.leaderOnly(); err != nil {
		return err
	}
	return toStatus(s.cl.Decommission(ctx, s.now(), datanodeID, false))
}

// ReplicationWork runs one pass of replication decisions and returns how
// many replicate commands it queued.
func (s *Server) ReplicationWork(ctx context.Context, limit int) (int, error) {
	if err := s.leaderOnly(); err != nil {
		return 0, err
	}
	rep := s.cl.ReplicationWork(s.now(), limit)
	if !s.cl.InSafeMode() && !s.cl.Settling(s.now()) {
		s.reportMissing(rep.Missing)
	}
	return rep.Scheduled, nil
}

// CloseAllContainers moves every open container to CLOSED (through
// CLOSING), as if each had been filled and closed by its datanodes.
func (s *Server) CloseAllContainers(ctx context.Context) error {
	for _, st := range []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSING, stratov1.ContainerState_CONTAINER_CLOSED} {
		var after uint64
		for {
			page := s.cl.Containers(after, 1000)
			if len(page) == 0 {
				break
			}
			for _, c := range page {
				after = c.Id
				if c.State == stratov1.ContainerState_CONTAINER_CLOSED || c.State == st {
					continue
				}
				if _, err := s.proposeCluster(ctx, &stratov1.ClusterCommand{NowUnixMs: s.now().UnixMilli(), Op: &stratov1.ClusterCommand_SetContainerState{
					SetContainerState: &stratov1.ContainerStateChange{ContainerId: c.Id, State: st}}}); err != nil {
					return toStatus(err)
				}
			}
		}
	}
	return nil
}
