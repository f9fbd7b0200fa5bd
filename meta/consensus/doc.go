// Package consensus runs a strato meta Raft group: etcd raft
// (go.etcd.io/raft/v3, a pure state machine) wired to one Pebble DB, a gRPC
// transport and the metadata service's state machine.
//
// # What it owns
//
// One Pebble DB per node holds both the raft log and the replicated state.
// Consensus owns every key that begins with byte 0x00: the log entries, the
// hard state (term, vote, commit), the truncated state (index and term of
// the last compacted entry), the applied state (applied index and term,
// and the configuration: voters and learners) and the members' address
// book. The StateMachine owns every other key. Because the
// applied index is written in the same batch as the commands it covers, the
// state and its position never disagree.
//
// # Use
//
//	n, err := consensus.Open(consensus.Options{ID: 1, Dir: dir}, sm) // a single voter
//	n.RegisterGRPC(grpcServer)        // before Serve; needed with peers
//	res, err := n.Propose(ctx, cmd)   // blocks until applied here; *NotLeaderError on a follower
//	err = n.ReadBarrier(ctx)          // then read n.DB(): linearizable
//	err = n.FollowerRead(ctx)         // the same on any member, through the leader
//	n.Close()
//
// The metadata server prepares a command on the leader (validates, assigns
// IDs, times and allocations), proposes it, and StateMachine.Apply applies
// it on every replica, deterministically, into the batch it is given.
// Apply's (result, error) is returned by Propose on the node that proposed.
//
// Errors: *NotLeaderError (errors.Is ErrNotLeader) names the leader when
// known (its address from the group's address book); ErrProposalDropped means the command will never be applied; both
// are Retryable. ErrResultUnknown and a cancelled context leave the outcome
// unknown. ErrClosed after Close; a failure of the disk or DB (e.g. a
// failed fsync, which Pebble reports as fatal) stops the node, and its
// errors then wrap ErrStorage. DefaultHint (retry.go) reads these errors
// for a leader.Redirector, which follows leader hints for a client.
//
// A StateMachine that keeps state derived from the DB in memory implements
// Restorer: Open calls Restore before any command is applied, and the node
// calls it again after installing a snapshot.
//
// # Durability and group commit
//
// One goroutine drives raft. Each turn it takes every proposal waiting on
// the node's channel, hands them to raft as one message, and handles the
// resulting Ready: new entries and the hard state go into one Pebble batch
// committed with Sync (one fsync for the whole group of proposals); then
// committed entries are applied in one indexed batch that also records the
// applied index, committed without sync (the synced log makes it
// recoverable: on restart raft re-delivers the entries after the stored
// applied index). Entries already durable are applied before the next
// fsync, so a proposer waits for one fsync, not two. A sole voter goes
// further: its own new entries commit as soon as they are durable, so it
// applies them while their fsync runs (the log batch goes in with Pebble's
// ApplyNoSyncWait) and commits that apply batch once the sync is done, or
// drops it if the sync failed. A proposal is
// acknowledged only after its apply batch is committed, so a single voter's
// DB already shows every acknowledged write (ReadBarrier is then free).
//
// A proposal carries an 8-byte sequence number ahead of the command; the
// node matches applied entries to its waiting proposers by (term, sequence).
// Raft's log holds one term's entries in proposal order and never an entry
// of an older term after a newer one, so a waiting proposal older than an
// applied entry was dropped and can be told so (ErrProposalDropped).
//
// # Groups of three
//
// Peers lists the voters a new data directory starts with (every voter
// starts from the same configuration at index 1, so no bootstrap step is
// needed). Raft runs with PreVote and CheckQuorum; followers do not forward
// proposals. Messages go over the Raft gRPC service (proto/raft_transport.proto):
// one client stream per peer, connected lazily, batched, reconnected with
// backoff; on failure queued messages are dropped and the peer is reported
// unreachable to raft. Batches of messages are kept near 1 MiB, but an
// entry travels whole: a command must fit in the gRPC server's receive
// limit (4 MiB unless the server sets grpc.MaxRecvMsgSize).
//
// # Linearizable reads: ReadIndex, not a lease
//
// ReadBarrier uses raft's ReadIndex (ReadOnlySafe): the leader records its
// commit index, confirms with a heartbeat round that a quorum still follows
// it, and the read waits until that index is applied here. It costs one
// heartbeat round per batch of concurrent reads, and it does not depend on
// clocks: a lease (ReadOnlyLeaseBased) would answer without that round but
// is only safe if no clock runs faster than the election timeout assumes,
// which a paused VM or a stepped clock breaks. A sole voter answers at once
// (it acknowledges only what it has applied).
//
// # Follower reads
//
// FollowerRead is the same read point on any member. On a follower, each
// batch of waiting reads is one ReadIndex request, which raft forwards to
// the leader; the leader confirms its leadership with its heartbeat round
// and answers with its commit index, and the follower releases the reads
// once it has applied that index: every write acknowledged before the read
// began is then in its DB (a client reads its own writes). Raft drops a
// follower's request silently when it knows no leader, and a cut-off leader
// never answers, so the node fails the reads itself, with a *NotLeaderError
// naming the leader: at once without a known leader (or as a candidate),
// when the leader changes before granting the index, and when the index is
// not granted and applied within Options.FollowerReadTimeout (default the
// election timeout; the error then also wraps ErrReadTimeout). No lease is
// used, for the reasons above (docs/decisions/0087-follower-reads.md).
// Metrics: FollowerReadIndexes, FollowerReads, FollowerReadFailures, and
// Observers.ReadIndex for the wait of every batch, leader or follower.
//
// # Membership
//
// The group changes one member at a time, through raft's ConfChangeV2 as
// simple changes (never joint consensus), proposed by the leader:
// AddMember adds a node as a learner (it receives the log, or a snapshot
// when the log was compacted, without counting for quorum), waits until
// its log is within Options.PromoteMaxLag entries of the commit index, and
// promotes it to voter; RemoveMember removes one (the leader hands
// leadership to the most up-to-date voter first); TransferLeadership moves
// leadership. A second change while one is in progress (including an
// addition waiting for its learner to catch up, or a change committed but
// not yet applied) fails with ErrChangeInProgress: raft itself would
// silently turn it into an empty entry.
//
// The address book (every member's ID and address) is replicated with the
// configuration: a change's context carries the address it adds, and each
// replica applies the change with RawNode.ApplyConfChange and writes the
// resulting ConfState and the new book in the same apply batch; a
// snapshot's data carries the book as of its index. Once the directory
// exists, its stored membership is the group's (Options.Peers then only
// overrides addresses locally). The transport connects to added members and
// drops removed ones.
//
// A new node opens an empty directory with Options.Join: no configuration,
// an empty log at index 0. It answers the leader at the address the
// leader's batches carry (RaftBatch.from_addr), and gets the state as a
// snapshot. The book also holds the group's ID (a hash of its first
// voters' IDs), sent with every batch: a node refuses messages from another
// group, so a node started without Join (a group of its own) that is added
// by mistake never catches up instead of mixing two logs. A removed node stops (Done is closed, Err is ErrRemoved): when
// it applies its own removal, or, since the leader stops sending to it
// once the removal is committed, when a member refuses its next message
// (the book keeps the removed IDs, which are never reused). Its directory
// then refuses to open.
//
// # Snapshots and compaction
//
// After Options.CompactEvery applied entries, the log up to
// applied-KeepEntries is deleted (in the apply batch). A follower that needs
// compacted entries gets a snapshot: raft asks Storage.Snapshot, which
// describes the state at the applied index and pins it with a Pebble
// iterator opened there (the raft goroutine is the only applier, so the DB
// is exactly at that index; an iterator, unlike a pebble.Snapshot, keeps
// reading its version across this node's own later IngestAndExcise); the
// transport streams the state range with the MsgSnap over Raft.Snapshot in
// chunks of about 1 MiB read from that iterator, so the leader holds one
// chunk per send whatever the state's size. The follower
// never holds the state in memory either: it writes the pairs, as they
// arrive, into sstables of at most about Options.SnapshotFileBytes under
// Dir/snapshot-staging, each synced when finished (stage.go). When raft
// hands the snapshot to the Ready, one more small sstable holds the
// consensus keys: a range deletion of the whole log, the truncated index
// and term (the snapshot's), the applied state, the address book and the
// hard state (its commit at the snapshot's index). All the files go in
// with one DB.IngestAndExcise that excises the state range, [stateStart,
// past the last state key here or in the snapshot): Pebble makes one
// ingestion atomic and durable (one version edit of its manifest, or one
// synced WAL record when it must queue behind the memtables), so a crash
// leaves either the old
// state with its log and applied index, or the new state with the log
// replaced and the applied index at the snapshot, never a state with a log
// that does not belong to it. The entries and hard state of the same Ready
// follow in the usual synced batch. Open removes what a crash left in
// snapshot-staging (decision 0095).
//
// # Backups
//
// Checkpoint takes a Pebble checkpoint of the DB (hard links to its
// sstables) from any goroutine, on a leader or a follower: the applied
// state is written in every apply batch and a checkpoint holds whole
// batches, so the checkpoint's state is exactly the one at the applied
// index stored in it, without pausing the raft goroutine. Its state range
// is read from it (Checkpoint.Pairs); the log is not part of a backup.
// Seed makes a new directory the start of a new group from such a state:
// the pairs, then, in one synced batch, the consensus keys a fresh group
// has, at the backup's index and term instead of (1, 1), with Peers as its
// voters (see backup.go).
//
// # Concurrency
//
// Propose, ReadBarrier, FollowerRead, Leader, IsLeader, Status, Metrics, DB, Checkpoint, Members,
// AddMember, RemoveMember, TransferLeadership, Done, Err and Close are safe
// for concurrent use (the membership calls run their steps on the raft
// goroutine). StateMachine.Apply and Restorer.Restore are never
// called concurrently: they run on the raft goroutine, or in Open before it
// starts (a single voter makes itself leader inside Open, which may re-apply
// committed entries there).
package consensus
