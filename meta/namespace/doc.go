// Package namespace owns strato's namespace: volumes, buckets, keys (OBS
// buckets, S3 semantics), the directory tree of FSO buckets (Hadoop
// FileSystem semantics), open keys being written, and the deleted-blocks
// table. It is a pure core: it reads and writes a Pebble database given to
// it and nothing else — no clock, no goroutines, no I/O of its own.
//
// # Use
//
// Every mutation goes through two steps (DESIGN.md §4):
//
//	cmd, err := ns.Prepare(ctx, req, db, namespace.PrepareEnv{Now: now, Allocator: alloc}) // leader
//	// ... cmd is proposed to Raft; once committed, on every replica:
//	b := db.NewIndexedBatch()
//	res, err := ns.Apply(cmd, b) // res is the reply; on a classified error b is untouched
//	b.Commit(...); ns.Committed()
//
// Errors are classified for the server's mapping to gRPC codes: Class(err)
// is ErrNotFound, ErrExists, ErrFailedPrecondition, ErrInvalid or
// ErrDenied (or nil: internal), and messages name the object.
//
// Authorization (acl.go): objects have owners and ACLs; when the server
// authenticates its callers it passes the caller (PrepareEnv.Caller,
// Reader.As), and Prepare and the Reader refuse what the caller may not
// do (ErrPermissionDenied). Apply never checks.
//
// Prepare validates, fixes the leader's time, and allocates blocks through
// the BlockAllocator (meta/cluster). Apply is deterministic and is the
// source of truth: it re-checks everything, because the state may change
// between prepare and apply. Reads go through a Reader over the database
// (ns.Reader(db)), after the server's read barrier.
//
// The S3 gateways' access keys live here too (s3keys.go): CreateS3Key
// and RevokeS3Key are commands like the rest (Prepare draws a new key and
// its secret from PrepareEnv.Rand), S3Secret and ListS3Keys reads. So do
// users and their tokens (users.go): a token's record holds the SHA-256 of
// the secret meta's server generated (PrepareEnv.TokenSecret), never the
// secret. A delegation token's record (delegation.go) comes prepared by
// the server whole, its sequence number checked against a counter.
//
// Background commands, issued by the server on the leader: PrepareExpiry
// (open keys past their expiry time, default 7 days, are removed and their
// blocks freed), PrepareReclaim (children of recursively deleted directories
// are removed in bounded steps), PreparePurge (deleted-block entries the
// datanodes have acted on are forgotten).
//
// # Identifiers
//
// Object IDs (volumes, buckets — a bucket's ID is also its FSO root
// directory's ID — directories, open keys, whose ID becomes the committed
// key's object ID, and deleted-blocks sequence numbers) are assigned by
// Apply from a single counter stored in the database (key "Nc"), so every
// replica assigns the same IDs and a new leader needs no ID range. Prepare
// assigns none; the reply carries them.
//
// # Key layout
//
// See keys.go. All keys start with 'N'. The FSO directory and file tables
// are keyed by (parent ID, name), so a path resolves with one point lookup
// per component and renaming or deleting a directory touches one entry
// whatever its size. Usage counters live in a 32-byte record per volume and
// bucket ("Nu<id>"), updated in O(1) by every mutation, and hold the quotas
// too so that enforcing them needs no other read.
//
// # Semantics worth knowing
//
//   - A key is visible only after CommitKey. An FSO CreateFile or OpenKey
//     creates missing parent directories at open time (with the recursive
//     flag, or always for OpenKey, as Ozone does); the file itself appears at
//     commit, in the directory it was opened in (by ID: it follows a rename
//     of that directory). Commit fails once that directory is gone (deleted,
//     or reached by the reclaim of a deleted ancestor); until then it
//     succeeds, and the file is reclaimed with the subtree.
//   - Committing replaces an existing key atomically (unless the file was
//     created without overwrite); the replaced key's blocks, and blocks
//     allocated but not committed, go to the deleted-blocks table.
//   - Quotas: bytes are logical (committed key sizes, not × replication);
//     a bucket's namespace counts its keys and directories, a volume's its
//     buckets. A quota of 0 is unlimited. Bytes are charged at commit (a
//     size hint that cannot fit fails OpenKey early), directories when made.
//     A recursively deleted subtree is released as it is reclaimed.
//   - A closed file is appended to by an open key of its own (AppendFile)
//     whose commits publish the file's blocks then the appender's, as the
//     same object; one writer holds a file at a time (its lease), and
//     RecoverLease removes a dead writer's open key, closing the file at its
//     last hsync. Truncate and Concat change a closed file's block list at
//     once (append.go, decision 0083).
//   - Delete of a directory with recursive is O(1): the directory moves to
//     the deleted-directories table, and Reclaim commands remove its
//     children later, at most a given number per command.
//   - Parent directories' modification times are not updated by changes to
//     their children.
//   - ListKeys works on both layouts in S3 order; on FSO buckets the
//     delimiter is "/" or none, files are keys and directories (empty ones
//     included) are common prefixes. GetFileStatus and ListStatus work on
//     OBS buckets too, with "a/" prefixes as implicit directories.
//
// # HDFS operations (NNThroughputBenchmark) as strato commands
//
//	create (-close)  CreateFile{overwrite,recursive, size_hint 0} → OpenKey command
//	                 (no block allocated) + CommitKey with no blocks: two commands
//	mkdirs           CreateDirectory (mkdir -p): one command
//	open             LookupKey (getBlockLocations): a read, one lookup per component
//	fileStatus       GetFileStatus: a read
//	delete           Delete{recursive}: one command (directories O(1))
//	rename           Rename: one command (directories O(1))
//	listStatus       ListStatus: a read, one range scan of each table
//
// # Concurrency
//
// Prepare and Reader methods may run concurrently with each other and with
// Apply. Apply must be called from one goroutine, in log order, into indexed
// batches, each committed (then Committed called) before the next batch is
// created. If a batch is dropped instead, or the database is replaced (a Raft
// snapshot), call ResetCache before applying again.
//
// The Namespace holds two bounded caches of directory entries, both exact
// (at the default size about 30 MB each at most):
// the readers' (cache.go), which Apply invalidates and Committed re-enables,
// and Apply's own (applycache.go), filled only from Apply's reads of its
// batch; Apply's also keeps buckets' snapshot states, within
// Options.SnapshotCacheBytes (4 MiB). Neither changes what any call
// returns, only how fast.
//
// Pebble options: ConfigurePebble sets Bloom filters and cache sizes suited
// to the namespace's point lookups on the shared database.
package namespace
