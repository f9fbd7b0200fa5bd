package wire

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// toyServer speaks the protocol with a handler per request, each in its own
// goroutine, so that responses go out in completion order. It stands in for
// a datanode in the tests of this package.
type toyServer struct {
	l       net.Listener
	handler func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte)
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
	version uint8 // the version the PING chooses
}

func newToyServer(t *testing.T, handler func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte)) *toyServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return serveToy(t, l, handler)
}

// serveToy runs a toyServer on l.
func serveToy(t *testing.T, l net.Listener, handler func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte)) *toyServer {
	return serveToyVersion(t, l, 1, handler)
}

// serveToyVersion runs a toyServer on l whose PING chooses version v.
func serveToyVersion(t *testing.T, l net.Listener, v uint8, handler func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte)) *toyServer {
	s := &toyServer{l: l, handler: handler, version: v}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, nc)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(nc)
			}()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *toyServer) addr() string { return s.l.Addr().String() }

func (s *toyServer) serve(nc net.Conn) {
	defer nc.Close()
	ctx := context.Background()
	r, w := NewRequestReader(nc), NewWriter(nc, 5*time.Second)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		h, m, err := r.Next()
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				_ = w.WriteError(ctx, h.Type, h.RequestID, e)
				if e.Code != CodeProtocol {
					continue
				}
			}
			return
		}
		if _, ok := m.(*PingRequest); ok {
			v := max(s.version, 1)
			_ = w.WriteMessage(ctx, h.RequestID, &PingResponse{Version: v, MinVersion: 1, MaxVersion: v, MaxChunkLen: MaxChunkLen, ServerID: "toy"}, nil)
			w.SetVersion(v)
			continue
		}
		payload := make([]byte, r.Remaining())
		if err := r.ReadPayload(payload); err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.handler(ctx, w, h, m, payload)
		}()
	}
}

// dropAll closes every accepted connection.
func (s *toyServer) dropAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

func (s *toyServer) close() {
	s.l.Close()
	s.dropAll()
	s.wg.Wait()
}

// echoHandler answers READ_CHUNK with bytes derived from the offset (after
// a random delay, so that responses overtake each other) and WRITE_CHUNK
// by checking the bytes against their checksums.
func echoHandler(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
	time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	switch m := m.(type) {
	case *ReadChunkRequest:
		data := offsetBytes(m.Offset, int(m.Length))
		resp := &ReadChunkResponse{Offset: m.Offset, Chunks: []Chunk{{Offset: m.Offset, Length: m.Length, Checksums: checksum.Compute(checksum.CRC32C, 512, data)}}}
		_ = w.WriteMessage(ctx, h.RequestID, resp, data)
	case *WriteChunkRequest:
		if err := checksum.Verify(m.Checksums, 0, payload); err != nil {
			_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeChecksumMismatch, "%v", err))
			return
		}
		_ = w.WriteMessage(ctx, h.RequestID, &WriteChunkResponse{}, nil)
	case *GetBlockRequest:
		_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeBlockNotFound, "block %v", m.Block))
	default:
		_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeUnsupportedType, "toy"))
	}
}

func offsetBytes(off int64, n int) []byte {
	p := make([]byte, n)
	for i := 0; i < n; i += 8 {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(off)+uint64(i))
		copy(p[i:], b[:])
	}
	return p
}

func dial(t *testing.T, addr string) *Conn {
	c, err := Dial(context.Background(), addr, ConnOptions{ClientID: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestConnConcurrent sends many requests at once on one connection: each
// caller gets its own response although they come back out of order.
func TestConnConcurrent(t *testing.T) {
	s := newToyServer(t, echoHandler)
	c := dial(t, s.addr())
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off, n := int64(i)*4096, 64+i*8
			if i%2 == 0 {
				resp, p, err := c.ReadChunk(ctx, &ReadChunkRequest{Block: BlockID{1, 1}, Offset: off, Length: uint32(n)}, make([]byte, 0, 4096))
				if err == nil {
					err = resp.Verify(p)
				}
				if err == nil && string(resp.Range(p, off, n)) != string(offsetBytes(off, n)) {
					err = errors.New("wrong bytes")
				}
				errs <- err
				return
			}
			data := offsetBytes(off, n)
			errs <- c.WriteChunk(ctx, &WriteChunkRequest{Block: BlockID{1, 1}, Offset: off, Checksums: checksum.Compute(checksum.CRC32C, 64, data)}, data)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, c.InFlight())
	require.NoError(t, c.Err())
}

// TestConnOutOfOrder: a slow request does not hold up a fast one.
func TestConnOutOfOrder(t *testing.T) {
	release := make(chan struct{})
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		if m.(*GetBlockRequest).Block.LocalID == 1 {
			<-release
		}
		_ = w.WriteMessage(ctx, h.RequestID, &GetBlockResponse{BCSID: m.(*GetBlockRequest).Block.LocalID}, nil)
	})
	c := dial(t, s.addr())
	ctx := context.Background()
	slow := make(chan *GetBlockResponse)
	go func() {
		r, _ := c.GetBlock(ctx, &GetBlockRequest{Block: BlockID{1, 1}})
		slow <- r
	}()
	r, err := c.GetBlock(ctx, &GetBlockRequest{Block: BlockID{1, 2}})
	require.NoError(t, err)
	require.Equal(t, uint64(2), r.BCSID)
	close(release)
	require.Equal(t, uint64(1), (<-slow).BCSID)
}

