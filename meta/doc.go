// Package meta is strato's metadata server: the namespace (package
// meta/namespace) and the cluster state (package meta/cluster) in one
// process, one Raft group (package meta/consensus) and one Pebble database,
// served over gRPC.
//
// Every mutation goes prepare → propose → apply. A handler prepares the
// request on the leader (validation, IDs, the leader's time, block
// allocations) into a self-contained MetaCommand, proposes it to Raft, and
// returns the result that Apply produced on this node. Apply runs on every
// replica, deterministically, over one Pebble batch. Reads pass a read
// barrier (ReadIndex) and then read the database directly; a follower
// serves the reads a client marks with FollowerReadMetadata after a
// follower read point (consensus.Node.FollowerRead: a ReadIndex through the
// leader), unless Options.NoFollowerReads (followerread.go).
//
// Datanodes register and heartbeat with the leader only. The first call
// that finds this replica leading in a new term resets the cluster
// manager's soft state (cluster.Manager.BecomeLeader): the datanodes
// register again with their reports, and replication and block deletion
// wait for the settle period (cluster.Options.LeaderSettle).
//
// The group's membership changes through AddMetaMember, RemoveMetaMember
// and TransferMetaLeader (membership.go), one change at a time on the
// leader; a replica removed from the group stops (Done, Err).
//
// BackupMeta (backup.go) streams any replica's state at one applied index,
// read from a checkpoint of its DB while it goes on serving; Restore seeds
// a new data directory, and a new group, from such a backup (package
// meta/backup holds its format). Block deletions wait
// Options.BlockDeletionDelay after their key was deleted
// (blockdeletion.go), so that a backup younger than that restores only
// keys whose blocks are still on the datanodes.
//
// Server implements stratov1.NamespaceServiceServer and stratov1.ClusterServer;
// the benchmarks call those methods directly (no RPC) when meta runs in
// their process. Errors leave the server as gRPC statuses (see status.go).
//
// With Options.TLS the gRPC server speaks TLS, and its node services
// (DatanodeService, RaftService) answer only peers with a certificate of
// the cluster's CA (tls.go; docs/security.md).
//
// With Options.Auth "token" every NamespaceService and AdminService call
// presents a token (auth.go): an interceptor checks it against this
// replica's applied users and tokens (cached; emptied when a user or token
// command commits), puts the caller's Identity in the context
// (IdentityFromContext) and refuses cluster administration to users who
// are not administrators. An administrator or a proxy user may act on
// behalf of another user (metadata "strato-on-behalf-of"). Namespace calls
// are then authorized against the objects' owners and ACLs (acl.go here,
// meta/namespace/acl.go). Users and tokens are namespace commands
// (users.go); the first leader of a cluster without users makes the user
// "admin" and writes its token to Dir/admin.token (docs/security.md).
// Delegation tokens (delegation.go) are token records with a renewer and a
// max date, issued for jobs: a call with one acts as its owner and cannot
// get tokens; the leader purges expired ones.
//
// Concurrency: all exported methods are safe for concurrent use. Background
// work (cluster ticks, open-key expiry, reclaiming deleted subtrees) runs on
// one goroutine, and only on the leader.
package meta
