package wire

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/checksum"
)

var update = flag.Bool("update", false, "rewrite wire/testdata from the example values")

// exampleData is the chunk of the examples in docs/wire.md §8.
var exampleData = []byte("0123456789abcdef")

// exampleSums are its CRC32C checksums over 8-byte windows.
var exampleSums = checksum.Data{Type: checksum.CRC32C, BytesPerChecksum: 8,
	Sums: []byte{0xac, 0x22, 0x23, 0x20, 0xc4, 0xdd, 0xe1, 0x86}}

var exampleFollowers = []string{"dn-2.example:9859", "dn-3.example:9859"}

type vector struct {
	name string
	// version is the frame's: 0 for the first version that has the
	// message's type (Version for an error frame).
	version uint8
	typ     Type // for error frames
	id      uint64
	msg     Message
	payload []byte
	rc      RequestContext // a request's context (version 6)
}

// exampleTokenKey signs exampleToken: key 1 of the examples, the bytes 0 to 31.
var exampleTokenKey = func() []byte {
	k := make([]byte, TokenKeyLen)
	for i := range k {
		k[i] = byte(i)
	}
	return k
}()

// exampleToken is the block token of token_request.bin: READ|WRITE of block
// (7, 42) for "alice", signed with key 1, expiring 2026-01-01T00:00:00Z.
var exampleToken = BlockToken{KeyID: 1, ExpiresUnixMs: 1767225600000, Block: BlockID{ContainerID: 7, LocalID: 42},
	Ops: OpRead | OpWrite, User: "alice"}

// exampleContext is the request context of read_chunk_request_v6_context:
// request ID 4A2F9C1E0B7D3856, trace 0102...10, span a1a2...a8, sampled.
var exampleContext = RequestContext{RequestID: "4A2F9C1E0B7D3856", Trace: trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	SpanID:     trace.SpanID{0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8},
	TraceFlags: trace.FlagsSampled, Remote: true})}