// TestConnCancel: a cancelled request returns at once; its late response
// is dropped and the connection stays usable.
func TestConnCancel(t *testing.T) {
	release := make(chan struct{})
	var answered atomic.Int32
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		if m.(*ReadChunkRequest).Offset == 0 {
			<-release
		}
		data := offsetBytes(0, int(m.(*ReadChunkRequest).Length))
		_ = w.WriteMessage(ctx, h.RequestID, &ReadChunkResponse{Chunks: []Chunk{{Length: uint32(len(data))}}}, data)
		answered.Add(1)
	})
	c := dial(t, s.addr())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err := c.ReadChunk(ctx, &ReadChunkRequest{Block: BlockID{1, 1}, Offset: 0, Length: 1 << 20}, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	_, p, err := c.ReadChunk(context.Background(), &ReadChunkRequest{Block: BlockID{1, 1}, Offset: 8, Length: 16}, nil)
	require.NoError(t, err)
	require.Len(t, p, 16)
	require.Eventually(t, func() bool { return answered.Load() == 2 }, 5*time.Second, time.Millisecond)
	require.NoError(t, c.Err())
}

// TestConnErrorResponse: an error response is an *Error classified by its
// code, and leaves the connection usable.
func TestConnErrorResponse(t *testing.T) {
	s := newToyServer(t, echoHandler)
	c := dial(t, s.addr())
	ctx := context.Background()
	_, err := c.GetBlock(ctx, &GetBlockRequest{Block: BlockID{3, 4}})
	require.ErrorIs(t, err, CodeBlockNotFound)
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Contains(t, e.Message, "3/4")
	data := []byte("hello")
	bad := checksum.Compute(checksum.CRC32C, 8, []byte("jello"))
	require.ErrorIs(t, c.WriteChunk(ctx, &WriteChunkRequest{Block: BlockID{1, 1}, Checksums: bad}, data), CodeChecksumMismatch)
	require.NoError(t, c.Err())
	_, err = c.Ping(ctx, "again")
	require.NoError(t, err)
}

// TestConnBroken: when the server goes away, every request in flight fails
// with ErrConnClosed, and so does every later one.
func TestConnBroken(t *testing.T) {
	started, stop := make(chan struct{}, 10), make(chan struct{})
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		started <- struct{}{}
		<-stop // never answer
	})
	t.Cleanup(func() { close(stop) })
	c := dial(t, s.addr())
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.GetBlock(context.Background(), &GetBlockRequest{Block: BlockID{1, 1}})
			errs <- err
		}()
	}
	for range 3 {
		<-started
	}
	s.dropAll()
	for range 3 {
		require.ErrorIs(t, <-errs, ErrConnClosed)
	}
	require.ErrorIs(t, c.Err(), ErrConnClosed)
	_, err := c.GetBlock(context.Background(), &GetBlockRequest{Block: BlockID{1, 1}})
	require.ErrorIs(t, err, ErrConnClosed)
}

// TestConnGarbage: a response that does not decode closes the connection.
func TestConnGarbage(t *testing.T) {
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		_, _ = w.w.Write([]byte("this is not a frame at all"))
	})
	c := dial(t, s.addr())
	_, err := c.GetBlock(context.Background(), &GetBlockRequest{Block: BlockID{1, 1}})
	require.ErrorIs(t, err, ErrConnClosed)
	require.ErrorIs(t, err, CodeProtocol)
}

