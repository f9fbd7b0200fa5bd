package container

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/strato-io/strato/checksum"
)

// tmpDir is the volume's directory for work in progress (imports); its
// content is garbage when the volume opens.
const (
	tmpDir       = "tmp"
	importPrefix = "import-"
)

// Import is a CLOSED container being copied into a volume from another
// datanode. Its files are written into a temporary directory
// (<volume>/tmp/import-<id>-<random>/); Commit verifies every block
// against its checksums and only then renames the directory into place
// and registers the container, CLOSED, with its rows. Abort, a failed
// Commit, or a restart leaves nothing behind.
//
// An Import belongs to one goroutine. While it is in progress, the volume
// refuses to create or import another container with its ID.
type Import struct {
	v      *Volume
	id     uint64
	layout Layout
	dir    string
	chunks string
	files  map[string]vfs.File // open handles of the files written
	direct map[string]*os.File // O_DIRECT handles of the same files
	done   bool
	index  int // replica index the imported container holds (SetReplicaIndex)

	// Set by Expect: the blocks to come and each file's verification as
	// its bytes arrive.
	expected []Block
	streams  map[string]*streamFile

	// Set by WriteChunk: the chunks whose checksums the caller computed
	// from the bytes it wrote (file, offset and length → checksums).
	written map[writtenChunk]string
}

// writtenChunk names a chunk written with WriteChunk.
type writtenChunk struct {
	path        string
	off, length int64
}

