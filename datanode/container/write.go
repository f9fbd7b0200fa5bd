package container

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/strato-io/strato/checksum"
)

// WriteOptions tune one WriteChunk.
type WriteOptions struct {
	// NoVerify skips checking the data against its checksums (the caller
	// has just computed them, or verifies them elsewhere).
	NoVerify bool
	// Cache writes the chunk through the page cache even where O_DIRECT
	// applies: the replica readers ask first keeps the block in memory
	// for reads soon after the write.
	Cache bool
}

// WriteChunk writes data at offset of block localID, with the checksums that
// cover it (windows starting at offset). The chunk becomes part of the block
// at the next PutBlock whose length covers it. A chunk that overlaps data
// already written is refused with ErrOverwrite unless it is an identical
// retry (same offset, length, bytes and checksums), which succeeds without
// writing.
//
// The write path does one pwrite and no allocation in the common case.
func (c *Container) WriteChunk(localID uint64, offset int64, data []byte, sums checksum.Data, opts WriteOptions) error {
	if err := c.checkChunk(localID, offset, data, sums, opts); err != nil {
		return err
	}
	c.gate.RLock()
	defer c.gate.RUnlock()
	if err := c.writable(); err != nil {
		return err
	}
	b, err := c.lockBlock(localID)
	if err != nil {
		return err
	}
	defer b.mu.Unlock()

	i, retry, err := b.place(offset, int64(len(data)))
	if err != nil {
		return err
	}
	if retry != nil {
		return c.checkRetryLocked(b, retry, data, sums)
	}
	unsynced, err := c.writeData(b, offset, data, opts.Cache)
	if err != nil {
		return err
	}
	c.recordChunk(b, i, offset, int64(len(data)), sums, unsynced)
	return nil
}

// checkChunk refuses a chunk that is empty, out of bounds, or whose
// checksums are malformed or (unless opts.NoVerify) do not match.
func (c *Container) checkChunk(localID uint64, offset int64, data []byte, sums checksum.Data, opts WriteOptions) error {
	n := int64(len(data))
	switch {
	case n == 0:
		return fmt.Errorf("%w: empty chunk (block %d offset %d)", ErrInvalid, localID, offset)
	case offset < 0:
		return fmt.Errorf("%w: negative offset %d (block %d)", ErrInvalid, offset, localID)
	case n > c.v.opts.MaxChunkSize:
		return fmt.Errorf("%w: %d bytes, maximum %d (block %d)", ErrChunkTooLarge, n, c.v.opts.MaxChunkSize, localID)
	case offset > c.v.opts.MaxBlockSize-n:
		return fmt.Errorf("%w: chunk [%d, %d) of block %d, maximum block size %d", ErrBlockTooLarge, offset, offset+n, localID, c.v.opts.MaxBlockSize)
	}
	if err := sums.Validate(); err != nil {
		return fmt.Errorf("%w: block %d offset %d: %w", ErrInvalid, localID, offset, err)
	}
	if sums.Type == checksum.NONE {
		return nil
	}
	if want := checksum.Windows(n, sums.BytesPerChecksum); sums.Count() != want {
		return fmt.Errorf("%w: %d bytes need %d checksums of %d bytes, got %d (block %d offset %d)",
			ErrInvalid, n, want, sums.BytesPerChecksum, sums.Count(), localID, offset)
	}
	if !opts.NoVerify {
		if err := checksum.Verify(sums, 0, data); err != nil {
			return fmt.Errorf("%w: block %d offset %d: %w", ErrChecksum, localID, offset, err)
		}
	}
	return nil
}

