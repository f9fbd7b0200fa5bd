package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/strato-io/strato/checksum"
)

// Container is one container of a volume. See the package documentation for
// its life cycle and concurrency rules.
type Container struct {
	v      *Volume
	id     uint64
	layout Layout
	dir    string // <volume>/containers/<id>
	chunks string // <dir>/chunks

	// gate is held shared by writes and exclusively by state changes, so a
	// state change waits for in-flight writes.
	gate     sync.RWMutex
	desc     descriptor // guarded by gate
	detached error      // guarded by gate: set when deleted or when the volume closed
	state    atomic.Uint32
	index    atomic.Int32 // desc.index, for readers that do not take gate
	parity   atomic.Bool  // a parity member (SetParity; not kept across restarts)

	shards [blockShards]blockShard

	commitMu sync.Mutex
	ctr      counters // guarded by commitMu

	// rowBound is at least the local ID of every block with a row: a block
	// above it has never been committed here, and its first write need not
	// look its row up. Read from the database once (rowBoundOnce), raised
	// under commitMu by every commit before its row is written.
	rowBoundOnce sync.Once
	rowBound     atomic.Uint64
	rowBoundErr  error

	dirtyMu    sync.Mutex
	dirty      []*openBlock // blocks in memory with writes not yet fsynced
	dirtyFiles []string     // files of released blocks with writes not yet fsynced

	dirMu    sync.Mutex  // serialises fsyncs of the chunks directory
	dirDirty atomic.Bool // a file was created in chunks since its last fsync

	// held is held shared by HoldBlocks (copies that read every block) and
	// tried exclusively by DeleteBlocks, which refuses rather than waits.
	held sync.RWMutex
}

// HoldBlocks keeps every block of the container in place until release is
// called: DeleteBlocks refuses with ErrBusy meanwhile. A copy of the whole
// container holds them from its listing of the blocks to its last read, so
// that a deletion cannot pull a listed block from under it. It waits for a
// DeleteBlocks in progress.
func (c *Container) HoldBlocks() (release func()) {
	c.held.RLock()
	return c.held.RUnlock
}

const blockShards = 32

type blockShard struct {
	mu sync.RWMutex
	m  map[uint64]*openBlock
}

// openBlock is the in-memory state of a block being written: a cached file
// handle and the list of chunks written so far, sorted by offset.
type openBlock struct {
	mu        sync.Mutex
	id        uint64
	loaded    bool     // committed state read from the database
	gone      bool     // evicted or deleted: look the block up again
	hasRow    bool     // the database holds a row for the block
	committed int64    // committed length
	f         vfs.File // FILE_PER_BLOCK: read-write handle, opened on first write
	df        *os.File // FILE_PER_BLOCK: O_DIRECT handle, opened on first aligned large write
	chunks    []chunkRec
	sums      []byte // checksum values of chunks, back to back
	end       int64  // max end offset of chunks
	dirty     bool   // written since the last fsync (and on the dirty list)
}

type chunkRec struct {
	off, n         int64
	sumOff, sumLen uint32
	bpc            uint32
	typ            checksum.Type
	unsynced       bool // FILE_PER_CHUNK: the chunk's file has not been fsynced
}

func (r *chunkRec) end() int64 { return r.off + r.n }

func (b *openBlock) checksums(r *chunkRec) checksum.Data {
	return checksum.Data{Type: r.typ, BytesPerChecksum: r.bpc, Sums: b.sums[r.sumOff : r.sumOff+r.sumLen]}
}

func newContainer(v *Volume, d descriptor, ctr counters) *Container {
	dir := v.fs.PathJoin(v.dir, containersDir, strconv.FormatUint(d.id, 10))
	c := &Container{v: v, id: d.id, layout: d.layout, dir: dir, chunks: v.fs.PathJoin(dir, chunksDir), desc: d, ctr: ctr}
	c.state.Store(uint32(d.state))
	c.index.Store(int32(d.index))
	for i := range c.shards {
		c.shards[i].m = make(map[uint64]*openBlock)
	}
	return c
}

func loadContainer(v *Volume, id uint64) (*Container, error) {
	dir := v.fs.PathJoin(v.dir, containersDir, strconv.FormatUint(id, 10))
	p, err := readFile(v.fs, v.fs.PathJoin(dir, descFile))
	if err != nil {
		return nil, err
	}
	d, err := decodeDescriptor(p)
	if err != nil {
		return nil, err
	}
	if d.id != id {
		return nil, fmt.Errorf("%w: descriptor of directory %d names container %d", ErrCorrupt, id, d.id)
	}
	var ctr counters
	row, closer, err := v.db.Get(counterKey(id))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
	case err != nil:
		return nil, ioError("read container counters", err)
	default:
		ctr, err = decodeCounterRow(row)
		closer.Close()
		if err != nil {
			return nil, err
		}
	}
	return newContainer(v, d, ctr), nil
}

