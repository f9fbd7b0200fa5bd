// Package replication copies CLOSED containers between datanodes: the
// re-replication that meta orders when a replica is lost
// (ReplicateContainerCommand).
//
// # What it owns
//
// Both ends of the container import of the data protocol (docs/wire.md
// §5.7). Push, on the source, opens a connection of its own to the target,
// sends IMPORT_BEGIN with the container's block rows, then every block
// file in IMPORT_DATA frames whose payloads leave the block files with
// sendfile (seek, then io.Copy of an io.LimitReader onto the TCP
// connection: no copy through user memory), and IMPORT_COMMIT; the replica
// of an erasure coded container sends its replica index in IMPORT_INDEX
// right after IMPORT_BEGIN (§5.8), so that the copy holds the same index (a
// decommissioning datanode's index copied off it). Receive,
// on the target, runs such a session once the datanode's server has read
// its IMPORT_BEGIN: the files go into a temporary directory of a volume,
// every block is verified against its checksums, and only then is the
// container renamed into place and registered CLOSED
// (container.Volume.BeginImport). Anything that fails, an abort, a cut
// connection, leaves nothing on the target.
//
// # Limits
//
// A datanode shares one Limits among its pushes and its reconstructions
// of erasure coded replicas (Acquire, Release): at most Streams at once
// (each one connection), and, when a bandwidth is set, a token bucket of
// bytes per second that every stream draws from before each piece it
// sends. Metrics counts bytes and pushes; the datanode exposes a snapshot.
//
// # Concurrency
//
// Push and Receive block their caller; Push may be called from many
// goroutines with the same Limits and Metrics, which are safe for
// concurrent use.
package replication
