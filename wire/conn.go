package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ConnOptions configure a client connection. The zero value is usable:
// EnsureDefaults fills every unset field.
type ConnOptions struct {
	// ClientID is sent in the Ping handshake, for the server's logs.
	// Default: "strato-go".
	ClientID string
	// DialTimeout bounds connecting and the handshake. Default: 5s.
	DialTimeout time.Duration
	// WriteTimeout bounds the writing of one request frame. Default: 30s.
	WriteTimeout time.Duration
	// FrameTimeout bounds the arrival of a response frame once its header
	// began arriving. Default: 30s.
	FrameTimeout time.Duration
	// TLS, when set, makes Dial run a TLS handshake over the TCP
	// connection before PING, and DialLocal over the local socket. Its
	// ServerName defaults to the host of the data address dialed (for
	// DialLocal too: the certificate is the datanode's). Default: nil,
	// plain TCP.
	TLS *tls.Config
}

// Default values of ConnOptions.
const (
	DefaultClientID     = "strato-go"
	DefaultDialTimeout  = 5 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	DefaultFrameTimeout = 30 * time.Second
)

// EnsureDefaults fills unset fields with their defaults.
func (o *ConnOptions) EnsureDefaults() {
	if o.ClientID == "" {
		o.ClientID = DefaultClientID
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.FrameTimeout == 0 {
		o.FrameTimeout = DefaultFrameTimeout
	}
}

// Validate reports the first invalid field.
func (o *ConnOptions) Validate() error {
	switch {
	case len(o.ClientID) > MaxIDLen:
		return fmt.Errorf("wire: ClientID of %d bytes exceeds %d", len(o.ClientID), MaxIDLen)
	case o.DialTimeout < 0 || o.WriteTimeout < 0 || o.FrameTimeout < 0:
		return errors.New("wire: negative timeout")
	}
	return nil
}

// ErrConnClosed is wrapped by the errors of requests that failed because
// their connection closed or broke: the request may or may not have been
// performed (every request type is idempotent; resend it on another
// connection).
var ErrConnClosed = errors.New("wire: connection closed")

// Conn is a client connection to a datanode that multiplexes requests:
// any number of goroutines send requests at once, each waits for its own
// response, matched by request ID, in whatever order the datanode answers.
//
// A request's context bounds the wait for its response; a cancelled
// request's response is discarded when it arrives. Cancelling while the
// request's frame is being written breaks the connection (a partial frame
// cannot be taken back). Any I/O or protocol error closes the connection
// and fails every request in flight with an error wrapping ErrConnClosed;
// error responses from the datanode (*Error) leave it usable.
//
// All methods are safe for concurrent use.
type Conn struct {
	nc   net.Conn
	addr string
	w    *Writer
	r    *Reader
	fds  fdSource // a local socket's (READ_LOCAL responses); nil otherwise

	mu      sync.Mutex
	pending map[uint64]*call
	nextID  uint64
	err     error // why the connection is closed; guarded by mu

	inflight atomic.Int32
	lastUsed atomic.Int64 // unix nanoseconds
	done     chan struct{}

	tokMu     sync.Mutex
	tokens    map[string]*tokenSend // block tokens presented (Authorize)
	tokenFIFO []string              // their order, to forget the oldest
}

// tokenSend is a TOKEN presented, or being presented, on a connection.
type tokenSend struct {
	done chan struct{}
	err  error
}

// MaxGrants is how many block tokens a connection remembers: a datanode
// keeps the grants of the last MaxGrants tokens presented on a connection
// (dropping the oldest), and a Conn presents a token again once it has
// forgotten it.
const MaxGrants = 4096

type call struct {
	typ    Type
	buf    []byte   // where the payload goes, if large enough
	verify bool     // a READ_CHUNK response's payload is verified as it arrives
	capt   *Capture // the request's payload as pass records, to send on (ForwardChunk)
	done   chan struct{}

	msg     Message
	payload []byte
	err     error
}

// Dial connects to a datanode and performs the Ping handshake.
func Dial(ctx context.Context, addr string, opts ConnOptions) (*Conn, error) {
	return connect(ctx, "tcp", addr, addr, opts, func(ctx context.Context, nc net.Conn) (net.Conn, error) {
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		if opts.TLS != nil {
			return tlsClient(ctx, nc, addr, opts.TLS)
		}
		return nc, nil
	})
}

// connect dials target on network within opts.DialTimeout, turns the
// connection into the one to speak on with wrap (which closes it on
// failure), and performs the handshake with the datanode of data address
// addr.
func connect(ctx context.Context, network, target, addr string, opts ConnOptions, wrap func(context.Context, net.Conn) (net.Conn, error)) (*Conn, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, target)
	if err != nil {
		return nil, fmt.Errorf("wire: dial %s: %w", target, err)
	}
	TuneSocket(nc)
	if nc, err = wrap(ctx, nc); err != nil {
		return nil, err
	}
	return handshake(ctx, NewConn(nc, opts), addr, opts)
}

