package datanode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/wire"
)

// ServerOptions configure the data server. The zero value is usable:
// EnsureDefaults fills every unset field.
type ServerOptions struct {
	// ID is the datanode's ID, reported in PING responses. Default: "".
	ID string
	// Clock is the time block tokens are checked against. Default: the
	// real clock.
	Clock clockwork.Clock
	// Logger. Default: slog.Default().
	Logger *slog.Logger
	// MaxInFlightPerConn is how many requests of one connection are handled
	// at once; the server reads no further frames from the connection until
	// one completes. Default: 32.
	MaxInFlightPerConn int
	// MaxBufferedBytes bounds the request payloads held in memory at once,
	// separately for requests with followers (pipeline leaders, which wait
	// for other datanodes) and without (which never do, so leaders waiting
	// on each other cannot starve followers; a leader's chunk kept as the
	// pass records it arrived in counts twice, decision 0112). Default:
	// 512 MiB.
	MaxBufferedBytes int64
	// IdleTimeout closes a connection that sent no frame for that long.
	// Default: 5 minutes.
	IdleTimeout time.Duration
	// FrameTimeout bounds the arrival of a frame once its header began
	// arriving; a client that stalls mid-frame is disconnected and its
	// partial request dropped. Default: 30s.
	FrameTimeout time.Duration
	// WriteTimeout bounds the writing of one response frame. Default: 30s.
	WriteTimeout time.Duration
	// ForwardTimeout bounds a request forwarded to a follower, from getting
	// a connection to its answer. Default: 30s.
	ForwardTimeout time.Duration
	// Forward configures the connections to followers. Default: the
	// wire.PoolOptions defaults, with ClientID "datanode <ID>".
	Forward wire.PoolOptions
	// DisableSendfile makes reads go through memory even when the volumes
	// are OS files that could be sent with sendfile.
	DisableSendfile bool
	// NoWriteCache writes every replica around the page cache where the
	// store allows it (O_DIRECT): the pipeline leader's copy and a ONE
	// block's too, which by default go through it so that a read soon
	// after the write finds them in memory. For data not read back soon
	// (bulk ingest, backups), whose reads then come from the disk; HDFS's
	// dfs.datanode.drop.cache.behind.writes serves the same need.
	NoWriteCache bool
	// LocalReads serves READ_LOCAL_PATHS to clients on this host (docs/
	// wire.md §5.12): the paths of a range's files, which they read
	// themselves. A Datanode sets it when it serves its local socket.
	LocalReads bool
	// Replication counts the containers imported by the server (and, in a
	// Datanode, those its agent pushes). Default: counted apart.
	Replication *replication.Metrics
	// Foreground is told of every client request (chunks written, read or
	// committed, blocks put); imports marked background give way to them
	// (decision 0098), and so do, in a Datanode, its agent's background
	// pushes. Default: a Foreground of the server's own.
	Foreground *replication.Foreground
	// Observe, when set, is told of every request answered (container
	// imports and PING aside): its type, its outcome (0 for success, else
	// the error's code) and the time from its arrival to its response
	// being written (a pipeline leader's includes its followers'). It is
	// called from the request's goroutine and must be fast and safe for
	// concurrent use. Default: none.
	Observe func(t wire.Type, code wire.Code, d time.Duration)
	// TracerProvider, when set, makes a span of every request handled
	// (container imports and PING aside), the child of the caller's span
	// that the request carries (wire.RequestContext). Default: nil, no
	// tracing.
	TracerProvider trace.TracerProvider
}

// Default values of ServerOptions.
const (
	DefaultMaxInFlightPerConn = 32
	DefaultMaxBufferedBytes   = 512 << 20
	DefaultIdleTimeout        = 5 * time.Minute
	DefaultFrameTimeout       = 30 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultForwardTimeout     = 30 * time.Second
)