// BeginImport starts importing container id with the given layout.
// ErrExists if the volume holds or is importing the ID.
func (v *Volume) BeginImport(id uint64, layout Layout) (*Import, error) {
	if id == 0 {
		return nil, fmt.Errorf("%w: 0", ErrInvalidID)
	}
	if !layout.Valid() {
		return nil, fmt.Errorf("%w: layout %d", ErrInvalid, layout)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	if _, ok := v.containers[id]; ok {
		return nil, fmt.Errorf("%w: %d", ErrExists, id)
	}
	if v.importing[id] {
		return nil, fmt.Errorf("%w: %d (being imported)", ErrExists, id)
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	dir := v.fs.PathJoin(v.dir, tmpDir, importPrefix+strconv.FormatUint(id, 10)+"-"+hex.EncodeToString(r[:]))
	im := &Import{v: v, id: id, layout: layout, dir: dir, chunks: v.fs.PathJoin(dir, chunksDir), files: map[string]vfs.File{}}
	if err := v.fs.MkdirAll(im.chunks, 0o755); err != nil {
		return nil, ioError("create import directory", err)
	}
	if v.importing == nil {
		v.importing = map[uint64]bool{}
	}
	v.importing[id] = true
	return im, nil
}

// Dir returns the import's temporary directory.
func (im *Import) Dir() string { return im.dir }

// SetReplicaIndex makes the imported container hold replica index i of an
// erasure coded container (a rebuilt or copied member); call it before
// Commit.
func (im *Import) SetReplicaIndex(i int) error {
	if !validIndex(i) {
		return fmt.Errorf("%w: replica index %d (0 to %d)", ErrInvalid, i, MaxReplicaIndex)
	}
	im.index = i
	return nil
}

// path returns the file of block localID that holds the chunk starting at
// chunkOffset (FILE_PER_CHUNK) or the whole block (FILE_PER_BLOCK, where
// chunkOffset must be 0).
func (im *Import) path(localID uint64, chunkOffset int64) (string, error) {
	switch {
	case chunkOffset < 0:
		return "", fmt.Errorf("%w: chunk offset %d", ErrInvalid, chunkOffset)
	case im.layout == FilePerBlock && chunkOffset != 0:
		return "", fmt.Errorf("%w: chunk offset %d in a FILE_PER_BLOCK container", ErrInvalid, chunkOffset)
	case im.layout == FilePerBlock:
		return im.v.fs.PathJoin(im.chunks, strconv.FormatUint(localID, 10)+".block"), nil
	}
	return im.v.fs.PathJoin(im.chunks, strconv.FormatUint(localID, 10)+"_"+strconv.FormatInt(chunkOffset, 10)+".chunk"), nil
}

// WriteAt writes p at fileOffset in the file of block localID named by
// chunkOffset (see ImportDataRequest in package wire). After Expect, the
// bytes of a file written front to back are verified here (ErrChecksum for
// a bad window); otherwise nothing is verified until Commit.
//
// Large aligned pieces (a receive buffer of at least DirectIOMinSize at a
// multiple of 4 KiB, as IMPORT_DATA frames are) are written with O_DIRECT
// on Linux: an imported container is closed and cold, and copying it
// through the page cache cost the target most of its CPU (pwrite's copy
// and, once memory filled, page reclaim). The rest is buffered, with
// writeback started at once under the volume's EagerWriteback. Commit's
// fsync covers both.
func (im *Import) WriteAt(localID uint64, chunkOffset, fileOffset int64, p []byte) error {
	if im.done {
		return fmt.Errorf("%w: import of container %d has ended", ErrInvalid, im.id)
	}
	if fileOffset < 0 || fileOffset > im.v.opts.MaxBlockSize-int64(len(p)) {
		return fmt.Errorf("%w: block %d: write at %d+%d past the maximum block size", ErrBlockTooLarge, localID, fileOffset, len(p))
	}
	path, err := im.path(localID, chunkOffset)
	if err != nil {
		return err
	}
	f := im.files[path]
	if f == nil {
		if f, err = im.v.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified); err != nil {
			return ioError("create imported file", err)
		}
		im.files[path] = f
	}
	if sf := im.streams[path]; sf != nil {
		if err := sf.feed(fileOffset, p); err != nil {
			return im.checksumError(localID, err)
		}
	}
	if ok, err := im.writeDirect(path, fileOffset, p); ok || err != nil {
		return err
	}
	if _, err := f.WriteAt(p, fileOffset); err != nil {
		return ioError("write imported file", err)
	}
	if im.v.opts.EagerWriteback {
		if fd := f.Fd(); fd != vfs.InvalidFd {
			startWriteback(fd, fileOffset, int64(len(p)))
		}
	}
	return nil
}

// Commit verifies the files written against blocks (every chunk's bytes
// against its checksums, every file exactly as long as its chunks, no
// file that no block names), makes them durable, and registers the
// container CLOSED with the blocks' rows and bcsID: the rows are written
// in one synced batch, then the directory is renamed into place, which is
// the commit point (a restart before it removes the rows with the
// directory). On error nothing is left; the Import is over either way.
func (im *Import) Commit(blocks []Block, bcsID uint64) (Info, error) {
	if im.done {
		return Info{}, fmt.Errorf("%w: import of container %d has ended", ErrInvalid, im.id)
	}
	info, err := im.commit(blocks, bcsID)
	if err != nil {
		_ = im.Abort()
		return Info{}, err
	}
	return info, nil
}

func (im *Import) commit(blocks []Block, bcsID uint64) (Info, error) {
	v, fs := im.v, im.v.fs
	ctr := counters{bcsID: bcsID}
	want := map[string]int64{} // file → length
	var buf []byte
	for i := range blocks {
		b := &blocks[i]
		if i > 0 && b.LocalID <= blocks[i-1].LocalID {
			return Info{}, fmt.Errorf("%w: block %d follows block %d", ErrInvalid, b.LocalID, blocks[i-1].LocalID)
		}
		if b.BCSID > bcsID || b.Length > v.opts.MaxBlockSize {
			return Info{}, fmt.Errorf("%w: block %d: bcsID %d or length %d out of range", ErrInvalid, b.LocalID, b.BCSID, b.Length)
		}
		var end int64
		for _, ch := range b.Chunks {
			if ch.Offset != end || ch.Length <= 0 {
				return Info{}, fmt.Errorf("%w: block %d: chunk at [%d, %d) does not follow %d", ErrInvalid, b.LocalID, ch.Offset, ch.Offset+ch.Length, end)
			}
			end += ch.Length
			path, fileOff := im.blockFile(b.LocalID, ch.Offset)
			want[path] = max(want[path], fileOff+ch.Length)
			f := im.files[path]
			if f == nil {
				return Info{}, fmt.Errorf("%w: block %d: no data received for the chunk at %d", ErrIncomplete, b.LocalID, ch.Offset)
			}
			if im.verifiedOnArrival(path, blocks) {
				continue
			}
			if sums, ok := im.written[writtenChunk{path, fileOff, ch.Length}]; ok && sums == sumsKey(ch.Checksums) {
				continue // written with WriteChunk, these checksums computed from its bytes
			}
			if int64(cap(buf)) < ch.Length {
				buf = make([]byte, ch.Length)
			}
			p := buf[:ch.Length]
			if n, err := f.ReadAt(p, fileOff); n != len(p) {
				return Info{}, fmt.Errorf("%w: block %d: chunk at %d: %d of %d bytes received (%w)", ErrIncomplete, b.LocalID, ch.Offset, n, len(p), err)
			}
			if err := checksum.Verify(ch.Checksums, 0, p); err != nil {
				return Info{}, fmt.Errorf("%w: block %d: chunk at %d: %w", ErrChecksum, b.LocalID, ch.Offset, err)
			}
		}
		if end != b.Length {
			return Info{}, fmt.Errorf("%w: block %d: chunks end at %d, length %d", ErrInvalid, b.LocalID, end, b.Length)
		}
		ctr.usedBytes += b.Length
		ctr.blockCount++
	}
	for path, f := range im.files {
		n, ok := want[path]
		if !ok {
			return Info{}, fmt.Errorf("%w: file %s belongs to no block", ErrInvalid, fs.PathBase(path))
		}
		st, err := f.Stat()
		if err != nil {
			return Info{}, ioError("stat imported file", err)
		}
		if st.Size() != n {
			return Info{}, fmt.Errorf("%w: file %s has %d bytes, its chunks %d", ErrInvalid, fs.PathBase(path), st.Size(), n)
		}
		if err := f.Sync(); err != nil {
			return Info{}, ioError("sync imported file", err)
		}
	}
	if err := im.closeFiles(); err != nil {
		return Info{}, err
	}
	d := descriptor{id: im.id, layout: im.layout, state: Closed, index: im.index}
	staged := &Container{v: v, id: im.id, dir: im.dir}
	if err := staged.writeDescriptor(d); err != nil {
		return Info{}, err
	}
	for _, dir := range []string{im.chunks, im.dir, fs.PathDir(im.dir)} {
		if err := syncDir(fs, dir); err != nil {
			return Info{}, err
		}
	}

	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return Info{}, ErrClosed
	}
	batch := v.db.NewBatch()
	defer func() { _ = batch.Close() }()
	var row []byte
	for i := range blocks {
		row = appendBlockRow(row[:0], &blocks[i])
		if err := batch.Set(blockKey(im.id, blocks[i].LocalID), row, nil); err != nil {
			return Info{}, ioError("stage imported rows", err)
		}
	}
	if err := batch.Set(counterKey(im.id), appendCounterRow(nil, ctr), nil); err != nil {
		return Info{}, ioError("stage imported rows", err)
	}
	if err := v.durable(func() error { return batch.Commit(pebble.Sync) }); err != nil {
		return Info{}, ioError("write imported rows", err)
	}
	root := fs.PathJoin(v.dir, containersDir)
	final := fs.PathJoin(root, strconv.FormatUint(im.id, 10))
	err := fs.Rename(im.dir, final)
	if err == nil {
		err = syncDir(fs, root)
	}
	if err != nil {
		lo, hi := containerBounds(im.id)
		_ = v.durable(func() error { return v.db.DeleteRange(lo, hi, pebble.Sync) })
		return Info{}, ioError("rename imported container into place", err)
	}
	c := newContainer(v, d, ctr)
	v.containers[im.id] = c
	delete(v.importing, im.id)
	im.done = true
	return Info{ID: im.id, State: Closed, Layout: im.layout, BCSID: ctr.bcsID, UsedBytes: ctr.usedBytes, BlockCount: ctr.blockCount,
		ReplicaIndex: im.index}, nil
}