// place finds where a chunk of n bytes at offset goes in the block's chunk
// list: the index to insert it at, or the chunk it repeats exactly (a
// retry), or ErrOverwrite when it overlaps another. Appending past the end
// is the common case.
func (b *openBlock) place(offset, n int64) (int, *chunkRec, error) {
	i := len(b.chunks)
	if i == 0 || offset >= b.end {
		return i, nil, nil
	}
	lo, hi := 0, len(b.chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.chunks[m].off < offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	i = lo
	if i < len(b.chunks) && b.chunks[i].off == offset && b.chunks[i].n == n {
		return i, &b.chunks[i], nil
	}
	if i > 0 && b.chunks[i-1].end() > offset {
		p := b.chunks[i-1]
		return 0, nil, fmt.Errorf("%w: chunk [%d, %d) of block %d overlaps [%d, %d)", ErrOverwrite, offset, offset+n, b.id, p.off, p.end())
	}
	if i < len(b.chunks) && b.chunks[i].off < offset+n {
		p := b.chunks[i]
		return 0, nil, fmt.Errorf("%w: chunk [%d, %d) of block %d overlaps [%d, %d)", ErrOverwrite, offset, offset+n, b.id, p.off, p.end())
	}
	return i, nil, nil
}

// writeData writes the chunk's bytes to the block's file (FILE_PER_BLOCK:
// one pwrite, or O_DIRECT for large aligned chunks) or to a file of its own
// (FILE_PER_CHUNK, reported unsynced).
func (c *Container) writeData(b *openBlock, offset int64, data []byte, cache bool) (unsynced bool, err error) {
	n := int64(len(data))
	switch c.layout {
	case FilePerBlock:
		if !cache && n >= c.v.opts.DirectIOMinSize && c.v.direct.Load() && directAligned(data, offset) {
			ok, err := c.writeDirectLocked(b, offset, data)
			if err != nil || ok {
				return false, err
			}
		}
		if b.f == nil {
			c.reuseFileLocked(b)
			f, err := c.v.fs.OpenReadWrite(c.blockPath(b.id), vfs.WriteCategoryUnspecified)
			if err != nil {
				return false, ioError(fmt.Sprintf("open block %d", b.id), err)
			}
			b.f = f
			c.dirDirty.Store(true)
		}
		if _, err := b.f.WriteAt(data, offset); err != nil {
			return false, ioError(fmt.Sprintf("write block %d at %d", b.id, offset), err)
		}
		if c.v.opts.EagerWriteback && n >= c.v.opts.EagerWritebackMinSize {
			if fd := b.f.Fd(); fd != vfs.InvalidFd {
				writeback(fd, offset, n)
			}
		}
		if c.v.wcache != nil {
			c.v.wcache.wrote(c.blockPath(b.id), offset, n)
		}
		return false, nil
	case FilePerChunk:
		return true, c.writeChunkFile(b.id, offset, data)
	}
	return false, nil
}

// recordChunk adds the written chunk to the block's list at index i and
// marks the block dirty (its writes wait for an fsync).
func (c *Container) recordChunk(b *openBlock, i int, offset, n int64, sums checksum.Data, unsynced bool) {
	rec := chunkRec{off: offset, n: n, sumOff: uint32(len(b.sums)), sumLen: uint32(len(sums.Sums)),
		bpc: sums.BytesPerChecksum, typ: sums.Type, unsynced: unsynced}
	b.sums = append(b.sums, sums.Sums...)
	if i == len(b.chunks) {
		b.chunks = append(b.chunks, rec)
	} else {
		b.chunks = slices.Insert(b.chunks, i, rec)
	}
	b.end = max(b.end, offset+n)
	if !b.dirty {
		b.dirty = true
		c.dirtyMu.Lock()
		c.dirty = append(c.dirty, b)
		c.dirtyMu.Unlock()
	}
}

// directAligned reports whether data can be written with O_DIRECT at off.
func directAligned(data []byte, off int64) bool {
	return off%directIOAlign == 0 && len(data)%directIOAlign == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(data)))%directIOAlign == 0
}

// writeDirectLocked writes with O_DIRECT; false means the filesystem
// refused O_DIRECT and the caller should write buffered.
func (c *Container) writeDirectLocked(b *openBlock, offset int64, data []byte) (bool, error) {
	if b.df == nil {
		c.reuseFileLocked(b)
		df, err := openDirect(c.blockPath(b.id))
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
			c.v.direct.Store(false)
			return false, nil
		}
		if err != nil {
			return false, ioError(fmt.Sprintf("open block %d", b.id), err)
		}
		b.df = df
		c.dirDirty.Store(true)
	}
	if _, err := b.df.WriteAt(data, offset); err != nil {
		return false, ioError(fmt.Sprintf("write block %d at %d", b.id, offset), err)
	}
	return true, nil
}

