package container

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"log/slog"

	"github.com/strato-io/strato/walfs"
)

const (
	containersDir = "containers"
	dbDir         = "db"
	descFile      = "container.desc"
	chunksDir     = "chunks"
	deletedPrefix = ".deleted-"
)

// Volume is one disk's container store: a directory of containers and one
// Pebble database with the block metadata of all of them.
type Volume struct {
	opts Options
	fs   vfs.FS
	dir  string
	db   *pebble.DB
	// wal is the database's file system: its log syncs write to the kernel
	// only, unless made durable (durable, syncDB).
	wal  *walfs.Deferred
	lock io.Closer

	// direct is set while the direct-I/O fast path is usable (see
	// Options.DisableDirectIO); cleared if the filesystem refuses O_DIRECT.
	direct atomic.Bool
	// importDirect is set while imports may write with O_DIRECT: the
	// containers they copy are closed and cold, so their bytes skip the
	// page cache whatever the write path does (see Import.WriteAt).
	importDirect atomic.Bool
	// recycled keeps the files of deleted blocks for new ones (nil: none).
	recycled *recycler
	// wcache bounds the page cache its buffered writes keep (nil: no bound;
	// Options.WriteCacheBytes).
	wcache *writeCache

	// dbErr is set once the database failed beyond use (a commit Pebble
	// calls fatal: its write-ahead log failed); database writes are refused
	// from then on, and Err reports it.
	dbErr atomic.Pointer[error]

	mu         sync.RWMutex
	containers map[uint64]*Container
	importing  map[uint64]bool // IDs of imports in progress
	closed     bool
}

// OpenVolume opens (creating if needed) the volume in dir. Containers found
// on disk are loaded with their state; a directory whose name is not a
// container ID, or whose descriptor is unreadable, is logged and skipped.
func OpenVolume(dir string, opts Options) (*Volume, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	fs := opts.FS
	v := &Volume{opts: opts, fs: fs, dir: dir, containers: make(map[uint64]*Container)}
	v.direct.Store(directIOSupported && !opts.DisableDirectIO && fs == vfs.Default)
	v.importDirect.Store(directIOSupported && fs == vfs.Default)
	if fs == vfs.Default {
		v.wcache = newWriteCache(opts.WriteCacheBytes)
	}
	if err := fs.MkdirAll(fs.PathJoin(dir, containersDir), 0o755); err != nil {
		return nil, ioError("create volume directory", err)
	}
	for _, d := range []string{dir, fs.PathDir(dir)} {
		if err := syncDir(fs, d); err != nil {
			return nil, err
		}
	}
	lock, err := fs.Lock(fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return nil, ioError("lock volume", err)
	}
	v.lock = lock
	cache := pebble.NewCache(opts.PebbleCacheSize)
	defer cache.Unref()
	// A commit's log sync writes its record to the kernel, over zeros
	// (package walfs): it survives a kill -9. What must survive a power
	// loss syncs through v.durable.
	v.wal = walfs.NewDeferred(fs, 0)
	db, err := pebble.Open(fs.PathJoin(dir, dbDir), &pebble.Options{
		FS:                 v.wal,
		FormatMajorVersion: pebble.FormatNewest,
		Cache:              cache,
		Logger:             pebbleLogger{opts.Logger},
	})
	if err != nil {
		_ = v.wal.Close()
		lock.Close()
		return nil, ioError("open volume database", err)
	}
	v.db = db
	if fs == vfs.Default {
		if v.recycled, err = openRecycler(fs.PathJoin(dir, recycleDir), opts.RecycleFiles); err != nil {
			_ = v.Close()
			return nil, err
		}
	}
	if err := v.load(); err != nil {
		_ = v.Close()
		return nil, err
	}
	return v, nil
}

