package consensus

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"google.golang.org/grpc"
)

// Options configures a Node. The zero value of every field but ID and Dir has a
// documented default, filled in by EnsureDefaults.
type Options struct {
	// ID is this node's raft ID. Required, non-zero, and stable for the life of
	// the data directory.
	ID uint64
	// Peers maps every voter's raft ID, this node's included, to the address of
	// the gRPC server its Raft service is registered on. It sets the voters
	// only when the data directory is created; after that the group's
	// membership (and every member's address) is the one stored in the
	// directory, which membership changes keep up to date. An address given
	// here for a member still wins locally (a member that moved). Default:
	// {ID: ""}, a single voter, which needs no transport.
	Peers map[uint64]string
	// Join makes a new data directory wait to be added to an existing group
	// (AddMember on its leader) instead of bootstrapping one: it starts with
	// no configuration and gets the group's state from the leader as a
	// snapshot. Peers may then only hold this node's own address, which it
	// tells the nodes it talks to. Ignored for a directory that already
	// holds state.
	Join bool
	// PromoteMaxLag is how far (in entries) a learner's log may be behind
	// the leader's commit index for AddMember to promote it to voter.
	// Default: 1000.
	PromoteMaxLag uint64
	// FS is the filesystem the Pebble database lives on. Default: vfs.Default.
	FS vfs.FS
	// Dir is the directory of the Pebble database that holds both the raft log
	// and the state machine. Required.
	Dir string
	// Pebble, when set, is the base Pebble configuration (cache, memtable
	// size, ...). Open copies it and overrides FS, FormatMajorVersion and
	// Logger. Default: Pebble's defaults.
	Pebble *pebble.Options

	// TickInterval is the length of one raft logical tick. Default: 100ms.
	TickInterval time.Duration
	// ElectionTicks is the number of ticks without a leader's heartbeat before
	// a follower campaigns (randomised up to twice that by raft).
	// Default: 10. Must be greater than HeartbeatTicks.
	ElectionTicks int
	// HeartbeatTicks is the number of ticks between a leader's heartbeats.
	// Default: 1.
	HeartbeatTicks int

	// CompactEvery is how many entries are applied between two compactions of
	// the raft log. Default: 10000.
	CompactEvery uint64
	// KeepEntries is how many applied entries a compaction leaves in the log,
	// so that a follower slightly behind catches up from the log rather than
	// from a snapshot. Default: 5000. Set it lower than CompactEvery.
	KeepEntries uint64

	// SnapshotFileBytes bounds, about, each sstable an incoming snapshot
	// is staged in on disk before it is ingested: the snapshot is never
	// held in memory, whatever its size. Default: 64 MiB.
	SnapshotFileBytes int64

	// MaxSizePerMsg bounds the bytes of entries in one append message to a
	// follower. Default: 1 MiB.
	MaxSizePerMsg uint64
	// MaxInflightMsgs bounds the append messages in flight to one follower.
	// Default: 256.
	MaxInflightMsgs int
	// MaxUncommittedBytes bounds the bytes of proposals appended but not yet
	// committed; proposals over it fail with ErrProposalDropped. Default: 64 MiB.
	MaxUncommittedBytes uint64
	// LogCacheBytes bounds the most recent log entries kept in memory (for
	// the apply path and followers' catch-up without reading Pebble),
	// about, in bytes; at most 8192 entries besides. Default 32 MiB.
	LogCacheBytes int64
	// ProposalLinger is how long the leader waits, after answering
	// proposers, for them to propose again before it appends and fsyncs
	// what it has: clients that get their answer and send their next
	// write join this log append instead of waiting a whole fsync for the
	// next one (group commit's delay, like MySQL's
	// binlog_group_commit_sync_delay). The wait ends as soon as as many
	// proposals wait as were answered. Default 100µs; negative: none.
	ProposalLinger time.Duration
	// ApplyAfterSync turns off applying a sole voter's entries while their
	// log append is being fsynced: they are applied after it, as on a
	// member of a larger group.
	ApplyAfterSync bool
	// MaxProposalBatch bounds the proposals taken into one log append.
	// Default: 4096.
	MaxProposalBatch int

	// FollowerReadTimeout bounds how long FollowerRead waits on a
	// follower for the leader to grant a read index and for this node to
	// apply it, before it fails with ErrReadTimeout (and a
	// NotLeaderError: read at the leader). Default: the election timeout
	// (ElectionTicks × TickInterval).
	FollowerReadTimeout time.Duration

	// DialOptions are used for connections to peers. Default: insecure
	// transport credentials.
	DialOptions []grpc.DialOption
	// Logger receives the node's structured logs (raft's and Pebble's
	// included). Default: slog.Default().
	Logger *slog.Logger
	// Observers receive measurements for monitoring (latency histograms).
	// Default: none.
	Observers Observers

	// installHook, when set, is called at each step of a snapshot's
	// install (the names in snapshot.go, and "file N" as each staged file
	// is finished); an error fails the step. The fault tests crash the
	// node there.
	installHook func(step string) error
}

