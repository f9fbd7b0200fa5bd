package consensus

import (
	"sync/atomic"
	"time"
)

// Metrics is a snapshot of a node's counters, for export (e.g. to
// Prometheus) by the server that owns the node. Counters are cumulative since
// Open.
type Metrics struct {
	// Proposals is the number of commands taken into the log by this node
	// as leader.
	Proposals uint64
	// LogAppends is the number of log writes that appended entries: each is
	// one Pebble batch, so Proposals/LogAppends is the group-commit factor.
	LogAppends uint64
	// EntriesAppended is the number of entries written to the log.
	EntriesAppended uint64
	// Fsyncs is the number of synced Pebble commits (log appends and hard
	// state changes that raft requires durable).
	Fsyncs uint64
	// ApplyBatches is the number of state-machine batches committed, and
	// EntriesApplied the entries applied through them.
	ApplyBatches   uint64
	EntriesApplied uint64
	// EntriesAppliedDuringSync counts the entries a sole voter applied
	// while their own log append was being fsynced (Options.ApplyAfterSync).
	EntriesAppliedDuringSync uint64
	// AppliedIndex, CommitIndex, LastIndex, FirstIndex and Term are the
	// node's current raft positions.
	AppliedIndex uint64
	CommitIndex  uint64
	LastIndex    uint64
	FirstIndex   uint64
	Term         uint64
	// Compactions is the number of log compactions.
	Compactions uint64
	// SnapshotsSent and SnapshotsApplied count snapshots streamed to
	// followers and installed from a leader; SnapshotFailures the sends
	// that failed.
	SnapshotsSent    uint64
	SnapshotsApplied uint64
	SnapshotFailures uint64
	// SnapshotBytesReceived and SnapshotFilesReceived are the keys and
	// values of the snapshots installed here, and the sstables they were
	// staged in.
	SnapshotBytesReceived uint64
	SnapshotFilesReceived uint64
	// SnapshotInstallTime is the time spent receiving and installing them.
	SnapshotInstallTime time.Duration
	// MessagesSent and MessagesDropped count raft messages to peers; a
	// message is dropped when its peer's queue is full or it is unreachable.
	MessagesSent    uint64
	MessagesDropped uint64
	MessagesRecv    uint64
	// ReadIndexes counts linearizable read points served through raft's
	// ReadIndex (the single-voter fast path does not count).
	ReadIndexes uint64
	// LeaderChanges counts the times this node saw the leader change.
	LeaderChanges uint64
	// FollowerReadIndexes counts the ReadIndex requests this node sent to
	// its leader as a follower (one per batch of concurrent FollowerRead
	// calls); FollowerReads the FollowerRead calls it served as a
	// follower (their index granted and applied here); and
	// FollowerReadFailures those it refused (no leader known, the leader
	// changed, or Options.FollowerReadTimeout passed).
	FollowerReadIndexes  uint64
	FollowerReads        uint64
	FollowerReadFailures uint64
}

type metrics struct {
	proposals, logAppends, entriesAppended, fsyncs atomic.Uint64
	applyBatches, entriesApplied, appliedInSync    atomic.Uint64
	appliedIndex, commitIndex, lastIndex, firstIdx atomic.Uint64
	term, compactions                              atomic.Uint64
	snapshotsSent, snapshotsApplied, snapshotFails atomic.Uint64
	snapshotBytesRecv, snapshotFilesRecv           atomic.Uint64
	snapshotInstallNanos                           atomic.Int64
	messagesSent, messagesDropped, messagesRecv    atomic.Uint64
	readIndexes, leaderChanges                     atomic.Uint64
	followerReadIndexes, followerReads             atomic.Uint64
	followerReadFailures                           atomic.Uint64
}

// Metrics returns a snapshot of the node's counters.
func (n *Node) Metrics() Metrics {
	m := &n.metrics
	return Metrics{
		Proposals:                m.proposals.Load(),
		LogAppends:               m.logAppends.Load(),
		EntriesAppended:          m.entriesAppended.Load(),
		Fsyncs:                   m.fsyncs.Load(),
		ApplyBatches:             m.applyBatches.Load(),
		EntriesApplied:           m.entriesApplied.Load(),
		EntriesAppliedDuringSync: m.appliedInSync.Load(),
		AppliedIndex:             m.appliedIndex.Load(),
		CommitIndex:              m.commitIndex.Load(),
		LastIndex:                m.lastIndex.Load(),
		FirstIndex:               m.firstIdx.Load(),
		Term:                     m.term.Load(),
		Compactions:              m.compactions.Load(),
		SnapshotsSent:            m.snapshotsSent.Load(),
		SnapshotsApplied:         m.snapshotsApplied.Load(),
		SnapshotFailures:         m.snapshotFails.Load(),
		SnapshotBytesReceived:    m.snapshotBytesRecv.Load(),
		SnapshotFilesReceived:    m.snapshotFilesRecv.Load(),
		SnapshotInstallTime:      time.Duration(m.snapshotInstallNanos.Load()),
		MessagesSent:             m.messagesSent.Load(),
		MessagesDropped:          m.messagesDropped.Load(),
		MessagesRecv:             m.messagesRecv.Load(),
		ReadIndexes:              m.readIndexes.Load(),
		LeaderChanges:            m.leaderChanges.Load(),
		FollowerReadIndexes:      m.followerReadIndexes.Load(),
		FollowerReads:            m.followerReads.Load(),
		FollowerReadFailures:     m.followerReadFailures.Load(),
	}
}
