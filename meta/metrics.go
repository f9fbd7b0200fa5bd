// The server's metrics snapshot, exported to Prometheus by cmd/strato.

package meta

import (
	"time"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Metrics is a snapshot of the server's state for monitoring.
type Metrics struct {
	Leader               bool
	HealthyDatanodes     int
	StaleDatanodes       int // silent for a while
	DeadDatanodes        int // silent too long: their replicas are copied elsewhere
	Datanodes            int
	Containers           int
	ClosingContainers    int // CLOSING, waiting for their replicas to close
	UnderReplicated      int
	Missing              int
	MisReplicated        int // with the copies they need, against the rack rules
	ReplicationsInFlight int
	// Cumulative since this replica last became leader's start.
	ReplicationsScheduled uint64
	ReplicaDeletes        uint64
	ReplicationPasses     uint64
	// ReplicationPassTook: how long the last replication pass took, its
	// steps and the heartbeats between them (cluster.Manager.ReplicationWork).
	ReplicationPassTook time.Duration
	// FullReports counts the datanodes' full container reports this
	// replica handled as leader (registrations among them), since it
	// started; RepeatedFullReports those of them that said only what the
	// replica map already held, and so were not read (decision 0101).
	FullReports, RepeatedFullReports uint64
	// FollowerReads counts the read RPCs this replica served as a
	// follower (FollowerReadMetadata), since it started.
	FollowerReads uint64
	// Batches counts the BatchService calls this replica served since it
	// started, BatchedCalls the calls they carried (decision 0105).
	Batches, BatchedCalls uint64
	Consensus             consensus.Status
	// Balancer is the container balancer's state and progress.
	Balancer BalancerMetrics
	// Lifecycle is what the lifecycle rounds did (on the leader).
	Lifecycle LifecycleStats
	// Memory is what meta's caches hold against their bounds.
	Memory MemoryMetrics
	// DeferredWrites is about the small keys written with one Raft entry
	// (deferredwrite.go), since this replica started.
	DeferredWrites DeferredWriteMetrics
}

// BalancerMetrics is the container balancer's part of Metrics.
type BalancerMetrics struct {
	Running         bool
	Iterations      uint64 // of the run, done
	MovedContainers uint64 // by the run (iterations done, and this leader's iteration)
	MovedBytes      uint64
	MovesInFlight   int
	BytesInFlight   int64
	BytesLeft       int64   // to shed or take for every datanode to be within the threshold
	Spread          float64 // the largest used fraction of capacity less the smallest
}

// Metrics returns a snapshot of the server's state.
func (s *Server) Metrics() Metrics {
	s.replMu.Lock()
	m := Metrics{UnderReplicated: s.lastRepl.UnderReplicated, Missing: len(s.lastRepl.Missing),
		ReplicationsInFlight: s.lastRepl.InFlight, ReplicationsScheduled: s.replScheduled, ReplicaDeletes: s.replDeletes,
		ReplicationPasses: s.replPasses, ReplicationPassTook: s.replTook,
		Containers: s.lastRepl.Containers, MisReplicated: s.lastRepl.MisReplicated}
	s.replMu.Unlock()
	m.Leader = s.node.IsLeader()
	m.ClosingContainers = s.cl.Closing()
	m.FullReports, m.RepeatedFullReports = s.cl.FullReports()
	m.Lifecycle = s.LifecycleStats()
	m.Memory = s.memoryMetrics()
	m.DeferredWrites = s.dw.metrics()
	for h, n := range s.cl.HealthCounts() {
		m.Datanodes += n
		switch h {
		case stratov1.NodeHealth_NODE_HEALTHY:
			m.HealthyDatanodes += n
		case stratov1.NodeHealth_NODE_STALE:
			m.StaleDatanodes += n
		case stratov1.NodeHealth_NODE_DEAD:
			m.DeadDatanodes += n
		}
	}
	m.Consensus = s.node.Status()
	m.FollowerReads = s.followerReads.Load()
	m.Batches, m.BatchedCalls = s.batches.Load(), s.batchedCalls.Load()
	if m.Leader {
		st := s.cl.BalancerStatus()
		m.Balancer = BalancerMetrics{Running: st.Running, Iterations: st.Iterations, MovedContainers: st.MovedContainers,
			MovedBytes: st.MovedBytes, MovesInFlight: int(st.MovesInFlight), BytesInFlight: st.BytesInFlight, BytesLeft: st.BytesLeft,
			Spread: st.Spread}
	}
	return m
}

// ReplicationStatus is the outcome of the leader's last replication pass.
func (s *Server) ReplicationStatus() cluster.ReplicationReport {
	s.replMu.Lock()
	defer s.replMu.Unlock()
	return s.lastRepl
}
