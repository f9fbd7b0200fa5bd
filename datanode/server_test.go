package datanode

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/wire"
)

// TestRoundTrip runs every request type against one datanode, with reads
// sent by sendfile, through memory, and from an in-memory filesystem.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  nodeConfig
	}{
		{"sendfile", nodeConfig{}},
		{"copy", nodeConfig{server: ServerOptions{DisableSendfile: true}}},
		{"memfs", nodeConfig{fs: vfs.NewMem()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := startNode(t, tc.cfg)
			c := n.dial(t)
			ctx := context.Background()

			p, err := c.Ping(ctx, "test")
			require.NoError(t, err)
			require.Equal(t, wire.MaxVersion, p.Version)
			require.Equal(t, uint32(32<<20), p.MaxChunkLen)

			// Two chunks of 100 KiB and one of 37 bytes: windows of 16 KiB
			// end mid-chunk, and the last chunk's only window is short.
			b := wire.BlockID{ContainerID: 7, LocalID: 42}
			data := pattern(1, 0, 200<<10+37)
			writeBlock(t, c, b, data, 100<<10, nil, false)

			gb, err := c.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
			require.NoError(t, err)
			require.Equal(t, int64(len(data)), gb.Length)
			require.Len(t, gb.Chunks, 3)
			require.Equal(t, int64(200<<10), gb.Chunks[2].Offset)
			require.Equal(t, uint64(1), gb.BCSID)

			for _, r := range []struct{ off, n int }{
				{0, len(data)},           // everything
				{3, 6},                   // inside the first window
				{16<<10 - 1, 2},          // across two windows
				{100<<10 - 5, 10},        // across two chunks
				{200<<10 + 1, 36},        // the short last chunk
				{99 << 10, 101<<10 + 37}, // mid-window to the end
			} {
				got := readRange(t, c, b, int64(r.off), r.n)
				require.Equal(t, data[r.off:r.off+r.n], got, "range [%d, +%d)", r.off, r.n)
			}
			// The response starts at the window holding the offset.
			resp, _, err := c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Offset: 20 << 10, Length: 10}, nil)
			require.NoError(t, err)
			require.Equal(t, int64(16<<10), resp.Offset)
			require.Equal(t, uint32(16<<10), resp.Chunks[0].Length)

			cl, err := c.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 7})
			require.NoError(t, err)
			require.Equal(t, uint64(1), cl.BCSID)
			_, err = c.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 7})
			require.NoError(t, err, "closing twice")
			err = c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(7, 43), Checksums: sums(data[:10])}, data[:10])
			requireCode(t, err, wire.CodeContainerNotOpen)
			// A closed container still serves reads.
			require.Equal(t, data[:10], readRange(t, c, b, 0, 10))

			m := n.srv.Metrics()
			require.Equal(t, int64(1), m.ConnsOpen)
			require.Equal(t, int64(len(data)+10), m.BytesIn, "chunk bytes received, the refused write included")
			require.Positive(t, m.BytesOut)
			require.Equal(t, int64(1), m.Errors)
		})
	}
}