// Info is a snapshot of a container's metadata.
type Info struct {
	ID     uint64
	State  State
	Layout Layout
	// BCSID is the highest block commit sequence ID assigned.
	BCSID uint64
	// UsedBytes is the sum of the committed lengths of its blocks.
	UsedBytes int64
	// BlockCount is the number of committed blocks.
	BlockCount int64
	// ReplicaIndex is the replica's index in an erasure coded container
	// (member m+1 of its block groups), 0 in a replicated one.
	ReplicaIndex int
}

// ID returns the container's ID.
func (c *Container) ID() uint64 { return c.id }

// Layout returns the container's layout.
func (c *Container) Layout() Layout { return c.layout }

// State returns the container's current state.
func (c *Container) State() State { return State(c.state.Load()) }

// Info returns a snapshot of the container's metadata.
func (c *Container) Info() Info {
	c.commitMu.Lock()
	ctr := c.ctr
	c.commitMu.Unlock()
	return Info{ID: c.id, State: c.State(), Layout: c.layout, BCSID: ctr.bcsID, UsedBytes: ctr.usedBytes, BlockCount: ctr.blockCount,
		ReplicaIndex: c.ReplicaIndex()}
}

// ReplicaIndex is the replica's index in an erasure coded container, 0 in
// a replicated one.
func (c *Container) ReplicaIndex() int { return int(c.index.Load()) }

// SetParity says this replica is a parity member of an erasure coded
// container: readers read it only to rebuild a lost member, so writers need
// not leave its bytes in the page cache. It lives in memory only: until
// told again after a restart, a member counts as data.
func (c *Container) SetParity() { c.parity.Store(true) }

// Parity reports whether SetParity was called.
func (c *Container) Parity() bool { return c.parity.Load() }

// SetReplicaIndex records, durably, that this replica holds index i of an
// erasure coded container (meta says so when it places the container).
// Setting the index it has does nothing; a replica that holds another
// index, or a replica that is not OPEN, keeps what it has (ErrInvalid,
// ErrBadState): its blocks are another member's, or already complete.
func (c *Container) SetReplicaIndex(i int) error {
	if !validIndex(i) || i == 0 {
		return fmt.Errorf("%w: replica index %d (1 to %d)", ErrInvalid, i, MaxReplicaIndex)
	}
	c.gate.Lock()
	defer c.gate.Unlock()
	if c.detached != nil {
		return c.detached
	}
	switch {
	case c.desc.index == i:
		return nil
	case c.desc.index != 0:
		return fmt.Errorf("%w: container %d holds replica index %d, not %d", ErrInvalid, c.id, c.desc.index, i)
	case c.State() != Open:
		return fmt.Errorf("%w: container %d is %v: its replica index is set when it is created", ErrBadState, c.id, c.State())
	}
	d := c.desc
	d.index = i
	if err := c.writeDescriptor(d); err != nil {
		return err
	}
	c.desc = d
	c.index.Store(int32(i))
	return nil
}

// MarkClosing moves an OPEN container to CLOSING: writes are refused from
// then on.
func (c *Container) MarkClosing() error {
	c.gate.Lock()
	defer c.gate.Unlock()
	return c.setStateLocked(Closing)
}

// MarkUnhealthy moves the container to UNHEALTHY (for example after Scan
// found a bad block). Writes are refused from then on.
func (c *Container) MarkUnhealthy() error {
	c.gate.Lock()
	defer c.gate.Unlock()
	return c.setStateLocked(Unhealthy)
}

// Close waits for in-flight writes, fsyncs every file written and the
// database, drops chunks never committed, and moves the container to CLOSED.
// Closing a CLOSED container does nothing.
func (c *Container) Close() error {
	c.gate.Lock()
	defer c.gate.Unlock()
	if c.detached != nil {
		return c.detached
	}
	st := c.State()
	if st == Closed {
		return nil
	}
	if !st.CanTransition(Closed) {
		return fmt.Errorf("%w: container %d is %v, cannot close", ErrBadState, c.id, st)
	}
	if err := c.Sync(); err != nil {
		return err
	}
	if err := c.release(); err != nil {
		return err
	}
	return c.setStateLocked(Closed)
}

func (c *Container) setStateLocked(next State) error {
	if c.detached != nil {
		return c.detached
	}
	st := c.State()
	if !st.CanTransition(next) {
		return fmt.Errorf("%w: container %d from %v to %v", ErrBadState, c.id, st, next)
	}
	if st == next {
		return nil
	}
	d := c.desc
	d.state = next
	if err := c.writeDescriptor(d); err != nil {
		return err
	}
	c.desc = d
	c.state.Store(uint32(next))
	return nil
}

// writeDescriptor replaces container.desc atomically and durably.
func (c *Container) writeDescriptor(d descriptor) error {
	fs := c.v.fs
	tmp := fs.PathJoin(c.dir, descFile+".tmp")
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return ioError("write descriptor", err)
	}
	_, err = f.Write(d.encode())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, fs.PathJoin(c.dir, descFile))
	}
	if err != nil {
		return ioError("write descriptor", err)
	}
	return syncDir(fs, c.dir)
}

// writable returns why the container refuses writes, or nil. The caller
// holds gate.
func (c *Container) writable() error {
	if c.detached != nil {
		return c.detached
	}
	if st := c.State(); st != Open {
		return fmt.Errorf("%w: container %d is %v", ErrNotOpen, c.id, st)
	}
	return nil
}

