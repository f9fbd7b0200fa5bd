package wire

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// TLS on the data path. crypto/tls writes every record (at most 16 KiB of
// plaintext) with its own write to the connection under it, and reads as
// little as the next record needs: a 1 MiB frame costs some 65 system
// calls each way. A TLS connection made here sits on a gatherConn, which
// collects the records of one frame and sends them with one write (the
// Writer brackets each frame with Gather and Flush), and reads through a
// large buffer. Between two strato processes the bytes after the handshake
// go as sealed records instead (sealed.go).

// gatherSize is the most a gatherConn collects before it sends (a frame
// larger than this goes out in pieces of it).
const gatherSize = 1 << 20

// sealedGather is the plaintext a sealed write seals before it sends: as
// many whole records as make gatherSize, so that a large write's records
// all hold as much as a record may (none of a few bytes at each MiB).
const sealedGather = gatherSize / sealedMaxBody * sealedMaxPlain

// Read buffers: a plain TLS connection reads through a large one; a sealed
// one through a small one, so that a record's body is read straight into
// the caller's buffer (sealer.read): two reads a record, the header with
// the first bytes of the body (copied), then the rest of the body.
const (
	tlsReadBuffer    = 256 << 10
	sealedReadBuffer = 4 << 10
)

// gatherConn is the connection under a tls.Conn.
type gatherConn struct {
	net.Conn
	r *bufio.Reader

	// bounded: Read stops at the end of each TLS record, so that the
	// tls.Conn above never holds bytes past the handshake; they are sealed
	// records, for the sealer (read by the tls.Conn's reader only).
	bounded bool
	left    int // bytes of the current TLS record not yet read

	mu        sync.Mutex
	gathering bool
	buf       []byte
}

func newGatherConn(nc net.Conn) *gatherConn {
	return &gatherConn{Conn: nc, r: bufio.NewReaderSize(nc, sealedReadBuffer), bounded: true}
}

func (g *gatherConn) Read(p []byte) (int, error) {
	if !g.bounded {
		return g.r.Read(p)
	}
	if g.left == 0 {
		h, err := g.r.Peek(5) // a TLS record's header
		if err != nil {
			return g.r.Read(p)
		}
		g.left = 5 + int(binary.BigEndian.Uint16(h[3:5]))
	}
	if len(p) > g.left {
		p = p[:g.left]
	}
	n, err := g.r.Read(p)
	g.left -= n
	return n, err
}

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

// writeSealed seals p into the records it sends, at once or between
// Gather and Flush: a large p, when the peer takes them, as a run of pass
// records under a key of its own.
func (g *gatherConn) writeSealed(s *sealer, p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.werr != nil {
		return 0, s.werr
	}
	var run *passRun
	if s.pass && len(p) >= PassMin {
		var err error
		if g.buf, run, err = s.beginPass(g.buf, len(p)); err != nil {
			s.werr = err
			return 0, err
		}
	}
	n := 0
	for n < len(p) {
		k := min(len(p)-n, sealedGather)
		if run != nil {
			g.buf = run.seal(g.buf, p[n:n+k])
		} else {
			var err error
			if g.buf, err = s.seal(g.buf, p[n:n+k]); err != nil {
				s.werr = err
				return 0, err
			}
		}
		n += k
		if len(g.buf) >= gatherSize || (!g.gathering && n == len(p)) {
			if err := g.sendLocked(); err != nil {
				s.werr = err // the peer's next record number is lost
				return 0, err
			}
		}
	}
	return n, nil
}

// writeCaptured sends the pass records cp kept, after a key record of this
// connection naming their key, with what was gathered before them.
func (g *gatherConn) writeCaptured(s *sealer, cp *Capture) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.werr != nil {
		return 0, s.werr
	}
	var err error
	if g.buf, err = s.sealKey(g.buf, &cp.key); err != nil {
		s.werr = err
		return 0, err
	}
	bufs := net.Buffers{g.buf, cp.records}
	_, err = bufs.WriteTo(g.Conn)
	g.buf = g.buf[:0]
	if err != nil {
		s.werr = err
		return 0, err
	}
	return int64(cp.n), nil
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
// time (Gather, Flush), and whose bytes after the handshake go as sealed
// records when both ends offered them (SealedPassALPN or SealedALPN).
type TLSConn struct {
	*tls.Conn
	g *gatherConn

	server bool
	once   sync.Once
	hsErr  error
	s      atomic.Pointer[sealer] // nil: plain TLS records; set by ready (Close may run meanwhile)
}

// ready runs the handshake if it has not run, and sets up what follows it.
func (c *TLSConn) ready() error {
	c.once.Do(func() {
		if c.hsErr = c.Handshake(); c.hsErr != nil {
			return
		}
		st := c.ConnectionState()
		if st.NegotiatedProtocol != SealedALPN && st.NegotiatedProtocol != SealedPassALPN {
			c.g.bounded = false
			c.g.r = bufio.NewReaderSize(c.g.r, tlsReadBuffer)
			return
		}
		s, err := newSealer(st, c.server)
		c.s.Store(s)
		c.hsErr = err
	})
	return c.hsErr
}

