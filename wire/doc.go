// Package wire is strato's data-plane protocol: the framed binary protocol
// on TCP that clients and datanodes speak to write chunks through a
// replication pipeline, commit blocks and read them back. docs/wire.md is
// its specification, byte by byte; wire/testdata holds an encoded example
// of every message, which vectors_test.go pins.
//
// # What it owns
//
// A frame is a fixed 24-byte FrameHeader (magic, version, type, flags,
// request ID, lengths), a typed header — one Message: the request and
// response structs of this package, or *Error — and a payload whose length
// the frame header gives: chunk bytes for WriteChunk, block bytes for a
// ReadChunk response. Encoding is AppendFrame / Message.AppendHeader;
// decoding is ParseFrameHeader + DecodeMessage, or DecodeFrame for a frame
// in memory. Decoders are strict (exact lengths, valid UTF-8, values in
// range, checksums that cover their bytes), so every frame that decodes
// encodes back to the same bytes.
//
// On a stream, Reader reads frames (header and typed header first, then the
// payload straight into the caller's buffer) and Writer writes them whole
// (writev for header + payload; WriteMessageFunc hands the raw connection
// to a function that can sendfile the payload). A datanode uses both
// directly; clients use Conn.
//
// Conn is a client connection that multiplexes requests: concurrent
// callers each get their own response, matched by request ID, in the
// order the datanode completes them. Pool keeps a few Conns per address.
//
// Version 2 adds block tokens (token.go): TOKEN presents a token meta
// signed (BlockToken, VerifyBlockToken), Conn.Authorize presents one once
// per connection, and CodeAccessDenied refuses requests without a grant.
// Frames carry the version their connection's PING chose (Writer.SetVersion).
//
// # Errors
//
// An error response decodes to *Error: a Code, a message, and for a
// pipelined write the followers that failed. Codes are errors too, so
// errors.Is(err, wire.CodeChecksumMismatch) classifies an error returned by
// a Conn. Connection failures wrap ErrConnClosed.
//
// # Concurrency
//
// Messages are plain values. A Reader belongs to one goroutine. Writer,
// Conn and Pool are safe for concurrent use; a Writer serialises frames so
// that they never interleave.
package wire