func (v *Volume) load() error {
	root := v.fs.PathJoin(v.dir, containersDir)
	names, err := v.fs.List(root)
	if err != nil {
		return ioError("list containers", err)
	}
	slices.Sort(names)
	for _, name := range names {
		if rest, ok := strings.CutPrefix(name, deletedPrefix); ok {
			// A Delete that did not finish: its rename is durable, so the
			// rows and files are garbage.
			if id, err := ParseID(rest); err == nil {
				if err := v.finishDelete(id, v.fs.PathJoin(root, name)); err != nil {
					return err
				}
			}
			continue
		}
		id, err := ParseID(name)
		if err != nil {
			v.opts.Logger.Warn("container: skipping a directory that is not a container", "volume", v.dir, "name", name)
			continue
		}
		c, err := loadContainer(v, id)
		if err != nil {
			v.opts.Logger.Warn("container: skipping an unreadable container", "volume", v.dir, "id", id, "err", err)
			continue
		}
		v.containers[id] = c
	}
	return v.cleanTmp()
}

// Close closes every container's open files and the database. Containers
// keep their state; chunks never committed are dropped.
func (v *Volume) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil
	}
	v.closed = true
	var errs []error
	for _, c := range v.containers {
		errs = append(errs, c.detach(ErrClosed))
	}
	if v.db != nil {
		errs = append(errs, v.db.Close())
	}
	if v.wal != nil {
		errs = append(errs, v.wal.Close())
	}
	if v.lock != nil {
		errs = append(errs, v.lock.Close())
	}
	return errors.Join(errs...)
}

// Dir returns the volume's directory.
func (v *Volume) Dir() string { return v.dir }

// WriteCache reports the bytes of buffered block writes the volume counts
// as still in the page cache, its bound (Options.WriteCacheBytes; 0: none)
// and the bytes it has asked the kernel to drop so far.
func (v *Volume) WriteCache() (held, bound, dropped int64) { return v.wcache.stats() }