// handshake pings a new connection and sets the version it chose; on
// failure it closes the connection.
func handshake(ctx context.Context, c *Conn, addr string, opts ConnOptions) (*Conn, error) {
	resp, err := c.Ping(ctx, opts.ClientID)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("wire: handshake with %s: %w", addr, err)
	}
	if resp.Version < MinVersion || resp.Version > MaxVersion {
		_ = c.Close()
		return nil, fmt.Errorf("wire: handshake with %s: server chose version %d, this client speaks %d..%d", addr, resp.Version, MinVersion, MaxVersion)
	}
	c.w.SetVersion(resp.Version)
	return c, nil
}

// tlsClient runs a TLS handshake over nc, which it closes on failure.
func tlsClient(ctx context.Context, nc net.Conn, addr string, cfg *tls.Config) (net.Conn, error) {
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc, err := TLSClient(ctx, nc, cfg)
	if err != nil {
		return nil, fmt.Errorf("wire: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// NewConn wraps an established connection without a handshake.
func NewConn(nc net.Conn, opts ConnOptions) *Conn {
	opts.EnsureDefaults()
	c := &Conn{
		nc:      nc,
		addr:    nc.RemoteAddr().String(),
		w:       NewWriter(nc, opts.WriteTimeout),
		r:       NewResponseReader(nc),
		pending: make(map[uint64]*call),
		nextID:  1,
		done:    make(chan struct{}),
	}
	c.fds, _ = nc.(fdSource)
	if tc, ok := nc.(*TLSConn); ok {
		// TLS on a local socket: the descriptors arrive under it.
		c.fds, _ = tc.g.Conn.(fdSource)
	}
	c.r.SetTimeouts(0, opts.FrameTimeout)
	c.lastUsed.Store(time.Now().UnixNano())
	go c.readLoop()
	return c
}

// Addr returns the remote address.
func (c *Conn) Addr() string { return c.addr }

// Version returns the protocol version of the connection's frames: the one
// its PING chose (Version for a Conn made by NewConn without one).
func (c *Conn) Version() uint8 { return c.w.ProtocolVersion() }

// Authorize presents a block token (TOKEN, docs/wire.md §5.9) unless this
// connection presented the same token already: callers call it before
// their first request for the token's block, every time (it costs a map
// lookup once the token is presented). Concurrent callers with the same
// token wait for one TOKEN. An empty token, or a connection of version 1
// (whose datanode cannot check tokens), presents nothing. A refused token
// is an *Error with CodeAccessDenied, and is not remembered.
func (c *Conn) Authorize(ctx context.Context, token []byte) error {
	if len(token) == 0 || c.Version() < VersionToken {
		return nil
	}
	key := string(token)
	c.tokMu.Lock()
	if c.tokens == nil {
		c.tokens = make(map[string]*tokenSend)
	}
	ts := c.tokens[key]
	if ts == nil {
		ts = &tokenSend{done: make(chan struct{})}
		c.tokens[key] = ts
		c.tokenFIFO = append(c.tokenFIFO, key)
		if len(c.tokenFIFO) > MaxGrants {
			delete(c.tokens, c.tokenFIFO[0])
			c.tokenFIFO = c.tokenFIFO[1:]
		}
		c.tokMu.Unlock()
		_, _, ts.err = c.Do(ctx, &TokenRequest{}, token, nil)
		if ts.err != nil {
			c.forgetToken(key, ts)
		}
		close(ts.done)
		return ts.err
	}
	c.tokMu.Unlock()
	select {
	case <-ts.done:
		return ts.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Conn) forgetToken(key string, ts *tokenSend) {
	c.tokMu.Lock()
	defer c.tokMu.Unlock()
	if c.tokens[key] == ts {
		delete(c.tokens, key)
		for i, k := range c.tokenFIFO {
			if k == key {
				c.tokenFIFO = append(c.tokenFIFO[:i], c.tokenFIFO[i+1:]...)
				break
			}
		}
	}
}

// Err returns why the connection closed, or nil while it is usable.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// InFlight returns the number of requests waiting for their response.
func (c *Conn) InFlight() int { return int(c.inflight.Load()) }

// Close closes the connection; requests in flight fail with ErrConnClosed.
func (c *Conn) Close() error {
	c.fail(ErrConnClosed)
	<-c.done
	return nil
}

// fail closes the connection for err (the first reason sticks) and fails
// every pending call.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	if !errors.Is(err, ErrConnClosed) {
		err = fmt.Errorf("%w: %s: %w", ErrConnClosed, c.addr, err)
	}
	c.err = err
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	_ = c.nc.Close()
	for _, cl := range pending {
		cl.err = err
		close(cl.done)
	}
}

func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		h, m, err := c.r.Next()
		if err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		cl := c.pending[h.RequestID]
		delete(c.pending, h.RequestID)
		c.mu.Unlock()
		if cl == nil {
			if e, ok := m.(*Error); ok && h.RequestID == 0 {
				// A connection-level error: the server closes next.
				c.fail(e)
				return
			}
			// The caller gave up; drop the response (and the files that
			// came with it).
			if rl, ok := m.(*ReadLocalResponse); ok {
				if err := c.takeFiles(rl); err != nil {
					c.fail(err)
					return
				}
				rl.Close()
			}
			if err := c.r.Discard(); err != nil {
				c.fail(err)
				return
			}
			continue
		}
		if h.Type != cl.typ && (!h.IsError() || h.Type != TypeNone) {
			err := Errorf(CodeProtocol, "response of type %v to a %v request (ID %d)", h.Type, cl.typ, h.RequestID)
			cl.err = fmt.Errorf("%w: %s: %w", ErrConnClosed, c.addr, err)
			close(cl.done)
			c.fail(err)
			return
		}
		if err := c.readPayload(cl, h, m); err != nil {
			cl.err = fmt.Errorf("%w: %s: %w", ErrConnClosed, c.addr, err)
			close(cl.done)
			c.fail(err)
			return
		}
		close(cl.done)
	}
}