func (c *Container) writeChunkFile(localID uint64, offset int64, data []byte) error {
	path := c.chunkPath(localID, offset)
	f, err := c.v.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return ioError(fmt.Sprintf("create chunk file of block %d at %d", localID, offset), err)
	}
	c.dirDirty.Store(true)
	_, err = f.WriteAt(data, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = c.v.fs.Remove(path)
		return ioError(fmt.Sprintf("write chunk file of block %d at %d", localID, offset), err)
	}
	return nil
}

// checkRetryLocked accepts a chunk identical to one already written.
func (c *Container) checkRetryLocked(b *openBlock, r *chunkRec, data []byte, sums checksum.Data) error {
	old := b.checksums(r)
	if old.Type != sums.Type || old.BytesPerChecksum != sums.BytesPerChecksum || !bytes.Equal(old.Sums, sums.Sums) {
		return fmt.Errorf("%w: chunk [%d, %d) of block %d rewritten with different checksums", ErrOverwrite, r.off, r.end(), b.id)
	}
	have := make([]byte, r.n)
	if err := c.readRange(b.id, r.off, have, Chunk{Offset: r.off, Length: r.n}); err != nil {
		return err
	}
	if !bytes.Equal(have, data) {
		return fmt.Errorf("%w: chunk [%d, %d) of block %d rewritten with different bytes", ErrOverwrite, r.off, r.end(), b.id)
	}
	return nil
}

// PutOptions tune one PutBlock.
type PutOptions struct {
	// Sync makes the block survive a power loss before PutBlock returns: its
	// files and the chunks directory are fsynced, then the database WAL.
	// Without it the block's row is still in the fsynced WAL (it survives a
	// crash of the process), but its bytes may be only in the page cache.
	Sync bool
	// Final says the block is complete: its file handle and chunk list are
	// released at once (unsynced files are remembered by name and fsynced
	// by the next Sync). Chunks past the committed length are dropped. A
	// later WriteChunk to the block still works; it reloads the committed
	// state.
	Final bool
}