// Create creates an OPEN container. layout 0 means Options.DefaultLayout.
// The container is durable when Create returns.
func (v *Volume) Create(id uint64, layout Layout) (*Container, error) {
	if id == 0 {
		return nil, fmt.Errorf("%w: 0", ErrInvalidID)
	}
	if layout == 0 {
		layout = v.opts.DefaultLayout
	}
	if !layout.Valid() {
		return nil, fmt.Errorf("%w: layout %d", ErrInvalid, layout)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	if _, ok := v.containers[id]; ok || v.importing[id] {
		return nil, fmt.Errorf("%w: %d", ErrExists, id)
	}
	c := newContainer(v, descriptor{id: id, layout: layout, state: Open}, counters{})
	root := v.fs.PathJoin(v.dir, containersDir)
	if _, err := v.fs.Stat(c.dir); err == nil {
		// Not loaded: a Create that never returned leaves a directory
		// without a descriptor, which is garbage. Anything else is kept
		// for inspection.
		if _, err := v.fs.Stat(v.fs.PathJoin(c.dir, descFile)); !isNotExist(err) {
			return nil, fmt.Errorf("%w: %d (directory %s exists but did not load)", ErrExists, id, c.dir)
		}
		if err := v.fs.RemoveAll(c.dir); err != nil {
			return nil, ioError("remove a half-created container", err)
		}
	}
	if err := v.fs.MkdirAll(c.chunks, 0o755); err != nil {
		return nil, ioError("create container directory", err)
	}
	if err := c.writeDescriptor(c.desc); err != nil {
		_ = v.fs.RemoveAll(c.dir)
		return nil, err
	}
	for _, d := range []string{c.chunks, c.dir, root} {
		if err := syncDir(v.fs, d); err != nil {
			return nil, err
		}
	}
	v.containers[id] = c
	return c, nil
}

// Container returns the container with the given ID.
func (v *Volume) Container(id uint64) (*Container, error) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.closed {
		return nil, ErrClosed
	}
	c, ok := v.containers[id]
	if !ok {
		return nil, fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	return c, nil
}

// List returns the Info of every container, by ID.
func (v *Volume) List() []Info {
	v.mu.RLock()
	ids := slices.Sorted(maps.Keys(v.containers))
	cs := make([]*Container, len(ids))
	for i, id := range ids {
		cs[i] = v.containers[id]
	}
	v.mu.RUnlock()
	out := make([]Info, len(cs))
	for i, c := range cs {
		out[i] = c.Info()
	}
	return out
}

// Delete removes a container, its files and its rows. An OPEN or CLOSING
// container is deleted only with force. The deletion is crash-safe: the
// directory is first renamed aside (durably), and a volume that finds such a
// directory on open finishes the job.
func (v *Volume) Delete(id uint64, force bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	c, ok := v.containers[id]
	if !ok {
		return fmt.Errorf("%w: %d", ErrNotFound, id)
	}
	if st := c.State(); !force && (st == Open || st == Closing) {
		return fmt.Errorf("%w: container %d is %v; delete it with force", ErrBadState, id, st)
	}
	if err := c.detach(fmt.Errorf("%w: %d (deleted)", ErrNotFound, id)); err != nil {
		return err
	}
	root := v.fs.PathJoin(v.dir, containersDir)
	aside := v.fs.PathJoin(root, fmt.Sprintf("%s%d", deletedPrefix, id))
	if err := v.fs.Rename(c.dir, aside); err != nil {
		return ioError("delete container", err)
	}
	if err := syncDir(v.fs, root); err != nil {
		return err
	}
	delete(v.containers, id)
	return v.finishDelete(id, aside)
}

// durable runs fn, a write of the database with Sync, so that it (and
// every earlier write) survives a power loss, not only a crash of the
// process (walfs.Deferred).
func (v *Volume) durable(fn func() error) error {
	return v.wal.Durable(func() error { return v.dbWrite(fn) })
}

// dbWrite runs fn, a write to the database. Pebble calls a failed commit
// fatal (its log is then unusable) and our logger panics with
// pebbleFatal: that panic ends here, as an error, and the volume takes no
// database write after it (Err) instead of the process going down with
// its other disks.
func (v *Volume) dbWrite(fn func() error) (err error) {
	if e := v.dbErr.Load(); e != nil {
		return *e
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(pebbleFatal)
		if !ok {
			panic(r)
		}
		e := fmt.Errorf("container: volume database failed: %s", string(f))
		v.dbErr.CompareAndSwap(nil, &e)
		err = *v.dbErr.Load()
	}()
	return fn()
}

// Err returns why the volume's database failed beyond use (dbWrite), nil
// while it works. Such a volume serves nothing more worth having: its
// owner takes it out of service.
func (v *Volume) Err() error {
	if e := v.dbErr.Load(); e != nil {
		return *e
	}
	return nil
}

// syncDB makes every write of the database so far survive a power loss.
func (v *Volume) syncDB() error {
	return v.durable(func() error { return v.db.LogData(nil, pebble.Sync) })
}

func (v *Volume) finishDelete(id uint64, dir string) error {
	lo, hi := containerBounds(id)
	if err := v.durable(func() error { return v.db.DeleteRange(lo, hi, pebble.Sync) }); err != nil {
		return ioError("delete container rows", err)
	}
	if err := v.fs.RemoveAll(dir); err != nil {
		return ioError("remove container directory", err)
	}
	return syncDir(v.fs, v.fs.PathDir(dir))
}

func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return ioError("open directory", err)
	}
	err = d.Sync()
	d.Close()
	if err != nil {
		return ioError("sync directory", err)
	}
	return nil
}

// pebbleLogger sends Pebble's messages to slog.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf("pebble: "+format, args...))
}
func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf("pebble: "+format, args...))
}
func (p pebbleLogger) Fatalf(format string, args ...any) {
	panic(pebbleFatal(fmt.Sprintf("pebble: "+format, args...)))
}

// pebbleFatal is what pebbleLogger.Fatalf panics with; dbWrite recovers a
// failed commit's.
type pebbleFatal string