// TestRequestErrors: each bad request gets its error code, and loses
// nothing already stored.
func TestRequestErrors(t *testing.T) {
	n := startNode(t, nodeConfig{volume: container.Options{MaxChunkSize: 1 << 20}})
	c := n.dial(t)
	ctx := context.Background()
	b := wire.BlockID{ContainerID: 3, LocalID: 1}
	data := pattern(2, 0, 64<<10)
	writeBlock(t, c, b, data, 32<<10, nil, false)

	write := func(b wire.BlockID, off int64, p []byte, s checksum.Data) error {
		return c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Offset: off, Checksums: s}, p)
	}
	read := func(b wire.BlockID, off int64, n uint32) error {
		_, _, err := c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Offset: off, Length: n}, nil)
		return err
	}

	_, err := c.GetBlock(ctx, &wire.GetBlockRequest{Block: bid(99, 1)})
	requireCode(t, err, wire.CodeContainerNotFound)
	requireCode(t, read(bid(99, 1), 0, 1), wire.CodeContainerNotFound)
	_, err = c.GetBlock(ctx, &wire.GetBlockRequest{Block: bid(3, 2)})
	requireCode(t, err, wire.CodeBlockNotFound)
	requireCode(t, read(bid(3, 2), 0, 1), wire.CodeBlockNotFound)
	requireCode(t, read(b, 64<<10-1, 2), wire.CodeInvalidArgument)
	_, err = c.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 98})
	requireCode(t, err, wire.CodeContainerNotFound)

	// A chunk that does not match its checksums is refused, not kept.
	bad := pattern(3, 0, 1000)
	s := sums(bad)
	bad[500] ^= 0x40
	requireCode(t, write(bid(3, 5), 0, bad, s), wire.CodeChecksumMismatch)
	_, err = c.PutBlock(ctx, &wire.PutBlockRequest{Block: bid(3, 5), Length: 1000})
	requireCode(t, err, wire.CodeIncomplete)

	// Overlapping different data, and identical retries.
	requireCode(t, write(b, 100, pattern(4, 0, 10), sums(pattern(4, 0, 10))), wire.CodeOverwrite)
	require.NoError(t, write(b, 0, data[:32<<10], sums(data[:32<<10])), "an identical retry")
	_, err = c.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: 64 << 10})
	require.NoError(t, err, "an identical PutBlock")
	_, err = c.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: 10})
	requireCode(t, err, wire.CodeInvalidArgument) // a committed length never shrinks

	// Over the datanode's own limit (1 MiB here, 32 MiB on the wire).
	big := pattern(5, 0, 2<<20)
	requireCode(t, write(bid(3, 6), 0, big, sums(big)), wire.CodeTooLarge)
	requireCode(t, write(bid(3, 6), 256<<20, data[:10], sums(data[:10])), wire.CodeTooLarge)

	// Nothing was lost.
	require.Equal(t, data, readRange(t, c, b, 0, len(data)))
	require.NoError(t, c.Err())
}

// TestDiskFull: ENOSPC from the disk is NO_SPACE, and the datanode keeps
// serving what it holds.
func TestDiskFull(t *testing.T) {
	full := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileWriteAt && filepath.Ext(op.Path) == ".block" {
			return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
		}
		return nil
	})}
	n := startNode(t, nodeConfig{fs: errorfs.Wrap(vfs.NewMem(), full)})
	c := n.dial(t)
	b := wire.BlockID{ContainerID: 1, LocalID: 1}
	data := pattern(6, 0, 4096)
	writeBlock(t, c, b, data, 4096, nil, true)
	full.On()
	err := c.WriteChunk(context.Background(), &wire.WriteChunkRequest{Block: bid(1, 2), Checksums: sums(data)}, data)
	requireCode(t, err, wire.CodeNoSpace)
	full.Off()
	require.Equal(t, data, readRange(t, c, b, 0, len(data)))
}

// TestConcurrentOneConnection sends many writes and reads at once on one
// connection: the datanode handles them concurrently and every caller gets
// its own answer.
func TestConcurrentOneConnection(t *testing.T) {
	n := startNode(t, nodeConfig{server: ServerOptions{MaxInFlightPerConn: 8}})
	c := n.dial(t)
	ctx := context.Background()
	const blocks, chunks, chunk = 16, 4, 64 << 10
	var wg sync.WaitGroup
	errs := make(chan error, blocks*chunks*2)
	for blk := range blocks {
		b := wire.BlockID{ContainerID: uint64(1 + blk%3), LocalID: uint64(blk)}
		data := pattern(int64(blk), 0, chunks*chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The chunks of a block in parallel, then the commit.
			var cw sync.WaitGroup
			for i := range chunks {
				cw.Add(1)
				go func() {
					defer cw.Done()
					p := data[i*chunk : (i+1)*chunk]
					errs <- c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Offset: int64(i * chunk), Checksums: sums(p)}, p)
				}()
			}
			cw.Wait()
			if _, err := c.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: int64(len(data))}); err != nil {
				errs <- err
				return
			}
			for i := range chunks {
				cw.Add(1)
				go func() {
					defer cw.Done()
					off := int64(i*chunk + 1000)
					resp, p, err := c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Offset: off, Length: 5000}, nil)
					if err == nil {
						err = resp.Verify(p)
					}
					if err == nil && !bytes.Equal(resp.Range(p, off, 5000), data[off:off+5000]) {
						err = io.ErrUnexpectedEOF
					}
					errs <- err
				}()
			}
			cw.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, n.store.Containers(), 3)
}

