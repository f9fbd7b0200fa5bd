package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// WriteOptions configure a key writer.
type WriteOptions struct {
	// Replication overrides the bucket's.
	Replication stratov1.ReplicationFactor
	// ErasureCoding, when set, erasure codes the key whatever Replication
	// and the bucket say (docs/ec.md): its bytes are striped over block
	// groups, parity computed by the writer.
	ErasureCoding *stratov1.ErasureCoding
	// SizeHint is the expected size (0: unknown). A positive hint has meta
	// allocate the first block with the open key.
	SizeHint int64
	// Permission is the key's permission (at most 07777) before the
	// client's umask. Default: 0666.
	Permission uint32
}

// CreateOptions configure a file-system Create.
type CreateOptions struct {
	Overwrite bool // replace an existing file
	Recursive bool // create missing parent directories
	WriteOptions
}

// maxRecoveries bounds the datanode failures one writer survives, and
// maxClosures the containers closed under it.
const (
	maxRecoveries = 8
	maxClosures   = 64
	// maxDenials bounds the recoveries from a datanode's ACCESS_DENIED.
	maxDenials = 2
)

// ErrWriterClosed: a write after Close.
var ErrWriterClosed = errors.New("client: writer closed")

// Writer writes one key: Write, Hflush/Hsync as needed, then Close, which
// commits the key. The key is invisible until Close (or the first Hflush or
// Hsync) and is replaced atomically.
//
// Full chunks go to the block's pipeline leader, which forwards them to the
// other replicas and acknowledges once all hold them; several chunks are in
// flight at once. Every FlushChunks acknowledged chunks a PutBlock commits
// the block's length on every replica, and a chunk stays buffered until it
// is committed: a datanode drops chunks no PutBlock covers when their
// container closes (meta closes full containers and those of failed
// pipelines while writers are still in them). When a write or a commit
// fails, the writer has meta close the container (and the pipeline, when a
// datanode failed), ends the block at its committed length, continues in a
// new block on a pipeline without the failed datanode, and sends every
// uncommitted chunk again: the caller sees an error only when no healthy
// pipeline is left.
//
// A Writer is not safe for concurrent use. The context given when it was
// created bounds all of its work.
type Writer struct {
	c                   *Client
	ctx                 context.Context
	span                trace.Span // client.write (nil: no tracing), ended by Close or Abort
	volume, bucket, key string
	openID              uint64
	versionID           string // the S3 version its commit made
	// token is a deferred create's (open with no size hint): the key is
	// opened for real (reopen) only when data or an hsync needs it.
	token  []byte
	reopen func(ctx context.Context, sizeHint int64, deferrable bool) (*stratov1.OpenKeyResponse, error)
	// deferredWrite: the token is a deferred write's, with its one block
	// in spare (meta/deferredwrite.go). The key is written through it only
	// as one chunk sent with the block's final commit (sendLast); anything
	// else opens for real first (undefer). kept is that chunk, held until
	// the commit: a leader that does not know the token refuses the commit,
	// and the key is written again through an ordinary open.
	deferredWrite bool
	kept          []byte
	ctype         checksum.Type
	bpc           uint32
	blockSize     int64

	spare     []*stratov1.BlockLocation // allocated with the open key, unused yet
	blocks    []*stratov1.BlockLocation // written to, in key order; Length as committed
	cur       *stratov1.BlockLocation   // the block being written (last of blocks)
	curLen    int64                     // bytes sent to cur
	committed int64                     // bytes of cur every replica committed
	buf       []byte                    // the chunk being filled
	// sums are the checksums of buf's first summed bytes, computed as its
	// windows fill (sumFilled).
	sums   []byte
	summed int
	// pending are the chunks of cur not yet committed, oldest first; the
	// first nAcked of them are acknowledged by every replica.
	pending []*chunkSend
	nAcked  int
	// slots are the shared window's slots the writer holds: never more
	// than its chunks in flight beyond OwnChunksInFlight.
	slots int
	// unsynced are the blocks ended since the last hsync: committed on
	// every replica, not fsynced. The next hsync fsyncs them.
	unsynced []*stratov1.BlockLocation
	exclude  stratov1.ExcludeList
	failures int   // recoveries from datanode failures
	closures int   // recoveries from containers closed under the writer
	denials  int   // recoveries from ACCESS_DENIED (block tokens)
	err      error // sticky
	closed   bool
	attrs    []*stratov1.KeyAttribute // stored with the key at commit
	lock     *stratov1.ObjectLock     // the new version's S3 object lock (nil: the bucket's default)
	cond     Condition                // what must hold of the key at the final commit
	ec       *stratov1.ErasureCoding  // set: the key is erasure coded
	ecs      *ecState                 // an erasure coded key's (ecwriter.go)
	// appending: opened by Append, at appendOffset (the file's length).
	appending    bool
	appendOffset int64
}

