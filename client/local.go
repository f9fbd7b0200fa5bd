package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// Local reads (docs/wire.md §5.11): a replica on a datanode of this host is
// read from the block's files, which the datanode hands over on its local
// socket, instead of through a TCP connection: the bytes go from the page
// cache to the reader's buffer once, and are verified against their
// checksums as over TCP (wire.ReadLocalResponse.ReadInto). With TLS the
// local socket speaks TLS too, and the datanode is verified as over TCP.
// Whatever stops a local read that is not the replica's fault (no local
// socket, a failed TLS handshake, a datanode that does not serve
// READ_LOCAL, a broken connection) sends the read to TCP.

// noLocalFor is how long an address whose local socket did not answer is
// read over TCP before the socket is tried again (a datanode of this host
// may start, or come back).
const noLocalFor = 30 * time.Second

// errNoLocal: the replica cannot be read locally; read it over TCP.
var errNoLocal = errors.New("client: no local read")

// getLocal returns the connection to the local socket of the datanode at
// addr, nil when there is none here (or, with TLS, none that shows the
// datanode's certificate): the address is then read over TCP for
// noLocalFor.
func (d *dataConns) getLocal(ctx context.Context, addr string) *wire.Conn {
	if !d.localReads {
		return nil
	}
	d.mu.Lock()
	until, no := d.noLocal[addr]
	d.mu.Unlock()
	if no && time.Now().Before(until) {
		return nil
	}
	c, err := d.cached(ctx, &d.local, addr, func(ctx context.Context) (*wire.Conn, error) {
		// With TLS, the socket's datanode shows the certificate of its
		// data address, checked as over TCP: a process that took the
		// socket's name fails the handshake, gets no token and feeds no
		// bytes.
		c, err := wire.DialLocal(ctx, addr, wire.ConnOptions{TLS: d.tls})
		if err == nil && c.Version() < wire.VersionReadLocal {
			_ = c.Close()
			return nil, fmt.Errorf("client: the local socket of %s speaks version %d", addr, c.Version())
		}
		return c, err
	})
	if err != nil {
		if !errors.Is(err, errClientClosed) {
			d.noLocalRead(addr)
		}
		return nil
	}
	return c
}

// noLocalRead sends addr's reads to TCP for a while.
func (d *dataConns) noLocalRead(addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noLocal[addr] = time.Now().Add(noLocalFor)
}

// readLocal reads and verifies one range of a replica on a datanode of
// this host. errNoLocal (wrapped) means: read it over TCP instead.
func (r *Reader) readLocal(m *stratov1.DatanodeDetails, bl *stratov1.BlockLocation, off int64, dst []byte) error {
	lc := r.c.data.getLocal(r.ctx, m.DataAddr)
	if lc == nil {
		return errNoLocal
	}
	if err := lc.Authorize(r.ctx, bl.GetToken()); err != nil {
		return localErr(r.c.data, m.DataAddr, err)
	}
	resp, err := lc.ReadLocal(r.ctx, &wire.ReadLocalRequest{Block: wireBlock(bl.BlockId), Offset: off, Length: uint32(len(dst))})
	if err != nil {
		return localErr(r.c.data, m.DataAddr, err)
	}
	defer resp.Close()
	start, end := resp.Offset(), resp.End()
	if start > off || end < off+int64(len(dst)) {
		return fmt.Errorf("%w: READ_LOCAL covers [%d, %d), asked [%d, %d)", wire.CodeProtocol, start, end, off, off+int64(len(dst)))
	}
	// A range on checksum-window boundaries (the usual case) is read
	// straight into dst; a wider one into a buffer of its own.
	buf := dst
	if start != off || end != off+int64(len(dst)) {
		buf = make([]byte, end-start)
	}
	if err := resp.ReadInto(buf); err != nil {
		return fmt.Errorf("block %s: %w", wireBlock(bl.BlockId), err)
	}
	if len(buf) != len(dst) || &buf[0] != &dst[0] {
		copy(dst, buf[off-start:])
	}
	return nil
}

