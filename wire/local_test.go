package wire

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// TestReadLocalCodec: READ_LOCAL's request and response go through a frame
// and back unchanged, and a response that names files it does not carry,
// or extents with holes, is refused.
func TestReadLocalCodec(t *testing.T) {
	block := BlockID{ContainerID: 7, LocalID: 42}
	data := []byte("0123456789abcdef")
	sums := checksum.Compute(checksum.CRC32C, 8, data)
	resp := &ReadLocalResponse{FileCount: 2, Extents: []LocalExtent{
		{Chunk: Chunk{Offset: 0, Length: 16, Checksums: sums}, File: 0, FileOffset: 0},
		{Chunk: Chunk{Offset: 16, Length: 16, Checksums: sums}, File: 1, FileOffset: 4096},
	}}
	for _, m := range []Message{&ReadLocalRequest{Block: block, Offset: 3, Length: 6}, resp} {
		f, err := DecodeFrame(AppendFrame(nil, 9, m, nil))
		require.NoError(t, err)
		require.Equal(t, m, f.Msg)
	}

	bad := func(mod func(r *ReadLocalResponse)) error {
		r := *resp
		r.Extents = append([]LocalExtent(nil), resp.Extents...)
		mod(&r)
		_, err := DecodeFrame(AppendFrame(nil, 9, &r, nil))
		return err
	}
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.FileCount = 0 }), "with 0 files")
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.FileCount = MaxLocalFiles + 1 }), "with 65 files")
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.Extents[1].File = 2 }), "extent in file 2 of 2")
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.Extents[1].Chunk.Offset = 17 }), "extent at 17, want 16")
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.Extents[0].FileOffset = -1 }), "file offset -1")
	require.ErrorContains(t, bad(func(r *ReadLocalResponse) { r.Extents = nil }), "without extent records")
	_, err := DecodeFrame(AppendFrame(nil, 9, &ReadLocalRequest{Block: block, Length: MaxReadLen + 1}, nil))
	require.ErrorIs(t, err, CodeInvalidArgument)
	// Not in version 3.
	frame := AppendFrame(nil, 9, &ReadLocalRequest{Block: block, Length: 1}, nil)
	frame[4] = VersionWriteCommit
	_, err = DecodeFrame(frame)
	require.ErrorIs(t, err, CodeUnsupportedType)
}

// TestReadLocalPassesFiles: the files of a READ_LOCAL response come with
// it, as descriptors of the client's own, readable after the server closed
// its copies; a response whose request was given up on is dropped with its
// files; READ_LOCAL on a TCP connection is refused by the client.
func TestReadLocalPassesFiles(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, s := range []string{"first file", "second file"} {
		p := filepath.Join(dir, fmt.Sprint(i))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		paths = append(paths, p)
	}
	release := make(chan struct{})
	addr := fmt.Sprintf("test-%d-%s", os.Getpid(), t.Name())
	l, err := ListenLocal(addr, nil)
	require.NoError(t, err)
	serveToyVersion(t, l, VersionReadLocal, func(ctx context.Context, w *Writer, h FrameHeader, m Message, _ []byte) {
		req := m.(*ReadLocalRequest)
		if req.Offset == 1 {
			<-release
		}
		var files []*os.File
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				panic(err)
			}
			defer f.Close()
			files = append(files, f)
		}
		resp := &ReadLocalResponse{FileCount: 2, Extents: []LocalExtent{
			{Chunk: Chunk{Offset: req.Offset, Length: 10}, File: 0}, {Chunk: Chunk{Offset: req.Offset + 10, Length: 11}, File: 1}}}
		_ = w.WriteMessageFiles(ctx, h.RequestID, resp, files)
	})
	ctx := t.Context()
	c, err := DialLocal(ctx, addr, ConnOptions{})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, VersionReadLocal, c.Version())

	// Given up on: the response and its files are dropped.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = c.ReadLocal(short, &ReadLocalRequest{Block: BlockID{1, 1}, Offset: 1, Length: 21})
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)

	for range 3 {
		resp, err := c.ReadLocal(ctx, &ReadLocalRequest{Block: BlockID{1, 1}, Length: 21})
		require.NoError(t, err)
		require.Len(t, resp.Files, 2)
		for i, f := range resp.Files {
			b, err := io.ReadAll(io.NewSectionReader(f, 0, 100))
			require.NoError(t, err)
			require.Equal(t, []string{"first file", "second file"}[i], string(b))
		}
		require.EqualValues(t, 0, resp.Offset())
		require.EqualValues(t, 21, resp.End())
		resp.Close()
	}
	require.NoError(t, c.Err())
	fc := c.nc.(*fdConn)
	fc.mu.Lock()
	require.Empty(t, fc.fds, "no descriptor left behind")
	fc.mu.Unlock()

	// Over TCP there are no files to take.
	tcp := newToyServer(t, echoHandler)
	tc, err := Dial(ctx, tcp.addr(), ConnOptions{})
	require.NoError(t, err)
	defer tc.Close()
	_, err = tc.ReadLocal(ctx, &ReadLocalRequest{Block: BlockID{1, 1}, Length: 1})
	require.ErrorContains(t, err, "not a local socket")

	// No datanode of that address here: the dial fails at once.
	start := time.Now()
	_, err = DialLocal(ctx, addr+"-none", ConnOptions{})
	require.Error(t, err)
	require.Less(t, time.Since(start), time.Second)
}

