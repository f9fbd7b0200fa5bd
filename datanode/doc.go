// Package datanode is the datanode: it stores containers on its disks,
// serves the data protocol (docs/wire.md) to clients and to other
// datanodes, and reports to meta.
//
// # Store
//
// A Store is the datanode's containers over one or more volumes
// (container.Volume, one per disk). It finds a container by ID whatever its
// volume, creates new containers OPEN and FILE_PER_BLOCK on the volume with
// the most free space (once each open container's growth to ContainerSize
// is set aside), closes and deletes them, and reports containers
// (Containers) and space per volume (Stats) for meta.
//
// A volume that fails — it does not open, or a check of its directory
// fails (health.go: every Options.VolumeCheckInterval, and at once after a
// request met an I/O error) — is taken out of service with its containers:
// they are no longer served or reported, and meta copies them back from
// other replicas. The store opens, and the datanode runs, as long as no
// more volumes failed than StoreOptions.FailedVolumesTolerated and one
// works; past that the datanode stops (Datanode.Done). Its identity
// (datanode.id, cluster.id) is kept in every volume directory.
//
// # Server
//
// A Server serves the data protocol over a Store on any number of
// listeners. Each connection has one reader goroutine that reads a request
// whole — headers, then the payload into a pooled 4 KiB-aligned buffer (so
// that large chunks can go to disk with O_DIRECT) — and hands it to a
// goroutine of its own; responses are written, whole frames under the
// connection's Writer lock, in the order requests complete. A connection
// has at most ServerOptions.MaxInFlightPerConn requests in hand, and the
// server at most MaxBufferedBytes of payloads; beyond that it stops reading
// and TCP pushes back on the client.
//
// A container unknown to the datanode is created by the first WriteChunk or
// PutBlock that names it, as Ozone's client-driven creation does.
//
// Writes are replicated in a star: the client sends WriteChunk and PutBlock
// to the pipeline's leader with the followers listed; the leader forwards
// the same request (with no followers) to every follower at once over
// pooled wire.Conns while it writes locally, and answers success only when
// all replicas succeeded. Otherwise its error names the followers that
// failed, so the client can exclude them (pipeline.go). Every replica
// verifies the chunk's checksums.
//
// Reads are not verified by the datanode: READ_CHUNK widens the range to
// checksum windows (container.Extents) and, when the volumes are OS files
// and the connection TCP, sends the block files' bytes to the socket with
// sendfile after writing the response header; the client verifies. Over
// TLS (Options.TLS, docs/security.md) the bytes are read into memory and
// written through the TLS connection instead: sendfile cannot encrypt.
//
// Bad input never corrupts anything: a request is acted on only once it
// has arrived whole, frame-level garbage closes the connection after a
// PROTOCOL_ERROR response, and every failure of the store becomes an error
// code (handler.go maps the container package's errors).
//
// # Concurrency
//
// Store and Server are safe for concurrent use. Server.Close stops
// accepting, closes connections, aborts forwards and waits for the requests
// being handled; it does not close the Store, which its owner closes after.
package datanode