// localErr classifies an error of the local socket: what the datanode said
// of the replica stands (TCP would hear the same); a broken connection, a
// datanode that does not serve READ_LOCAL or cannot put the range in a
// response goes to TCP.
func localErr(d *dataConns, addr string, err error) error {
	var e *wire.Error
	if !errors.As(err, &e) || errors.Is(err, wire.ErrConnClosed) {
		return fmt.Errorf("%w: %w", errNoLocal, err)
	}
	switch e.Code {
	case wire.CodeUnsupportedType, wire.CodeUnsupportedVersion:
		d.noLocalRead(addr)
		return fmt.Errorf("%w: %w", errNoLocal, err)
	case wire.CodeTooLarge, wire.CodeProtocol:
		return fmt.Errorf("%w: %w", errNoLocal, err)
	}
	return dataErr(err)
}

// localSpan bounds the range one READ_LOCAL of copyLocal asks for.
const localSpan = wire.MaxReadLen

// copyBufSize is the buffer copyLocal moves a range through: whole
// checksum windows read, verified and written while in the CPU's cache.
const copyBufSize = 1 << 20

// copyLocal copies the key's bytes from r.off (up to end, within one block
// and localSpan) straight to w when a good replica of the block is on this
// host: its files are read piece by piece through one small buffer,
// each piece verified and written at once (wire.ReadLocalResponse.WriteRange),
// instead of into chunk-sized read-ahead buffers. n is the bytes written,
// all verified. werr is w's error, which ends the copy; anything else
// (no local replica, a bad or short file, a read-ahead already in flight)
// returns what was written, and the caller reads the rest the ordinary way
// (fill), which tries every replica and reports a bad one.
func (r *Reader) copyLocal(w io.Writer, end int64) (n int64, werr error) {
	if r.key.ErasureCoding != nil || len(r.ahead) > 0 || !r.c.data.localReads {
		return 0, nil
	}
	blocks := r.key.Blocks
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].Offset+blocks[i].Length > r.off })
	if i == len(blocks) {
		return 0, nil
	}
	bl := blocks[i]
	var addrs []string
	r.mu.Lock()
	for _, m := range bl.GetPipeline().GetMembers() {
		if !r.bad[m.Id] {
			addrs = append(addrs, m.DataAddr)
		}
	}
	r.mu.Unlock()
	var lc *wire.Conn
	for _, a := range addrs {
		if lc = r.c.data.getLocal(r.ctx, a); lc != nil {
			break
		}
	}
	if lc == nil {
		return 0, nil
	}
	from := r.off - bl.Offset
	to := min(end-bl.Offset, bl.Length, from+localSpan)
	if lc.Authorize(r.ctx, bl.GetToken()) != nil {
		return 0, nil
	}
	readLocal := func() (*wire.ReadLocalResponse, error) {
		return lc.ReadLocal(r.ctx, &wire.ReadLocalRequest{Block: wireBlock(bl.BlockId), Offset: from, Length: uint32(to - from)})
	}
	resp, err := readLocal()
	if errors.Is(err, wire.CodeTooLarge) {
		// The span is in more files than one response carries (a block
		// of many small chunk files): a smaller one.
		to = min(to, from+copyBufSize)
		resp, err = readLocal()
	}
	if err != nil {
		return 0, nil
	}
	defer resp.Close()
	if resp.Offset() > from || resp.End() < to {
		return 0, nil
	}
	for _, e := range resp.Extents {
		// Start the disk reads of the whole span now; the pieces are
		// read one after another.
		willNeed(resp.Files[e.File], e.FileOffset, int64(e.Chunk.Length))
	}
	buf := r.c.copyBufs.get(copyBufSize)
	defer r.c.copyBufs.put(buf)
	ew := &errWriter{w: w}
	n, _ = resp.WriteRange(ew, from, to, buf)
	return n, ew.err
}

// errWriter keeps the error of the writer it wraps.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}
