// Package cluster holds the cross-component tests that run on an
// in-process cluster (minicluster): faults, re-replication, erasure coding,
// deletion, authentication and block tokens, TLS, power loss, and the data
// directories of earlier versions.
//
// # Time
//
// Tests whose subject is what the cluster does over time (a datanode
// declared dead and its containers copied or rebuilt, a decommission, space
// given back after a deletion, block-token keys rotating and tokens
// expiring, replicas reported) run on a fake clock (minicluster.Options.Clock)
// with production intervals — heartbeats every 3 s, meta's tick every
// second, dead after 2 minutes — and move it on at each look (advance), so
// that time passes only while they wait.
//
// Tests whose subject is concurrency with real I/O and the client's own
// timeouts run on real time with short heartbeats, on purpose: writers
// under faults (TestKillDatanodeMidWrite, TestKillDatanodeMidRead,
// TestSmallKeysWithADeadDatanode, TestRestartMetaMidWrite,
// TestNoPipelineLeft, TestCorruptReplica),
// containers closed under writers (TestContainerClosedUnderWriters), meta's
// Raft group losing a leader (TestThreeMetaReplicas,
// TestMetaMembershipUnderLoad, TestTLSThreeMetaReplicas: Raft's ticks are
// real time by design), the power-loss schedules, and the 1 GiB deletion,
// which measures.
package cluster
