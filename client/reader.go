package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// readPiece is the largest range one ReadChunk asks for.
const readPiece = 4 << 20

// ErrCorruptRead: every replica of a range failed to read or returned data
// that does not match its checksums.
var ErrCorruptRead = errors.New("client: no good replica")

// Reader reads a committed key: io.ReaderAt for ranged reads of any size,
// io.ReadSeeker for streaming (with read-ahead). Every byte is verified
// against its checksums; a replica that fails or returns bad data is
// skipped (and a bad one reported to meta) in favour of the next.
//
// ReadAt is safe for concurrent use; Read and Seek are not.
type Reader struct {
	c    *Client
	ctx  context.Context
	span trace.Span // client.read (nil: no tracing), ended by Close
	key  *stratov1.KeyInfo

	mu  sync.Mutex
	bad map[string]bool // datanodes that failed this reader
	ecc ecCoder         // an erasure coded key's

	off    int64 // of the next Read
	buf    []byte
	bufOff int64       // key offset of buf[0]
	ahead  []*prefetch // reads in flight after buf, in key order
	// stop bounds what Read reads ahead (a CopyTo's end); 0: the key's
	// end.
	stop int64
}

type prefetch struct {
	off  int64
	buf  []byte
	err  error
	done chan struct{}
}

// OpenKey opens a committed key for reading.
func (c *Client) OpenKey(ctx context.Context, volume, bucket, key string) (*Reader, error) {
	return c.OpenKeyVersion(ctx, volume, bucket, key, KeyVersion{})
}

// OpenKeyVersion opens a version of a committed key for reading (an OBS
// key's; the latest with a zero v). A delete marker opens as a reader of
// nothing whose Info says DeleteMarker.
func (c *Client) OpenKeyVersion(ctx context.Context, volume, bucket, key string, v KeyVersion) (*Reader, error) {
	ctx, span := c.startSpan(ctx, "client.read", volume, bucket, key)
	var ki *stratov1.KeyInfo
	err := retryMeta(ctx, func(ctx context.Context) error {
		var err error
		ki, err = c.LookupKeyVersion(ctx, volume, bucket, key, v)
		return err
	})
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	return &Reader{c: c, ctx: ctx, span: span, key: ki, bad: map[string]bool{}}, nil
}

// Open opens the file at /volume/bucket/path for reading.
func (c *Client) Open(ctx context.Context, path string) (*Reader, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	return c.OpenKey(ctx, p.Volume, p.Bucket, p.Key)
}

// Size is the key's length.
func (r *Reader) Size() int64 { return r.key.Size }

// Info is the key's record.
func (r *Reader) Info() *stratov1.KeyInfo { return r.key }

// ReadAt reads len(p) bytes at off (fewer, with io.EOF, at the end).
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("client: negative offset %d", off)
	}
	if off >= r.key.Size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.key.Size-off)
	if err := r.readRange(p[:want], off); err != nil {
		return 0, err
	}
	if want < int64(len(p)) {
		return int(want), io.EOF
	}
	return int(want), nil
}