// rawFrame connects without the wire client, to send broken bytes.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	r  *wire.Reader
}

func dialRaw(t *testing.T, n *node) *rawConn {
	nc, err := net.Dial("tcp", n.addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, nc: nc, r: wire.NewResponseReader(nc)}
}

func (r *rawConn) send(b []byte) {
	_, err := r.nc.Write(b)
	require.NoError(r.t, err)
}

// expectError reads an error response.
func (r *rawConn) expectError(typ wire.Type, id uint64, code wire.Code) {
	r.t.Helper()
	h, m, err := r.r.Next()
	require.NoError(r.t, err)
	require.True(r.t, h.IsError(), "want an error, got %#v", m)
	require.Equal(r.t, typ, h.Type)
	require.Equal(r.t, id, h.RequestID)
	require.Equal(r.t, code.String(), m.(*wire.Error).Code.String(), m.(*wire.Error).Message)
}

// expectClosed reads the end of the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	_, _, err := r.r.Next()
	require.ErrorIs(r.t, err, io.EOF)
}

func writeFrame(id uint64, b wire.BlockID, data []byte) []byte {
	return wire.AppendFrame(nil, id, &wire.WriteChunkRequest{Block: b, Length: uint32(len(data)), Checksums: sums(data)}, data)
}

// TestBadFrames: garbage, oversized and truncated frames get a clear error
// (or none, when nothing can be said) and the connection is closed;
// nothing of them is written. Bad typed headers are answered and the
// connection goes on.
func TestBadFrames(t *testing.T) {
	n := startNode(t, nodeConfig{server: ServerOptions{FrameTimeout: 200 * time.Millisecond}})
	data := pattern(7, 0, 1000)
	noContainer := func(id uint64) {
		t.Helper()
		_, err := n.store.Container(id)
		require.ErrorIs(t, err, container.ErrNotFound, "nothing written")
	}

	t.Run("garbage", func(t *testing.T) {
		r := dialRaw(t, n)
		r.send([]byte("GET / HTTP/1.1\r\nHost: datanode\r\n\r\n"))
		r.expectError(wire.TypeNone, 0, wire.CodeProtocol)
		r.expectClosed()
	})
	t.Run("oversized payload", func(t *testing.T) {
		r := dialRaw(t, n)
		f := writeFrame(5, bid(11, 1), data)
		binary.BigEndian.PutUint32(f[20:], wire.MaxRequestPayload+1)
		r.send(f)
		r.expectError(wire.TypeWriteChunk, 5, wire.CodeProtocol)
		r.expectClosed()
		noContainer(11)
	})
	t.Run("oversized header", func(t *testing.T) {
		r := dialRaw(t, n)
		f := writeFrame(6, bid(12, 1), data)
		binary.BigEndian.PutUint32(f[16:], wire.MaxHeaderLen+1)
		r.send(f)
		r.expectError(wire.TypeWriteChunk, 6, wire.CodeProtocol)
		r.expectClosed()
		noContainer(12)
	})
	t.Run("response sent to the datanode", func(t *testing.T) {
		r := dialRaw(t, n)
		r.send(wire.AppendFrame(nil, 9, &wire.PutBlockResponse{BCSID: 1}, nil))
		r.expectError(wire.TypePutBlock, 9, wire.CodeProtocol)
		r.expectClosed()
	})
	t.Run("truncated then closed", func(t *testing.T) {
		r := dialRaw(t, n)
		f := writeFrame(7, bid(13, 1), data)
		r.send(f[:len(f)-1])
		require.NoError(t, r.nc.(*net.TCPConn).CloseWrite())
		r.expectClosed()
		noContainer(13)
	})
	t.Run("truncated then stalled", func(t *testing.T) {
		r := dialRaw(t, n)
		f := writeFrame(8, bid(14, 1), data)
		r.send(f[:100])
		r.expectClosed() // after the frame timeout
		noContainer(14)
	})
	t.Run("recoverable", func(t *testing.T) {
		r := dialRaw(t, n)
		h := wire.FrameHeader{Version: wire.Version, Type: 42, RequestID: 1, HeaderLen: 3, PayloadLen: 5}
		r.send(append(h.Append(nil), "abcdefgh"...))
		r.expectError(42, 1, wire.CodeUnsupportedType)

		f := writeFrame(2, bid(15, 1), data)
		f[4] = 9
		r.send(f)
		r.expectError(wire.TypeWriteChunk, 2, wire.CodeUnsupportedVersion)
		noContainer(15)

		f = writeFrame(3, bid(15, 1), data)
		binary.BigEndian.PutUint32(f[48:], 999) // length ≠ payload
		r.send(f)
		r.expectError(wire.TypeWriteChunk, 3, wire.CodeInvalidArgument)
		noContainer(15)

		r.send(wire.AppendFrame(nil, 4, &wire.PingRequest{MinVersion: wire.MaxVersion + 1, MaxVersion: wire.MaxVersion + 3}, nil))
		r.expectError(wire.TypePing, 4, wire.CodeUnsupportedVersion)

		// Still usable.
		r.send(writeFrame(10, bid(15, 1), data))
		h, m, err := r.r.Next()
		require.NoError(t, err)
		require.Equal(t, uint64(10), h.RequestID)
		require.IsType(t, &wire.WriteChunkResponse{}, m)
	})
}