// vectors are the example values of docs/wire.md §8, one per file of
// testdata.
func vectors() []vector {
	block := BlockID{ContainerID: 7, LocalID: 42}
	chunk := Chunk{Offset: 0, Length: 16, Checksums: exampleSums}
	return []vector{
		{name: "ping_request", id: 1, msg: &PingRequest{MinVersion: 1, MaxVersion: 1, ClientID: "java-client"}},
		{name: "ping_response", id: 1, msg: &PingResponse{Version: 1, MinVersion: 1, MaxVersion: 1, MaxChunkLen: 32 << 20, ServerID: "dn-1"}},
		{name: "write_chunk_request", id: 2, msg: &WriteChunkRequest{Block: block, Offset: 0, Length: 16, Checksums: exampleSums, Followers: exampleFollowers}, payload: exampleData},
		{name: "write_chunk_response", id: 2, msg: &WriteChunkResponse{}},
		{name: "put_block_request", id: 3, msg: &PutBlockRequest{Block: block, Length: 16, Final: true, Sync: true, Followers: exampleFollowers}},
		{name: "put_block_response", id: 3, msg: &PutBlockResponse{BCSID: 9}},
		{name: "read_chunk_request", id: 4, msg: &ReadChunkRequest{Block: block, Offset: 3, Length: 6}},
		{name: "read_chunk_response", id: 4, msg: &ReadChunkResponse{Offset: 0, Chunks: []Chunk{chunk}}, payload: exampleData},
		{name: "get_block_request", id: 5, msg: &GetBlockRequest{Block: block}},
		{name: "get_block_response", id: 5, msg: &GetBlockResponse{Length: 16, BCSID: 9, Chunks: []Chunk{chunk}}},
		{name: "close_container_request", id: 6, msg: &CloseContainerRequest{ContainerID: 7}},
		{name: "close_container_response", id: 6, msg: &CloseContainerResponse{BCSID: 9}},
		{name: "import_begin_request", id: 7, msg: &ImportBeginRequest{ContainerID: 7, Layout: 1, BCSID: 9, TotalBytes: 16,
			Blocks: []ImportBlock{{LocalID: 42, Length: 16, BCSID: 9, Chunks: []Chunk{chunk}}}}},
		{name: "import_begin_background_request", id: 7, msg: &ImportBeginRequest{ContainerID: 7, Layout: 1, BCSID: 9, TotalBytes: 16,
			Background: true, Blocks: []ImportBlock{{LocalID: 42, Length: 16, BCSID: 9, Chunks: []Chunk{chunk}}}}},
		{name: "import_begin_response", id: 7, msg: &ImportBeginResponse{}},
		{name: "import_data_request", id: 8, msg: &ImportDataRequest{LocalID: 42, ChunkOffset: 0, FileOffset: 0}, payload: exampleData},
		{name: "import_data_response", id: 8, msg: &ImportDataResponse{}},
		{name: "import_commit_request", id: 9, msg: &ImportCommitRequest{ContainerID: 7}},
		{name: "import_commit_response", id: 9, msg: &ImportCommitResponse{BCSID: 9, Bytes: 16}},
		{name: "import_abort_request", id: 10, msg: &ImportAbortRequest{ContainerID: 7}},
		{name: "import_abort_response", id: 10, msg: &ImportAbortResponse{}},
		{name: "write_commit_request", id: 14, msg: &WriteCommitRequest{Block: block, Offset: 0, Length: 16, Checksums: exampleSums,
			Final: true, Followers: exampleFollowers}, payload: exampleData},
		{name: "write_commit_response", id: 14, msg: &WriteCommitResponse{BCSID: 9}},
		{name: "read_local_paths_request", id: 16, msg: &ReadLocalPathsRequest{Block: block, Offset: 3, Length: 6}},
		{name: "read_local_paths_response", id: 16, msg: &ReadLocalPathsResponse{
			Extents: []LocalExtent{{Chunk: chunk, File: 0, FileOffset: 4096}},
			Files:   []LocalFile{{Dev: 2049, Ino: 131073, Path: "/data/dn-1/containers/7/chunks/42.block"}}}},
		{name: "error_response", typ: TypeWriteChunk, id: 2, msg: &Error{Code: CodeFollowerFailed,
			Message: "follower dn-3.example:9859: CHECKSUM_MISMATCH",
			Failed:  []FailedNode{{Addr: "dn-3.example:9859", Code: CodeChecksumMismatch}}}},
		// Datanode to datanode (§5.8).
		{name: "list_blocks_request", id: 11, msg: &ListBlocksRequest{ContainerID: 7, AfterLocalID: 41, Limit: 1024}},
		{name: "list_blocks_response", id: 11, msg: &ListBlocksResponse{Layout: 1, BCSID: 9, ReplicaIndex: 3,
			Blocks: []ImportBlock{{LocalID: 42, Length: 16, BCSID: 9, Chunks: []Chunk{chunk}}}}},
		{name: "import_index_request", id: 12, msg: &ImportIndexRequest{ContainerID: 7, ReplicaIndex: 3}},
		{name: "import_index_response", id: 12, msg: &ImportIndexResponse{}},
		// Version 2 (§5.9).
		{name: "token_request", id: 13, msg: &TokenRequest{}, payload: exampleToken.Sign(exampleTokenKey)},
		{name: "token_response", id: 13, msg: &TokenResponse{}},
		// Version 4 (§5.11): the descriptors travel beside the frame.
		{name: "read_local_request", id: 15, msg: &ReadLocalRequest{Block: block, Offset: 3, Length: 6}},
		{name: "read_local_response", id: 15, msg: &ReadLocalResponse{FileCount: 1,
			Extents: []LocalExtent{{Chunk: chunk, File: 0, FileOffset: 4096}}}},
		// What a connection of today's clients and datanodes carries: PING
		// offering 1 to 5 (a version-1 frame, as both clients send it),
		// the datanode's answer choosing 5 (a frame of the version chosen),
		// then frames of version 5.
		{name: "ping_request_v5", id: 1, msg: &PingRequest{MinVersion: MinVersion, MaxVersion: VersionReadLocalPaths, ClientID: "java-client"}},
		{name: "ping_response_v5", version: VersionReadLocalPaths, id: 1, msg: &PingResponse{Version: VersionReadLocalPaths, MinVersion: MinVersion,
			MaxVersion: VersionReadLocalPaths, MaxChunkLen: 32 << 20, ServerID: "dn-1"}},
		{name: "read_chunk_request_v5", version: VersionReadLocalPaths, id: 4, msg: &ReadChunkRequest{Block: block, Offset: 3, Length: 6}},
		{name: "error_response_v5", version: VersionReadLocalPaths, typ: TypeReadChunk, id: 4, msg: &Error{Code: CodeAccessDenied,
			Message: "no token for READ of block 7/42 on this connection"}},
		// Version 6: a request with its context (§2.3), the request ID of
		// the S3 request it serves and the caller's span.
		{name: "read_chunk_request_v6_context", version: VersionContext, id: 5, msg: &ReadChunkRequest{Block: block, Offset: 3, Length: 6},
			rc: exampleContext},
	}
}