// readRange fills dst with the key's bytes from off, block by block, in
// pieces of at most readPiece read in parallel.
func (r *Reader) readRange(dst []byte, off int64) error {
	blocks := r.key.Blocks
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].Offset+blocks[i].Length > off })
	type piece struct {
		bl       *stratov1.BlockLocation
		blockOff int64
		dst      []byte
	}
	var pieces []piece
	for pos := 0; pos < len(dst) && i < len(blocks); i++ {
		bl := blocks[i]
		inBlock := off + int64(pos) - bl.Offset
		n := int(min(int64(len(dst)-pos), bl.Length-inBlock))
		for k := 0; k < n; k += readPiece {
			m := min(readPiece, n-k)
			pieces = append(pieces, piece{bl, inBlock + int64(k), dst[pos+k : pos+k+m]})
		}
		pos += n
	}
	if len(pieces) == 1 {
		return r.readBlock(pieces[0].bl, pieces[0].blockOff, pieces[0].dst)
	}
	errs := make([]error, len(pieces))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for j, pc := range pieces {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			errs[j] = r.readBlock(pc.bl, pc.blockOff, pc.dst)
			<-sem
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// readBlock reads dst from a block at off, from the first replica that
// returns good data.
func (r *Reader) readBlock(bl *stratov1.BlockLocation, off int64, dst []byte) error {
	if r.key.ErasureCoding != nil {
		return r.readGroup(bl, off, dst)
	}
	members := bl.GetPipeline().GetMembers()
	var errs []error
	// Replicas known bad go last rather than never: they may be all there is.
	order := make([]*stratov1.DatanodeDetails, 0, len(members))
	r.mu.Lock()
	for _, m := range members {
		if !r.bad[m.Id] {
			order = append(order, m)
		}
	}
	for _, m := range members {
		if r.bad[m.Id] {
			order = append(order, m)
		}
	}
	r.mu.Unlock()
	for _, m := range order {
		err := r.readReplica(m, bl, off, dst)
		if err == nil {
			return nil
		}
		if cerr := r.ctx.Err(); cerr != nil {
			return cerr
		}
		if errors.Is(err, ErrAccessDenied) {
			// The token, not the replica: the others would say the same.
			return fmt.Errorf("reading %s/%s/%s block %s from datanode %s: %w", r.key.Volume, r.key.Bucket, r.key.Name,
				wireBlock(bl.BlockId), m.Id, err)
		}
		errs = append(errs, fmt.Errorf("datanode %s: %w", m.Id, err))
		r.mu.Lock()
		r.bad[m.Id] = true
		r.mu.Unlock()
		if corrupt(err) {
			r.report(bl, m, err)
		}
	}
	if moved := r.movedReplicas(bl, members); len(moved) > 0 {
		// The replicas moved since the block was written (a follower
		// gave the recorded pipeline): read from where the leader says
		// they are now.
		for _, m := range moved {
			err := r.readReplica(m, bl, off, dst)
			if err == nil {
				return nil
			}
			errs = append(errs, fmt.Errorf("datanode %s: %w", m.Id, err))
		}
	}
	return fmt.Errorf("%w for %s/%s/%s block %s at %d: %w", ErrCorruptRead, r.key.Volume, r.key.Bucket, r.key.Name,
		wireBlock(bl.BlockId), off, errors.Join(errs...))
}

// movedReplicas asks the meta leader where the replicas of bl are now, for
// a client with follower reads (whose lookup may have come from a
// follower, which gives the pipeline recorded at write time), and returns
// those not among tried; none without follower reads or when the key no
// longer has the block.
func (r *Reader) movedReplicas(bl *stratov1.BlockLocation, tried []*stratov1.DatanodeDetails) []*stratov1.DatanodeDetails {
	if !r.c.opts.FollowerReads {
		return nil
	}
	ki, err := r.c.LookupKey(FromLeader(r.ctx), r.key.Volume, r.key.Bucket, r.key.Name)
	if err != nil {
		return nil
	}
	var out []*stratov1.DatanodeDetails
	for _, b := range ki.GetBlocks() {
		if wireBlock(b.BlockId) != wireBlock(bl.BlockId) {
			continue
		}
		for _, m := range b.GetPipeline().GetMembers() {
			if !slices.ContainsFunc(tried, func(t *stratov1.DatanodeDetails) bool { return t.GetId() == m.GetId() }) {
				out = append(out, m)
			}
		}
	}
	return out
}

// readReplica reads and verifies one range from one datanode: from the
// block's files when the datanode is on this host (local.go), otherwise
// over TCP.
func (r *Reader) readReplica(m *stratov1.DatanodeDetails, bl *stratov1.BlockLocation, off int64, dst []byte) error {
	if err := r.readLocal(m, bl, off, dst); !errors.Is(err, errNoLocal) {
		return err
	}
	// A range on checksum-window boundaries (the usual case: read-ahead
	// buffers are 4 MiB aligned) comes back exactly as asked, straight into
	// dst; otherwise the wider payload lands in a buffer of its own.
	resp, payload, err := r.c.data.readChunk(r.ctx, m.DataAddr, bl.GetToken(), &wire.ReadChunkRequest{
		Block: wireBlock(bl.BlockId), Offset: off, Length: uint32(len(dst))}, dst[:len(dst):len(dst)])
	if err != nil {
		return err
	}
	// The payload starts at resp.Offset (a window boundary at or before
	// off) and is tiled by resp.Chunks, each verified on its own windows
	// while it arrived (dataConns.readChunk: a bad window is err above).
	pos := int64(0)
	for _, ch := range resp.Chunks {
		pos += int64(ch.Length)
	}
	if pos != int64(len(payload)) {
		return fmt.Errorf("%w: payload of %d bytes, its chunks cover %d", wire.CodeProtocol, len(payload), pos)
	}
	start := off - resp.Offset
	if start < 0 || start+int64(len(dst)) > pos {
		return fmt.Errorf("%w: reply covers [%d, %d), asked [%d, %d)", wire.CodeProtocol, resp.Offset, resp.Offset+pos, off, off+int64(len(dst)))
	}
	if start != 0 || len(payload) == 0 || &payload[0] != &dst[0] {
		copy(dst, payload[start:start+int64(len(dst))])
	}
	return nil
}

// corrupt: err says a replica's bytes are bad (not that it could not answer).
func corrupt(err error) bool {
	return errors.Is(err, checksum.ErrMismatch) || wire.CodeOf(err) == wire.CodeCorrupt || wire.CodeOf(err) == wire.CodeChecksumMismatch
}

// report tells meta a replica returned bad data.
func (r *Reader) report(bl *stratov1.BlockLocation, m *stratov1.DatanodeDetails, cause error) {
	r.c.opts.Logger.Warn("client: bad replica", "datanode", m.Id, "block", wireBlock(bl.BlockId).String(), "err", cause)
	_, err := dataPath(r.ctx, r.c, func(ctx context.Context, cl stratov1.NamespaceServiceClient) (*stratov1.ReportReplicaResponse, error) {
		return cl.ReportReplica(ctx, &stratov1.ReportReplicaRequest{ContainerId: bl.BlockId.ContainerId,
			DatanodeId: m.Id, LocalId: bl.BlockId.LocalId, Reason: cause.Error()})
	})
	if err != nil {
		r.c.opts.Logger.Warn("client: reporting a bad replica failed", "err", err)
	}
}

// CopyTo writes the n bytes at the current offset (fewer at the key's
// end) to w, reading ahead as Read does but only up to them, and writing
// straight from the read buffers (no copy through an io.Copy buffer).
func (r *Reader) CopyTo(w io.Writer, n int64) (int64, error) {
	end := min(r.off+max(n, 0), r.key.Size)
	r.stop = end
	defer func() { r.stop = 0 }()
	var done int64
	for r.off < end {
		if r.off < r.bufOff || r.off >= r.bufOff+int64(len(r.buf)) {
			k, werr := r.copyLocal(w, end)
			r.off += k
			done += k
			if werr != nil {
				return done, werr
			}
			if k > 0 {
				continue
			}
			if err := r.fill(); err != nil {
				return done, err
			}
		}
		p := r.buf[r.off-r.bufOff : min(int64(len(r.buf)), end-r.bufOff)]
		k, err := w.Write(p)
		r.off += int64(k)
		done += int64(k)
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// WriteTo writes the rest of the key to w (io.WriterTo: io.Copy uses it).
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	return r.CopyTo(w, r.key.Size-r.off)
}

// Read reads from the current offset, reading ahead in the background.
func (r *Reader) Read(p []byte) (int, error) {
	if r.off >= r.key.Size {
		return 0, io.EOF
	}
	if r.off < r.bufOff || r.off >= r.bufOff+int64(len(r.buf)) {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.off-r.bufOff:])
	r.off += int64(n)
	return n, nil
}

// readAheadDepth is how many buffers Read keeps in flight ahead of the one
// being consumed: enough parallel requests to keep a datanode's disk and
// the connection busy.
const readAheadDepth = 4

// fill loads the buffer at r.off (from the read-ahead when it is there)
// and keeps readAheadDepth reads in flight after it.
func (r *Reader) fill() error {
	size := int64(r.c.opts.ChunkSize)
	end := r.key.Size
	if r.stop > 0 {
		end = r.stop
	}
	r.c.bufs.put(r.buf)
	r.buf = nil
	if len(r.ahead) > 0 && r.ahead[0].off == r.off {
		pf := r.ahead[0]
		r.ahead = r.ahead[1:]
		<-pf.done
		if pf.err != nil {
			r.c.bufs.put(pf.buf)
			r.dropAhead()
			return pf.err
		}
		r.buf, r.bufOff = pf.buf, pf.off
	} else {
		r.dropAhead() // abandoned by a Seek
		buf := r.c.bufs.get(int(min(size, max(end, r.off+1)-r.off, r.key.Size-r.off)))
		if err := r.readRange(buf, r.off); err != nil {
			r.c.bufs.put(buf)
			return err
		}
		r.buf, r.bufOff = buf, r.off
	}
	next := r.bufOff + int64(len(r.buf))
	if len(r.ahead) > 0 {
		last := r.ahead[len(r.ahead)-1]
		next = last.off + int64(len(last.buf))
	}
	for len(r.ahead) < readAheadDepth && next < end {
		pf := &prefetch{off: next, buf: r.c.bufs.get(int(min(size, r.key.Size-next))), done: make(chan struct{})}
		r.ahead = append(r.ahead, pf)
		go func() {
			defer close(pf.done)
			pf.err = r.readRange(pf.buf, pf.off)
		}()
		next += int64(len(pf.buf))
	}
	return nil
}

// dropAhead waits for the reads in flight and forgets them.
func (r *Reader) dropAhead() {
	for _, pf := range r.ahead {
		<-pf.done
		r.c.bufs.put(pf.buf)
	}
	r.ahead = nil
}

// Seek sets the offset of the next Read.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.key.Size
	default:
		return 0, fmt.Errorf("client: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("client: seek to negative offset %d", offset)
	}
	r.off = offset
	return offset, nil
}

// Close releases the reader.
func (r *Reader) Close() error {
	endSpan(r.span, nil)
	r.span = nil
	r.dropAhead()
	r.c.bufs.put(r.buf)
	r.buf = nil
	return nil
}

// bufPool keeps a client's read buffers of one size for its streaming
// readers (chunk-size ones, and local copies' smaller ones): a reader of a
// large key would otherwise allocate (and zero) one for every piece it
// reads.
type bufPool struct {
	size int
	p    sync.Pool
}

// get returns a buffer of n bytes, n ≤ size: from the pool unless the
// pool is empty.
func (b *bufPool) get(n int) []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return (*v)[:n]
	}
	return make([]byte, n, b.size)
}

// put returns buf to the pool when it came from get.
func (b *bufPool) put(buf []byte) {
	if cap(buf) == b.size {
		buf = buf[:0]
		b.p.Put(&buf)
	}
}