// limitWriter accepts n bytes, then fails.
type limitWriter struct {
	b []byte
	n int
}

var errLimit = fmt.Errorf("writer full")

func (w *limitWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		w.b = append(w.b, p[:w.n]...)
		k := w.n
		w.n = 0
		return k, errLimit
	}
	w.b = append(w.b, p...)
	w.n -= len(p)
	return len(p), nil
}

// TestWriteRange: a READ_LOCAL response's range written piece by piece to
// a writer is the block's bytes, for every range and buffer size (smaller
// than a window, not a multiple of one, larger than a chunk); a bad window
// stops it with a checksum mismatch after writing only verified bytes
// before it; a file that ends early is corrupt; a writer's error ends it
// with the bytes the writer took counted.
func TestWriteRange(t *testing.T) {
	const bpc = 4096
	dir := t.TempDir()
	// Two chunks, in two files, the second at an offset in its file.
	data := make([]byte, 50_000+33_333)
	for i := range data {
		data[i] = byte(i*31 + i>>9)
	}
	c0, c1 := data[:50_000], data[50_000:]
	write := func(name string, at int64, b []byte) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		require.NoError(t, err)
		_, err = f.WriteAt(b, at)
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	resp := func() *ReadLocalResponse {
		return &ReadLocalResponse{FileCount: 2, Files: []*os.File{write("a", 0, c0), write("b", 8192, c1)}, Extents: []LocalExtent{
			{Chunk: Chunk{Offset: 0, Length: uint32(len(c0)), Checksums: checksum.Compute(checksum.CRC32C, bpc, c0)}, File: 0},
			{Chunk: Chunk{Offset: int64(len(c0)), Length: uint32(len(c1)), Checksums: checksum.Compute(checksum.CRC32C, bpc, c1)}, File: 1, FileOffset: 8192},
		}}
	}
	m := resp()
	for _, bufSize := range []int{100, bpc, 3*bpc + 7, 1 << 20} {
		for _, rg := range [][2]int64{{0, int64(len(data))}, {1, 2}, {4095, 4097}, {49_999, 50_001}, {10_000, 70_000}, {50_000, 83_333}, {83_332, 83_333}, {7, 7}} {
			var got limitWriter
			got.n = len(data)
			n, err := m.WriteRange(&got, rg[0], rg[1], make([]byte, bufSize))
			require.NoError(t, err, "range %v, buffer %d", rg, bufSize)
			require.Equal(t, rg[1]-rg[0], n)
			require.True(t, bytes.Equal(data[rg[0]:rg[1]], got.b), "range %v, buffer %d", rg, bufSize)
		}
	}
	_, err := m.WriteRange(io.Discard, 0, int64(len(data))+1, make([]byte, bpc))
	require.ErrorContains(t, err, "cover [0, 83333)")

	// A bad byte in the second chunk's third window.
	const bad = 50_000 + 2*bpc + 100
	b := []byte{data[bad] ^ 1}
	_, err = m.Files[1].WriteAt(b, 8192+bad-50_000)
	require.NoError(t, err)
	var got limitWriter
	got.n = len(data)
	n, err := m.WriteRange(&got, 1000, int64(len(data)), make([]byte, bpc))
	require.ErrorIs(t, err, CodeChecksumMismatch)
	require.ErrorIs(t, err, checksum.ErrMismatch)
	require.Equal(t, int64(50_000+2*bpc-1000), n, "everything before the bad window")
	require.Equal(t, data[1000:1000+n], got.b)

	// A short file.
	m = resp()
	require.NoError(t, m.Files[1].Truncate(8192+20_000))
	n, err = m.WriteRange(io.Discard, 0, int64(len(data)), make([]byte, 1<<20))
	require.ErrorIs(t, err, CodeCorrupt)
	require.ErrorContains(t, err, "ends 13333 bytes early")
	require.Equal(t, int64(50_000), n)

	// The writer fails.
	m = resp()
	got = limitWriter{n: 12_345}
	n, err = m.WriteRange(&got, 0, int64(len(data)), make([]byte, bpc))
	require.ErrorIs(t, err, errLimit)
	require.Equal(t, int64(12_345), n)
	require.Equal(t, data[:n], got.b)
}