// Observer receives one measurement; a prometheus.Histogram is one.
type Observer interface{ Observe(float64) }

// Observers are the node's measurement hooks, each optional. They are
// called on the node's loop goroutine and must be fast.
type Observers struct {
	// LogSync gets the seconds of each synced log write (the Pebble batch
	// of new entries and hard state, with its fsync).
	LogSync Observer
	// Apply gets the seconds of each apply of committed entries (building
	// and committing the state machine's batch).
	Apply Observer
	// ProposalBatch gets the number of proposals taken into each log
	// append by this node as leader (the group-commit factor).
	ProposalBatch Observer
	// ReadIndex gets the seconds each batch of reads (ReadBarrier, and
	// FollowerRead on the leader or a follower) waited, from its
	// ReadIndex request to its index being applied here.
	ReadIndex Observer
}

// EnsureDefaults fills unset fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.LogCacheBytes == 0 {
		o.LogCacheBytes = 32 << 20
	}
	if o.Peers == nil {
		o.Peers = map[uint64]string{o.ID: ""}
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.TickInterval == 0 {
		o.TickInterval = 100 * time.Millisecond
	}
	if o.ElectionTicks == 0 {
		o.ElectionTicks = 10
	}
	if o.HeartbeatTicks == 0 {
		o.HeartbeatTicks = 1
	}
	if o.FollowerReadTimeout == 0 {
		o.FollowerReadTimeout = time.Duration(o.ElectionTicks) * o.TickInterval
	}
	if o.CompactEvery == 0 {
		o.CompactEvery = 10000
	}
	if o.KeepEntries == 0 {
		o.KeepEntries = 5000
	}
	if o.SnapshotFileBytes == 0 {
		o.SnapshotFileBytes = 64 << 20
	}
	if o.MaxSizePerMsg == 0 {
		o.MaxSizePerMsg = 1 << 20
	}
	if o.MaxInflightMsgs == 0 {
		o.MaxInflightMsgs = 256
	}
	if o.MaxUncommittedBytes == 0 {
		o.MaxUncommittedBytes = 64 << 20
	}
	if o.ProposalLinger == 0 {
		o.ProposalLinger = 100 * time.Microsecond
	}
	if o.MaxProposalBatch == 0 {
		o.MaxProposalBatch = 4096
	}
	if o.PromoteMaxLag == 0 {
		o.PromoteMaxLag = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports the first invalid field of o (after EnsureDefaults).
func (o *Options) Validate() error {
	switch {
	case o.ID == 0:
		return fmt.Errorf("%w: ID must be non-zero", ErrInvalidOptions)
	case o.Dir == "":
		return fmt.Errorf("%w: Dir is required", ErrInvalidOptions)
	case o.TickInterval <= 0:
		return fmt.Errorf("%w: TickInterval must be positive", ErrInvalidOptions)
	case o.HeartbeatTicks <= 0:
		return fmt.Errorf("%w: HeartbeatTicks must be positive", ErrInvalidOptions)
	case o.ElectionTicks <= o.HeartbeatTicks:
		return fmt.Errorf("%w: ElectionTicks (%d) must be greater than HeartbeatTicks (%d)",
			ErrInvalidOptions, o.ElectionTicks, o.HeartbeatTicks)
	case o.KeepEntries >= o.CompactEvery:
		return fmt.Errorf("%w: KeepEntries (%d) must be less than CompactEvery (%d)",
			ErrInvalidOptions, o.KeepEntries, o.CompactEvery)
	case o.SnapshotFileBytes < 0:
		return fmt.Errorf("%w: SnapshotFileBytes must be positive", ErrInvalidOptions)
	case o.MaxProposalBatch <= 0 || o.MaxInflightMsgs <= 0:
		return fmt.Errorf("%w: MaxProposalBatch and MaxInflightMsgs must be positive", ErrInvalidOptions)
	}
	if _, ok := o.Peers[o.ID]; !ok {
		return fmt.Errorf("%w: Peers must include this node's ID %d", ErrInvalidOptions, o.ID)
	}
	if o.Join && len(o.Peers) > 1 {
		return fmt.Errorf("%w: a joining node takes the group's members from its leader, not Peers", ErrInvalidOptions)
	}
	for id, addr := range o.Peers {
		if id == 0 {
			return fmt.Errorf("%w: peer ID 0", ErrInvalidOptions)
		}
		if id != o.ID && addr == "" {
			return fmt.Errorf("%w: peer %d has no address", ErrInvalidOptions, id)
		}
	}
	return nil
}
