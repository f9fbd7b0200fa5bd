// Package netfault runs strato as real processes on separate hosts —
// network namespaces the harness makes, joined by a router namespace — and
// injects faults while clients work: a meta replica killed (SIGKILL) and
// started again on its data, paused (SIGSTOP/SIGCONT), cut off from some
// peers, a client cut off from a replica, a datanode paused.
//
// Hosts: ctl (the control host, never cut off), m1..m3 (meta replicas),
// d1.. (datanodes), c1.. (clients). Host i has address 10.213.i.2 and a
// route to 10.213.0.0/16 only; a cut is an "ip rule ... blackhole" in the
// router, so the packets of a cut direction are dropped silently. Nothing
// reaches any address the harness did not make. Namespace names carry the
// test process's PID ("snf<pid>x<n>-<host>"); RemoveStale deletes those of
// runs whose process is gone.
//
// Clients are the test binary itself, run again in a namespace with
// $STRATO_NETFAULT_MODE set (TestMain calls Main first). Each runs workers
// that issue a seeded mix of operations on groups of names — files and
// directories of an FSO bucket, keys of an OBS bucket (see model.go) — and
// on unique names, and records each operation with its call and return
// times (CLOCK_MONOTONIC, comparable across processes) and outcome (ok,
// a definite failure, no effect, unknown) to a JSON-lines history. Every
// other client host (c2, c4, ...) runs with follower reads on, its reads
// spread over the three replicas; the check covers their reads with the
// others', and TestFaultScenario requires some served by followers.
//
// Check verifies a history: the group operations are checked for
// linearizability with porcupine against Model (one partition per group;
// an operation of unknown outcome is taken as still running at the end),
// and every acknowledged unique creation must be in the final listing,
// which holds nothing else but names whose creation was acknowledged or
// left unknown. RunScenario ties it together for one seed: the seed fixes
// the fault schedule (Plan) and the clients' operations; which process is
// the leader when a fault runs depends on the run. MeasureFailover kills
// the leader repeatedly under continuous writes and measures the time to
// the first successful write.
//
// RunDatanodeKill is the single-datanode variant: four datanodes, writers
// on the client hosts putting keys of one chunk, several chunks and several
// blocks into a bucket of 256 KiB blocks, some with an hsync partway (some
// of those never closed), and one datanode killed with SIGKILL at a seeded
// moment while they run; the writers carry on in new blocks on pipelines
// without it. Each writer records every close and hsync that returned.
// The victim is then started again on its data directory while cut off
// from meta, and every block of an acknowledged key that meta places on it is
// read from it alone: a PutBlock it answered before the kill must have
// survived the kill. Once the cut is healed, every container must be whole
// again within 90s — CLOSED with its replication factor of good replicas
// at one block commit sequence ID, or OPEN on a healthy pipeline — and
// every closed key and every hsynced prefix of a key never closed must
// read back byte for byte, through the client and from each replica on its
// own. The victim is restarted rather than left for dead because meta
// copies a silent datanode's replicas only once it is dead, two minutes
// on (not a flag of strato meta).
//
// Everything here needs root and iproute2; Available says whether the
// machine can run it.
package netfault
