// Package client is strato's Go client library: the namespace (volumes,
// buckets, keys, and the directory tree of FSO buckets) through meta's gRPC
// API, and key data through the datanodes' data protocol (docs/wire.md).
// The CLI, the benchmarks and the S3 gateway are built on it. It links no
// server code: its dependencies are proto, wire, checksum and leader.
//
// # Getting started
//
//	c, err := client.New(client.Options{Meta: []string{"127.0.0.1:9860"}})
//	...
//	defer c.Close()
//	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
//	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
//	w, err := c.Create(ctx, "/vol/bkt/dir/file", client.CreateOptions{Recursive: true})
//	_, err = w.Write(data)
//	err = w.Close()                 // the key is visible once Close returns
//	r, err := c.Open(ctx, "/vol/bkt/dir/file")
//	_, err = io.Copy(dst, r)
//
// A cluster running with TLS (docs/security.md) needs Options.TLS, a
// configuration that trusts its CA: certs.ClientConfig(caFile, "", "").
// ClusterOptions fills Meta, TLS and Token from a cluster named in the
// user's own file of clusters (ConfigFile, ~/.config/strato/config.toml),
// as the CLI's --cluster does.
//
// # Keys and files
//
// Keys of any bucket are written with CreateKey and read with OpenKey;
// the file-system calls (Create, Open, Mkdirs, Stat, List, Rename, Delete)
// take paths /VOLUME/BUCKET/DIR/FILE on FSO buckets, with Hadoop's
// semantics (an atomic rename of a directory; a rename onto a directory
// moves into it). StatPath and ListPath add the rooted view of Ozone's ofs:
// "/" lists the volumes and "/VOLUME" its buckets, as directories.
//
// A Writer sends checksummed chunks (Options.ChunkSize, 4 MiB) to the
// block's pipeline of datanodes, each kept until every replica has it, and
// moves to a new block when a datanode fails. Hflush makes what was written
// visible to new readers; Hsync also makes it survive a power loss of every
// datanode; Close commits the key. What survives which crash is in
// docs/design.md ("What survives a crash"). A Reader reads a block from one
// replica, checks the checksums, and goes to the next replica on an error.
// A Writer or Reader is for one goroutine; a Client is safe for concurrent
// use.
//
// A closed file takes more bytes through Append (a Writer at its end, one
// writer at a time), is cut by Truncate and joined by Concat; a file whose
// writer died is closed at its last hsync by RecoverLease, after which that
// writer can no longer hsync or close it (IsFileClosed says whether a
// writer holds a file; docs/decisions/0083).
//
// # Errors
//
// Every error of a call to meta matches, with errors.Is, one class
// (ErrNotFound, ErrExists, ErrNotEmpty, ErrQuota, ErrPrecondition,
// ErrInvalid, ErrUnavailable, ErrNoSpace, ErrPermission, ErrUnsupported)
// and, when meta says which rule failed, a specific error that belongs to
// it (ErrBucketNotFound, ErrVolumeNotEmpty, ErrKeyExists, ...). The error is
// an *Error carrying the status code and meta's reason; status.Code and
// status.FromError still see the gRPC status. Callers of the generated
// stubs classify their errors with Classify. A read that finds no good
// replica fails with ErrCorruptRead.
//
// # Meta replicas
//
// MetaConn connects to a meta group (one replica or three) and follows its
// leader: calls go to the replica believed to lead, NotLeader answers
// redirect them, and calls that certainly were not performed are retried.
// Namespace calls are retry-safe (reads, and mutations that carry a request
// ID, which meta applies once): an attempt that gets no answer within
// Options.AttemptTimeout, or loses its connection mid-call, is sent again to
// another replica. While meta answers Unavailable (an election, a restart,
// safe mode) the key and file calls retry for up to a minute. It is safe for
// concurrent use.
package client