// SetAttributes sets the attributes stored with the key when it is
// committed (they replace any set before; see stratov1.KeyAttribute).
func (w *Writer) SetAttributes(attrs []*stratov1.KeyAttribute) { w.attrs = attrs }

// SetObjectLock sets the S3 object lock the new version gets at its
// commit (a bucket with object lock only); nil: the bucket's default
// retention, if any.
func (w *Writer) SetObjectLock(l *stratov1.ObjectLock) { w.lock = l }

// Condition is what must hold of a key's latest version for a commit to
// replace it (S3's conditional writes). meta checks it in the commit's own
// apply, so no other write can come between the check and the commit; a
// commit refused fails with ErrKeyReplaced. The zero Condition always
// holds.
type Condition struct {
	// IfObjectID, when not 0: only while the key's latest version is this
	// object (S3's If-Match, once the ETag was matched to an object).
	IfObjectID uint64
	// IfAbsent: only while the key has no latest version, or a delete
	// marker (S3's If-None-Match: *). Not with IfObjectID.
	IfAbsent bool
}

// SetCondition sets the condition the key's commit (its first hsync's,
// if any) must meet.
func (w *Writer) SetCondition(c Condition) { w.cond = c }

// Abort ends the writer without committing the key: nothing written
// becomes visible (meta frees the blocks when the open key expires).
func (w *Writer) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.err = ErrWriterClosed
	w.release()
	endSpan(w.span, ErrWriterClosed)
}

// flushChunks is how many acknowledged chunks trigger a PutBlock (Ozone's
// stream buffer flush size: 4 chunks, 16 MiB).
const flushChunks = 4

type chunkSend struct {
	off  int64
	data []byte
	sums checksum.Data
	done chan error
	got  bool
	res  error
}

// wait returns the chunk's result (once it is known; any number of times).
func (cs *chunkSend) wait() error {
	if !cs.got {
		cs.res, cs.got = <-cs.done, true
	}
	return cs.res
}

var chunkPool sync.Pool // *[]byte of Options.ChunkSize capacity

func (c *Client) chunkBuf() []byte {
	if p, ok := chunkPool.Get().(*[]byte); ok && cap(*p) == c.opts.ChunkSize {
		return (*p)[:0]
	}
	return make([]byte, 0, c.opts.ChunkSize)
}

func (c *Client) releaseChunk(b []byte) {
	if cap(b) == c.opts.ChunkSize {
		chunkPool.Put(&b)
	}
}

// CreateKey starts writing a key (OBS or FSO bucket; on FSO the key is a
// path and missing parents are created).
func (c *Client) CreateKey(ctx context.Context, volume, bucket, key string, o WriteOptions) (*Writer, error) {
	open := func(ctx context.Context, sizeHint int64, deferrable bool) (*stratov1.OpenKeyResponse, error) {
		return openRetried(c, ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.OpenKeyResponse, error) {
			return n.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: volume, Bucket: bucket, Key: key,
				SizeHint: max(sizeHint, 0), Replication: o.Replication, ErasureCoding: o.ErasureCoding, Owner: c.opts.Owner,
				Deferrable: deferrable, Permission: c.masked(o.Permission, 0o666)})
		})
	}
	return c.newWriter(ctx, volume, bucket, key, o.SizeHint, open)
}

