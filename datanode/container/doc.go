// Package container is the datanode's on-disk container store.
//
// # What it owns
//
// A Volume is one directory on one disk. It holds a directory per container
// and ONE Pebble database with the block metadata of all of its containers,
// keyed by container ID first (as Ozone's schema v3 does), so that a disk
// with tens of thousands of containers has one LSM, one WAL and one fsync
// stream rather than one per container:
//
//	<volume>/LOCK
//	<volume>/db/                         Pebble: block rows and container counters
//	<volume>/containers/<id>/container.desc   ID, layout, state, EC replica index (small text file)
//	<volume>/containers/<id>/chunks/<localID>.block          FILE_PER_BLOCK
//	<volume>/containers/<id>/chunks/<localID>_<offset>.chunk FILE_PER_CHUNK
//
// A Container is OPEN (writable), CLOSING, CLOSED (immutable) or UNHEALTHY.
// Its block commit sequence ID (bcsID) increases with every PutBlock; it and
// the container's used bytes and block count live in a counter row of the
// database, written in the same batch as the block row.
//
// # Write and commit
//
// WriteChunk verifies the chunk's checksums (unless told not to), writes the
// bytes to the block file with one pwrite on a cached handle (FILE_PER_BLOCK)
// or to a file of its own (FILE_PER_CHUNK), and records the chunk in a small
// in-memory list of the block. Nothing reaches the database per chunk. Large
// aligned chunks of FILE_PER_BLOCK go around the page cache with O_DIRECT on
// Linux (Options.DisableDirectIO). A Final PutBlock releases the block's
// handle and list; Sync later fsyncs its file by name.
// PutBlock commits a length: the chunks that tile [0, length) become the
// block's row in the database, the bcsID is bumped, and the WAL is fsynced
// before PutBlock returns (concurrent PutBlocks share one fsync); with Sync
// the block's files and its directory are fsynced first. A block is visible to GetBlock, ListBlocks and ReadChunk
// only up to its committed length. Chunks never committed are dropped when
// the container closes or the datanode restarts.
//
// # Durability
//
// After a crash of the process (the kernel keeps what was written to it),
// every block whose PutBlock returned is readable at its committed length:
// chunk bytes are written to the kernel before WriteChunk returns, and the
// block's row is in the fsynced WAL before PutBlock returns (Pebble keeps a
// NoSync commit in its own memory, so the row is never left there). After a
// power loss, every block whose PutBlock returned with Sync (or that a
// container Sync covered) is readable and matches its checksums. Data
// written without a sync may then be lost; when a
// committed row outlives its bytes, reads fail with ErrCorrupt or a checksum
// mismatch, never with wrong data reported as good (the reader verifies the
// returned checksums; Scan does so for a whole container).
//
// All file I/O goes through pebble's vfs.FS, shared by the block files and
// the database: vfs.Default in production, vfs.NewCrashableMem to simulate a
// crash of both at once, vfs/errorfs to inject errors.
//
// # Later users
//
// Extents maps a byte range of a block to (file, file offset, length)
// pieces with their checksums, which is what a sendfile-based read path
// needs. A CLOSED container is a set of block files plus its rows under one
// key prefix (ListBlocks), which is what whole-container replication copies.
//
// # Concurrency
//
// All methods of Volume and Container are safe for concurrent use. Writers of
// different blocks proceed in parallel; chunks of one block are serialised
// by a per-block mutex and may arrive in any order. PutBlocks of one
// container serialise only for the in-memory commit of their batch; their
// fsyncs overlap. Close waits for in-flight writes and refuses new ones.
package container