// TestServerClose: Close ends Serve, drops connections and fails clients'
// requests cleanly; the store stays usable.
func TestServerClose(t *testing.T) {
	n := startNode(t, nodeConfig{})
	c := n.dial(t)
	writeBlock(t, c, bid(1, 1), pattern(8, 0, 1000), 1000, nil, false)
	n.stop()
	_, err := c.GetBlock(context.Background(), &wire.GetBlockRequest{Block: bid(1, 1)})
	require.ErrorIs(t, err, wire.ErrConnClosed)
	_, err = net.Dial("tcp", n.addr)
	require.Error(t, err)
	ct, err := n.store.Container(1)
	require.NoError(t, err)
	blk, err := ct.GetBlock(1)
	require.NoError(t, err)
	require.Equal(t, int64(1000), blk.Length)
}

// TestInvalidOptions: Serve reports them.
func TestInvalidOptions(t *testing.T) {
	store, err := OpenStore(StoreOptions{Dirs: []string{"/v"}, Volume: container.Options{FS: vfs.NewMem()}, Logger: quietLogger()})
	require.NoError(t, err)
	defer store.Close()
	s := NewServer(store, ServerOptions{MaxInFlightPerConn: -1})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	require.ErrorContains(t, s.Serve(l), "MaxInFlightPerConn")
	require.NoError(t, s.Close())
}

// TestReadFilePerChunk: a FILE_PER_CHUNK container (one file per chunk, as
// replication may bring) is read with sendfile across its files.
func TestReadFilePerChunk(t *testing.T) {
	n := startNode(t, nodeConfig{})
	c, data := n.filePerChunkBlock(t, 21)
	require.Equal(t, data, readRange(t, c, bid(21, 1), 0, len(data)))
	require.Equal(t, data[29000:61000], readRange(t, c, bid(21, 1), 29000, 32000))
}