// openRetried sends an open (idempotently retried).
func openRetried(c *Client, ctx context.Context, fn func(context.Context, stratov1.NamespaceServiceClient) (*stratov1.OpenKeyResponse, error)) (*stratov1.OpenKeyResponse, error) {
	var resp *stratov1.OpenKeyResponse
	err := retryMeta(c.idempotent(ctx), func(ctx context.Context) error {
		var err error
		resp, err = ns(ctx, c, fn)
		return err
	})
	return resp, err
}

// Create starts writing a file at /volume/bucket/path (Hadoop FileSystem
// create: the parent must be a directory, or be creatable with Recursive;
// an existing file is an error unless Overwrite).
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	open := func(ctx context.Context, sizeHint int64, deferrable bool) (*stratov1.OpenKeyResponse, error) {
		return openRetried(c, ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.OpenKeyResponse, error) {
			return n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key,
				Overwrite: o.Overwrite, Recursive: o.Recursive, SizeHint: max(sizeHint, 0), Replication: o.Replication,
				ErasureCoding: o.ErasureCoding, Owner: c.opts.Owner, Deferrable: deferrable,
				Permission: c.masked(o.Permission, 0o666)})
		})
	}
	return c.newWriter(ctx, p.Volume, p.Bucket, p.Key, o.SizeHint, open)
}

// newWriter opens the key: with no size hint the open may be deferred to
// the first block or the commit (open is called with -1: deferrable); with
// a size hint of one chunk at most, meta may defer the open to the commit
// and hand out the block at once (a deferred write).
func (c *Client) newWriter(ctx context.Context, volume, bucket, key string, sizeHint int64,
	open func(ctx context.Context, sizeHint int64, deferrable bool) (*stratov1.OpenKeyResponse, error)) (*Writer, error) {
	if sizeHint == 0 {
		sizeHint = -1
	}
	ctx, span := c.startSpan(ctx, "client.write", volume, bucket, key)
	resp, err := open(ctx, sizeHint, sizeHint < 0 || sizeHint < int64(c.opts.ChunkSize))
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	ct, err := checksumType(resp.ChecksumType)
	if err != nil {
		endSpan(span, err)
		return nil, err
	}
	bpc := uint32(resp.BytesPerChecksum)
	if bpc == 0 {
		bpc = checksum.DefaultBytesPerChecksum
	}
	bs := resp.BlockSize
	if bs <= 0 {
		bs = 256 << 20
	}
	w := &Writer{c: c, ctx: ctx, span: span, volume: volume, bucket: bucket, key: key, openID: resp.OpenId,
		token: resp.CreateToken, reopen: open, ctype: ct, bpc: bpc, blockSize: bs, spare: resp.Blocks, ec: resp.ErasureCoding,
		deferredWrite: len(resp.CreateToken) > 0 && len(resp.Blocks) == 1 && resp.ErasureCoding == nil}
	if w.ec != nil {
		if w.ecs, err = newECState(w.ec, bs); err != nil {
			endSpan(span, err)
			return nil, err
		}
	}
	return w, nil
}

// openNow opens a deferred create or write for real, with a first block
// when sizeHint asks for one. A deferred write's block and whatever was
// sent to it are dropped (meta frees the block when its token expires).
func (w *Writer) openNow(sizeHint int64) error {
	if len(w.token) == 0 {
		return nil
	}
	if w.deferredWrite {
		w.deferredWrite = false
		w.blocks, w.cur, w.curLen, w.committed = nil, nil, 0, 0
		sizeHint = w.blockSize
	}
	resp, err := w.reopen(w.ctx, sizeHint, false)
	if err != nil {
		return fmt.Errorf("client: writing %s/%s/%s: open: %w", w.volume, w.bucket, w.key, err)
	}
	w.openID, w.token, w.spare = resp.OpenId, nil, resp.Blocks
	return nil
}

