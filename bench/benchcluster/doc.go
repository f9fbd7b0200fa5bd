// Package benchcluster sets up the strato a benchmark runs against, so that
// cmd/strato only turns flags into calls: the directory of a benchmark's own
// cluster or meta server (Dir: the --dir and --keep flags), a client of a
// running meta server or of an in-process cluster started for the run
// (Connect), the volume and bucket a run writes into (Conn.EnsureBucket),
// and a meta server alone in this process (StartMeta, `bench meta`'s
// standalone mode).
//
// The in-process cluster is minicluster's: meta and three datanodes on
// loopback ports. A Conn is used from one goroutine at a time, but its
// Client is safe for concurrent use.
package benchcluster
