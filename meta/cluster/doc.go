// Package cluster is meta's view of the storage cluster (Ozone's Storage
// Container Manager): datanodes and their health, pipelines, containers,
// block allocation, container replicas, safe mode and the commands meta sends
// to datanodes.
//
// # Durable and soft state
//
// Pipelines, containers, the block-ID high-water mark and the datanodes'
// operational states (decommissioning) are durable: they change only
// through a ClusterCommand that the leader proposes to Raft and
// every replica applies with Manager.Apply (deterministic, writing only the
// batch it is given, under keys that start with 'C'). Everything else —
// datanodes' registrations, heartbeats, health, the replica map, bytes allocated to open
// containers, commands queued for datanodes — is soft state held by the
// leader and rebuilt from datanode registrations and container reports, as
// Ozone's SCM does. BecomeLeader drops it at the start of every leadership
// and starts a settle period (Options.LeaderSettle): until it ends
// (Settling), the caller must not run replication or block deletion, and
// Tick closes no pipeline for a member that has not registered yet.
//
// # Erasure coded containers
//
// Allocate serves replicated keys and erasure coded ones (Redundancy): an
// EC pipeline is d+p distinct datanodes in member order, an EC container's
// replica on member m holds replica index m+1, and a block group is one
// block ID on every member. EC containers are judged index by index and
// the replication manager copies and deletes none of their replicas
// (ec.go; docs/ec.md).
//
// # Time
//
// Nothing here reads the clock: every method that depends on time takes the
// caller's now. The metadata server passes the real time and calls Tick
// periodically; tests pass a fake one.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Allocate serializes allocation
// decisions (allocMu) and may block on a Raft proposal (a new pipeline, a new
// container, a new range of block IDs: rare, never per block); state is
// guarded by a second mutex (mu) that Apply also takes, so a proposal made
// while allocating can be applied.
package cluster
