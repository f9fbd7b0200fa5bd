package datanode

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

// node is one datanode of a test: a store over a temporary volume and a
// server on a loopback port.
//
// It is not a minicluster datanode, on purpose: the data-protocol tests
// drive a Store and a Server alone, without meta or the heartbeat agent
// (nothing registers, no command arrives to change what they test), on a
// file system of their choosing (in memory, with injected errors), and
// reach into the store (its volumes, its container map) or start a new
// Server on the same store. minicluster runs whole datanodes against a
// meta server, and a test of package datanode could not import it anyway
// (minicluster imports datanode).
type node struct {
	t     testing.TB
	store *Store
	srv   *Server
	l     net.Listener
	addr  string
	done  chan error
}

type nodeConfig struct {
	fs     vfs.FS // default: vfs.Default on t.TempDir()
	dirs   int    // volumes; default 1
	volume container.Options
	server ServerOptions
	tls    *tls.Config // the server's: its listener speaks TLS
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func startNode(t testing.TB, cfg nodeConfig) *node {
	t.Helper()
	vo := cfg.volume
	vo.FS = cfg.fs
	if vo.FS == nil {
		vo.FS = vfs.Default
	}
	var dirs []string
	for i := range max(cfg.dirs, 1) {
		if vo.FS == vfs.Default {
			dirs = append(dirs, t.TempDir())
		} else {
			dirs = append(dirs, "/vol"+string(rune('0'+i)))
		}
	}
	store, err := OpenStore(StoreOptions{Dirs: dirs, Volume: vo, Logger: quietLogger()})
	require.NoError(t, err)
	so := cfg.server
	if so.Logger == nil {
		so.Logger = quietLogger()
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n := &node{t: t, store: store, srv: NewServer(store, so), l: l, addr: l.Addr().String(), done: make(chan error, 1)}
	sl := l
	if cfg.tls != nil {
		sl = wire.NewTLSListener(l, cfg.tls)
	}
	go func() { n.done <- n.srv.Serve(sl) }()
	t.Cleanup(func() {
		n.stop()
		require.NoError(t, store.Close())
	})
	return n
}

// stop closes the server (the datanode goes down; its store stays open).
func (n *node) stop() {
	if n.srv == nil {
		return
	}
	require.NoError(n.t, n.srv.Close())
	require.ErrorIs(n.t, <-n.done, ErrServerClosed)
	n.srv = nil
}

func (n *node) dial(t testing.TB) *wire.Conn {
	t.Helper()
	c, err := wire.Dial(context.Background(), n.addr, wire.ConnOptions{ClientID: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// filePerChunkBlock makes container id FILE_PER_CHUNK (one file per chunk,
// as replication may bring) and writes block (id, 1) there: 100,000 bytes
// in chunks of 30,000. It returns the connection it wrote on and the bytes.
func (n *node) filePerChunkBlock(t testing.TB, id uint64) (*wire.Conn, []byte) {
	t.Helper()
	_, err := n.store.vols[0].Create(id, container.FilePerChunk)
	require.NoError(t, err)
	n.store.mu.Lock()
	n.store.where[id] = n.store.vols[0]
	n.store.mu.Unlock()
	c := n.dial(t)
	data := pattern(16, 0, 100000)
	writeBlock(t, c, bid(id, 1), data, 30000, nil, false)
	return c, data
}

// pattern returns n deterministic bytes for a block offset.
func pattern(seed, off int64, n int) []byte {
	p := make([]byte, n)
	x := uint64(seed)*0x9e3779b97f4a7c15 + uint64(off)
	for i := range p {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		p[i] = byte(x)
	}
	return p
}

func sums(data []byte) checksum.Data {
	return checksum.Compute(checksum.CRC32C, 16<<10, data)
}

// writeBlock writes a block of chunks through c (to followers if given)
// and commits it.
func writeBlock(t testing.TB, c *wire.Conn, b wire.BlockID, data []byte, chunk int, followers []string, sync bool) {
	t.Helper()
	ctx := context.Background()
	for off := 0; off < len(data); off += chunk {
		p := data[off:min(off+chunk, len(data))]
		require.NoError(t, c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Offset: int64(off), Checksums: sums(p), Followers: followers}, p))
	}
	_, err := c.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: int64(len(data)), Sync: sync, Final: true, Followers: followers})
	require.NoError(t, err)
}

// readRange reads [off, off+n) of a block through c and verifies it.
func readRange(t testing.TB, c *wire.Conn, b wire.BlockID, off int64, n int) []byte {
	t.Helper()
	resp, p, err := c.ReadChunk(context.Background(), &wire.ReadChunkRequest{Block: b, Offset: off, Length: uint32(n)}, nil)
	require.NoError(t, err)
	require.NoError(t, resp.Verify(p))
	return resp.Range(p, off, n)
}

func requireCode(t testing.TB, err error, code wire.Code) *wire.Error {
	t.Helper()
	var e *wire.Error
	require.True(t, errors.As(err, &e), "want a %v error response, got %v", code, err)
	require.Equal(t, code.String(), e.Code.String(), "error: %v", e)
	return e
}

func bid(containerID, localID uint64) wire.BlockID {
	return wire.BlockID{ContainerID: containerID, LocalID: localID}
}
