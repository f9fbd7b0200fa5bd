package meta

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The Cluster service: datanodes register and heartbeat to the leader,
// whose soft state (health, replicas, queued commands) lives in memory.

func (s *Server) Register(ctx context.Context, req *stratov1.RegisterRequest) (*stratov1.RegisterResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.ensureClusterID(ctx); err != nil {
		return nil, err
	}
	if err := s.cl.Register(s.now(), req); err != nil {
		if errors.Is(err, cluster.ErrOtherCluster) {
			s.opts.Logger.Error("meta: refused a datanode of another cluster", "datanode", req.GetDetails().GetId(),
				"addr", req.GetDetails().GetDataAddr(), "err", err)
		}
		return nil, toStatus(err)
	}
	return &stratov1.RegisterResponse{ClusterId: s.cl.ClusterID()}, nil
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
	resp, err := s.cl.Heartbeat(s.now(), req)
	if resp != nil && resp.Reregister {
		return resp, nil // the datanode registers again
	}
	return resp, toStatus(err)
}

func (s *Server) ListDatanodes(ctx context.Context, _ *stratov1.ListDatanodesRequest) (*stratov1.ListDatanodesResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	return &stratov1.ListDatanodesResponse{Datanodes: s.cl.Datanodes()}, nil
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
	return &stratov1.ListContainersResponse{Containers: s.cl.Containers(req.StartAfter, limit)}, nil
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

// CloseContainer closes a container a client failed to write to (and its
// pipeline, when a failed member is named).
func (s *Server) CloseContainer(ctx context.Context, req *stratov1.CloseContainerRequest) (*stratov1.CloseContainerResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	cmds, err := s.cl.CloseContainer(s.now(), req.GetContainerId(), req.GetFailedDatanode())
	if err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("closing container at a client's request", "container", req.GetContainerId(),
		"failed", req.GetFailedDatanode(), "reason", req.GetReason(), "changes", len(cmds))
	for _, cmd := range cmds {
		if _, err := s.proposeCluster(ctx, cmd); err != nil {
			return nil, toStatus(err)
		}
	}
	return &stratov1.CloseContainerResponse{}, nil
}

// ReportReplica marks a replica a client read bad data from as unhealthy.
func (s *Server) ReportReplica(ctx context.Context, req *stratov1.ReportReplicaRequest) (*stratov1.ReportReplicaResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	s.opts.Logger.Warn("bad replica reported", "container", req.GetContainerId(), "datanode", req.GetDatanodeId(),
		"block", req.GetLocalId(), "reason", req.GetReason())
	if err := s.cl.MarkUnhealthy(req.GetContainerId(), req.GetDatanodeId()); err != nil {
		return nil, toStatus(err)
	}
	return &stratov1.ReportReplicaResponse{}, nil
}

// DecommissionDatanode takes a datanode out of service or back in.
func (s *Server) DecommissionDatanode(ctx context.Context, req *stratov1.DecommissionDatanodeRequest) (*stratov1.DecommissionDatanodeResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	if err := s.cl.Decommission(req.GetDatanodeId(), req.GetRecommission()); err != nil {
		return nil, toStatus(err)
	}
	s.opts.Logger.Info("datanode operational state changed", "datanode", req.GetDatanodeId(), "recommission", req.GetRecommission())
	for _, d := range s.cl.Datanodes() {
		if d.GetDetails().GetId() == req.GetDatanodeId() {
			return &stratov1.DecommissionDatanodeResponse{Datanode: d}, nil
		}
	}
	return &stratov1.DecommissionDatanodeResponse{}, nil
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

// ---- Administration in process (bench.ClusterAdmin) --------------------------

// Decommission starts decommissioning a datanode.
func (s *Server) Decommission(ctx context.Context, datanodeID string) error {
	if err := s.leaderOnly(); err != nil {
		return err
	}
	return toStatus(s.cl.Decommission(datanodeID, false))
}

// ReplicationWork runs one pass of replication decisions and returns how
// many replicate commands it queued.
func (s *Server) ReplicationWork(ctx context.Context, limit int) (int, error) {
	if err := s.leaderOnly(); err != nil {
		return 0, err
	}
	rep := s.cl.ReplicationWork(s.now(), limit)
	if len(rep.Missing) > 0 {
		s.opts.Logger.Error("containers with no good replica", "count", len(rep.Missing), "first", rep.Missing[0])
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

// allocator adapts the cluster manager to namespace.BlockAllocator.
type allocator struct{ s *Server }

func (a allocator) AllocateBlock(ctx context.Context, repl stratov1.ReplicationFactor, sizeHint int64, ex *stratov1.ExcludeList) (*stratov1.BlockLocation, error) {
	al, err := a.s.cl.Allocate(ctx, a.s.now(), repl, cluster.Exclude{
		Datanodes: ex.GetDatanodes(), Containers: ex.GetContainers(), Pipelines: ex.GetPipelines()})
	if err != nil {
		return nil, err
	}
	return &stratov1.BlockLocation{
		BlockId:  &stratov1.BlockID{ContainerId: al.ContainerID, LocalId: al.LocalID},
		Pipeline: &stratov1.Pipeline{Id: al.Pipeline.Id, Members: al.Members},
	}, nil
}

// background runs the leader's periodic work until the server closes.
func (s *Server) background() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !s.leading() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*s.opts.TickInterval)
		if err := s.tick(ctx); err != nil && !s.closed.Load() {
			s.opts.Logger.Warn("background work", "err", err)
		}
		cancel()
	}
}

func (s *Server) tick(ctx context.Context) error {
	now := s.now()
	for _, cmd := range s.cl.Tick(now) {
		if _, err := s.proposeCluster(ctx, cmd); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	// A new leader acts on the replica map only once the datanodes had time
	// to report (cluster.Options.LeaderSettle).
	settling := s.cl.Settling(now)
	if !settling && !s.cl.SafeMode().InSafeMode {
		rep := s.cl.ReplicationWork(now, s.cl.Options().ReplicationLimit)
		s.replMu.Lock()
		prevMissing := len(s.lastRepl.Missing)
		s.lastRepl = rep
		s.replScheduled += uint64(rep.Scheduled)
		s.replDeletes += uint64(rep.Deletes)
		s.replMu.Unlock()
		if len(rep.Missing) > 0 && len(rep.Missing) != prevMissing {
			s.opts.Logger.Error("containers with no good replica", "count", len(rep.Missing), "first", rep.Missing[0])
		}
		if rep.Scheduled > 0 || rep.Deletes > 0 || len(rep.Decommissioned) > 0 {
			s.opts.Logger.Info("replication", "under_replicated", rep.UnderReplicated, "scheduled", rep.Scheduled,
				"in_flight", rep.InFlight, "deletes", rep.Deletes, "decommissioned", rep.Decommissioned)
		}
	}
	if err := s.namespaceTick(ctx); err != nil {
		return err
	}
	if settling {
		return nil
	}
	return s.deleteBlocksTick(ctx)
}

// Metrics is a snapshot of the server's state for monitoring.
type Metrics struct {
	Leader               bool
	HealthyDatanodes     int
	Datanodes            int
	Containers           int
	UnderReplicated      int
	Missing              int
	ReplicationsInFlight int
	// Cumulative since this replica last became leader's start.
	ReplicationsScheduled uint64
	ReplicaDeletes        uint64
	Consensus             consensus.Status
}

// Metrics returns a snapshot of the server's state.
func (s *Server) Metrics() Metrics {
	s.replMu.Lock()
	m := Metrics{UnderReplicated: s.lastRepl.UnderReplicated, Missing: len(s.lastRepl.Missing),
		ReplicationsInFlight: s.lastRepl.InFlight, ReplicationsScheduled: s.replScheduled, ReplicaDeletes: s.replDeletes,
		Containers: s.lastRepl.Containers}
	s.replMu.Unlock()
	m.Leader = s.node.IsLeader()
	for _, d := range s.cl.Datanodes() {
		m.Datanodes++
		if d.Health == stratov1.NodeHealth_NODE_HEALTHY {
			m.HealthyDatanodes++
		}
	}
	m.Consensus = s.node.Status()
	return m
}

// ReplicationStatus is the outcome of the leader's last replication pass.
func (s *Server) ReplicationStatus() cluster.ReplicationReport {
	s.replMu.Lock()
	defer s.replMu.Unlock()
	return s.lastRepl
}