func (v vector) encode(t *testing.T) []byte {
	e, isErr := v.msg.(*Error)
	if v.version == 0 {
		if isErr {
			return AppendErrorFrame(nil, v.typ, v.id, e)
		}
		return AppendFrame(nil, v.id, v.msg, v.payload)
	}
	// A frame of a connection whose PING chose v.version.
	var b bytes.Buffer
	w := NewWriter(&b, 0)
	w.SetVersion(v.version)
	if isErr {
		require.NoError(t, w.WriteError(context.Background(), v.typ, v.id, e))
	} else {
		require.NoError(t, w.WriteMessage(v.rc.Into(context.Background()), v.id, v.msg, v.payload))
	}
	return b.Bytes()
}

// wantVersion is the version of v's frame.
func (v vector) wantVersion() uint8 {
	switch {
	case v.version != 0:
		return v.version
	case v.typ != TypeNone:
		return Version
	}
	return max(Version, v.msg.Type().minVersion())
}

// TestVectors pins the encoding: the example values encode to the bytes of
// testdata/<name>.bin and those bytes decode to the example values.
func TestVectors(t *testing.T) {
	require.Equal(t, exampleSums, checksum.Compute(checksum.CRC32C, 8, exampleData), "the documented CRC32C values")
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			path := filepath.Join("testdata", v.name+".bin")
			got := v.encode(t)
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, want, got, "encoding of %s", v.name)

			f, err := DecodeFrame(want)
			require.NoError(t, err)
			require.Equal(t, v.id, f.Header.RequestID)
			require.Equal(t, v.wantVersion(), f.Header.Version)
			if _, ok := v.msg.(*Error); ok {
				require.Equal(t, v.typ, f.Header.Type)
				require.Equal(t, FlagResponse|FlagError, f.Header.Flags)
			} else {
				require.Equal(t, v.msg.Type(), f.Header.Type)
			}
			require.Equal(t, v.msg, f.Msg)
			require.Equal(t, v.rc, f.Context)
			require.Equal(t, !v.rc.Empty(), f.Header.Flags&FlagContext != 0)
			_, records := v.msg.(payloadDecoder)
			if !records {
				require.Equal(t, len(v.payload), len(f.Payload))
				if len(v.payload) > 0 {
					require.Equal(t, v.payload, f.Payload)
				}
			}
		})
	}
}

// TestVectorsCover: testdata has a request and a response of every message
// type, frames of every version, and no file that is not a vector.
func TestVectorsCover(t *testing.T) {
	type dir struct {
		typ  Type
		resp bool
	}
	have := map[dir]bool{}
	versions := map[uint8]bool{}
	names := map[string]bool{}
	for _, v := range vectors() {
		if _, ok := v.msg.(*Error); !ok {
			have[dir{v.msg.Type(), v.msg.response()}] = true
		}
		versions[v.wantVersion()] = true
		names[v.name+".bin"] = true
	}
	for typ := TypePing; typ.Known(); typ++ {
		require.True(t, have[dir{typ, false}], "no vector of a %v request", typ)
		require.True(t, have[dir{typ, true}], "no vector of a %v response", typ)
	}
	for v := MinVersion; v <= MaxVersion; v++ {
		require.True(t, versions[v], "no vector of version %d", v)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	require.NoError(t, err)
	for _, f := range files {
		require.True(t, names[filepath.Base(f)], "%s is no vector's (a stale file?)", f)
	}
}

// TestVectorsReadChunkVerify walks through docs/wire.md §5.4's example.
func TestVectorsReadChunkVerify(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "read_chunk_response.bin"))
	require.NoError(t, err)
	f, err := DecodeFrame(b)
	require.NoError(t, err)
	resp := f.Msg.(*ReadChunkResponse)
	require.NoError(t, resp.Verify(f.Payload))
	require.Equal(t, []byte("345678"), resp.Range(f.Payload, 3, 6))
	bad := append([]byte(nil), f.Payload...)
	bad[9] ^= 1
	require.ErrorIs(t, resp.Verify(bad), CodeChecksumMismatch)
}
