package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// TestStreamRoundTrip writes every example through a Writer and reads it
// back through a Reader of the right direction.
func TestStreamRoundTrip(t *testing.T) {
	ctx := context.Background()
	var reqs, resps bytes.Buffer
	wq, wp := NewWriter(&reqs, 0), NewWriter(&resps, 0)
	for _, v := range vectors() {
		var err error
		switch m := v.msg.(type) {
		case *Error:
			err = wp.WriteError(ctx, v.typ, v.id, m)
		case *GetBlockResponse:
			err = wp.WriteMessage(ctx, v.id, m, nil)
		default:
			w := wq
			if m.response() {
				w = wp
			}
			err = w.WriteMessage(ctx, v.id, m, v.payload)
		}
		require.NoError(t, err)
	}
	rq, rp := NewRequestReader(&reqs), NewResponseReader(&resps)
	for _, v := range vectors() {
		r := rq
		if v.msg.response() {
			r = rp
		}
		h, m, err := r.Next()
		require.NoError(t, err, v.name)
		require.Equal(t, v.id, h.RequestID)
		p := make([]byte, r.Remaining())
		require.NoError(t, r.ReadPayload(p))
		if g, ok := m.(payloadDecoder); ok {
			require.NoError(t, g.DecodePayload(p))
		} else {
			require.Equal(t, len(v.payload), len(p), v.name)
		}
		require.Equal(t, v.msg, m, v.name)
	}
	for _, r := range []*Reader{rq, rp} {
		_, _, err := r.Next()
		require.ErrorIs(t, err, io.EOF)
	}
}

func vectorBytes(t *testing.T, name string) []byte {
	for _, v := range vectors() {
		if v.name == name {
			return v.encode(t)
		}
	}
	t.Fatalf("no vector %s", name)
	return nil
}

// TestFrameViolations: frame-level violations are CodeProtocol, and the
// header is returned so that the error can name the request.
func TestFrameViolations(t *testing.T) {
	for _, tc := range []struct {
		name   string
		vector string
		mutate func(b []byte) []byte
		wantID uint64
	}{
		{"bad magic", "write_chunk_request", func(b []byte) []byte { b[0] = 'X'; return b }, 0},
		{"garbage", "write_chunk_request", func([]byte) []byte { return []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }, 0},
		{"reserved flag", "write_chunk_request", func(b []byte) []byte { b[7] |= 0x80; return b }, 2},
		{"error without response", "write_chunk_request", func(b []byte) []byte { b[7] = 0x02; return b }, 2},
		{"response to a server", "write_chunk_response", func(b []byte) []byte { return b }, 2},
		{"header too large", "write_chunk_request", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[16:], MaxHeaderLen+1)
			return b
		}, 2},
		{"payload too large", "write_chunk_request", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[20:], MaxRequestPayload+1)
			return b
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRequestReader(bytes.NewReader(tc.mutate(vectorBytes(t, tc.vector))))
			h, _, err := r.Next()
			require.ErrorIs(t, err, CodeProtocol)
			require.Equal(t, tc.wantID, h.RequestID)
		})
	}
	// A response may carry up to 64 MiB, a request 32 MiB.
	b := vectorBytes(t, "read_chunk_response")
	binary.BigEndian.PutUint32(b[20:], MaxResponsePayload+1)
	_, err := ParseFrameHeader(b)
	require.ErrorIs(t, err, CodeProtocol)
	binary.BigEndian.PutUint32(b[20:], MaxResponsePayload)
	_, err = ParseFrameHeader(b)
	require.NoError(t, err)
}

// TestTruncated: a stream that ends inside a frame is io.ErrUnexpectedEOF
// wherever it ends, io.EOF only between frames.
func TestTruncated(t *testing.T) {
	b := vectorBytes(t, "write_chunk_request")
	r := NewRequestReader(bytes.NewReader(nil))
	_, _, err := r.Next()
	require.ErrorIs(t, err, io.EOF)
	for n := 1; n < len(b); n++ {
		r := NewRequestReader(bytes.NewReader(b[:n]))
		_, _, err := r.Next()
		if err == nil {
			// Headers complete; the payload is cut.
			require.GreaterOrEqual(t, n, len(b)-len(exampleData))
			err = r.ReadPayload(make([]byte, r.Remaining()))
		}
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", n)
	}
}

