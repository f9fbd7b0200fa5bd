// Package walfs is a vfs.FS for Pebble whose new write-ahead logs start
// filled with zeros, so that Pebble writes over them rather than appending.
//
// A synced commit appends to the log and calls fdatasync. While the log
// grows, each fdatasync must also write the file's size (its inode), a
// second dependent write; within bytes already written (and synced), it
// writes only the data. On this project's test VM a 4 KiB write and
// fdatasync takes 200–300 µs appended, 200 µs into a fallocate'd extent
// (still a metadata change: the extent is converted from unwritten), and
// 120–140 µs over written bytes. Pebble already recycles old logs for this
// reason, but only once a memtable has been flushed; a new database, and
// every log made while the recycler is empty, appends. HDFS preallocates its
// edit log with filler bytes for the same reason.
//
// Pebble's log reader takes a zeroed tail as the log's end: it reads ahead,
// finds no later record, and treats the newest log's tail as unclean but
// complete (older logs end with an EOF trailer that Pebble syncs before it
// starts the next log). Recycled logs are reused as Pebble does it.
package walfs

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// walCategory is the write category Pebble creates its logs with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// FS wraps a vfs.FS; every new log starts with zeros.
type FS struct {
	vfs.FS
	// Size is the most zeros a new log starts with: the database's
	// memtable size and 1 MiB more.
	Size int64

	mu     sync.Mutex
	logs   int64  // logs made so far (created or recycled)
	spare  *spare // the next new log, being filled or ready; nil: none
	closed bool
}

// A spare is a file of zeros made beside the logs, in the background, for
// the next log Pebble creates: a fill takes its time there, not in the
// rotation, which holds up every write of the database until it is done.
type spare struct {
	path string
	size int64
	done chan struct{} // closed when f and err are set
	f    vfs.File
	err  error
}

// spareName is the spare's file in the logs' directory; Pebble ignores
// names it does not know.
const spareName = "walfs-spare"

// New wraps fs for a database whose memtables hold memTableSize bytes
// (Pebble's default, 4 MiB, when 0): a log is rotated with its memtable, so
// a new log starts with as many zeros as its memtable holds and 1 MiB more.
// Close the FS after the database.
func New(fs vfs.FS, memTableSize uint64) *FS {
	return &FS{FS: fs, Size: int64(max(memTableSize, defaultMemTableSize)) + 1<<20}
}

const defaultMemTableSize = 4 << 20

// initialMemTableSize is the first memtable of a Pebble database opened:
// each later one is twice the last, up to the memtable size (Pebble's
// initialMemTableSize).
const initialMemTableSize = 256 << 10

// fillSize is how many zeros the database's log number n (counting from 0,
// in the order they are made since the database was opened) starts with:
// its memtable's size and 1 MiB. Each log goes with one memtable, and a
// database just opened rotates its small first memtables quickly. A log
// that outgrows its zeros appends, as without them.
func (fs *FS) fillSize(n int64) int64 {
	return min(int64(initialMemTableSize)<<min(n, 32)+1<<20, fs.Size)
}

// next counts a new log and returns its fill size.
func (fs *FS) next() (size, nextSize int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.logs++
	return fs.fillSize(fs.logs - 1), fs.fillSize(fs.logs)
}

// Create creates name; a log starts filled with zeros, synced before Pebble
// writes to it: the spare, renamed, when one is ready or being made and
// large enough, else a new file filled here. Then the next spare is begun.
// If filling fails (a full disk), the log is returned as it is: the zeros
// written so far are ones Pebble writes over or reads as the log's end, and
// its own first write meets the same error. Failing the create instead
// would make Pebble panic (it cannot do without a new log).
func (fs *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if category != walCategory {
		return fs.FS.Create(name, category)
	}
	size, nextSize := fs.next()
	defer fs.makeSpare(fs.PathDir(name), nextSize)
	if f := fs.takeSpare(name, size); f != nil {
		return f, nil
	}
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	_ = fill(f, size)
	return f, nil
}

// ReuseForWrite reuses a recycled log, which takes its place in the
// memtables' sequence; one with fewer bytes than its memtable needs gives
// way to a new log (vfs.FS allows it: the old file is removed).
func (fs *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	if category != walCategory {
		return fs.FS.ReuseForWrite(oldname, newname, category)
	}
	size, nextSize := fs.next()
	if st, err := fs.Stat(oldname); err != nil || st.Size() >= size {
		return fs.FS.ReuseForWrite(oldname, newname, category)
	}
	defer fs.makeSpare(fs.PathDir(newname), nextSize)
	f := fs.takeSpare(newname, size)
	if f == nil {
		return fs.FS.ReuseForWrite(oldname, newname, category)
	}
	if err := fs.Remove(oldname); err != nil {
		_ = f.Close()
		_ = fs.Remove(newname)
		return nil, err
	}
	return f, nil
}

// takeSpare renames the spare to name and returns it, once it is filled,
// if it holds at least size bytes; else it discards it and returns nil.
func (fs *FS) takeSpare(name string, size int64) vfs.File {
	fs.mu.Lock()
	s := fs.spare
	fs.spare = nil
	fs.mu.Unlock()
	if s == nil {
		return nil
	}
	<-s.done
	if s.err == nil && s.size >= size {
		if err := fs.Rename(s.path, name); err == nil {
			return s.f
		}
	}
	fs.discard(s)
	return nil
}