func (c *Conn) readPayload(cl *call, h FrameHeader, m Message) error {
	cl.msg = m
	if e, ok := m.(*Error); ok {
		cl.err = e
		return nil
	}
	if rl, ok := m.(*ReadLocalResponse); ok {
		return c.takeFiles(rl)
	}
	if n := int(h.PayloadLen); n > 0 {
		p := cl.buf
		if cap(p) < n {
			p = make([]byte, n)
		}
		p = p[:n]
		if rc, ok := m.(*ReadChunkResponse); ok && cl.verify {
			if err := c.readVerified(cl, rc, p); err != nil {
				return err
			}
		} else if err := c.r.ReadPayload(p); err != nil {
			return err
		}
		cl.payload = p
	}
	if g, ok := m.(payloadDecoder); ok {
		// GET_BLOCK's and LIST_BLOCKS's records: they alias the
		// payload, a slice of their own.
		if err := g.DecodePayload(cl.payload); err != nil {
			return err
		}
		cl.payload = nil
	}
	return nil
}

// Do sends request m with payload and waits for the response. If the
// response has a payload and buf has room for it, the payload is read into
// buf; otherwise into a new slice. An error response is returned as *Error.
//
// When Do returns, nothing touches payload or buf any more: if ctx ends
// while the response's payload is being read into buf, Do waits for that
// read to finish (bounded by ConnOptions.FrameTimeout) and returns the
// response.
func (c *Conn) Do(ctx context.Context, m Message, payload, buf []byte) (Message, []byte, error) {
	return c.do(ctx, m, payload, &call{buf: buf})
}

// do is Do with the call prepared by the caller (its buf and verify).
func (c *Conn) do(ctx context.Context, m Message, payload []byte, cl *call) (Message, []byte, error) {
	if m.response() {
		return nil, nil, errors.New("wire: Do with a response message")
	}
	cl.typ, cl.done = m.Type(), make(chan struct{})
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, nil, err
	}
	id := c.nextID
	c.nextID++
	c.pending[id] = cl
	c.mu.Unlock()
	c.inflight.Add(1)
	defer func() {
		c.inflight.Add(-1)
		c.lastUsed.Store(time.Now().UnixNano())
	}()

	if err := c.w.writeMessage(ctx, id, m, payload, cl.capt); err != nil {
		if !errors.Is(err, ErrWriterBroken) {
			// Nothing was written (the context ended while waiting for
			// the connection, or the header is too large): the
			// connection is fine.
			c.forget(id)
			return nil, nil, err
		}
		c.fail(err)
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrConnClosed, c.addr, err)
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		if c.forget(id) {
			return nil, nil, ctx.Err()
		}
		// The reader owns the call: it is reading the response now.
		<-cl.done
	}
	return cl.msg, cl.payload, cl.err
}

// forget removes a pending call; false means the reader already took it
// (or the connection failed it).
func (c *Conn) forget(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		return true
	}
	return false
}

// Ping sends a Ping with this package's version range.
func (c *Conn) Ping(ctx context.Context, clientID string) (*PingResponse, error) {
	m, _, err := c.Do(ctx, &PingRequest{MinVersion: MinVersion, MaxVersion: MaxVersion, ClientID: clientID}, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*PingResponse), nil
}