// Sealed reports whether the connection's bytes go as sealed records. It
// runs the handshake if it has not run.
func (c *TLSConn) Sealed() bool { return c.ready() == nil && c.s.Load() != nil }

// Read reads the plaintext of sealed records, or of TLS records when the
// peer does not seal; the first Read or Write runs the handshake.
func (c *TLSConn) Read(p []byte) (int, error) {
	if err := c.ready(); err != nil {
		return 0, err
	}
	s := c.s.Load()
	if s == nil {
		return c.Conn.Read(p)
	}
	n, err := s.read(c.g.r, p)
	if errors.Is(err, errTLSRecord) {
		// The peer's TLS stack spoke (an alert after the handshake, such as
		// a refused certificate): let TLS say what it said.
		var b [64]byte
		if _, terr := c.Conn.Read(b[:]); terr != nil {
			err = terr
		}
		s.rerr = err
	}
	return n, err
}

// Write sends p as sealed records, or as TLS records when the peer does
// not seal: at once, or between Gather and Flush with the frame's others.
func (c *TLSConn) Write(p []byte) (int, error) {
	if err := c.ready(); err != nil {
		return 0, err
	}
	s := c.s.Load()
	if s == nil {
		return c.Conn.Write(p)
	}
	return c.g.writeSealed(s, p)
}

// PassRecords reports whether the connection's peer takes and sends pass
// records (SealedPassALPN). It runs the handshake if it has not run.
func (c *TLSConn) PassRecords() bool {
	if c.ready() != nil {
		return false
	}
	s := c.s.Load()
	return s != nil && s.pass
}

// Capture keeps in cp, from now on, the pass records read of the next
// payload, so that they can be sent on as they are (Conn.ForwardChunk); what
// cp held is dropped, its buffer kept. Call it between a frame's headers
// and its payload, from the goroutine that reads, and EndCapture after the
// payload. It does nothing on a connection without pass records.
func (c *TLSConn) Capture(cp *Capture) {
	*cp = Capture{records: cp.records[:0]}
	s := c.s.Load()
	if s == nil || !s.pass || s.partial || len(s.plain) > 0 || s.rpass.left > 0 {
		return // not between two payloads: nothing is kept
	}
	s.capt = cp
}

// EndCapture stops capturing, and reports whether the capture holds
// every record of a run of exactly n bytes: a payload that can be sent
// on as it came.
func (c *TLSConn) EndCapture(n int) bool {
	s := c.s.Load()
	if s == nil || s.capt == nil {
		return false
	}
	cp := s.capt
	s.capt = nil
	if s.partial && s.hdr[0] == sealedPassType && s.got > 0 {
		// A read stopped inside a record kept here: the rest of it is read
		// into the connection's own buffer.
		copy(s.buffer(), cp.records[len(cp.records)-s.got:])
	}
	return cp.complete(n) && s.rpass.left == 0
}

// Close closes the connection; a sealed one has no TLS to close.
func (c *TLSConn) Close() error {
	if c.s.Load() != nil {
		return c.g.Close()
	}
	return c.Conn.Close()
}

// Gather starts collecting the records written from now on.
func (c *TLSConn) Gather() {
	_ = c.ready() // a handshake's own writes are not gathered; its error comes with the next Write
	c.g.gather()
}

// Flush sends the records collected since Gather, in one write.
func (c *TLSConn) Flush() error { return c.g.flush() }

// TLSClient runs a TLS client handshake over nc (closed on failure) and
// returns the connection, its records gathered a frame at a time, sealed
// when the server accepts SealedPassALPN or SealedALPN.
func TLSClient(ctx context.Context, nc net.Conn, cfg *tls.Config) (*TLSConn, error) {
	return tlsClientOffering(ctx, nc, cfg, SealedPassALPN, SealedALPN)
}

// tlsClientOffering is TLSClient offering the application protocols
// protos: none, and the connection keeps TLS records.
func tlsClientOffering(ctx context.Context, nc net.Conn, cfg *tls.Config, protos ...string) (*TLSConn, error) {
	cfg = cfg.Clone()
	cfg.NextProtos = protos
	g := newGatherConn(nc)
	c := &TLSConn{Conn: tls.Client(g, cfg), g: g}
	if err := c.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	if err := c.ready(); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return c, nil
}

// NewTLSListener is tls.NewListener whose connections gather their
// records a frame at a time, and seal them with clients that offer
// SealedPassALPN or SealedALPN. Its connections' sessions are not resumed: a server sends
// its tickets after the handshake, where a sealed client expects records.
func NewTLSListener(inner net.Listener, cfg *tls.Config) net.Listener {
	if cfg = cfg.Clone(); cfg == nil {
		cfg = new(tls.Config) // its handshakes fail, as tls.Server's without one
	}
	cfg.NextProtos = []string{SealedPassALPN, SealedALPN}
	cfg.SessionTicketsDisabled = true
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
	return &TLSConn{Conn: tls.Server(g, l.cfg), g: g, server: true}, nil
}

// gatherer is a connection whose writes a Writer brackets, a frame at a
// time (TLSConn).
type gatherer interface {
	Gather()
	Flush() error
}