// makeSpare begins filling a spare of size bytes in dir, unless one is
// there or the FS is closed.
func (fs *FS) makeSpare(dir string, size int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed || fs.spare != nil {
		return
	}
	s := &spare{path: fs.PathJoin(dir, spareName), size: size, done: make(chan struct{})}
	fs.spare = s
	go func() {
		defer close(s.done)
		f, err := fs.FS.Create(s.path, vfs.WriteCategoryUnspecified)
		if err == nil {
			if err = fill(f, s.size); err != nil {
				_ = f.Close()
				f = nil
			}
		}
		s.f, s.err = f, err
	}()
}

// discard closes and removes a spare that is done.
func (fs *FS) discard(s *spare) {
	if s.f != nil {
		_ = s.f.Close()
	}
	_ = fs.Remove(s.path)
}

// Close waits for a spare being filled and removes it; no spare is made
// afterwards. Call it once the database is closed.
func (fs *FS) Close() error {
	fs.mu.Lock()
	s := fs.spare
	fs.spare, fs.closed = nil, true
	fs.mu.Unlock()
	if s != nil {
		<-s.done
		fs.discard(s)
	}
	return nil
}

// chunk is the size of each write of zeros.
const chunk = 1 << 20

var zeros [chunk]byte

// fill writes size bytes of zeros at the start of f, leaving its offset at
// 0, and syncs them and the file's size.
func fill(f vfs.File, size int64) error {
	for off := int64(0); off < size; off += chunk {
		n := min(chunk, size-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
	}
	return f.Sync()
}

// Deferred is an FS whose logs' syncs only write, unless a Durable call
// is in progress: a synced commit's record is then in the kernel when the
// commit returns (it survives the death of the process, not a power loss)
// and reaches the disk with the next durable sync, or when its log is
// closed. What needs a power loss to spare it goes through Durable.
//
// A datanode's volume database is one: a block's row must be in the
// kernel before the block is acknowledged (a client's write survives a
// kill -9 of every datanode), and on the disk only for a synced PutBlock
// (hsync), a closed container, a deletion; the data files are fsynced on
// the same occasions and no others. Each acknowledgement otherwise cost an
// fdatasync per replica: with three datanodes on one disk, most of the
// disk's flushes under small writes.
type Deferred struct {
	*FS
	mu      sync.Mutex
	logs    map[*logFile]struct{}
	durable atomic.Int32
}

// NewDeferred wraps fs as New does, with deferred log syncs.
func NewDeferred(fs vfs.FS, memTableSize uint64) *Deferred {
	return &Deferred{FS: New(fs, memTableSize), logs: map[*logFile]struct{}{}}
}

// Durable runs fn, a write of the database with Sync: the log syncs made
// while it runs reach the disk, those of every log written since its last
// sync (a record in a rotated log must not be lost behind one in the
// next).
func (d *Deferred) Durable(fn func() error) error {
	d.durable.Add(1)
	defer d.durable.Add(-1)
	return fn()
}

// Create creates name; a log is filled (as FS.Create) and its syncs
// deferred.
func (d *Deferred) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.Create(name, category)
	return d.track(f, err, category)
}

// ReuseForWrite reuses a recycled log; its syncs are deferred.
func (d *Deferred) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := d.FS.ReuseForWrite(oldname, newname, category)
	return d.track(f, err, category)
}

func (d *Deferred) track(f vfs.File, err error, category vfs.DiskWriteCategory) (vfs.File, error) {
	if err != nil || category != walCategory {
		return f, err
	}
	l := &logFile{File: f, d: d}
	d.mu.Lock()
	d.logs[l] = struct{}{}
	d.mu.Unlock()
	return l, nil
}

// syncAll syncs every log written since its last sync.
func (d *Deferred) syncAll() error {
	d.mu.Lock()
	logs := make([]*logFile, 0, len(d.logs))
	for l := range d.logs {
		logs = append(logs, l)
	}
	d.mu.Unlock()
	var errs []error
	for _, l := range logs {
		errs = append(errs, l.sync())
	}
	return errors.Join(errs...)
}

// logFile is a log of a Deferred: its Sync and SyncData write nothing more
// (Pebble's writes already reached the kernel) unless a Durable call runs.
type logFile struct {
	vfs.File
	d      *Deferred
	mu     sync.Mutex
	dirty  bool // written since the last real sync
	closed bool
}

// Write writes p, then marks the log dirty: a sync that ran during the
// write (and may have missed it) leaves the mark for the next one.
func (l *logFile) Write(p []byte) (int, error) {
	n, err := l.File.Write(p)
	l.written()
	return n, err
}

func (l *logFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := l.File.WriteAt(p, off)
	l.written()
	return n, err
}

func (l *logFile) written() {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

func (l *logFile) Sync() error {
	if l.d.durable.Load() > 0 {
		return l.d.syncAll()
	}
	return nil
}

func (l *logFile) SyncData() error { return l.Sync() }

// sync makes what was written to l durable.
func (l *logFile) sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || !l.dirty {
		return nil
	}
	l.dirty = false
	if err := l.File.SyncData(); err != nil {
		l.dirty = true
		return err
	}
	return nil
}

// Close syncs the log if it was written since its last sync (a log
// is closed when the next one starts: Pebble reads the logs in order, and
// a later log's records are only as good as the earlier ones), then
// closes it.
func (l *logFile) Close() error {
	err := l.sync()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.d.mu.Lock()
	delete(l.d.logs, l)
	l.d.mu.Unlock()
	return errors.Join(err, l.File.Close())
}
