package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/stratopb"
	"github.com/strato-io/strato/wire"
)

// WriteOptions configure a key writer.
type WriteOptions struct {
	// Replication overrides the bucket's.
	Replication stratopb.ReplicationFactor
	// SizeHint is the expected size (0: unknown). A positive hint has meta
	// allocate the first block with the open key.
	SizeHint int64
}

// CreateOptions configure a file-system Create.
type CreateOptions struct {
	Overwrite bool // replace an existing file
	Recursive bool // create missing parent directories
	WriteOptions
}

// maxRecoveries bounds the pipeline failures one writer survives.
const maxRecoveries = 8

// ErrWriterClosed: a write after Close.
var ErrWriterClosed = errors.New("client: writer closed")

// Writer writes one key: Write, Hflush/Hsync as needed, then Close, which
// commits the key. The key is invisible until Close (or the first Hflush or
// Hsync) and is replaced atomically.
//
// Full chunks go to the block's pipeline leader, which forwards them to the
// other replicas and acknowledges once all hold them; several chunks are in
// flight at once and each stays buffered until acknowledged. When a replica
// fails, the writer commits the block on the surviving replicas at the
// length every replica acknowledged, has meta close the container, continues
// in a new block on a pipeline without the failed datanode, and sends the
// unacknowledged chunks again: the caller sees an error only when no healthy
// pipeline is left.
//
// A Writer is not safe for concurrent use. The context given when it was
// created bounds all of its work.
type Writer struct {
	c                   *Client
	ctx                 context.Context
	volume, bucket, key string
	openID              uint64
	ctype               checksum.Type
	bpc                 uint32
	blockSize           int64

	spare    []*stratopb.BlockLocation // allocated with the open key, unused yet
	blocks   []*stratopb.BlockLocation // written to, in key order; Length as committed
	cur      *stratopb.BlockLocation   // the block being written (last of blocks)
	curLen   int64                     // bytes sent to cur
	buf      []byte                    // the chunk being filled
	inflight []*chunkSend              // sent to cur, oldest first
	exclude  stratopb.ExcludeList
	failures int
	err      error // sticky
	closed   bool
}

