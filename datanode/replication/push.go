package replication

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

// Errors of Push, classified with errors.Is. Errors from the target are
// *wire.Error: errors.Is(err, wire.CodeContainerExists) and so on.
var (
	// ErrNotClosed is returned for a container that is not CLOSED: only
	// immutable containers are copied.
	ErrNotClosed = errors.New("replication: container is not closed")
	// ErrTooLarge is returned for a container whose block rows do not fit
	// in an IMPORT_BEGIN payload.
	ErrTooLarge = errors.New("replication: container metadata too large for one IMPORT_BEGIN")
)

// Source is where Push finds containers: a datanode's Store.
type Source interface {
	Container(id uint64) (*container.Container, error)
}

// Options configure a Push. The zero value works: no limits, no metrics.
type Options struct {
	// Limits are shared by all the pushes of a datanode. Default: none.
	Limits *Limits
	// Pace is a second bandwidth cap, shared by the pushes of one kind (a
	// container balancer's moves: ReplicateContainerCommand.bandwidth).
	// Default: none.
	Pace *Limits
	// Foreground, when set, makes the push a background one (a container
	// balancer's move): it gives way to the source's clients, and its
	// IMPORT_BEGIN asks the target to give way to its own. Default: nil,
	// the push never waits for clients.
	Foreground *Foreground
	// Metrics are shared by all the pushes of a datanode. Default: none.
	Metrics *Metrics
	// FS is the filesystem of the source's volumes. With vfs.Default (the
	// default) block files are sent with sendfile; otherwise they are read
	// through FS into memory.
	FS vfs.FS
	// FrameSize is the largest IMPORT_DATA payload. Default: 8 MiB, at most
	// wire.MaxRequestPayload.
	FrameSize int64
	// IOTimeout bounds connecting, each piece written and the wait for
	// each answer (the target verifies a whole container before answering
	// IMPORT_COMMIT, so that one is allowed ten times as long). Default: 60s.
	IOTimeout time.Duration
	// TLS, when set, secures the connection to the target (a TLS
	// handshake before PING); block files are then copied through memory,
	// not sent with sendfile. Default: nil, plain TCP.
	TLS *tls.Config
	// ClientID names the source in the target's logs.
	ClientID string
	// Token is the container token (WRITE on the container) meta gave the
	// copy (ReplicateContainerCommand.token), presented with TOKEN before
	// IMPORT_BEGIN; a target that requires block tokens refuses the import
	// without it. Default: none.
	Token []byte
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// Default values of Options.
const (
	DefaultFrameSize = 8 << 20
	DefaultIOTimeout = 60 * time.Second
)

func (o *Options) ensureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.FrameSize <= 0 {
		o.FrameSize = DefaultFrameSize
	}
	o.FrameSize = min(o.FrameSize, wire.MaxRequestPayload)
	if o.IOTimeout <= 0 {
		o.IOTimeout = DefaultIOTimeout
	}
	if o.Metrics == nil {
		o.Metrics = &Metrics{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Stats describe a finished push.
type Stats struct {
	Blocks int64
	// Bytes is the block bytes sent.
	Bytes int64
	// BCSID is the container's bcsID, as the target committed it.
	BCSID uint64
	// Waited is the time spent waiting for a stream slot; Elapsed the time
	// of the transfer after it.
	Waited, Elapsed time.Duration
}

// Push copies CLOSED container id of src to the datanode at addr, which
// verifies it and registers it CLOSED. It waits for a stream slot of
// opts.Limits first. On any error the target keeps nothing (it aborts the
// import when the connection ends before IMPORT_COMMIT succeeded).
func Push(ctx context.Context, src Source, id uint64, addr string, opts Options) (Stats, error) {
	opts.ensureDefaults()
	m := opts.Metrics
	m.pushesInFlight.Add(1)
	defer m.pushesInFlight.Add(-1)
	st, err := push(ctx, src, id, addr, &opts)
	if err != nil {
		m.pushesFailed.Add(1)
		return st, fmt.Errorf("replication: push container %d to %s: %w", id, addr, err)
	}
	m.pushesCompleted.Add(1)
	return st, nil
}

func push(ctx context.Context, src Source, id uint64, addr string, opts *Options) (Stats, error) {
	var st Stats
	c, err := src.Container(id)
	if err != nil {
		return st, err
	}
	if s := c.State(); s != container.Closed {
		return st, fmt.Errorf("%w: container %d is %v", ErrNotClosed, id, s)
	}
	start := time.Now()
	if err := opts.Limits.acquire(ctx); err != nil {
		return st, err
	}
	defer opts.Limits.release()
	st.Waited = time.Since(start)
	// The blocks listed must stay until they are sent: a deletion of dead
	// blocks waits (meta sends it again) rather than fail the copy.
	release := c.HoldBlocks()
	defer release()
	info := c.Info()
	begin := &wire.ImportBeginRequest{ContainerID: id, Layout: uint8(c.Layout()), BCSID: info.BCSID,
		Background: opts.Foreground != nil}
	blocks, err := AllBlocks(c)
	if err != nil {
		return st, err
	}
	size := 0
	for _, b := range blocks {
		ib := wire.ImportBlock{LocalID: b.LocalID, Length: b.Length, BCSID: b.BCSID, Chunks: make([]wire.Chunk, len(b.Chunks))}
		for i, ch := range b.Chunks {
			ib.Chunks[i] = wire.Chunk{Offset: ch.Offset, Length: uint32(ch.Length), Checksums: ch.Checksums}
			size += 21 + len(ch.Checksums.Sums)
		}
		size += 28
		begin.Blocks = append(begin.Blocks, ib)
		begin.TotalBytes += b.Length
	}
	if size > wire.MaxRequestPayload {
		return st, fmt.Errorf("%w: %d bytes of block records", ErrTooLarge, size)
	}

	start = time.Now()
	s, err := dial(ctx, addr, opts)
	if err != nil {
		return st, err
	}
	defer s.close()
	if err := s.begin(ctx, begin); err != nil {
		return st, err
	}
	// An erasure coded container's replica holds one index's bytes: the
	// copy must hold the same index (IMPORT_INDEX, docs/wire.md §5.8).
	if idx := c.ReplicaIndex(); idx != 0 {
		if _, err := s.call(ctx, &wire.ImportIndexRequest{ContainerID: id, ReplicaIndex: uint8(idx)}, nil); err != nil {
			return st, fmt.Errorf("replica index %d: %w", idx, err)
		}
	}
	go s.readAcks()
	for _, b := range blocks {
		if err := s.sendBlock(ctx, c, b); err != nil {
			return st, s.cause(err)
		}
		st.Blocks++
		st.Bytes += b.Length
	}
	resp, err := s.commit(ctx, id)
	if err != nil {
		return st, err
	}
	st.BCSID = resp.BCSID
	st.Elapsed = time.Since(start)
	return st, nil
}

// session is the source's end of one import connection.
type session struct {
	opts *Options
	nc   net.Conn
	w    *wire.Writer
	r    *wire.Reader
	next uint64 // request IDs

	acks chan ack // answers to IMPORT_DATA and IMPORT_COMMIT, in order
	done chan struct{}
	stop func() bool

	// direct is the buffer of direct reads (sendFile), made on first use.
	direct []byte
}

type ack struct {
	msg wire.Message
	err error
}

func dial(ctx context.Context, addr string, opts *Options) (*session, error) {
	d := net.Dialer{Timeout: opts.IOTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	wire.TuneSocket(nc)
	if opts.TLS != nil {
		cfg := opts.TLS
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		hctx, cancel := context.WithTimeout(ctx, opts.IOTimeout)
		tc, err := wire.TLSClient(hctx, nc, cfg)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		nc = tc
	}
	s := &session{opts: opts, nc: nc, w: wire.NewWriter(nc, 0), r: wire.NewResponseReader(nc), acks: make(chan ack, 64), done: make(chan struct{})}
	// The connection ends with ctx: every blocked read and write returns.
	s.stop = context.AfterFunc(ctx, func() { _ = nc.Close() })
	ping := &wire.PingRequest{MinVersion: wire.MinVersion, MaxVersion: wire.MaxVersion, ClientID: opts.ClientID}
	resp, err := s.call(ctx, ping, nil)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("handshake: %w", err)
	}
	p := resp.(*wire.PingResponse)
	if p.Version < wire.MinVersion || p.Version > wire.MaxVersion {
		s.close()
		return nil, fmt.Errorf("handshake: target chose version %d, this datanode speaks %d..%d", p.Version, wire.MinVersion, wire.MaxVersion)
	}
	s.w.SetVersion(p.Version)
	if len(opts.Token) > 0 && p.Version >= wire.VersionToken {
		// The container token meta gave the copy (WRITE on the
		// container), before IMPORT_BEGIN.
		if _, err := s.call(ctx, &wire.TokenRequest{}, opts.Token); err != nil {
			s.close()
			return nil, fmt.Errorf("block token: %w", err)
		}
	}
	return s, nil
}

func (s *session) close() {
	s.stop()
	close(s.done)
	_ = s.nc.Close()
}

// call sends a request and reads its answer (before readAcks runs).
func (s *session) call(ctx context.Context, m wire.Message, payload []byte) (wire.Message, error) {
	s.next++
	if err := s.w.WriteMessage(ctx, s.next, m, payload); err != nil {
		return nil, err
	}
	_ = s.nc.SetReadDeadline(time.Now().Add(s.opts.IOTimeout))
	return s.read(m.Type())
}

// read reads one response of type t.
func (s *session) read(t wire.Type) (wire.Message, error) {
	h, m, err := s.r.Next()
	if err != nil {
		return nil, err
	}
	if h.Type != t {
		return nil, fmt.Errorf("answer of type %v, want %v", h.Type, t)
	}
	if e, ok := m.(*wire.Error); ok {
		return nil, e
	}
	return m, nil
}

func (s *session) begin(ctx context.Context, m *wire.ImportBeginRequest) error {
	_, err := s.call(ctx, m, nil)
	return err
}

// readAcks reads the answers to IMPORT_DATA and IMPORT_COMMIT until the
// connection ends or an error arrives. The target answers an error once,
// then hangs up.
func (s *session) readAcks() {
	defer close(s.acks)
	for {
		_ = s.nc.SetReadDeadline(time.Time{})
		h, m, err := s.r.Next()
		if err == nil {
			if e, ok := m.(*wire.Error); ok {
				err = e
			} else if h.Type != wire.TypeImportData && h.Type != wire.TypeImportCommit {
				err = fmt.Errorf("answer of type %v during an import", h.Type)
			}
		}
		select {
		case s.acks <- ack{msg: m, err: err}:
		case <-s.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// cause returns the target's error when a send failed because the target
// answered an error and hung up.
func (s *session) cause(err error) error {
	for {
		select {
		case a, ok := <-s.acks:
			if !ok {
				return err
			}
			if a.err != nil && wire.CodeOf(a.err) != 0 {
				return a.err
			}
			if a.err != nil {
				return err
			}
		case <-time.After(time.Second):
			return err
		}
	}
}

// sendBlock sends the files of block b.
func (s *session) sendBlock(ctx context.Context, c *container.Container, b container.Block) error {
	ranges, err := FileRanges(c, b)
	if err != nil {
		return err
	}
	for _, r := range ranges {
		if err := s.sendFile(ctx, r.Path, c.DirectIO(), b.LocalID, r.ChunkOffset, r.FileOffset, r.Length); err != nil {
			return fmt.Errorf("block %d: %w", b.LocalID, err)
		}
	}
	return nil
}

// AllBlocks lists every block of container c, in local ID order.
func AllBlocks(c *container.Container) ([]container.Block, error) {
	var blocks []container.Block
	for after := uint64(0); ; {
		page, err := c.ListBlocks(after, 1024)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, page...)
		if len(page) < 1024 {
			return blocks, nil
		}
		after = page[len(page)-1].LocalID
	}
}

// FileRange is a run of one of a block's files: Length bytes from
// FileOffset of the file at Path, which holds the block's bytes from
// ChunkOffset (0 for FILE_PER_BLOCK, whose one file is the whole block).
// An import takes it as it is (container.Import.WriteAt).
type FileRange struct {
	Path                    string
	ChunkOffset, FileOffset int64
	Length                  int64
}

// FileRanges lists the files that hold block b of container c, each run
// of consecutive extents of one file merged: what a copy of the block
// reads.
func FileRanges(c *container.Container, b container.Block) ([]FileRange, error) {
	if b.Length == 0 {
		return nil, nil
	}
	ext, err := c.Extents(b.LocalID, 0, b.Length)
	if err != nil {
		return nil, err
	}
	var out []FileRange
	for i := 0; i < len(ext); {
		e := ext[i]
		chunkOff := e.BlockOffset - e.FileOffset
		n := e.Length
		j := i + 1
		for ; j < len(ext) && ext[j].Path == e.Path && ext[j].FileOffset == e.FileOffset+n; j++ {
			n += ext[j].Length
		}
		if c.Layout() == container.FilePerBlock {
			chunkOff = 0
		}
		out = append(out, FileRange{Path: e.Path, ChunkOffset: chunkOff, FileOffset: e.FileOffset, Length: n})
		i = j
	}
	return out, nil
}

// sendFile sends [off, off+n) of the file at path in IMPORT_DATA frames.
// An OS file is sent with sendfile, or, with direct (its volume reads and
// writes with O_DIRECT), read with O_DIRECT and written from a buffer: a
// closed container's copy reads each byte once, and the page cache neither
// fills with those cold bytes nor evicts the hot ones for them.
func (s *session) sendFile(ctx context.Context, path string, direct bool, localID uint64, chunkOff, off, n int64) error {
	var (
		f   *os.File
		vf  vfs.File
		err error
	)
	if s.opts.FS == vfs.Default {
		f, err = os.Open(path)
	} else {
		vf, err = s.opts.FS.Open(path)
	}
	if err != nil {
		return err
	}
	if f != nil {
		defer f.Close()
		direct = direct && container.SetDirectReads(f, true) == nil
		if direct && s.direct == nil {
			s.direct = container.AlignedBuffer(container.DirectPiece)
		}
	} else {
		defer vf.Close()
		direct = false
	}
	piece := min(s.opts.Limits.pieceSize(), s.opts.Pace.pieceSize())
	for done := int64(0); done < n; {
		k := min(n-done, s.opts.FrameSize)
		req := &wire.ImportDataRequest{LocalID: localID, ChunkOffset: chunkOff, FileOffset: off + done}
		if err := s.checkAcks(); err != nil {
			return err
		}
		// A background copy gives way to clients between frames, never
		// inside one: a frame once begun goes at the pace, well within the
		// target's read timeout.
		if err := s.opts.Foreground.GiveWay(ctx); err != nil {
			return err
		}
		s.next++
		from := off + done
		err := s.w.WriteMessageFunc(ctx, s.next, req, k, func(w io.Writer) (int64, error) {
			var sent int64
			for sent < k {
				p := min(k-sent, piece)
				if err := s.opts.Limits.wait(ctx, p); err != nil {
					return sent, err
				}
				if err := s.opts.Pace.wait(ctx, p); err != nil {
					return sent, err
				}
				_ = s.nc.SetWriteDeadline(time.Now().Add(s.opts.IOTimeout))
				var (
					c   int64
					err error
				)
				if direct {
					c, err = container.CopyDirect(w, f, from+sent, p, s.direct)
				} else if f != nil {
					if _, err = f.Seek(from+sent, io.SeekStart); err != nil {
						return sent, err
					}
					// *net.TCPConn.ReadFrom of an io.LimitedReader of an
					// *os.File is sendfile.
					c, err = io.Copy(w, io.LimitReader(f, p))
				} else {
					c, err = io.Copy(w, io.NewSectionReader(vf, from+sent, p))
				}
				sent += c
				s.opts.Metrics.bytesOut.Add(c)
				if err == nil && c < p {
					err = fmt.Errorf("%s ends at %d, before %d", path, from+sent, off+n)
				}
				if err != nil {
					return sent, err
				}
			}
			return sent, nil
		})
		if err != nil {
			return err
		}
		done += k
	}
	return nil
}

// checkAcks consumes the answers that arrived, returning the first error.
func (s *session) checkAcks() error {
	for {
		select {
		case a, ok := <-s.acks:
			if !ok {
				return errors.New("connection ended")
			}
			if a.err != nil {
				return a.err
			}
		default:
			return nil
		}
	}
}

func (s *session) commit(ctx context.Context, id uint64) (*wire.ImportCommitResponse, error) {
	s.next++
	if err := s.w.WriteMessage(ctx, s.next, &wire.ImportCommitRequest{ContainerID: id}, nil); err != nil {
		return nil, s.cause(err)
	}
	t := time.NewTimer(10 * s.opts.IOTimeout)
	defer t.Stop()
	for {
		select {
		case a, ok := <-s.acks:
			if !ok {
				return nil, errors.New("connection ended before the commit was answered")
			}
			if a.err != nil {
				return nil, a.err
			}
			if r, ok := a.msg.(*wire.ImportCommitResponse); ok {
				return r, nil
			}
		case <-t.C:
			return nil, errors.New("timed out waiting for the commit")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
