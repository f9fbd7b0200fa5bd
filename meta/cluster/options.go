package cluster

import (
	"fmt"
	"time"
)

// Options configures a Manager. The zero value of every field means "use the
// default" given in its comment.
type Options struct {
	// StaleAfter: a datanode with no heartbeat for this long is STALE: no
	// new pipelines or allocations use it. Default 30s.
	StaleAfter time.Duration
	// DeadAfter: a datanode with no heartbeat for this long is DEAD: its
	// pipelines are closed and its replicas no longer count. Default 2m.
	DeadAfter time.Duration
	// ContainerSize is the size a container may grow to. Default 5 GiB.
	ContainerSize int64
	// CloseThreshold is the fraction of ContainerSize at which a container
	// is full: it takes no new blocks at once, and is closed FullCloseDelay
	// later, or as soon as a replica reports that much used. Default 0.9.
	CloseThreshold float64
	// FullCloseDelay leaves writers time to finish the blocks of a full
	// container before it closes (closing drops chunks not yet committed,
	// which their writers must then send again elsewhere). Default 30s.
	FullCloseDelay time.Duration
	// ReplicationLimit bounds, per datanode, the container copies in flight
	// that it pushes (the datanodes' own stream limit matches it) and,
	// apart, those it receives. Default 10.
	ReplicationLimit int
	// BlockSize is the size reserved in a container for each allocated
	// block whose writer gives no smaller size hint. Default 256 MiB.
	BlockSize int64
	// MinBlockReservation is the least a block reserves in its container,
	// whatever its size hint: with it, a container of 5 GiB closes after
	// about 74,000 small objects rather than millions. Default 64 KiB.
	MinBlockReservation int64
	// OpenContainersPerPipeline is how many containers are kept open on
	// each pipeline (allocations are spread over them). Default 3.
	OpenContainersPerPipeline int
	// PipelinesPerNode bounds how many open pipelines of replication THREE
	// one datanode takes part in. Default 2.
	PipelinesPerNode int
	// LocalIDBatch is how many block IDs one Raft round reserves, so that
	// block allocation needs no Raft round per block. Default 10000.
	LocalIDBatch uint64
	// SafeModeMinDatanodes is how many healthy datanodes must have
	// registered before meta leaves safe mode. Default 1.
	SafeModeMinDatanodes int
	// SafeModeReplicaFraction is the fraction of CLOSED containers that
	// must have at least one reported replica before meta leaves safe mode
	// (open ones may exist on no datanode yet). Default 0.99.
	SafeModeReplicaFraction float64
	// ReplicationTimeout: a replicate command not completed in this long is
	// dropped and may be sent elsewhere. Default 10m.
	ReplicationTimeout time.Duration
	// DeleteBlocksTimeout: a datanode that has not acknowledged a
	// DeleteBlocksCommand in this long is sent it again. Default 1m.
	DeleteBlocksTimeout time.Duration
	// LeaderSettle is how long a new leader rebuilds its soft state (node
	// health, the replica map) from datanode registrations and reports
	// before it decides anything from it: no replica copied or deleted, no
	// deleted blocks sent or purged, no pipeline closed for a member that
	// has not registered yet. It should cover a few heartbeat intervals.
	// Default: StaleAfter (a datanode silent that long is stale anyway).
	LeaderSettle time.Duration
	// MaintenanceMinReplicas is how many good copies elsewhere every
	// replicated container held by a datanode in maintenance keeps (capped
	// by its replication factor): entering maintenance copies the
	// containers with fewer, and while it lasts a container is re-replicated
	// only when it falls below it. Default 2 (Ozone's).
	MaintenanceMinReplicas int
	// ReplicationStep bounds the work of the replication pass per hold of
	// the manager's lock: the containers it examines, a search for a copy
	// target counting as one container per 32 datanodes it reads. Between
	// steps the lock is released and heartbeats run (replication.go).
	// Default 1000 (about a millisecond); a step also ends after half a
	// millisecond, whatever its work.
	ReplicationStep int
	// ClosingStep bounds the CLOSING containers a tick judges (whether
	// their replicas all closed; decision 0099): with more, it judges that
	// many, chosen at random, and the rest on later ticks, so that a
	// backlog (a million containers closing) holds mu briefly. Default
	// 20,000.
	ClosingStep int
}

