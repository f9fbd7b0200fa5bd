// Package nnbench is `strato bench meta`: Hadoop's NNThroughputBenchmark
// rebuilt over strato's metadata service. Run drives the ops (create,
// mkdirs, open, delete, fileStatus, rename, blockReport, replication,
// clean) against a Target with Hadoop's name generator, per-thread split
// and report, so that the same options give the same namespace shape and a
// report in Hadoop's form.
//
// ServiceTarget is the Target over meta's NamespaceService and
// DatanodeService interfaces: the in-process meta.Server itself
// (standalone: direct calls, no RPC; the replication op needs it) or, from
// NewRemote, thin adapters over gRPC clients (remote). blockReport and
// replication simulate datanodes that register and report containers, as
// Hadoop's simulates datanodes that report blocks.
//
// Run starts one goroutine per thread of an op and returns when they are
// done; a ServiceTarget may be called from all of them.
package nnbench
