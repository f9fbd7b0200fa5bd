// Package rereplicate is `strato bench rereplicate`: lose a datanode of a
// loaded cluster and measure how fast its closed containers get three
// copies back.
//
// Run takes an in-process cluster (minicluster, at least four datanodes)
// and fills it at replication THREE, offline with gen.Run while the
// datanodes are stopped or through the client with keyput.Run; it closes
// every container, measures the hardware's bound (Bound: dd with direct
// I/O on the datanodes' disk, alone and reading and writing at once, and a
// TCP stream on loopback), waits for a quiet cluster, then stops one
// datanode and deletes its data. It samples the datanodes' replication
// counters for the rate and meta's replica map for what is left until
// every lost container has three healthy copies, reads every key back and
// verifies it, and prints the summary: times, mean and peak GB/s, bytes
// per source and target, CPU per GB copied, split by replication role
// from a CPU profile read by pprof label (CPU). A PNG chart of the
// throughput over time is written when asked.
//
// Run is the only thing that may drive the cluster while it runs; it starts
// and stops its own goroutines.
package rereplicate