// detach makes the container refuse everything from now on, after waiting
// for the operations in flight, and closes its files.
func (c *Container) detach(why error) error {
	c.gate.Lock()
	defer c.gate.Unlock()
	if c.detached == nil {
		c.detached = why
	}
	return c.release()
}

// release closes the cached handles of all blocks and forgets their
// uncommitted chunks.
func (c *Container) release() error {
	var errs []error
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for id, b := range s.m {
			b.mu.Lock()
			errs = append(errs, b.closeFiles())
			b.gone = true
			b.mu.Unlock()
			delete(s.m, id)
		}
		s.mu.Unlock()
	}
	c.dirtyMu.Lock()
	c.dirty, c.dirtyFiles = nil, nil
	c.dirtyMu.Unlock()
	return errors.Join(errs...)
}

func (c *Container) shard(localID uint64) *blockShard {
	return &c.shards[(localID*0x9e3779b97f4a7c15)>>59]
}

// lockBlock returns the block's in-memory state, locked and loaded.
func (c *Container) lockBlock(localID uint64) (*openBlock, error) {
	s := c.shard(localID)
	for {
		s.mu.RLock()
		b := s.m[localID]
		s.mu.RUnlock()
		if b == nil {
			s.mu.Lock()
			if b = s.m[localID]; b == nil {
				b = &openBlock{id: localID}
				s.m[localID] = b
			}
			s.mu.Unlock()
		}
		b.mu.Lock()
		if b.gone {
			b.mu.Unlock()
			continue
		}
		if !b.loaded {
			if err := c.loadBlockLocked(b); err != nil {
				b.mu.Unlock()
				return nil, err
			}
		}
		return b, nil
	}
}

func (c *Container) loadBlockLocked(b *openBlock) error {
	bound, err := c.blockRowBound()
	if err != nil {
		return err
	}
	if b.id > bound {
		b.loaded = true // never committed: nothing to read
		return nil
	}
	blk, err := c.GetBlock(b.id)
	if errors.Is(err, ErrBlockNotFound) {
		b.loaded = true
		return nil
	}
	if err != nil {
		return err
	}
	for _, ch := range blk.Chunks {
		b.chunks = append(b.chunks, chunkRec{off: ch.Offset, n: ch.Length, sumOff: uint32(len(b.sums)), sumLen: uint32(len(ch.Checksums.Sums)), bpc: ch.Checksums.BytesPerChecksum, typ: ch.Checksums.Type})
		b.sums = append(b.sums, ch.Checksums.Sums...)
	}
	b.end, b.committed, b.hasRow, b.loaded = blk.Length, blk.Length, true, true
	return nil
}

// blockRowBound returns rowBound, reading it from the database the first
// time: the highest local ID with a row.
func (c *Container) blockRowBound() (uint64, error) {
	c.rowBoundOnce.Do(func() {
		it, err := c.v.db.NewIter(&pebble.IterOptions{LowerBound: blockKey(c.id, 0), UpperBound: append(containerPrefix(c.id), tagBlock+1)})
		if err != nil {
			c.rowBoundErr = ioError("find the container's last block", err)
			return
		}
		if it.Last() {
			if k := it.Key(); len(k) == 17 {
				c.rowBound.Store(beUint64(k[9:]))
			} else {
				c.rowBoundErr = fmt.Errorf("%w: block key %x", ErrCorrupt, k)
			}
		}
		if err := it.Close(); err != nil && c.rowBoundErr == nil {
			c.rowBoundErr = ioError("find the container's last block", err)
		}
	})
	return c.rowBound.Load(), c.rowBoundErr
}

// evictLocked drops a block from memory after closing its handle.
func (c *Container) evictLocked(b *openBlock) error {
	err := b.closeFiles()
	b.gone = true
	s := c.shard(b.id)
	s.mu.Lock()
	if s.m[b.id] == b {
		delete(s.m, b.id)
	}
	s.mu.Unlock()
	return err
}

func (b *openBlock) closeFiles() error {
	var errs []error
	if b.f != nil {
		errs = append(errs, b.f.Close())
		b.f = nil
	}
	if b.df != nil {
		errs = append(errs, b.df.Close())
		b.df = nil
	}
	return errors.Join(errs...)
}

func (c *Container) blockPath(localID uint64) string {
	return c.v.fs.PathJoin(c.chunks, strconv.FormatUint(localID, 10)+".block")
}

func (c *Container) chunkPath(localID uint64, off int64) string {
	return c.v.fs.PathJoin(c.chunks, strconv.FormatUint(localID, 10)+"_"+strconv.FormatInt(off, 10)+".chunk")
}

func readFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, ioError("open", err)
	}
	defer f.Close()
	p, err := io.ReadAll(f)
	if err != nil {
		return nil, ioError("read", err)
	}
	return p, nil
}

// DirectIO reports whether the container's volume reads and writes large
// pieces with O_DIRECT (Options.DisableDirectIO unset, and the filesystem
// has not refused it).
func (c *Container) DirectIO() bool { return c.v.direct.Load() }