// PutBlock commits block localID at the given length: the chunks written so
// far must tile [0, length) (ErrIncomplete otherwise; chunks past length stay
// pending). It bumps the container's bcsID and returns the new value.
// A committed length never shrinks.
func (c *Container) PutBlock(localID uint64, length int64, opts PutOptions) (uint64, error) {
	if length < 0 || length > c.v.opts.MaxBlockSize {
		return 0, fmt.Errorf("%w: block %d length %d (maximum %d)", ErrInvalid, localID, length, c.v.opts.MaxBlockSize)
	}
	c.gate.RLock()
	defer c.gate.RUnlock()
	if err := c.writable(); err != nil {
		if st := c.State(); opts.Sync && c.detached == nil && (st == Closing || st == Closed) {
			return c.syncCommitted(localID, length, err)
		}
		return 0, err
	}
	b, err := c.lockBlock(localID)
	if err != nil {
		return 0, err
	}
	defer b.mu.Unlock()
	if length < b.committed {
		if opts.Sync && b.hasRow {
			// The block is committed further than the file uses it (the
			// file was truncated inside it, or its writer's lease was
			// recovered at an earlier hsync): an appender's hsync fsyncs
			// it as it is, writing nothing.
			return c.syncHeldLocked(b)
		}
		return 0, fmt.Errorf("%w: block %d is committed at %d, cannot shrink to %d", ErrInvalid, localID, b.committed, length)
	}
	k, end := 0, int64(0)
	for ; k < len(b.chunks) && b.chunks[k].off < length; k++ {
		if r := &b.chunks[k]; r.off != end {
			return 0, fmt.Errorf("%w: block %d has no data in [%d, %d)", ErrIncomplete, localID, end, r.off)
		}
		end = b.chunks[k].end()
	}
	if end != length {
		if end > length {
			return 0, fmt.Errorf("%w: block %d: a chunk spans the length %d (ends at %d)", ErrIncomplete, localID, length, end)
		}
		return 0, fmt.Errorf("%w: block %d has data up to %d, not %d", ErrIncomplete, localID, end, length)
	}
	if opts.Sync {
		if err := c.syncBlockLocked(b); err != nil {
			return 0, err
		}
		// Writes made before the block was last released (a Final PutBlock
		// without sync) wait, by file name, for a container Sync: this
		// block's share of them must be durable now too.
		if err := c.syncReleasedLocked(b.id); err != nil {
			return 0, err
		}
		if err := c.syncChunksDir(); err != nil {
			return 0, err
		}
	}
	blk := Block{LocalID: localID, Length: length, Chunks: make([]Chunk, k)}
	for j := range k {
		r := &b.chunks[j]
		blk.Chunks[j] = Chunk{Offset: r.off, Length: r.n, Checksums: b.checksums(r)}
	}

	bound, err := c.blockRowBound()
	if err != nil {
		return 0, err
	}
	c.commitMu.Lock()
	if localID > bound {
		c.rowBound.Store(max(c.rowBound.Load(), localID)) // commitMu orders the raises
	}
	ctr := c.ctr
	ctr.bcsID++
	ctr.usedBytes += length - b.committed
	if !b.hasRow {
		ctr.blockCount++
	}
	blk.BCSID = ctr.bcsID
	batch := c.v.db.NewBatch()
	_ = batch.Set(blockKey(c.id, localID), appendBlockRow(nil, &blk), nil)
	_ = batch.Set(counterKey(c.id), appendCounterRow(nil, ctr), nil)
	// Committed without waiting while commitMu keeps rows in bcsID order;
	// the WAL sync follows outside the lock so that concurrent PutBlocks
	// share one fsync.
	err = c.v.dbWrite(func() error { return batch.Commit(pebble.NoSync) })
	_ = batch.Close()
	if err == nil {
		c.ctr = ctr
	}
	c.commitMu.Unlock()
	if err != nil {
		return 0, ioError(fmt.Sprintf("commit block %d", localID), err)
	}
	b.committed, b.hasRow = length, true
	// The row must be in the kernel before PutBlock returns, with or
	// without Sync: a NoSync commit sits in Pebble's own WAL buffer, not
	// yet written to the file, and a crash of the process alone would lose
	// a block the client was told is committed (its chunks are safe in the
	// kernel). A log sync writes it there (walfs.Deferred); with Sync it
	// reaches the disk too, as the block's files did above.
	sync := func() error { return c.v.dbWrite(func() error { return c.v.db.LogData(nil, pebble.Sync) }) }
	if opts.Sync {
		err = c.v.durable(sync)
	} else {
		err = sync()
	}
	if err != nil {
		return 0, ioError("sync volume database", err)
	}
	if opts.Final {
		// Release the handle and the chunk list now, so that a datanode
		// holds memory and descriptors only for blocks being written;
		// unsynced files are remembered by name for the next Sync.
		if b.dirty {
			c.dirtyMu.Lock()
			c.dirtyFiles = c.appendUnsyncedLocked(c.dirtyFiles, b)
			c.dirtyMu.Unlock()
			b.dirty = false
		}
		if err := c.evictLocked(b); err != nil {
			return 0, ioError(fmt.Sprintf("close block %d", localID), err)
		}
	}
	return blk.BCSID, nil
}

// appendUnsyncedLocked appends the paths of the block's files with unsynced
// writes.
func (c *Container) appendUnsyncedLocked(dst []string, b *openBlock) []string {
	switch c.layout {
	case FilePerBlock:
		return append(dst, c.blockPath(b.id))
	case FilePerChunk:
		for _, r := range b.chunks {
			if r.unsynced {
				dst = append(dst, c.chunkPath(b.id, r.off))
			}
		}
	}
	return dst
}