// WriteChunk writes chunk ch of block localID, p its bytes, whose
// checksums the caller computed from p itself (a rebuilt replica, made on
// this datanode: nothing came over a network to distrust). Commit then
// checks that the block's chunks are these, but does not read them back:
// the datanode's own writes (WRITE_CHUNK) are not read back either.
func (im *Import) WriteChunk(localID uint64, ch Chunk, p []byte) error {
	if int64(len(p)) != ch.Length || ch.Length <= 0 {
		return fmt.Errorf("%w: chunk of %d bytes given %d", ErrInvalid, ch.Length, len(p))
	}
	path, off := im.blockFile(localID, ch.Offset)
	var err error
	if im.layout == FilePerChunk {
		err = im.WriteAt(localID, ch.Offset, 0, p)
	} else {
		err = im.WriteAt(localID, 0, ch.Offset, p)
	}
	if err != nil {
		return err
	}
	if im.written == nil {
		im.written = map[writtenChunk]string{}
	}
	im.written[writtenChunk{path, off, ch.Length}] = sumsKey(ch.Checksums)
	return nil
}

// sumsKey identifies a chunk's checksums.
func sumsKey(d checksum.Data) string {
	return strconv.Itoa(int(d.Type)) + "/" + strconv.FormatUint(uint64(d.BytesPerChecksum), 10) + "/" + string(d.Sums)
}

