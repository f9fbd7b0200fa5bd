// Package s3load is `strato bench s3`, a load generator for any S3
// endpoint in the manner of MinIO's warp: Config.Concurrency clients run
// one operation (PUT, GET, HEAD, LIST, DELETE) or a mix of them on objects
// of Config.Size bytes for Config.Duration (or Config.Count operations),
// and Run reports, per operation, ops/s, MB/s (10^6 bytes) and latency
// percentiles, and when Config.ServerPID names the server's process, its
// CPU time per GB moved and its peak resident set.
//
// GET, HEAD, LIST, DELETE and MIXED first upload the objects they work on
// (Config.Objects, untimed); MIXED is warp's mix: 45% GET, 30% HEAD, 15%
// PUT, 10% DELETE, over a set of objects kept whole (a PUT rewrites a
// deleted object first). Every object is the same pseudo-random payload
// (one buffer, shared by the clients), under Config.Prefix, deleted at the
// end unless Config.Keep.
//
// Requests go through s3.Client (SigV4, UNSIGNED-PAYLOAD, streamed), so
// the figures include the signing a real client does and nothing of an
// SDK's retries. Run starts its own goroutines and returns once they are
// done.
package s3load
