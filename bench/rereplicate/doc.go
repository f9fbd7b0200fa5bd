// Package rereplicate is `strato bench rereplicate`: lose a datanode of a
// loaded cluster and measure how fast its closed containers get three
// copies back, or, erasure coded, how fast its index of each is rebuilt.
//
// Run takes an in-process cluster (minicluster, at least four datanodes;
// erasure coded, d+p+1: MinDatanodes) and fills it at replication THREE,
// offline with gen.Run while the datanodes are stopped or through the
// client with keyput.Run, or through the client into a bucket of the
// Config.EC erasure coding config; it closes every container, measures
// the hardware's bound (Bound: dd-like copies with direct I/O on the
// datanodes' disk, d source files read per file written for a rebuild,
// and a TCP stream on loopback, divided by d for a rebuild), waits for a
// quiet cluster, then stops one datanode and deletes its data. It samples
// the work (a meter: the datanodes' replication counters for copies; for
// rebuilds, which move none, the targets' imports on disk and the
// sources' bytes sent) for the rate, and meta's replica map for what is
// left, until every lost container has three healthy copies (every index
// on a datanode other than the lost one), reads every key back and
// verifies it, times the erasure code on one core (erasure coded runs),
// and prints the summary: times, mean and peak GB/s, bytes per source and
// target, CPU per GB copied or rebuilt, split by replication role from a
// CPU profile read by pprof label (CPU). A PNG chart of the throughput
// over time is written when asked.
//
// Run is the only thing that may drive the cluster while it runs; it starts
// and stops its own goroutines.
package rereplicate