// TestConnClose: Close fails waiting requests and is idempotent.
func TestConnClose(t *testing.T) {
	s := newToyServer(t, func(context.Context, *Writer, FrameHeader, Message, []byte) {})
	c := dial(t, s.addr())
	done := make(chan error)
	go func() {
		_, err := c.GetBlock(context.Background(), &GetBlockRequest{Block: BlockID{1, 1}})
		done <- err
	}()
	require.Eventually(t, func() bool { return c.InFlight() == 1 }, time.Second, time.Millisecond)
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-done, ErrConnClosed)
	require.NoError(t, c.Close())
}

// TestDialRefused: nothing listening is an error naming the address.
func TestDialRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	_, err = Dial(context.Background(), addr, ConnOptions{DialTimeout: time.Second})
	require.ErrorContains(t, err, addr)
}

func TestPool(t *testing.T) {
	release := make(chan struct{})
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		<-release
		_ = w.WriteMessage(ctx, h.RequestID, &PutBlockResponse{BCSID: 1}, nil)
	})
	p, err := NewPool(PoolOptions{ConnsPerAddr: 2, IdleTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()

	// An idle connection is shared.
	a, err := p.Get(ctx, s.addr())
	require.NoError(t, err)
	b, err := p.Get(ctx, s.addr())
	require.NoError(t, err)
	require.Same(t, a, b)

	// A busy one makes the pool dial a second, then share the least busy.
	go func() { _, _ = a.PutBlock(ctx, &PutBlockRequest{Block: BlockID{1, 1}}) }()
	require.Eventually(t, func() bool { return a.InFlight() == 1 }, time.Second, time.Millisecond)
	b, err = p.Get(ctx, s.addr())
	require.NoError(t, err)
	require.NotSame(t, a, b)
	go func() { _, _ = b.PutBlock(ctx, &PutBlockRequest{Block: BlockID{1, 1}}) }()
	require.Eventually(t, func() bool { return b.InFlight() == 1 }, time.Second, time.Millisecond)
	c, err := p.Get(ctx, s.addr())
	require.NoError(t, err)
	require.True(t, c == a || c == b, "at most ConnsPerAddr connections")
	close(release)

	// A broken connection is replaced.
	require.Eventually(t, func() bool { return a.InFlight() == 0 && b.InFlight() == 0 }, time.Second, time.Millisecond)
	a.Close()
	b.Close()
	d, err := p.Get(ctx, s.addr())
	require.NoError(t, err)
	require.NotSame(t, a, d)
	require.NotSame(t, b, d)

	// Idle connections are closed.
	require.Eventually(t, func() bool { return d.Err() != nil }, 2*time.Second, 5*time.Millisecond)

	require.NoError(t, p.Close())
	_, err = p.Get(ctx, s.addr())
	require.ErrorIs(t, err, ErrPoolClosed)
}

// TestPoolDialConcurrent: many callers at once on a new address do not
// dial more than ConnsPerAddr connections.
func TestPoolDialConcurrent(t *testing.T) {
	s := newToyServer(t, echoHandler)
	p, err := NewPool(PoolOptions{ConnsPerAddr: 2})
	require.NoError(t, err)
	defer p.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[*Conn]bool{}
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Get(context.Background(), s.addr())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[c] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, len(seen), 2)
}

// TestWriteCommitOnOlderVersion: on a connection that chose a version
// without WRITE_COMMIT, WriteCommit sends a WRITE_CHUNK and, once it is
// acknowledged, a PUT_BLOCK at the chunk's end.
func TestWriteCommitOnOlderVersion(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	s := newToyServer(t, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		mu.Lock()
		seen = append(seen, h.Type.String())
		mu.Unlock()
		switch m := m.(type) {
		case *WriteChunkRequest:
			_ = w.WriteMessage(ctx, h.RequestID, &WriteChunkResponse{}, nil)
		case *PutBlockRequest:
			if m.Length != 16 || !m.Final || m.Sync {
				_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeInvalidArgument, "%+v", m))
				return
			}
			_ = w.WriteMessage(ctx, h.RequestID, &PutBlockResponse{BCSID: 9}, nil)
		default:
			_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeUnsupportedType, "toy"))
		}
	})
	c := dial(t, s.addr())
	require.Equal(t, uint8(1), c.Version())
	resp, err := c.WriteCommit(context.Background(), &WriteCommitRequest{Block: BlockID{ContainerID: 7, LocalID: 42},
		Checksums: exampleSums, Final: true}, exampleData)
	require.NoError(t, err)
	require.Equal(t, uint64(9), resp.BCSID)
	require.Equal(t, []string{"WRITE_CHUNK", "PUT_BLOCK"}, seen)
}
