// Package s3 is strato's S3 gateway: the S3 REST API served over net/http
// on strato's namespace, built on the public Go client only (it imports
// neither meta nor datanode), so that any number of gateways can serve one
// cluster side by side. docs/s3.md is the user's page: the mapping, the
// operations served and every difference from AWS.
//
// Mapping: S3 buckets are the buckets of one volume (Options.Volume,
// "s3v"); those created through S3 are object-store (OBS) buckets, and
// file-system (FSO) buckets of that volume are served too, keys with '/'
// being paths. A key's S3 metadata (content type, x-amz-meta-*, ETag,
// checksums, tags, multipart part sizes) is stored in meta with the key, as
// key attributes written by the same CommitKey that publishes it.
//
// Requests: every request must be signed with AWS Signature Version 4
// (sigv4.go) or Version 2 (sigv2.go), in the Authorization header or a
// presigned URL. The payload is checked as it streams into the key's
// writer: its SHA-256 (x-amz-content-sha256), each aws-chunked chunk's
// signature and the signed trailer, Content-MD5 and the x-amz-checksum-*
// value (header or trailer). A failed check is the body's read error, so
// the key is never committed: nothing bad is stored. Bodies are never held
// whole in memory. No answer carries a secret or a signature the gateway
// computed.
//
// Multipart uploads keep their parts as keys of Options.MultipartVolume;
// Complete makes the object from the parts' blocks in one metadata
// operation (client.ComposeKey), copying no data. A background loop aborts
// uploads older than Options.MultipartExpiry.
//
// A Gateway is an http.Handler, safe for concurrent use.
package s3