// TestRecoverableErrors: bad typed headers are answered per request and the
// stream goes on: the next frame reads fine.
func TestRecoverableErrors(t *testing.T) {
	good := vectorBytes(t, "read_chunk_request")
	frame := func(typ Type, flags Flags, version uint8, typed, payload []byte) []byte {
		h := FrameHeader{Version: version, Type: typ, Flags: flags, RequestID: 77, HeaderLen: uint32(len(typed)), PayloadLen: uint32(len(payload))}
		return append(append(h.Append(nil), typed...), payload...)
	}
	wc := func(mut func(*WriteChunkRequest), payload []byte) []byte {
		m := &WriteChunkRequest{Block: BlockID{7, 42}, Length: uint32(len(payload)), Checksums: checksum.Compute(checksum.CRC32C, 8, payload)}
		mut(m)
		return frame(TypeWriteChunk, 0, Version, m.AppendHeader(nil), payload)
	}
	typedOf := func(m Message) []byte { return m.AppendHeader(nil) }
	readReq := &ReadChunkRequest{Block: BlockID{7, 42}, Length: 1}
	for _, tc := range []struct {
		name  string
		frame []byte
		code  Code
	}{
		{"unknown type", frame(99, 0, Version, []byte{1, 2, 3}, []byte("xyz")), CodeUnsupportedType},
		{"type 0", frame(TypeNone, 0, Version, nil, nil), CodeUnsupportedType},
		{"future version", frame(TypeReadChunk, 0, MaxVersion+1, typedOf(&ReadChunkRequest{Block: BlockID{7, 42}, Length: 1}), nil), CodeUnsupportedVersion},
		{"version 0", frame(TypeGetBlock, 0, 0, typedOf(&GetBlockRequest{Block: BlockID{7, 42}}), nil), CodeUnsupportedVersion},
		{"trailing byte", frame(TypeGetBlock, 0, Version, append(typedOf(&GetBlockRequest{Block: BlockID{7, 42}}), 0), nil), CodeInvalidArgument},
		{"short header", frame(TypeGetBlock, 0, Version, typedOf(&GetBlockRequest{Block: BlockID{7, 42}})[:15], nil), CodeInvalidArgument},
		{"container 0", frame(TypeGetBlock, 0, Version, typedOf(&GetBlockRequest{Block: BlockID{0, 42}}), nil), CodeInvalidArgument},
		{"payload on GET_BLOCK", frame(TypeGetBlock, 0, Version, typedOf(&GetBlockRequest{Block: BlockID{7, 42}}), []byte{1}), CodeInvalidArgument},
		{"ping range", frame(TypePing, 0, Version, typedOf(&PingRequest{MinVersion: 2, MaxVersion: 1}), nil), CodeInvalidArgument},
		{"ping bad UTF-8", frame(TypePing, 0, Version, typedOf(&PingRequest{MinVersion: 1, MaxVersion: 1, ClientID: "\xff"}), nil), CodeInvalidArgument},
		{"length not payload", wc(func(m *WriteChunkRequest) { m.Length = 15 }, exampleData), CodeInvalidArgument},
		{"empty chunk", wc(func(*WriteChunkRequest) {}, nil), CodeInvalidArgument},
		{"negative offset", wc(func(m *WriteChunkRequest) { m.Offset = -1 }, exampleData), CodeInvalidArgument},
		{"too few checksums", wc(func(m *WriteChunkRequest) { m.Checksums.Sums = m.Checksums.Sums[:4] }, exampleData), CodeInvalidArgument},
		{"unknown checksum type", wc(func(m *WriteChunkRequest) { m.Checksums.Type = 9 }, exampleData), CodeInvalidArgument},
		{"window too large", wc(func(m *WriteChunkRequest) {
			m.Checksums = checksum.Data{Type: checksum.CRC32C, BytesPerChecksum: 32 << 20, Sums: make([]byte, 4)}
		}, exampleData), CodeInvalidArgument},
		{"duplicate follower", wc(func(m *WriteChunkRequest) { m.Followers = []string{"a:1", "a:1"} }, exampleData), CodeInvalidArgument},
		{"follower not host:port", wc(func(m *WriteChunkRequest) { m.Followers = []string{"nohost"} }, exampleData), CodeInvalidArgument},
		{"too many followers", wc(func(m *WriteChunkRequest) {
			for i := range MaxFollowers + 1 {
				m.Followers = append(m.Followers, "h:"+string(rune('0'+i%10))+string(rune('0'+i/10)))
			}
		}, exampleData), CodeInvalidArgument},
		{"put block flags", frame(TypePutBlock, 0, Version, func() []byte {
			b := typedOf(&PutBlockRequest{Block: BlockID{7, 42}, Length: 16})
			b[24] = 0x04
			return b
		}(), nil), CodeInvalidArgument},
		{"read too long", frame(TypeReadChunk, 0, Version, typedOf(&ReadChunkRequest{Block: BlockID{7, 42}, Length: MaxReadLen + 1}), nil), CodeInvalidArgument},
		{"read empty", frame(TypeReadChunk, 0, Version, typedOf(&ReadChunkRequest{Block: BlockID{7, 42}}), nil), CodeInvalidArgument},
		{"empty context", frame(TypeReadChunk, FlagContext, VersionContext, append([]byte{0, 0}, typedOf(readReq)...), nil), CodeInvalidArgument},
		{"request ID with a space", frame(TypeReadChunk, FlagContext, VersionContext, append([]byte{3, 'a', ' ', 'b', 0}, typedOf(readReq)...), nil),
			CodeInvalidArgument},
		{"short trace", frame(TypeReadChunk, FlagContext, VersionContext, append([]byte{1, 'a', 3, 1, 2, 3}, typedOf(readReq)...), nil),
			CodeInvalidArgument},
		{"zero trace", frame(TypeReadChunk, FlagContext, VersionContext, append(append([]byte{0, traceLen}, make([]byte, traceLen)...), typedOf(readReq)...), nil),
			CodeInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRequestReader(bytes.NewReader(append(append([]byte(nil), tc.frame...), good...)))
			h, _, err := r.Next()
			require.ErrorIs(t, err, tc.code)
			require.Equal(t, uint64(77), h.RequestID)
			// The payload is skipped by the next Next.
			h, m, err := r.Next()
			require.NoError(t, err)
			require.Equal(t, uint64(4), h.RequestID)
			require.IsType(t, &ReadChunkRequest{}, m)
		})
	}
}