// EnsureDefaults fills unset fields with their defaults.
func (o *ServerOptions) EnsureDefaults() {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxInFlightPerConn == 0 {
		o.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if o.MaxBufferedBytes == 0 {
		o.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.FrameTimeout == 0 {
		o.FrameTimeout = DefaultFrameTimeout
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ForwardTimeout == 0 {
		o.ForwardTimeout = DefaultForwardTimeout
	}
	if o.Replication == nil {
		o.Replication = &replication.Metrics{}
	}
	if o.Foreground == nil {
		o.Foreground = replication.NewForeground(0, 0, o.Clock)
	}
	if o.Forward.Conn.ClientID == "" {
		o.Forward.Conn.ClientID = "datanode " + o.ID
	}
	o.Forward.EnsureDefaults()
}

// Validate reports the first invalid field.
func (o *ServerOptions) Validate() error {
	switch {
	case len(o.ID) > wire.MaxIDLen:
		return fmt.Errorf("datanode: ID of %d bytes exceeds %d", len(o.ID), wire.MaxIDLen)
	case o.MaxInFlightPerConn < 1:
		return fmt.Errorf("datanode: MaxInFlightPerConn %d must be at least 1", o.MaxInFlightPerConn)
	case o.MaxBufferedBytes < wire.MaxRequestPayload:
		return fmt.Errorf("datanode: MaxBufferedBytes %d must hold one request payload (%d)", o.MaxBufferedBytes, wire.MaxRequestPayload)
	case o.IdleTimeout < 0 || o.FrameTimeout < 0 || o.WriteTimeout < 0 || o.ForwardTimeout < 0:
		return errors.New("datanode: negative timeout")
	}
	return o.Forward.Validate()
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("datanode: server closed")

// Server serves the data protocol (docs/wire.md) over a Store: it writes
// chunks and forwards them to the followers of a pipeline, commits blocks,
// and sends block data with sendfile. See the package documentation for
// its concurrency.
type Server struct {
	store *Store
	opts  ServerOptions
	log   *slog.Logger
	err   error // invalid options, reported by Serve

	ctx    context.Context // ends with Close: aborts forwards
	cancel context.CancelFunc
	pool   *wire.Pool

	leaderMem, followerMem *budget
	tokens                 blockTokens  // blocktoken.go
	tracer                 trace.Tracer // nil: no tracing

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closed    bool
	wg        sync.WaitGroup

	m metrics
}

// NewServer returns a server over store. Invalid options are reported by
// Serve.
func NewServer(store *Store, opts ServerOptions) *Server {
	opts.EnsureDefaults()
	s := &Server{
		store:       store,
		opts:        opts,
		log:         opts.Logger,
		listeners:   make(map[net.Listener]struct{}),
		conns:       make(map[*conn]struct{}),
		leaderMem:   newBudget(opts.MaxBufferedBytes),
		followerMem: newBudget(opts.MaxBufferedBytes),
	}
	if opts.TracerProvider != nil {
		s.tracer = opts.TracerProvider.Tracer("github.com/strato-io/strato/datanode")
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.err = opts.Validate(); s.err == nil {
		s.pool, s.err = wire.NewPool(opts.Forward)
	}
	return s
}

// Serve accepts connections on l until Close, and returns ErrServerClosed
// then. Each connection is served by its own goroutines. Serve may be
// called for several listeners.
func (s *Server) Serve(l net.Listener) error {
	if s.err != nil {
		return s.err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	backoff := time.Duration(0)
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("datanode: accept failed; retrying", "err", err, "backoff", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		wire.TuneSocket(nc) // a TLS listener's connections are tuned by it
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = nc.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.m.connsAccepted.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops accepting, closes every connection, aborts forwards in
// flight, and waits for the requests being handled to finish. It does not
// close the Store.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var errs []error
	for l := range s.listeners {
		errs = append(errs, l.Close())
	}
	for c := range s.conns {
		_ = c.nc.Close()
	}
	s.mu.Unlock()
	s.cancel()
	s.leaderMem.wake()
	s.followerMem.wake()
	s.wg.Wait()
	if s.pool != nil {
		errs = append(errs, s.pool.Close())
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return err
		}
	}
	return nil
}

// ServerMetrics is a snapshot of the server's counters.
type ServerMetrics struct {
	// ConnsOpen is the number of connections being served; ConnsAccepted
	// counts every connection since the start.
	ConnsOpen, ConnsAccepted int64
	// Requests counts the requests handled; Errors those answered with an
	// error.
	Requests, Errors int64
	// BytesIn counts chunk bytes received; BytesOut block bytes sent.
	BytesIn, BytesOut int64
	// Forwarded counts requests sent to followers; ForwardErrors those that
	// failed.
	Forwarded, ForwardErrors int64
	// ForwardedSealed counts the chunk bytes sent to followers as the pass
	// records they arrived in, sealed by the client and not again here
	// (decision 0112).
	ForwardedSealed int64
	// Tokens counts the block tokens verified; TokensRefused those refused.
	Tokens, TokensRefused int64
	// LocalReads counts the READ_LOCAL requests answered with files;
	// LocalBytes the block bytes those files were handed out for.
	LocalReads, LocalBytes int64
}

type metrics struct {
	connsAccepted, requests, errors, bytesIn, bytesOut, forwarded, forwardErrors atomic.Int64
	forwardedSealed, tokens, tokensRefused, localReads, localBytes               atomic.Int64
}

// Metrics returns a snapshot of the server's counters.
func (s *Server) Metrics() ServerMetrics {
	s.mu.Lock()
	open := int64(len(s.conns))
	s.mu.Unlock()
	return ServerMetrics{
		ConnsOpen: open, ConnsAccepted: s.m.connsAccepted.Load(),
		Requests: s.m.requests.Load(), Errors: s.m.errors.Load(),
		BytesIn: s.m.bytesIn.Load(), BytesOut: s.m.bytesOut.Load(),
		Forwarded: s.m.forwarded.Load(), ForwardErrors: s.m.forwardErrors.Load(), ForwardedSealed: s.m.forwardedSealed.Load(),
		Tokens: s.m.tokens.Load(), TokensRefused: s.m.tokensRefused.Load(),
		LocalReads: s.m.localReads.Load(), LocalBytes: s.m.localBytes.Load(),
	}
}

// conn is one client connection: a reader goroutine (serve) that starts a
// goroutine per request, and a Writer that the request goroutines share.
type conn struct {
	s     *Server
	nc    net.Conn
	tcp   *net.TCPConn // for sendfile; nil for other connections (TLS ones too)
	local bool         // on the local socket (plain or TLS): READ_LOCAL is served
	// sameHost: on the local socket, or on TCP (plain or TLS) from a
	// loopback address (a process of this host): READ_LOCAL_PATHS is
	// served (with LocalReads).
	sameHost bool
	r        *wire.Reader
	w        *wire.Writer
	slots    chan struct{}
	wg       sync.WaitGroup
	remote   string
	// peer: the other end is a datanode (its PING's client ID is
	// "datanode <ID>"): the chunks it sends are a follower's copies.
	peer atomic.Bool
	// grants are the block tokens verified on the connection.
	grants grants
	// chose is the version the connection's PING chose (0: no PING).
	chose atomic.Uint32
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{
		s:      s,
		nc:     nc,
		r:      wire.NewRequestReader(nc),
		w:      wire.NewWriter(nc, s.opts.WriteTimeout),
		slots:  make(chan struct{}, s.opts.MaxInFlightPerConn),
		remote: nc.RemoteAddr().String(),
	}
	c.tcp, _ = nc.(*net.TCPConn)
	// A local socket's connection, plain or TLS (whose addresses are the
	// socket's).
	_, c.local = nc.LocalAddr().(*net.UnixAddr)
	c.sameHost = c.local || loopback(nc.RemoteAddr())
	c.r.SetTimeouts(s.opts.IdleTimeout, s.opts.FrameTimeout)
	return c
}

// serve reads requests until the connection ends, then waits for the
// requests in flight and closes it.
func (c *conn) serve() {
	defer func() {
		c.wg.Wait()
		_ = c.nc.Close()
	}()
	ctx := c.s.ctx
	for {
		select {
		case c.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		if !c.next(ctx) {
			return
		}
	}
}

// next reads one request and starts its handling; false ends the
// connection. The caller holds a slot, which next or the handler releases.
func (c *conn) next(ctx context.Context) bool {
	release := func() { <-c.slots }
	h, m, err := c.r.Next()
	rc := c.r.Context()
	if err != nil {
		release()
		var e *wire.Error
		if !errors.As(err, &e) {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				c.s.log.Debug("datanode: connection ended", "remote", c.remote, "err", err)
			}
			return false
		}
		c.s.m.errors.Add(1)
		if e.Code == wire.CodeProtocol {
			// The stream cannot be trusted: say why, and hang up.
			c.s.log.Info("datanode: protocol error; closing the connection", "remote", c.remote, "err", e)
			_ = c.w.WriteError(ctx, h.Type, h.RequestID, e)
			return false
		}
		// The frame's boundaries are sound: answer it, skip its payload.
		c.s.log.Debug("datanode: bad request", "remote", c.remote, "type", h.Type, "id", h.RequestID, "err", e)
		return c.w.WriteError(ctx, h.Type, h.RequestID, e) == nil
	}
	c.s.m.requests.Add(1)
	if p, ok := m.(*wire.PingRequest); ok {
		release()
		return c.ping(ctx, h, p)
	}
	if b, ok := m.(*wire.ImportBeginRequest); ok {
		release()
		if _, err := c.authorize(b); err != nil {
			// Like any error of an import: answer, and hang up.
			c.replyError(ctx, h, err)
			return false
		}
		return c.importSession(ctx, h, b)
	}
	if _, ok := m.(*wire.TokenRequest); ok {
		release()
		raw := make([]byte, c.r.Remaining()) // at most wire.MaxTokenLen
		if err := c.r.ReadPayload(raw); err != nil {
			return false
		}
		return c.presentToken(ctx, h, raw)
	}

	var (
		payload []byte
		buf     *[]byte
		mem     *budget
		need    int64 // of mem
		check   arrival
	)
	if n := c.r.Remaining(); n > 0 {
		mem = c.s.followerMem
		leader := false
		switch w := m.(type) {
		case *wire.WriteChunkRequest:
			leader = len(w.Followers) > 0
		case *wire.WriteCommitRequest:
			leader = len(w.Followers) > 0
		}
		// A leader's chunk that may come as pass records is kept as it
		// came too, to be sent on as it is (decision 0112).
		tc, _ := c.nc.(*wire.TLSConn)
		keep := leader && n >= wire.PassMin && tc != nil && tc.PassRecords()
		need = n
		if leader {
			mem = c.s.leaderMem
		}
		if keep {
			need += int64(wire.SealedLen(int(n)))
		}
		ok, waited := mem.acquire(ctx, need)
		if !ok {
			release()
			return false
		}
		if waited {
			c.r.RefreshFrameTimeout()
		}
		buf = getBuffer(int(n))
		payload = (*buf)[:n]
		var sealed *wire.Capture
		if keep {
			sealed = getCapture()
			tc.Capture(sealed)
		}
		var err error
		if sums, ok := chunkSums(m); ok {
			check, err = readVerified(c.r, payload, sums)
		} else {
			err = c.r.ReadPayload(payload)
		}
		if sealed != nil {
			if tc.EndCapture(len(payload)) && err == nil {
				check.sealed = sealed
			} else {
				putCapture(sealed)
			}
		}
		if err != nil {
			// Truncated: the request is dropped, nothing of it written.
			putBuffer(buf)
			mem.release(need)
			release()
			c.s.log.Debug("datanode: connection ended inside a frame", "remote", c.remote, "type", h.Type, "id", h.RequestID, "err", err)
			return false
		}
	}
	c.wg.Add(1)
	go func() {
		defer func() {
			if buf != nil {
				putBuffer(buf)
				if check.sealed != nil {
					putCapture(check.sealed)
				}
				mem.release(need)
			}
			release()
			c.wg.Done()
		}()
		c.handle(rc.Into(ctx), h, m, payload, check)
	}()
	return true
}

func (c *conn) ping(ctx context.Context, h wire.FrameHeader, p *wire.PingRequest) bool {
	if p.MaxVersion < wire.MinVersion || p.MinVersion > wire.MaxVersion {
		e := wire.Errorf(wire.CodeUnsupportedVersion, "client speaks versions %d..%d, this datanode %d..%d", p.MinVersion, p.MaxVersion, wire.MinVersion, wire.MaxVersion)
		return c.w.WriteError(ctx, h.Type, h.RequestID, e) == nil
	}
	c.s.log.Debug("datanode: ping", "remote", c.remote, "client", p.ClientID)
	c.peer.Store(strings.HasPrefix(p.ClientID, "datanode "))
	v := min(p.MaxVersion, wire.MaxVersion)
	c.w.SetVersion(v)
	c.chose.Store(uint32(v))
	resp := &wire.PingResponse{
		Version:     v,
		MinVersion:  wire.MinVersion,
		MaxVersion:  wire.MaxVersion,
		MaxChunkLen: uint32(min(c.s.store.maxChunk(), wire.MaxChunkLen)),
		ServerID:    c.s.opts.ID,
	}
	return c.w.WriteMessage(ctx, h.RequestID, resp, nil) == nil
}

// budget is a counting semaphore of bytes.
type budget struct {
	mu      sync.Mutex
	cond    *sync.Cond
	avail   int64
	max     int64
	waiters int
}

func newBudget(n int64) *budget {
	b := &budget{avail: n, max: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire waits for n bytes (at most the whole budget); ok is false if ctx
// ended first, waited tells whether it had to wait.
func (b *budget) acquire(ctx context.Context, n int64) (ok, waited bool) {
	n = min(n, b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.avail < n {
		if ctx.Err() != nil {
			return false, waited
		}
		waited = true
		b.waiters++
		b.cond.Wait()
		b.waiters--
	}
	b.avail -= n
	return true, waited
}

func (b *budget) release(n int64) {
	n = min(n, b.max)
	b.mu.Lock()
	b.avail += n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// wake makes waiters re-check their context.
func (b *budget) wake() {
	b.mu.Lock()
	b.cond.Broadcast()
	b.mu.Unlock()
}

// Payload buffers come from pools by power-of-two size class, aligned to
// 4 KiB so that the container store can write large chunks with O_DIRECT.
const (
	minBufferShift = 16 // 64 KiB
	maxBufferShift = 25 // 32 MiB
	bufferAlign    = container.DirectAlign
)

var bufferPools [maxBufferShift - minBufferShift + 1]sync.Pool

func bufferClass(n int) int {
	c := 0
	for 1<<(minBufferShift+c) < n {
		c++
	}
	return c
}

func getBuffer(n int) *[]byte {
	c := bufferClass(n)
	if c >= len(bufferPools) {
		b := container.AlignedBuffer(n)
		return &b
	}
	if b, ok := bufferPools[c].Get().(*[]byte); ok {
		return b
	}
	b := container.AlignedBuffer(1 << (minBufferShift + c))
	return &b
}

func putBuffer(b *[]byte) {
	c := bufferClass(cap(*b))
	if c < len(bufferPools) && cap(*b) == 1<<(minBufferShift+c) {
		*b = (*b)[:cap(*b)]
		bufferPools[c].Put(b)
	}
}

// loopback reports whether a connection's remote address is a loopback
// address: the peer is a process of this host (of this network namespace).
func loopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// arrival is what reading a chunk's payload found.
type arrival struct {
	// done: the payload was checked against its checksums as it arrived.
	done bool
	// err is the first mismatch found (with done).
	err error
	// sealed holds the pass records the payload of a pipeline leader's
	// chunk arrived in (nil: it came otherwise), which go to followers as
	// they are (decision 0112).
	sealed *wire.Capture
}

// capturePool holds the buffers of pass records kept.
var capturePool = sync.Pool{New: func() any { return new(wire.Capture) }}

func getCapture() *wire.Capture  { return capturePool.Get().(*wire.Capture) }
func putCapture(c *wire.Capture) { capturePool.Put(c) }

// chunkSums returns the checksums of the chunk m carries, if it carries one
// with checksums to check.
func chunkSums(m wire.Message) (checksum.Data, bool) {
	var sums checksum.Data
	switch m := m.(type) {
	case *wire.WriteChunkRequest:
		sums = m.Checksums
	case *wire.WriteCommitRequest:
		sums = m.Checksums
	default:
		return sums, false
	}
	return sums, sums.Type != checksum.NONE
}

// verifyReadSize bounds each read of a chunk checked as it arrives: the
// bytes of one read are checked while they are still in the core's cache
// from the socket's copy (512 KiB of L2 on the machines measured). Checked
// after the whole 4 MiB chunk is in, they came from memory again, at a
// third of the speed: in BenchmarkPipelineWriteChunk4MiB the CRC took
// 0.48-0.54 s for 2.4 GB checked that way, 0.15-0.17 s in reads of this
// size, 0.21-0.29 s in reads of 256 KiB.
const verifyReadSize = 128 << 10

// readVerified reads a chunk's payload into p and checks each window of it
// against sums as soon as the window has arrived, in reads of at most
// verifyReadSize. A mismatch does not stop the reading (the stream stays
// in step): it is returned in the sumsCheck, and err is for the connection
// alone.
func readVerified(r *wire.Reader, p []byte, sums checksum.Data) (check arrival, err error) {
	if sums.Validate() != nil || sums.Count() != checksum.Windows(int64(len(p)), sums.BytesPerChecksum) {
		return check, r.ReadPayload(p) // malformed: the write refuses it whole
	}
	bpc := int(sums.BytesPerChecksum)
	got, checked := 0, 0
	for got < len(p) {
		n, err := r.ReadPayloadSome(p[got:min(len(p), got+verifyReadSize)])
		if err != nil {
			return check, err
		}
		got += n
		upto := got - got%bpc
		if got == len(p) {
			upto = got
		}
		if upto > checked && check.err == nil {
			check.err = checksum.Verify(sums, int64(checked), p[checked:upto])
			checked = upto
		}
	}
	check.done = true
	return check, nil
}