// WriteChunk writes data as the chunk described by req (req.Length is set
// from len(data)). With followers listed, the datanode acknowledges only
// when every replica holds the chunk.
func (c *Conn) WriteChunk(ctx context.Context, req *WriteChunkRequest, data []byte) error {
	return c.ForwardChunk(ctx, req, data, nil)
}

// PassRecords reports whether the connection takes pass records
// (TLSConn.PassRecords): ForwardChunk sends a kept payload as it came.
func (c *Conn) PassRecords() bool {
	tc, ok := c.nc.(*TLSConn)
	return ok && tc.PassRecords()
}

// ForwardChunk is WriteChunk for a pipeline leader whose chunk data
// arrived as the pass records cp kept (nil: it did not): they go to the
// follower as they are when its connection takes them (decision 0112).
func (c *Conn) ForwardChunk(ctx context.Context, req *WriteChunkRequest, data []byte, cp *Capture) error {
	r := *req
	r.Length = uint32(len(data))
	_, _, err := c.do(ctx, &r, data, &call{capt: cp})
	return err
}

// PutBlock commits a block's length.
func (c *Conn) PutBlock(ctx context.Context, req *PutBlockRequest) (*PutBlockResponse, error) {
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*PutBlockResponse), nil
}

// WriteCommit writes data as a block's chunk and commits the block at the
// chunk's end (req.Length is set from len(data)): one WRITE_COMMIT on a
// connection of version 3 or later, a WRITE_CHUNK and then a PUT_BLOCK on
// an older one.
func (c *Conn) WriteCommit(ctx context.Context, req *WriteCommitRequest, data []byte) (*WriteCommitResponse, error) {
	return c.ForwardCommit(ctx, req, data, nil)
}

// ForwardCommit is WriteCommit for a pipeline leader, as ForwardChunk.
func (c *Conn) ForwardCommit(ctx context.Context, req *WriteCommitRequest, data []byte, cp *Capture) (*WriteCommitResponse, error) {
	r := *req
	r.Length = uint32(len(data))
	if c.Version() < VersionWriteCommit {
		if err := c.ForwardChunk(ctx, r.Write(), data, cp); err != nil {
			return nil, err
		}
		pr, err := c.PutBlock(ctx, r.Put())
		if err != nil {
			return nil, err
		}
		return &WriteCommitResponse{BCSID: pr.BCSID}, nil
	}
	m, _, err := c.do(ctx, &r, data, &call{capt: cp})
	if err != nil {
		return nil, err
	}
	return m.(*WriteCommitResponse), nil
}

// ReadChunk reads a range of a block. It returns the response, whose
// Offset and Chunks describe the payload (widened to checksum windows), and
// the payload, read into buf if it has room. The caller verifies the
// payload (ReadChunkResponse.Verify) and takes its range
// (ReadChunkResponse.Range).
func (c *Conn) ReadChunk(ctx context.Context, req *ReadChunkRequest, buf []byte) (*ReadChunkResponse, []byte, error) {
	m, p, err := c.Do(ctx, req, nil, buf)
	if err != nil {
		return nil, nil, err
	}
	return m.(*ReadChunkResponse), p, nil
}

// ReadChunkVerified is ReadChunk with the payload verified against the
// response's checksums while it arrives, each piece right after it is read
// (while it is still in the CPU's cache): the caller need not verify it. A
// bad window fails the call with an *Error of CodeChecksumMismatch that
// also wraps checksum.ErrMismatch's *checksum.MismatchError; the
// connection stays usable.
func (c *Conn) ReadChunkVerified(ctx context.Context, req *ReadChunkRequest, buf []byte) (*ReadChunkResponse, []byte, error) {
	m, p, err := c.do(ctx, req, nil, &call{buf: buf, verify: true})
	if err != nil {
		return nil, nil, err
	}
	return m.(*ReadChunkResponse), p, nil
}

// GetBlock returns a block's committed state.
func (c *Conn) GetBlock(ctx context.Context, req *GetBlockRequest) (*GetBlockResponse, error) {
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*GetBlockResponse), nil
}

// CloseContainer closes a container on the datanode.
func (c *Conn) CloseContainer(ctx context.Context, req *CloseContainerRequest) (*CloseContainerResponse, error) {
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*CloseContainerResponse), nil
}

// ListBlocks returns a page of a container's block records (a datanode
// rebuilding an erasure coded replica asks the surviving ones).
func (c *Conn) ListBlocks(ctx context.Context, req *ListBlocksRequest) (*ListBlocksResponse, error) {
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*ListBlocksResponse), nil
}