// blockFile returns the file and file offset of the chunk at off.
func (im *Import) blockFile(localID uint64, off int64) (string, int64) {
	if im.layout == FilePerBlock {
		p, _ := im.path(localID, 0)
		return p, off
	}
	p, _ := im.path(localID, off)
	return p, 0
}

// writeDirect writes p with O_DIRECT when it may; false means the caller
// writes it buffered.
func (im *Import) writeDirect(path string, off int64, p []byte) (bool, error) {
	v := im.v
	if int64(len(p)) < v.opts.DirectIOMinSize || !v.importDirect.Load() || !directAligned(p, off) {
		return false, nil
	}
	df := im.direct[path]
	if df == nil {
		var err error
		df, err = openDirect(path)
		if errors.Is(err, syscall.EINVAL) || errors.Is(err, errors.ErrUnsupported) {
			v.importDirect.Store(false)
			return false, nil
		}
		if err != nil {
			return false, ioError("open imported file", err)
		}
		if im.direct == nil {
			im.direct = map[string]*os.File{}
		}
		im.direct[path] = df
	}
	if _, err := df.WriteAt(p, off); err != nil {
		return false, ioError("write imported file", err)
	}
	return true, nil
}

func (im *Import) closeFiles() error {
	var first error
	for p, f := range im.direct {
		if err := f.Close(); err != nil && first == nil {
			first = ioError("close imported file", err)
		}
		delete(im.direct, p)
	}
	for p, f := range im.files {
		if err := f.Close(); err != nil && first == nil {
			first = ioError("close imported file", err)
		}
		delete(im.files, p)
	}
	return first
}

// Abort ends the import and removes everything it wrote. Aborting an
// import that has ended does nothing.
func (im *Import) Abort() error {
	if im.done {
		return nil
	}
	im.done = true
	_ = im.closeFiles()
	err := im.v.fs.RemoveAll(im.dir)
	im.v.mu.Lock()
	delete(im.v.importing, im.id)
	im.v.mu.Unlock()
	if err != nil {
		return ioError("remove import directory", err)
	}
	return nil
}

// cleanTmp removes what imports left in the volume's tmp directory (a
// crash or a kill mid-import), and the rows of an import that wrote them
// but never renamed its directory into place. It runs after load.
func (v *Volume) cleanTmp() error {
	root := v.fs.PathJoin(v.dir, tmpDir)
	names, err := v.fs.List(root)
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return ioError("list tmp", err)
	}
	for _, name := range names {
		if rest, ok := strings.CutPrefix(name, importPrefix); ok {
			idStr, _, _ := strings.Cut(rest, "-")
			if id, err := ParseID(idStr); err == nil && v.containers[id] == nil {
				lo, hi := containerBounds(id)
				if err := v.durable(func() error { return v.db.DeleteRange(lo, hi, pebble.Sync) }); err != nil {
					return ioError("delete rows of an unfinished import", err)
				}
			}
		}
		v.opts.Logger.Info("container: removing an unfinished import", "volume", v.dir, "name", name)
		if err := v.fs.RemoveAll(v.fs.PathJoin(root, name)); err != nil {
			return ioError("remove tmp", err)
		}
	}
	return syncDir(v.fs, root)
}