// TestPingAnyVersion: PING is read whatever its version byte.
func TestPingAnyVersion(t *testing.T) {
	b := vectorBytes(t, "ping_request")
	b[4] = 200
	f, err := DecodeFrame(b)
	require.NoError(t, err)
	require.Equal(t, uint8(200), f.Header.Version)
}

func TestResponseChecks(t *testing.T) {
	sums := checksum.Compute(checksum.CRC32C, 8, exampleData)
	// Records must tile the payload.
	gap := &ReadChunkResponse{Offset: 0, Chunks: []Chunk{{Offset: 0, Length: 8, Checksums: sums.Slice(0, 1)}, {Offset: 9, Length: 7, Checksums: sums.Slice(1, 2)}}}
	_, err := DecodeFrame(AppendFrame(nil, 1, gap, exampleData[:15]))
	require.ErrorIs(t, err, CodeInvalidArgument)
	short := &ReadChunkResponse{Offset: 0, Chunks: []Chunk{{Offset: 0, Length: 16, Checksums: sums}}}
	_, err = DecodeFrame(AppendFrame(nil, 1, short, exampleData[:15]))
	require.ErrorIs(t, err, CodeInvalidArgument)
	// GET_BLOCK chunks must tile [0, length).
	gb := &GetBlockResponse{Length: 17, Chunks: []Chunk{{Offset: 0, Length: 16, Checksums: sums}}}
	_, err = DecodeFrame(AppendFrame(nil, 1, gb, nil))
	require.ErrorIs(t, err, CodeInvalidArgument)
	// Error frames need a code.
	_, err = DecodeFrame(AppendErrorFrame(nil, TypeWriteChunk, 1, &Error{}))
	require.ErrorIs(t, err, CodeInvalidArgument)
	// NONE checksums travel as zeros whatever the window.
	none := &WriteChunkRequest{Block: BlockID{1, 1}, Length: 16, Checksums: checksum.Data{Type: checksum.NONE, BytesPerChecksum: 512}}
	f, err := DecodeFrame(AppendFrame(nil, 1, none, exampleData))
	require.NoError(t, err)
	require.Equal(t, checksum.Data{}, f.Msg.(*WriteChunkRequest).Checksums)
}

func TestErrorClassification(t *testing.T) {
	var err error = &Error{Code: CodeBlockNotFound, Message: "block 7/42"}
	require.ErrorIs(t, err, CodeBlockNotFound)
	require.NotErrorIs(t, err, CodeContainerNotFound)
	require.Equal(t, CodeBlockNotFound, CodeOf(errors.Join(errors.New("x"), err)))
	require.Equal(t, "wire: BLOCK_NOT_FOUND: block 7/42", err.Error())
	require.Equal(t, "CODE_999", Code(999).String())
	require.False(t, Code(999).Known())
	// Messages longer than a string holds are cut at a rune boundary.
	long := string(bytes.Repeat([]byte("é"), 40000))
	f, err := DecodeFrame(AppendErrorFrame(nil, TypeReadChunk, 1, &Error{Code: CodeIO, Message: long}))
	require.NoError(t, err)
	require.Len(t, f.Msg.(*Error).Message, 0xfffe)
}

