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
// a definite failure, no effect, unknown) to a JSON-lines history.
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
// Everything here needs root and iproute2; Available says whether the
// machine can run it.
package netfault