// EnsureDefaults fills unset fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.StaleAfter == 0 {
		o.StaleAfter = 30 * time.Second
	}
	if o.DeadAfter == 0 {
		o.DeadAfter = 2 * time.Minute
	}
	if o.ContainerSize == 0 {
		o.ContainerSize = 5 << 30
	}
	if o.CloseThreshold == 0 {
		o.CloseThreshold = 0.9
	}
	if o.BlockSize == 0 {
		o.BlockSize = 256 << 20
	}
	if o.MinBlockReservation == 0 {
		o.MinBlockReservation = 64 << 10
	}
	if o.OpenContainersPerPipeline == 0 {
		o.OpenContainersPerPipeline = 3
	}
	if o.PipelinesPerNode == 0 {
		o.PipelinesPerNode = 2
	}
	if o.LocalIDBatch == 0 {
		o.LocalIDBatch = 10000
	}
	if o.SafeModeMinDatanodes == 0 {
		o.SafeModeMinDatanodes = 1
	}
	if o.SafeModeReplicaFraction == 0 {
		o.SafeModeReplicaFraction = 0.99
	}
	if o.ReplicationLimit == 0 {
		o.ReplicationLimit = 10
	}
	if o.FullCloseDelay == 0 {
		o.FullCloseDelay = 30 * time.Second
	}
	if o.ReplicationTimeout == 0 {
		o.ReplicationTimeout = 10 * time.Minute
	}
	if o.DeleteBlocksTimeout == 0 {
		o.DeleteBlocksTimeout = time.Minute
	}
	if o.LeaderSettle == 0 {
		o.LeaderSettle = o.StaleAfter
	}
	if o.MaintenanceMinReplicas == 0 {
		o.MaintenanceMinReplicas = 2
	}
	if o.ReplicationStep == 0 {
		o.ReplicationStep = 1000
	}
	if o.ClosingStep == 0 {
		o.ClosingStep = 20_000
	}
	return o
}

// Validate reports the first inconsistent setting.
func (o *Options) Validate() error {
	switch {
	case o.StaleAfter <= 0 || o.DeadAfter <= o.StaleAfter:
		return fmt.Errorf("cluster: need 0 < StaleAfter (%v) < DeadAfter (%v)", o.StaleAfter, o.DeadAfter)
	case o.ContainerSize <= 0 || o.BlockSize <= 0 || o.BlockSize > o.ContainerSize:
		return fmt.Errorf("cluster: need 0 < BlockSize (%d) <= ContainerSize (%d)", o.BlockSize, o.ContainerSize)
	case o.MinBlockReservation <= 0:
		return fmt.Errorf("cluster: MinBlockReservation %d must be positive", o.MinBlockReservation)
	case o.CloseThreshold <= 0 || o.CloseThreshold > 1:
		return fmt.Errorf("cluster: CloseThreshold %v must be in (0, 1]", o.CloseThreshold)
	case o.OpenContainersPerPipeline < 1 || o.PipelinesPerNode < 1 || o.LocalIDBatch < 1:
		return fmt.Errorf("cluster: OpenContainersPerPipeline, PipelinesPerNode and LocalIDBatch must be positive")
	case o.MaintenanceMinReplicas < 1:
		return fmt.Errorf("cluster: MaintenanceMinReplicas %d must be positive", o.MaintenanceMinReplicas)
	case o.ReplicationStep < 0:
		return fmt.Errorf("cluster: ReplicationStep %d must not be negative", o.ReplicationStep)
	case o.ClosingStep < 0:
		return fmt.Errorf("cluster: ClosingStep %d must not be negative", o.ClosingStep)
	case o.LeaderSettle < 0:
		return fmt.Errorf("cluster: LeaderSettle %v must not be negative", o.LeaderSettle)
	case o.SafeModeReplicaFraction < 0 || o.SafeModeReplicaFraction > 1:
		return fmt.Errorf("cluster: SafeModeReplicaFraction %v must be in [0, 1]", o.SafeModeReplicaFraction)
	}
	return nil
}