// syncReleasedLocked fsyncs the files of block id that were remembered by
// name when the block was released with unsynced writes, and forgets them.
// On error the files not synced stay pending.
func (c *Container) syncReleasedLocked(id uint64) error {
	single, prefix := c.blockPath(id), c.v.fs.PathJoin(c.chunks, strconv.FormatUint(id, 10)+"_")
	mine := func(p string) bool {
		if c.layout == FilePerBlock {
			return p == single
		}
		return strings.HasPrefix(p, prefix) && strings.HasSuffix(p, ".chunk")
	}
	c.dirtyMu.Lock()
	var paths []string
	c.dirtyFiles = slices.DeleteFunc(c.dirtyFiles, func(p string) bool {
		if mine(p) {
			paths = append(paths, p)
			return true
		}
		return false
	})
	c.dirtyMu.Unlock()
	for i, p := range paths {
		if err := syncFile(c.v.fs, p); err != nil && !isNotExist(err) {
			c.dirtyMu.Lock()
			c.dirtyFiles = append(c.dirtyFiles, paths[i:]...)
			c.dirtyMu.Unlock()
			return err
		}
	}
	return nil
}

// syncCommitted serves a synced PutBlock on a CLOSING or CLOSED container
// (gate held for reading): nothing may be written any more, but a block
// already committed at length or beyond is made durable, as an hsync
// asks. A CLOSED container's files were fsynced when it closed; a CLOSING
// one's may still be in the page cache. A block committed shorter than
// length gets notOpen: this replica cannot hold what the caller wants
// synced.
func (c *Container) syncCommitted(localID uint64, length int64, notOpen error) (uint64, error) {
	b, err := c.lockBlock(localID)
	if err != nil {
		return 0, err
	}
	defer b.mu.Unlock()
	if !b.hasRow || b.committed < length {
		return 0, fmt.Errorf("%w; block %d is committed at %d here, not %d", notOpen, localID, b.committed, length)
	}
	if c.State() == Closing {
		return c.syncHeldLocked(b)
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	return c.ctr.bcsID, nil
}

// syncHeldLocked fsyncs block b as it is committed (its files, and the
// volume's database holding its row), writing nothing, and returns the
// container's bcsID.
func (c *Container) syncHeldLocked(b *openBlock) (uint64, error) {
	if err := c.syncBlockLocked(b); err != nil {
		return 0, err
	}
	if err := c.syncReleasedLocked(b.id); err != nil {
		return 0, err
	}
	if err := c.syncChunksDir(); err != nil {
		return 0, err
	}
	if err := c.v.syncDB(); err != nil {
		return 0, ioError("sync volume database", err)
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	return c.ctr.bcsID, nil
}

// syncBlockLocked fsyncs the files holding the block's unsynced writes.
func (c *Container) syncBlockLocked(b *openBlock) error {
	if !b.dirty {
		return nil
	}
	switch c.layout {
	case FilePerBlock:
		// One fsync covers the inode whichever handle wrote.
		var err error
		if b.f != nil {
			err = b.f.Sync()
		} else if b.df != nil {
			err = b.df.Sync()
		}
		if err != nil {
			return ioError(fmt.Sprintf("sync block %d", b.id), err)
		}
	case FilePerChunk:
		for i := range b.chunks {
			r := &b.chunks[i]
			if !r.unsynced {
				continue
			}
			if err := syncFile(c.v.fs, c.chunkPath(b.id, r.off)); err != nil {
				return err
			}
			r.unsynced = false
		}
	}
	b.dirty = false
	return nil
}

func syncFile(fs vfs.FS, path string) error {
	f, err := fs.Open(path)
	if err != nil {
		return ioError("open for sync", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return ioError("sync", err)
	}
	return nil
}

func (c *Container) syncChunksDir() error {
	c.dirMu.Lock()
	defer c.dirMu.Unlock()
	if !c.dirDirty.Swap(false) {
		return nil
	}
	if err := syncDir(c.v.fs, c.chunks); err != nil {
		c.dirDirty.Store(true)
		return err
	}
	return nil
}

// Sync makes every write acknowledged so far durable: it fsyncs the files
// with unsynced writes (Options.SyncParallelism at a time) — those of blocks
// being written and those of blocks released by a Final PutBlock — then the
// chunks directory, then the database WAL (so committed rows are durable
// too). On error, what was not synced stays pending for the next Sync.
func (c *Container) Sync() error {
	c.dirtyMu.Lock()
	blocks, files := c.dirty, c.dirtyFiles
	c.dirty, c.dirtyFiles = nil, nil
	c.dirtyMu.Unlock()

	type job struct {
		b    *openBlock
		path string
	}
	var (
		mu         sync.Mutex
		errs       []error
		wg         sync.WaitGroup
		next       = make(chan job)
		retryB     []*openBlock
		retryFiles []string
	)
	for range min(c.v.opts.SyncParallelism, len(blocks)+len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				var err error
				if j.b != nil {
					j.b.mu.Lock()
					if !j.b.gone {
						err = c.syncBlockLocked(j.b)
					}
					j.b.mu.Unlock()
				} else if err = syncFile(c.v.fs, j.path); isNotExist(err) {
					err = nil // deleted since
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					if j.b != nil {
						retryB = append(retryB, j.b)
					} else {
						retryFiles = append(retryFiles, j.path)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, b := range blocks {
		next <- job{b: b}
	}
	for _, p := range files {
		next <- job{path: p}
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		c.dirtyMu.Lock()
		c.dirty = append(c.dirty, retryB...)
		c.dirtyFiles = append(c.dirtyFiles, retryFiles...)
		c.dirtyMu.Unlock()
		return errors.Join(errs...)
	}
	if err := c.syncChunksDir(); err != nil {
		return err
	}
	if err := c.v.syncDB(); err != nil {
		return ioError("sync volume database", err)
	}
	return nil
}

// DeleteBlock removes a block's row and files. It is allowed in every state
// but refused for a block never committed nor written (ErrBlockNotFound).
// The row goes first, durably; files left by a crash right after are
// orphans that Scan reports.
func (c *Container) DeleteBlock(localID uint64) error {
	c.gate.RLock()
	defer c.gate.RUnlock()
	if c.detached != nil {
		return c.detached
	}
	b, err := c.lockBlock(localID)
	if err != nil {
		return err
	}
	defer b.mu.Unlock()
	if !b.hasRow && len(b.chunks) == 0 {
		_ = c.evictLocked(b)
		return fmt.Errorf("%w: block %d of container %d", ErrBlockNotFound, localID, c.id)
	}
	if b.hasRow {
		c.commitMu.Lock()
		ctr := c.ctr
		ctr.usedBytes -= b.committed
		ctr.blockCount--
		batch := c.v.db.NewBatch()
		_ = batch.Delete(blockKey(c.id, localID), nil)
		_ = batch.Set(counterKey(c.id), appendCounterRow(nil, ctr), nil)
		err := c.v.durable(func() error { return batch.Commit(pebble.Sync) })
		_ = batch.Close()
		if err == nil {
			c.ctr = ctr
		}
		c.commitMu.Unlock()
		if err != nil {
			return ioError(fmt.Sprintf("delete block %d", localID), err)
		}
	}
	b.dirty = false
	if err := c.evictLocked(b); err != nil {
		return ioError(fmt.Sprintf("close block %d", localID), err)
	}
	var errs []error
	switch c.layout {
	case FilePerBlock:
		errs = append(errs, c.v.discardBlockFile(c.blockPath(localID)))
	case FilePerChunk:
		for _, r := range b.chunks {
			errs = append(errs, removeIfExists(c.v.fs, c.chunkPath(localID, r.off)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return ioError(fmt.Sprintf("remove files of block %d", localID), err)
	}
	return nil
}

// writeback starts a chunk's writeback (a variable: tests count its calls).
var writeback = startWriteback

// reuseFileLocked gives a block that has never held data a recycled file
// (recycle.go) when the volume keeps one, so that opening it creates none;
// an existing file of the block is never replaced. The caller holds b.mu.
func (c *Container) reuseFileLocked(b *openBlock) {
	if !b.hasRow && b.end == 0 && c.v.recycled.take(c.blockPath(b.id)) {
		c.dirDirty.Store(true)
	}
}

// discardBlockFile removes the file of a deleted block, or keeps it for a
// new block (recycle.go).
func (v *Volume) discardBlockFile(path string) error {
	if v.recycled.put(path) {
		return nil
	}
	return removeIfExists(v.fs, path)
}

func removeIfExists(fs vfs.FS, path string) error {
	if err := fs.Remove(path); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}