// TestClientRequestsTouchForeground: chunks written or read make the
// datanode busy for background copies (decision 0098); PING, GET_BLOCK
// and CLOSE_CONTAINER do not.
func TestClientRequestsTouchForeground(t *testing.T) {
	fg := replication.NewForeground(time.Hour, 50*time.Millisecond, nil)
	n := startNode(t, nodeConfig{server: ServerOptions{Foreground: fg}})
	c := n.dial(t)
	ctx := context.Background()
	busy := func() bool {
		before := fg.Waited()
		require.NoError(t, fg.GiveWay(ctx))
		return fg.Waited()-before >= 50*time.Millisecond
	}
	b := wire.BlockID{ContainerID: 7, LocalID: 42}
	_, err := c.Ping(ctx, "test")
	require.NoError(t, err)
	_, err = c.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
	requireCode(t, err, wire.CodeContainerNotFound)
	require.False(t, busy(), "no client data served yet")
	data := pattern(1, 0, 1000)
	writeBlock(t, c, b, data, 1000, nil, false)
	require.True(t, busy(), "a block written")
}

// trickle hands out at most step bytes a Read, so a payload arrives in
// pieces that end inside checksum windows.
type trickle struct {
	r    io.Reader
	step int
}

func (t *trickle) Read(p []byte) (int, error) { return t.r.Read(p[:min(len(p), t.step)]) }

// TestReadVerified: a chunk's payload is checked window by window as it
// arrives, in pieces that split windows; a damaged window is reported as
// the first mismatch, and the rest of the frame is still read, so the next
// frame on the connection is read whole.
func TestReadVerified(t *testing.T) {
	ctx := context.Background()
	good := pattern(21, 0, 100<<10+1000) // six windows of 16 KiB and a short one
	for _, tc := range []struct {
		name    string
		damage  int // byte to flip, -1 for none
		window  int64
		message bool // a WRITE_COMMIT rather than a WRITE_CHUNK
	}{
		{name: "intact", damage: -1},
		{name: "first window", damage: 3, window: 0},
		{name: "window split by reads", damage: 40000, window: 32 << 10},
		{name: "short last window", damage: len(good) - 1, window: 96 << 10, message: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var frames bytes.Buffer
			w := wire.NewWriter(&frames, time.Minute)
			data := append([]byte(nil), good...)
			s := sums(data)
			if tc.damage >= 0 {
				data[tc.damage] ^= 0x10
			}
			var m wire.Message = &wire.WriteChunkRequest{Block: bid(3, 1), Length: uint32(len(data)), Checksums: s}
			if tc.message {
				m = &wire.WriteCommitRequest{Block: bid(3, 1), Length: uint32(len(data)), Checksums: s, Final: true}
			}
			require.NoError(t, w.WriteMessage(ctx, 1, m, data))
			next := pattern(22, 0, 5000)
			require.NoError(t, w.WriteMessage(ctx, 2, &wire.WriteChunkRequest{Block: bid(3, 2), Length: 5000, Checksums: sums(next)}, next))

			for _, step := range []int{7001, 1 << 20} {
				r := wire.NewRequestReader(&trickle{r: bytes.NewReader(frames.Bytes()), step: step})
				_, got, err := r.Next()
				require.NoError(t, err)
				sums, ok := chunkSums(got)
				require.True(t, ok)
				p := make([]byte, r.Remaining())
				check, err := readVerified(r, p, sums)
				require.NoError(t, err)
				require.True(t, check.done)
				require.Equal(t, data, p, "the payload is read whole")
				if tc.damage < 0 {
					require.NoError(t, check.err)
				} else {
					var e *checksum.MismatchError
					require.ErrorAs(t, check.err, &e)
					require.Equal(t, tc.window, e.Offset)
				}

				h, got, err := r.Next()
				require.NoError(t, err)
				require.Equal(t, uint64(2), h.RequestID)
				sums, _ = chunkSums(got)
				p = make([]byte, r.Remaining())
				check, err = readVerified(r, p, sums)
				require.NoError(t, err)
				require.NoError(t, check.err)
				require.Equal(t, next, p)
			}
		})
	}

	// No checksums: nothing to check as it arrives.
	_, ok := chunkSums(&wire.WriteChunkRequest{Checksums: checksum.Data{Type: checksum.NONE}})
	require.False(t, ok)
	_, ok = chunkSums(&wire.PutBlockRequest{})
	require.False(t, ok)
}