// Write buffers p and sends every full chunk to the pipeline.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrWriterClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.ecs != nil {
		return w.ecWrite(p)
	}
	n := 0
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = w.c.chunkBuf()
		}
		limit := w.chunkLimit()
		k := copy(w.buf[len(w.buf):limit], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		n += k
		w.sumFilled()
		if len(w.buf) == limit {
			if err := w.sendBuf(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// chunkLimit is the size at which the chunk being filled is sent: a chunk,
// or what is left of the current block.
func (w *Writer) chunkLimit() int {
	limit := int64(cap(w.buf))
	left := w.blockSize
	if w.cur != nil && w.curLen < w.blockSize {
		left = w.blockSize - w.curLen
	}
	return int(min(limit, left))
}

// sumFilled computes the checksums of the windows of w.buf filled since
// the last call. The bytes were just copied in and are still in the CPU's
// cache; summed when the 4 MiB chunk is sent, they would be read from
// memory again.
func (w *Writer) sumFilled() {
	full := len(w.buf) - len(w.buf)%int(w.bpc)
	if w.ctype == checksum.NONE || full <= w.summed {
		return
	}
	w.sums = checksum.AppendSums(w.sums, w.ctype, w.bpc, w.buf[w.summed:full])
	w.summed = full
}

// takeSums returns the checksums of w.buf, its last window included: the
// list its chunk is sent with. The next chunk's list starts anew.
func (w *Writer) takeSums() checksum.Data {
	sums := checksum.AppendSums(w.sums, w.ctype, w.bpc, w.buf[w.summed:])
	w.sums, w.summed = nil, 0
	return checksum.Data{Type: w.ctype, BytesPerChecksum: w.bpc, Sums: sums}
}

func (w *Writer) sendBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	sums := w.takeSums()
	data := w.buf
	w.buf = nil
	if err := w.send(data, sums); err != nil {
		w.err = err
		return err
	}
	return nil
}

// send sends one chunk to the current block (starting a block if needed),
// keeping at most MaxChunksInFlight unacknowledged and committing every
// flushChunks acknowledged ones.
func (w *Writer) send(data []byte, sums checksum.Data) error {
	if w.deferredWrite {
		if err := w.openNow(0); err != nil {
			return err
		}
	}
	if w.cur == nil || w.curLen+int64(len(data)) > w.blockSize {
		if err := w.nextBlock(); err != nil {
			return err
		}
	}
	cs := &chunkSend{off: w.curLen, data: data, sums: sums, done: make(chan error, 1)}
	w.curLen += int64(len(data))
	w.pending = append(w.pending, cs)
	go w.transmit(w.cur, cs)
	for !w.mayFly() {
		if err := w.waitNext(); err != nil {
			return err
		}
		if w.nAcked >= flushChunks {
			if err := w.commitAcked(); err != nil {
				return err
			}
		}
	}
	return nil
}

// sendLast sends the buffered end of the key. When everything sent to the
// current block before it is committed (always for a key of one chunk),
// the chunk and the block's final commit travel as one WRITE_COMMIT: one
// round trip through the pipeline instead of two. Otherwise, or after a
// failure (recover resends it to a new block), commitBlock commits it.
func (w *Writer) sendLast() error {
	if len(w.buf) == 0 {
		return nil
	}
	if len(w.pending) > 0 || (w.cur != nil && w.curLen+int64(len(w.buf)) > w.blockSize) {
		return w.sendBuf()
	}
	if w.cur == nil {
		if err := w.nextBlock(); err != nil {
			return err
		}
	}
	sums := w.takeSums()
	data := w.buf
	w.buf = nil
	bl, off := w.cur, w.curLen
	w.curLen += int64(len(data))
	leader, followers := pipelineAddrs(bl)
	_, err := w.c.data.writeCommit(w.ctx, leader, bl.GetToken(), &wire.WriteCommitRequest{Block: wireBlock(bl.BlockId), Offset: off,
		Checksums: sums, Final: true, Followers: followers}, data)
	if err == nil {
		if w.deferredWrite {
			w.kept = data
		} else {
			w.c.releaseChunk(data)
		}
		w.blockCommitted(true, false)
		return nil
	}
	cs := &chunkSend{off: off, data: data, sums: sums, done: make(chan error, 1)}
	cs.done <- err
	w.pending = append(w.pending, cs)
	return w.recover(err)
}

func (w *Writer) transmit(bl *stratov1.BlockLocation, cs *chunkSend) {
	leader, followers := pipelineAddrs(bl)
	cs.done <- w.c.data.writeChunk(w.ctx, leader, bl.GetToken(), &wire.WriteChunkRequest{
		Block: wireBlock(bl.BlockId), Offset: cs.off, Checksums: cs.sums, Followers: followers}, cs.data)
}

func pipelineAddrs(bl *stratov1.BlockLocation) (leader string, followers []string) {
	members := bl.GetPipeline().GetMembers()
	if len(members) == 0 {
		return "", nil
	}
	for _, m := range members[1:] {
		followers = append(followers, m.DataAddr)
	}
	return members[0].DataAddr, followers
}

// waitNext waits for the oldest unacknowledged chunk, recovering from a
// pipeline failure.
func (w *Writer) waitNext() error {
	if err := w.pending[w.nAcked].wait(); err != nil {
		return w.recover(err)
	}
	w.nAcked++
	w.landed()
	return nil
}

// waitAll waits until every chunk sent is acknowledged.
func (w *Writer) waitAll() error {
	for w.nAcked < len(w.pending) {
		if err := w.waitNext(); err != nil {
			return err
		}
	}
	return nil
}

// commitAcked commits the acknowledged chunks with a PutBlock through the
// pipeline and releases them.
func (w *Writer) commitAcked() error {
	last := w.pending[w.nAcked-1]
	length := last.off + int64(len(last.data))
	if err := w.putBlock(length, false, false); err != nil {
		return w.recover(err)
	}
	w.released(length)
	return nil
}

// released drops the pending chunks a commit of length covers.
func (w *Writer) released(length int64) {
	w.committed = length
	w.cur.Length = length
	k := 0
	for k < w.nAcked && w.pending[k].off+int64(len(w.pending[k].data)) <= length {
		w.c.releaseChunk(w.pending[k].data)
		w.pending[k] = nil
		k++
	}
	w.pending = w.pending[k:]
	w.nAcked -= k
}

func (w *Writer) putBlock(length int64, final, sync bool) error {
	leader, followers := pipelineAddrs(w.cur)
	_, err := w.c.data.putBlock(w.ctx, leader, w.cur.GetToken(), &wire.PutBlockRequest{
		Block: wireBlock(w.cur.BlockId), Length: length, Final: final, Sync: sync, Followers: followers})
	return err
}

// commitBlock waits until every chunk sent is acknowledged and commits the
// current block's length on every replica (final: the block is complete;
// sync: every replica fsyncs first), moving to a new block as often as
// failures require.
func (w *Writer) commitBlock(final, sync bool) error {
	for {
		if err := w.waitAll(); err != nil {
			return err
		}
		if w.cur == nil {
			return nil
		}
		if w.curLen == 0 {
			if final {
				w.blocks = w.blocks[:len(w.blocks)-1]
				w.cur = nil
			}
			return nil
		}
		if w.committed == w.curLen && !final && !sync {
			return nil
		}
		err := w.putBlock(w.curLen, final, sync)
		if err == nil {
			w.blockCommitted(final, sync)
			return nil
		}
		if rerr := w.recover(err); rerr != nil {
			return rerr
		}
	}
}

// blockCommitted records that every replica committed the current block at
// curLen (final: the block is complete, and ends; sync: fsynced too).
func (w *Writer) blockCommitted(final, sync bool) {
	w.released(w.curLen)
	if final && !sync {
		w.unsynced = append(w.unsynced, w.cur)
	}
	if final {
		w.cur, w.curLen, w.committed = nil, 0, 0
	}
}

// flush sends the partial chunk, commits the current block (fsynced with
// sync) and publishes the key's length in meta.
func (w *Writer) flush(sync bool) error {
	if w.closed {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	if w.ec != nil {
		// Parity covers whole stripes: docs/ec.md says why erasure coded
		// keys have no hflush or hsync.
		return fmt.Errorf("client: hflush or hsync on %s/%s/%s (%s; the key is visible after Close): %w",
			w.volume, w.bucket, w.key, Redundancy(0, w.ec), ErrErasureCoded)
	}
	err := w.sendBuf()
	if err == nil {
		err = w.commitBlock(false, sync)
	}
	if err == nil && sync {
		err = w.syncEnded()
	}
	if err == nil {
		err = w.commit(true)
	}
	if err != nil {
		w.err = err
	}
	return err
}

// syncEnded fsyncs the blocks ended since the last hsync on their replicas:
// an hsync promises every byte before it, and a block ended at its full
// size was committed without an fsync. The pipeline's replicas are asked
// together; if that fails, each alone, and the block counts as synced when
// at least one did (a replica whose node died since is re-replicated from
// the others). A replica whose container is closing or closed syncs a
// block it holds at the full length too (closing fsyncs every file).
func (w *Writer) syncEnded() error {
	for len(w.unsynced) > 0 {
		bl := w.unsynced[0]
		leader, followers := pipelineAddrs(bl)
		if _, err := w.c.data.putBlock(w.ctx, leader, bl.GetToken(), &wire.PutBlockRequest{Block: wireBlock(bl.BlockId), Length: bl.Length,
			Final: true, Sync: true, Followers: followers}); err != nil {
			if w.syncOnEach(bl, bl.Length, nil) == 0 {
				return fmt.Errorf("client: writing %s/%s/%s: hsync: no replica of block %s synced it: %w",
					w.volume, w.bucket, w.key, wireBlock(bl.BlockId), err)
			}
		}
		w.unsynced = w.unsynced[1:]
	}
	return nil
}

// syncOnEach finalises block bl at length and fsyncs it on each replica of
// its pipeline alone (skipping the failed ones), and returns how many have
// it durable at length (a replica whose container is closing or closed
// answers too when it holds the block at that length).
func (w *Writer) syncOnEach(bl *stratov1.BlockLocation, length int64, failed map[string]bool) int {
	synced := 0
	for _, m := range bl.GetPipeline().GetMembers() {
		if failed[m.Id] {
			continue
		}
		_, err := w.c.data.putBlock(w.ctx, m.DataAddr, bl.GetToken(), &wire.PutBlockRequest{
			Block: wireBlock(bl.BlockId), Length: length, Final: true, Sync: true})
		if err == nil {
			synced++
		} else {
			w.c.opts.Logger.Debug("client: finalising a block on a replica", "datanode", m.Id, "err", err)
		}
	}
	return synced
}

// VersionID is the S3 version ID the key's commit made ("" in a bucket
// never versioned), once Close has returned.
func (w *Writer) VersionID() string { return w.versionID }

// Hflush makes what was written so far reach every replica and become
// visible to new readers (the key's length is published in meta). An
// erasure coded key refuses it (ErrErasureCoded; docs/ec.md).
func (w *Writer) Hflush() error { return w.flush(false) }

// Hsync is Hflush, and every replica fsyncs the data first.
func (w *Writer) Hsync() error { return w.flush(true) }

// Close sends what is buffered, commits the last block on every replica,
// and commits the key. After a failed write the key is left uncommitted
// (meta frees its blocks when the open key expires).
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	defer w.release()
	if w.err != nil {
		endSpan(w.span, w.err)
		return w.err
	}
	var err error
	if w.ecs != nil {
		err = w.ecClose()
	} else {
		err = w.sendLast()
		if err == nil {
			err = w.commitBlock(true, false)
		}
	}
	if err == nil {
		err = w.commit(false)
	}
	if errors.Is(err, errCreateTokenUnknown) && w.kept != nil {
		err = w.writeAgain()
	}
	if err != nil {
		w.err = err
	}
	endSpan(w.span, err)
	return err
}

// writeAgain writes a deferred write whose token meta no longer knows (a
// new leader; it expired) again, after an ordinary open.
func (w *Writer) writeAgain() error {
	w.c.opts.Logger.Debug("client: meta refused a deferred write's token; writing again", "key", w.key)
	w.buf, w.kept = w.kept, nil
	w.sums, w.summed = nil, 0
	if err := w.openNow(0); err != nil {
		return err
	}
	err := w.sendLast()
	if err == nil {
		err = w.commitBlock(true, false)
	}
	if err == nil {
		err = w.commit(false)
	}
	return err
}

func (w *Writer) release() {
	if w.buf != nil {
		w.c.releaseChunk(w.buf)
		w.buf = nil
	}
	if w.kept != nil {
		w.c.releaseChunk(w.kept)
		w.kept = nil
	}
	for _, cs := range w.pending {
		if err := cs.wait(); err != nil {
			w.c.opts.Logger.Debug("client: an abandoned chunk failed", "key", w.key, "offset", cs.off, "err", err)
		}
	}
	w.pending, w.nAcked = nil, 0
	w.landed()
}

// commit publishes the blocks in meta: for good, or (hsync) keeping the key
// open. A retried final commit that finds the open key gone checks whether
// the first attempt went through.
func (w *Writer) commit(hsync bool) error {
	if hsync {
		if err := w.openNow(0); err != nil {
			return err
		}
	}
	blocks := make([]*stratov1.BlockLocation, 0, len(w.blocks))
	for _, bl := range w.blocks {
		blocks = append(blocks, &stratov1.BlockLocation{BlockId: bl.BlockId, Length: bl.Length})
	}
	// The condition goes with every commit: meta checks it at the first
	// (an hsync's, if any), and takes the key's own earlier hsync for no
	// other version at the later ones.
	req := &stratov1.CommitKeyRequest{Volume: w.volume, Bucket: w.bucket, Key: w.key, OpenId: w.openID, Blocks: blocks, Hsync: hsync,
		CreateToken: w.token, Attributes: w.attrs, ObjectLock: w.lock, IfObjectId: w.cond.IfObjectID, IfAbsent: w.cond.IfAbsent}
	tries := 0
	return retryMeta(w.c.idempotent(w.ctx), func(ctx context.Context) error {
		tries++
		resp, err := ns(ctx, w.c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CommitKeyResponse, error) {
			return n.CommitKey(ctx, req)
		})
		// A retry whose first attempt went through finds the open key gone
		// or, with a condition, the key now this writer's own object.
		if err != nil && tries > 1 && !hsync && w.openID != 0 && !w.appending && (errors.Is(err, ErrNotFound) || errors.Is(err, ErrKeyReplaced)) {
			if ki, lerr := w.c.LookupKey(ctx, w.volume, w.bucket, w.key); lerr == nil && ki.ObjectId == w.openID {
				w.versionID = ki.GetVersionId()
				return nil
			}
		}
		w.versionID = resp.GetVersionId()
		return err
	})
}

// ComposeKey makes a key from other keys (OBS keys written with the
// bucket's checksums, e.g. an S3 multipart upload's parts): their blocks,
// in order, become the new key's and the sources are deleted, in one
// metadata operation that copies no data. An existing key is replaced.
func (c *Client) ComposeKey(ctx context.Context, volume, bucket, key string, sources []*stratov1.KeySource,
	attrs []*stratov1.KeyAttribute) (*stratov1.CommitKeyResponse, error) {
	return c.ComposeKeyLocked(ctx, volume, bucket, key, sources, attrs, nil, Condition{})
}

// ComposeKeyLocked is ComposeKey giving the new version S3 object lock
// lock (nil: the bucket's default retention, if any), made only if cond
// holds (a Writer's SetCondition).
func (c *Client) ComposeKeyLocked(ctx context.Context, volume, bucket, key string, sources []*stratov1.KeySource,
	attrs []*stratov1.KeyAttribute, lock *stratov1.ObjectLock, cond Condition) (*stratov1.CommitKeyResponse, error) {
	open, err := openRetried(c, ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.OpenKeyResponse, error) {
		return n.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: volume, Bucket: bucket, Key: key, Owner: c.opts.Owner, Deferrable: true})
	})
	if err != nil {
		return nil, err
	}
	req := &stratov1.CommitKeyRequest{Volume: volume, Bucket: bucket, Key: key, OpenId: open.OpenId,
		CreateToken: open.CreateToken, Sources: sources, Attributes: attrs, ObjectLock: lock,
		IfObjectId: cond.IfObjectID, IfAbsent: cond.IfAbsent}
	var resp *stratov1.CommitKeyResponse
	err = retryMeta(c.idempotent(ctx), func(ctx context.Context) error {
		var err error
		resp, err = ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CommitKeyResponse, error) {
			return n.CommitKey(ctx, req)
		})
		return err
	})
	return resp, err
}
