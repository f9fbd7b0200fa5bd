package wire

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// localTestAddr is a data address for a test's local socket: its host is
// one testTLS's certificate names, and the rest keeps the socket's name
// apart from other tests' and processes'.
func localTestAddr(t *testing.T) string {
	return fmt.Sprintf("127.0.0.1:%d-%s", os.Getpid(), t.Name())
}

// TestReadLocalTLS: on a local socket that speaks TLS, READ_LOCAL responses
// still carry their files beside the encrypted frames. Many requests in
// flight on one connection, answered out of order by concurrent handlers,
// with large READ_CHUNK frames (sent in several writes) between them, each
// get their own files, however many; the responses of requests given up
// on are dropped with their files; no descriptor is left queued.
func TestReadLocalTLS(t *testing.T) {
	server, client := testTLS(t)
	dir := t.TempDir()
	// Request k (its offset) is answered with 1 + k%3 files, file j of
	// which holds "k/j". Request slow+k is answered as k, once every
	// caller has returned: the caller gives up when it has arrived
	// (received[k] closed).
	const reqs, slow = 48, 1000
	received := make([]chan struct{}, reqs)
	for k := range received {
		received[k] = make(chan struct{})
	}
	release := make(chan struct{})
	content := func(k int64, j int) string { return fmt.Sprintf("%d/%d", k, j) }
	path := func(k int64, j int) string { return filepath.Join(dir, fmt.Sprintf("%d-%d", k, j)) }
	for k := range int64(reqs) {
		for j := range 1 + int(k%3) {
			require.NoError(t, os.WriteFile(path(k, j), []byte(content(k, j)), 0o600))
		}
	}
	addr := localTestAddr(t)
	l, err := ListenLocal(addr, server)
	require.NoError(t, err)
	var answered atomic.Int64
	serveToyVersion(t, l, VersionReadLocal, func(ctx context.Context, w *Writer, h FrameHeader, m Message, payload []byte) {
		req, ok := m.(*ReadLocalRequest)
		if !ok {
			echoHandler(ctx, w, h, m, payload)
			return
		}
		k := req.Offset
		if k >= slow {
			k -= slow
			close(received[k])
			<-release
		} else {
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		}
		resp := &ReadLocalResponse{FileCount: uint8(1 + k%3)}
		var files []*os.File
		for j := range int(resp.FileCount) {
			f, err := os.Open(path(k, j))
			if err != nil {
				panic(err)
			}
			defer f.Close()
			files = append(files, f)
			resp.Extents = append(resp.Extents, LocalExtent{Chunk: Chunk{Offset: req.Offset + int64(j), Length: 1}, File: uint8(j)})
		}
		if err := w.WriteMessageFiles(ctx, h.RequestID, resp, files); err != nil {
			panic(err)
		}
		answered.Add(1)
	})

	ctx := t.Context()
	c, err := DialLocal(ctx, addr, ConnOptions{TLS: client})
	require.NoError(t, err)
	defer c.Close()
	tc, ok := c.nc.(*TLSConn)
	require.True(t, ok, "a TLS connection")
	require.Equal(t, VersionReadLocal, c.Version())

	var wg sync.WaitGroup
	errs := make(chan error, 3*reqs)
	for k := range int64(reqs) {
		wg.Add(3)
		go func() {
			defer wg.Done()
			resp, err := c.ReadLocal(ctx, &ReadLocalRequest{Block: BlockID{1, 1}, Offset: k, Length: 1})
			if err != nil {
				errs <- fmt.Errorf("request %d: %w", k, err)
				return
			}
			defer resp.Close()
			if len(resp.Files) != int(1+k%3) {
				errs <- fmt.Errorf("request %d: %d files, want %d", k, len(resp.Files), 1+k%3)
				return
			}
			for j, f := range resp.Files {
				b, err := io.ReadAll(io.NewSectionReader(f, 0, 100))
				if err != nil || string(b) != content(k, j) {
					errs <- fmt.Errorf("request %d file %d holds %q, want %q (%w)", k, j, b, content(k, j), err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			// Given up on once the server has it.
			short, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				select {
				case <-received[k]:
				case <-short.Done():
				}
				cancel()
			}()
			if _, err := c.ReadLocal(short, &ReadLocalRequest{Block: BlockID{1, 1}, Offset: slow + k, Length: 1}); err == nil {
				errs <- fmt.Errorf("slow request %d answered in time", k)
			}
		}()
		go func() {
			defer wg.Done()
			// More than a gatherConn sends at once.
			const n = gatherSize + 4096
			_, data, err := c.ReadChunk(ctx, &ReadChunkRequest{Block: BlockID{1, 2}, Offset: k, Length: n}, nil)
			if err != nil {
				errs <- fmt.Errorf("READ_CHUNK %d: %w", k, err)
			} else if string(data) != string(offsetBytes(k, n)) {
				errs <- fmt.Errorf("READ_CHUNK %d: wrong bytes", k)
			}
		}()
	}
	wg.Wait()
	close(release)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Once every response is out, one more request and its answer: the
	// client has taken the files of every frame before it.
	require.Eventually(t, func() bool { return answered.Load() == 2*reqs }, 10*time.Second, time.Millisecond)
	_, _, err = c.ReadChunk(ctx, &ReadChunkRequest{Block: BlockID{1, 2}, Length: 8}, nil)
	require.NoError(t, err)
	require.NoError(t, c.Err())
	fc := tc.g.Conn.(*fdConn)
	fc.mu.Lock()
	require.Empty(t, fc.fds, "no descriptor left behind")
	fc.mu.Unlock()
}

// TestDialLocalTLSImpostor: a process that holds a datanode's local socket
// name without the datanode's certificate — one of another CA, or none
// (plain) — fails DialLocal with TLS before any request (no PING, no
// TOKEN) is sent to it.
func TestDialLocalTLSImpostor(t *testing.T) {
	_, client := testTLS(t)
	otherServer, _ := testTLS(t)
	for name, cfg := range map[string]*tls.Config{"another CA": otherServer, "no TLS": nil} {
		t.Run(name, func(t *testing.T) {
			addr := localTestAddr(t)
			l, err := ListenLocal(addr, cfg)
			require.NoError(t, err)
			var heard atomic.Int64
			serveToyVersion(t, l, VersionReadLocal, func(ctx context.Context, w *Writer, h FrameHeader, m Message, _ []byte) {
				heard.Add(1)
				_ = w.WriteError(ctx, h.Type, h.RequestID, Errorf(CodeUnsupportedType, "impostor"))
			})
			// Without TLS a client cannot tell it from a datanode.
			if cfg == nil {
				c, err := DialLocal(t.Context(), addr, ConnOptions{})
				require.NoError(t, err)
				require.NoError(t, c.Close())
			}
			_, err = DialLocal(t.Context(), addr, ConnOptions{TLS: client, DialTimeout: 2 * time.Second})
			require.ErrorContains(t, err, "TLS handshake")
			require.Zero(t, heard.Load())
		})
	}
}