type chunkSend struct {
	off  int64
	data []byte
	done chan error
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
	var resp *stratopb.OpenKeyResponse
	err := retryMeta(ctx, func(ctx context.Context) error {
		var err error
		resp, err = ns(ctx, c, func(ctx context.Context, n stratopb.NamespaceClient) (*stratopb.OpenKeyResponse, error) {
			return n.OpenKey(ctx, &stratopb.OpenKeyRequest{Volume: volume, Bucket: bucket, Key: key,
				SizeHint: o.SizeHint, Replication: o.Replication, Owner: c.opts.Owner})
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.newWriter(ctx, volume, bucket, key, resp)
}

// Create starts writing a file at /volume/bucket/path (Hadoop FileSystem
// create: the parent must be a directory, or be creatable with Recursive;
// an existing file is an error unless Overwrite).
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
	p, err := c.fsPath(path)
	if err != nil {
		return nil, err
	}
	var resp *stratopb.OpenKeyResponse
	err = retryMeta(ctx, func(ctx context.Context) error {
		var err error
		resp, err = ns(ctx, c, func(ctx context.Context, n stratopb.NamespaceClient) (*stratopb.OpenKeyResponse, error) {
			return n.CreateFile(ctx, &stratopb.CreateFileRequest{Volume: p.Volume, Bucket: p.Bucket, Path: p.Key,
				Overwrite: o.Overwrite, Recursive: o.Recursive, SizeHint: o.SizeHint, Replication: o.Replication, Owner: c.opts.Owner})
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return c.newWriter(ctx, p.Volume, p.Bucket, p.Key, resp)
}

func (c *Client) newWriter(ctx context.Context, volume, bucket, key string, resp *stratopb.OpenKeyResponse) (*Writer, error) {
	ct, err := checksumType(resp.ChecksumType)
	if err != nil {
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
	return &Writer{c: c, ctx: ctx, volume: volume, bucket: bucket, key: key, openID: resp.OpenId,
		ctype: ct, bpc: bpc, blockSize: bs, spare: resp.Blocks}, nil
}

// Write buffers p and sends every full chunk to the pipeline.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, ErrWriterClosed
	}
	if w.err != nil {
		return 0, w.err
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

func (w *Writer) sendBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	data := w.buf
	w.buf = nil
	if err := w.send(data); err != nil {
		w.err = err
		return err
	}
	return nil
}

// send sends one chunk to the current block (starting a block if needed)
// and keeps at most MaxChunksInFlight unacknowledged.
func (w *Writer) send(data []byte) error {
	if w.cur == nil || w.curLen+int64(len(data)) > w.blockSize {
		if err := w.nextBlock(); err != nil {
			return err
		}
	}
	cs := &chunkSend{off: w.curLen, data: data, done: make(chan error, 1)}
	w.curLen += int64(len(data))
	w.inflight = append(w.inflight, cs)
	go w.transmit(w.cur, cs)
	for len(w.inflight) > w.c.opts.MaxChunksInFlight {
		if err := w.waitOldest(); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) transmit(bl *stratopb.BlockLocation, cs *chunkSend) {
	leader, followers := pipelineAddrs(bl)
	sums := checksum.Compute(w.ctype, w.bpc, cs.data)
	cs.done <- w.c.data.writeChunk(w.ctx, leader, &wire.WriteChunkRequest{
		Block: wireBlock(bl.BlockId), Offset: cs.off, Checksums: sums, Followers: followers}, cs.data)
}

func pipelineAddrs(bl *stratopb.BlockLocation) (leader string, followers []string) {
	members := bl.GetPipeline().GetMembers()
	if len(members) == 0 {
		return "", nil
	}
	for _, m := range members[1:] {
		followers = append(followers, m.DataAddr)
	}
	return members[0].DataAddr, followers
}

// waitOldest waits for the oldest chunk in flight, recovering from a
// pipeline failure.
func (w *Writer) waitOldest() error {
	cs := w.inflight[0]
	err := <-cs.done
	if err == nil {
		w.inflight[0] = nil
		w.inflight = w.inflight[1:]
		w.c.releaseChunk(cs.data)
		return nil
	}
	return w.recover(err)
}

func (w *Writer) waitAll() error {
	for len(w.inflight) > 0 {
		if err := w.waitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// recover handles the failure of the oldest chunk in flight (whose result
// was taken): the block is committed on the surviving replicas at the
// acknowledged length, and the chunks from the failed one on are sent again
// to a new block.
func (w *Writer) recover(cause error) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.failures++
	acked := w.inflight[0].off
	redo := make([][]byte, 0, len(w.inflight))
	for i, cs := range w.inflight {
		if i > 0 {
			// Whatever it says, it is sent again.
			if err := <-cs.done; err != nil {
				w.c.opts.Logger.Debug("client: a later chunk failed too", "key", w.key, "offset", cs.off, "err", err)
			}
		}
		redo = append(redo, cs.data)
	}
	w.inflight = w.inflight[:0]
	if w.failures > maxRecoveries {
		return fmt.Errorf("client: writing %s/%s/%s: giving up after %d pipeline failures: %w", w.volume, w.bucket, w.key, w.failures-1, cause)
	}
	w.c.opts.Logger.Warn("client: pipeline failed, moving to a new block", "key", w.key,
		"block", wireBlock(w.cur.BlockId).String(), "acked", acked, "err", cause)
	if err := w.seal(acked, failedNodes(w.cur, cause)); err != nil {
		return err
	}
	for _, d := range redo {
		if err := w.send(d); err != nil {
			return err
		}
	}
	return nil
}

// failedNodes names the datanodes of bl's pipeline that err blames: the
// followers a pipelined request names, or the leader itself.
func failedNodes(bl *stratopb.BlockLocation, err error) map[string]bool {
	members := bl.GetPipeline().GetMembers()
	failed := map[string]bool{}
	var we *wire.Error
	if errors.As(err, &we) {
		for _, f := range we.Failed {
			for _, m := range members {
				if m.DataAddr == f.Addr {
					failed[m.Id] = true
				}
			}
		}
		if len(failed) > 0 {
			return failed
		}
		switch we.Code {
		case wire.CodeContainerNotOpen, wire.CodeBadState:
			return failed // the container closed: no node is at fault
		}
	}
	if len(members) > 0 {
		failed[members[0].Id] = true
	}
	return failed
}

// seal ends the current block at length: committed (with fsync) on every
// replica not in failed, and dropped from the key if length is 0. Meta
// closes the container, and later blocks avoid it, its pipeline and the
// failed datanodes.
func (w *Writer) seal(length int64, failed map[string]bool) error {
	old := w.cur
	w.cur, w.curLen = nil, 0
	old.Length = length
	if length == 0 {
		w.blocks = w.blocks[:len(w.blocks)-1]
	} else {
		kept := 0
		for _, m := range old.GetPipeline().GetMembers() {
			if failed[m.Id] {
				continue
			}
			_, err := w.c.data.putBlock(w.ctx, m.DataAddr, &wire.PutBlockRequest{
				Block: wireBlock(old.BlockId), Length: length, Final: true, Sync: true})
			if err != nil {
				w.c.opts.Logger.Warn("client: commit on a surviving replica failed", "datanode", m.Id, "err", err)
				failed[m.Id] = true
				continue
			}
			kept++
		}
		if kept == 0 {
			return fmt.Errorf("client: writing %s/%s/%s: no replica of block %s kept its %d acknowledged bytes",
				w.volume, w.bucket, w.key, wireBlock(old.BlockId), length)
		}
	}
	var failedID string
	for id := range failed {
		failedID = id
		w.exclude.Datanodes = append(w.exclude.Datanodes, id)
	}
	cid := old.GetBlockId().GetContainerId()
	w.exclude.Containers = append(w.exclude.Containers, cid)
	w.exclude.Pipelines = append(w.exclude.Pipelines, old.GetPipeline().GetId())
	err := retryMeta(w.ctx, func(ctx context.Context) error {
		_, err := Cluster(ctx, w.c, func(ctx context.Context, cl stratopb.ClusterClient) (*stratopb.CloseContainerResponse, error) {
			return cl.CloseContainer(ctx, &stratopb.CloseContainerRequest{ContainerId: cid, FailedDatanode: failedID, Reason: "client write failed"})
		})
		return err
	})
	if err != nil {
		w.c.opts.Logger.Warn("client: asking meta to close a container failed", "container", cid, "err", err)
	}
	return nil
}

// nextBlock ends the current block and starts the next one.
func (w *Writer) nextBlock() error {
	if w.cur != nil {
		if err := w.finishBlock(); err != nil {
			return err
		}
	}
	var bl *stratopb.BlockLocation
	for len(w.spare) > 0 && bl == nil {
		if w.usable(w.spare[0]) {
			bl = w.spare[0]
		}
		w.spare = w.spare[1:]
	}
	if bl == nil {
		err := retryMeta(w.ctx, func(ctx context.Context) error {
			resp, err := ns(ctx, w.c, func(ctx context.Context, n stratopb.NamespaceClient) (*stratopb.AllocateBlockResponse, error) {
				return n.AllocateBlock(ctx, &stratopb.AllocateBlockRequest{Volume: w.volume, Bucket: w.bucket, Key: w.key,
					OpenId: w.openID, Exclude: &w.exclude, SizeHint: w.blockSize})
			})
			bl = resp.GetBlock()
			return err
		})
		if err != nil {
			return fmt.Errorf("client: writing %s/%s/%s: allocate a block: %w", w.volume, w.bucket, w.key, err)
		}
	}
	bl.Length = 0
	w.blocks = append(w.blocks, bl)
	w.cur, w.curLen = bl, 0
	return nil
}

// usable: a pre-allocated block avoids everything excluded since.
func (w *Writer) usable(bl *stratopb.BlockLocation) bool {
	for _, c := range w.exclude.Containers {
		if bl.GetBlockId().GetContainerId() == c {
			return false
		}
	}
	for _, m := range bl.GetPipeline().GetMembers() {
		for _, d := range w.exclude.Datanodes {
			if m.Id == d {
				return false
			}
		}
	}
	return true
}

// finishBlock waits for the current block's chunks and commits it as
// final on every replica.
func (w *Writer) finishBlock() error {
	if err := w.waitAll(); err != nil {
		return err
	}
	if w.cur == nil {
		return nil // a recovery sealed it
	}
	return w.putBlock(true, false)
}

// putBlock commits the current block's length through its pipeline; if
// that fails, the block is sealed on the surviving replicas instead.
func (w *Writer) putBlock(final, sync bool) error {
	bl := w.cur
	if w.curLen == 0 {
		if final {
			w.blocks = w.blocks[:len(w.blocks)-1]
			w.cur = nil
		}
		return nil
	}
	leader, followers := pipelineAddrs(bl)
	_, err := w.c.data.putBlock(w.ctx, leader, &wire.PutBlockRequest{
		Block: wireBlock(bl.BlockId), Length: w.curLen, Final: final, Sync: sync, Followers: followers})
	if err != nil {
		if cerr := w.ctx.Err(); cerr != nil {
			return cerr
		}
		w.failures++
		if w.failures > maxRecoveries {
			return fmt.Errorf("client: writing %s/%s/%s: giving up after %d pipeline failures: %w", w.volume, w.bucket, w.key, w.failures-1, err)
		}
		w.c.opts.Logger.Warn("client: block commit failed, sealing on the surviving replicas", "block", wireBlock(bl.BlockId).String(), "err", err)
		return w.seal(w.curLen, failedNodes(bl, err))
	}
	bl.Length = w.curLen
	if final {
		w.cur, w.curLen = nil, 0
	}
	return nil
}

// flush sends the partial chunk and waits until every replica holds
// everything written, committing the current block's length (fsynced with
// sync), then publishes the key's length in meta.
func (w *Writer) flush(sync bool) error {
	if w.closed {
		return ErrWriterClosed
	}
	if w.err != nil {
		return w.err
	}
	err := w.sendBuf()
	if err == nil {
		err = w.waitAll()
	}
	if err == nil && w.cur != nil {
		err = w.putBlock(false, sync)
	}
	if err == nil {
		err = w.commit(true)
	}
	if err != nil {
		w.err = err
	}
	return err
}

// Hflush makes what was written so far reach every replica and become
// visible to new readers (the key's length is published in meta).
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
		return w.err
	}
	err := w.sendBuf()
	if err == nil && w.cur != nil {
		err = w.finishBlock()
	}
	if err == nil {
		err = w.commit(false)
	}
	if err != nil {
		w.err = err
	}
	return err
}

func (w *Writer) release() {
	if w.buf != nil {
		w.c.releaseChunk(w.buf)
		w.buf = nil
	}
	for _, cs := range w.inflight {
		// The writer failed: the chunk's outcome no longer matters.
		if err := <-cs.done; err != nil {
			w.c.opts.Logger.Debug("client: an abandoned chunk failed", "key", w.key, "offset", cs.off, "err", err)
		}
	}
	w.inflight = nil
}

// commit publishes the blocks in meta: for good, or (hsync) keeping the key
// open. A retried final commit that finds the open key gone checks whether
// the first attempt went through.
func (w *Writer) commit(hsync bool) error {
	blocks := make([]*stratopb.BlockLocation, 0, len(w.blocks))
	for _, bl := range w.blocks {
		blocks = append(blocks, &stratopb.BlockLocation{BlockId: bl.BlockId, Length: bl.Length})
	}
	req := &stratopb.CommitKeyRequest{Volume: w.volume, Bucket: w.bucket, Key: w.key, OpenId: w.openID, Blocks: blocks, Hsync: hsync}
	tries := 0
	return retryMeta(w.ctx, func(ctx context.Context) error {
		tries++
		_, err := ns(ctx, w.c, func(ctx context.Context, n stratopb.NamespaceClient) (*stratopb.CommitKeyResponse, error) {
			return n.CommitKey(ctx, req)
		})
		if err != nil && tries > 1 && !hsync && status.Code(err) == codes.NotFound {
			if ki, lerr := w.c.LookupKey(ctx, w.volume, w.bucket, w.key); lerr == nil && ki.ObjectId == w.openID {
				return nil
			}
		}
		return err
	})
}
