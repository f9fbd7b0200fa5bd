package wire

import (
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
	l, err := ListenLocal(addr)
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
