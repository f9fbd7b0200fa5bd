// Package cluster is meta's view of the storage cluster (Ozone's Storage
// Container Manager): datanodes and their health, pipelines, containers,
// block allocation, container replicas, safe mode and the commands meta sends
// to datanodes.
//
// # Durable and soft state
//
// Pipelines, containers, the block-ID high-water mark, the datanodes'
// operational states (decommissioning) and the balancer's record are durable: they change only
// through a ClusterCommand that the leader proposes to Raft and
// every replica applies with Manager.Apply (deterministic, writing only the
// batch it is given, under keys that start with 'C'; store.go). Everything
// else — datanodes' registrations, heartbeats, health, the replica map,
// bytes allocated to open containers, commands queued for datanodes — is
// soft state held by the leader and rebuilt from datanode registrations and
// container reports, as Ozone's SCM does. BecomeLeader drops it at the start
// of every leadership and starts a settle period (Options.LeaderSettle):
// until it ends (Settling), the caller must not run replication or block
// deletion, and Tick closes no pipeline for a member that has not
// registered yet.
//
// # Layout: judgement, mutation, proposals
//
// One Manager serves the callers; behind it the work is split by job:
//
//   - state.go: the state the Manager guards (state), durable mirror and
//     soft state, and the predicates every job reads.
//   - nodes.go: registration, heartbeats, container reports (the replica
//     map, whose replicas are kept by value: replica.go), health, safe mode.
//   - placement.go, alloc.go: choosing pipeline members (over racks), pipelines and
//     containers for blocks, and copy targets (placement.go, pure); block
//     allocation and pipeline creation, which propose (alloc.go, import.go).
//   - containers.go: the close logic (planTick, planCloseContainer), bad
//     replicas, read locations.
//   - replication.go, ec.go: the replication planner (planReplication) for
//     replicated and erasure coded containers (copies, rebuilds, trims).
//   - decommission.go, maintenance.go: operational states (decommission;
//     maintenance, its end time and the copies it needs); deletion.go:
//     block deletion (planBlockDeletion).
//   - balancer.go, balancerpass.go: the container balancer (its durable
//     record, and its moves, planned by the replication pass).
//   - summary.go: the judgement of a container (judge) and the listings.
//
// The planners are functions of the locked state (a *state they only
// read), Options and now. Each returns a plan (plan.go): the commands to
// queue for datanodes, the soft-state changes that go with them (copies in
// flight, deletions under way, replicas held bad, ...) and the durable
// changes to propose. The Manager applies the soft part under mu
// (applyLocked) and returns the proposals. New decisions (the balancer,
// topology-aware placement) are new planners or new
// choices in placement.go, not new mutations spread over the methods.
//
// # Erasure coded containers
//
// Allocate serves replicated keys and erasure coded ones (Redundancy): an
// EC pipeline is d+p distinct datanodes in member order, an EC container's
// replica on member m holds replica index m+1, and a block group is one
// block ID on every member. EC containers are judged index by index and
// the replication manager copies and deletes none of their replicas in
// place of another (ec.go; docs/ec.md).
//
// # Time
//
// Nothing here reads the clock: every method that depends on time takes the
// caller's now. The metadata server passes the real time and calls Tick
// periodically; tests pass a fake one.
//
// # Concurrency and proposals
//
// A Manager is safe for concurrent use. mu guards all state but what a
// quiet heartbeat touches (below); Apply takes it too, briefly, so no
// proposal is ever made while mu is held (the proposal would wait for an
// Apply waiting for mu).
//
// A quiet heartbeat — no container report, block deletion
// acknowledgement or command failure: most of them — takes no mu
// (Heartbeat, quietHeartbeat). It finds its datanode in hbNodes (a
// sync.Map written under mu by Register and BecomeLeader), stores its
// time and stats in the nodeState's atomics (read by the tick's health
// pass, the planners and the listings under mu), and takes its queued
// commands under the nodeState's own lock, hb. hb guards the commands, and
// together with mu the datanode's health and whether BecomeLeader dropped
// it: they are written holding both, read holding either. So the tick,
// which changes a datanode's health under its hb, and a quiet heartbeat
// are ordered: the heartbeat lands first and the datanode stays HEALTHY,
// or it finds the datanode STALE, DEAD or dropped and takes the slow path
// under mu, which revives it (or tells it to register) as every heartbeat
// did before. Heartbeats with a report, acknowledgement or failure take
// mu.
//
// Lock order: mu before hb. hb is taken while holding mu (queueLocked,
// the health pass, the slow heartbeat), never mu while holding hb, and
// no two datanodes' hb are held at once. Nothing that holds hb proposes
// or blocks.
//
// Nothing holds mu for long: the heartbeats that take it (reports, and
// the revival of a STALE or DEAD datanode) wait for it, and at ten
// thousand datanodes and a million containers a walk of every container
// under it kept them waiting most of a second. The replication pass runs
// in steps of about a millisecond (Options.ReplicationStep), its plan
// applied step by step and mu released between them (ReplicationWork says
// why the plan stays sound; passMu serializes passes); the listings read
// the containers walkStep at a time, and a datanode's containers alone
// from the index of the replica map by datanode (nodeState.containers);
// the summary reads no container: its counts by state are kept as
// containers change (state.byState), and its problems and decommissioning
// progress are the last finished pass's, which judged every container
// anyway (passJudgement; before a leadership's first pass it walks them);
// the tick reads the open and closing containers (state.open,
// state.closing), not all of them; and a full report that says what the
// map already holds is not read (its digest, taken before mu, is the
// datanode's: applyReportLocked). What still reads every container under one hold is rare: Load,
// BecomeLeader, and safe mode's count (while in safe mode, at most every
// 250 ms, and each GetSafeMode).
//
// Proposals happen in three places:
//
//   - Allocate and ImportContainer propose as they go (a new pipeline, a
//     new container, a new range of block IDs: rare, never per block),
//     holding allocMu, which serializes allocation decisions, and not mu:
//     each choice is made under mu, mu is released, the proposal is made,
//     and its result read back under mu.
//   - Decommission, StartMaintenance and EndMaintenance propose the
//     operational state change with no lock held, after reading under mu
//     whether one is due.
//   - Tick (maintenances ended), CloseContainer, ReplicationWork
//     (Decommissioned, InMaintenance) and
//     DeleteBlocks / TakeDeleted (seqs to purge) return what is to be
//     proposed, and the caller (meta's server) proposes it after the
//     method has returned and released mu.
package cluster
