package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"sync"
)

// TLS on the data path. crypto/tls writes every record (at most 16 KiB of
// plaintext) with its own write to the connection under it, and reads as
// little as the next record needs: a 1 MiB frame costs some 65 system
// calls each way. A TLS connection made here sits on a gatherConn, which
// collects the records of one frame and sends them with one write (the
// Writer brackets each frame with Gather and Flush), and reads through a
// large buffer.

// gatherSize is the most a gatherConn collects before it sends (a frame
// larger than this goes out in pieces of it), and its read buffer.
const gatherSize = 1 << 20

// gatherConn is the connection under a tls.Conn.
type gatherConn struct {
	net.Conn
	r *bufio.Reader

	mu        sync.Mutex
	gathering bool
	buf       []byte
}

func newGatherConn(nc net.Conn) *gatherConn {
	return &gatherConn{Conn: nc, r: bufio.NewReaderSize(nc, 256<<10)}
}

func (g *gatherConn) Read(p []byte) (int, error) { return g.r.Read(p) }

// Write sends p at once, or between Gather and Flush collects it.
func (g *gatherConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.gathering {
		return g.Conn.Write(p)
	}
	g.buf = append(g.buf, p...) // tls reuses p for its next record
	if len(g.buf) >= gatherSize {
		if err := g.sendLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (g *gatherConn) gather() {
	g.mu.Lock()
	g.gathering = true
	g.mu.Unlock()
}

// flush sends what was gathered and stops gathering.
func (g *gatherConn) flush() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gathering = false
	return g.sendLocked()
}

func (g *gatherConn) sendLocked() error {
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.Conn.Write(g.buf)
	if cap(g.buf) > 2*gatherSize {
		g.buf = nil
	} else {
		g.buf = g.buf[:0]
	}
	return err
}

// TLSConn is a TLS connection whose records a Writer gathers a frame at a
// time (Gather, Flush).
type TLSConn struct {
	*tls.Conn
	g *gatherConn
}

// Gather starts collecting the records written from now on.
func (c *TLSConn) Gather() { c.g.gather() }

// Flush sends the records collected since Gather, in one write.
func (c *TLSConn) Flush() error { return c.g.flush() }

// TLSClient runs a TLS client handshake over nc (closed on failure) and
// returns the connection, its records gathered a frame at a time.
func TLSClient(ctx context.Context, nc net.Conn, cfg *tls.Config) (*TLSConn, error) {
	g := newGatherConn(nc)
	tc := tls.Client(g, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return &TLSConn{Conn: tc, g: g}, nil
}

// NewTLSListener is tls.NewListener whose connections gather their
// records a frame at a time.
func NewTLSListener(inner net.Listener, cfg *tls.Config) net.Listener {
	return tlsListener{Listener: inner, cfg: cfg}
}

type tlsListener struct {
	net.Listener
	cfg *tls.Config
}

func (l tlsListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	TuneSocket(nc)
	g := newGatherConn(nc)
	return &TLSConn{Conn: tls.Server(g, l.cfg), g: g}, nil
}

// gatherer is a connection whose writes a Writer brackets, a frame at a
// time (TLSConn).
type gatherer interface {
	Gather()
	Flush() error
}