// failWriter fails after n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk on fire")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestWriterErrors(t *testing.T) {
	ctx := context.Background()
	// A typed header over the limit is refused before anything is written.
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	huge := &WriteChunkRequest{Block: BlockID{1, 1}, Checksums: checksum.Data{Type: checksum.SHA256, BytesPerChecksum: 1, Sums: make([]byte, MaxHeaderLen)}}
	require.ErrorIs(t, w.WriteMessage(ctx, 1, huge, []byte{1}), CodeTooLarge)
	require.Zero(t, buf.Len())
	require.NoError(t, w.WriteMessage(ctx, 2, &GetBlockRequest{Block: BlockID{1, 1}}, nil))

	// A failed write breaks the writer for good.
	w = NewWriter(&failWriter{n: 30}, 0)
	err := w.WriteMessage(ctx, 1, &WriteChunkRequest{Block: BlockID{1, 1}, Length: 16}, exampleData)
	require.ErrorIs(t, err, ErrWriterBroken)
	require.ErrorIs(t, w.WriteMessage(ctx, 2, &GetBlockRequest{Block: BlockID{1, 1}}, nil), ErrWriterBroken)

	// A send function that writes the wrong count breaks it too.
	w = NewWriter(&buf, 0)
	err = w.WriteMessageFunc(ctx, 1, &ReadChunkResponse{Chunks: []Chunk{{Length: 16}}}, 16, func(w io.Writer) (int64, error) {
		n, err := w.Write(exampleData[:10])
		return int64(n), err
	})
	require.ErrorIs(t, err, ErrWriterBroken)

	// A cancelled context gives up before writing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	w = NewWriter(&buf, 0)
	require.ErrorIs(t, w.WriteMessage(cctx, 1, &GetBlockRequest{Block: BlockID{1, 1}}, nil), context.Canceled)
}

// TestContextFlag: CONTEXT is a request's flag from version 6 on; on a
// response or an older frame it breaks the stream. A request's context is
// what Reader.Context returns, until the next frame.
func TestContextFlag(t *testing.T) {
	b := vectorBytes(t, "read_chunk_request_v6_context")
	r := NewRequestReader(bytes.NewReader(append(b, vectorBytes(t, "read_chunk_request_v5")...)))
	_, m, err := r.Next()
	require.NoError(t, err)
	require.IsType(t, &ReadChunkRequest{}, m)
	require.Equal(t, exampleContext, r.Context())
	ctx := r.Context().Into(context.Background())
	require.Equal(t, exampleContext, ContextOf(ctx))
	_, _, err = r.Next()
	require.NoError(t, err)
	require.True(t, r.Context().Empty())

	old := append([]byte(nil), b...)
	old[4] = VersionReadLocalPaths
	_, err = ParseFrameHeader(old)
	require.ErrorIs(t, err, CodeProtocol)
	resp := vectorBytes(t, "read_chunk_response")
	resp[4] = VersionContext
	binary.BigEndian.PutUint16(resp[6:], uint16(FlagResponse|FlagContext))
	_, err = ParseFrameHeader(resp)
	require.ErrorIs(t, err, CodeProtocol)

	// Before version 6, or with nothing to carry, a request goes without.
	var buf bytes.Buffer
	w := NewWriter(&buf, 0)
	w.SetVersion(VersionReadLocalPaths)
	require.NoError(t, w.WriteMessage(ctx, 1, &ReadChunkRequest{Block: BlockID{7, 42}, Length: 1}, nil))
	w.SetVersion(VersionContext)
	require.NoError(t, w.WriteMessage(context.Background(), 2, &ReadChunkRequest{Block: BlockID{7, 42}, Length: 1}, nil))
	rd := NewRequestReader(&buf)
	for range 2 {
		h, _, err := rd.Next()
		require.NoError(t, err)
		require.Zero(t, h.Flags&FlagContext)
	}
}

// TestContextCostsNoAllocation: a request written with a context that
// carries no request ID and no span (tracing off) allocates nothing, as
// before version 6; one that carries both allocates nothing more.
func TestContextCostsNoAllocation(t *testing.T) {
	w := NewWriter(io.Discard, 0)
	w.SetVersion(VersionContext)
	m := &ReadChunkRequest{Block: BlockID{7, 42}, Length: 1}
	for _, ctx := range []context.Context{context.Background(), exampleContext.Into(context.Background())} {
		allocs := testing.AllocsPerRun(100, func() {
			if err := w.WriteMessage(ctx, 1, m, nil); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs)
	}
}
