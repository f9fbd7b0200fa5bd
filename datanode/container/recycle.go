package container

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Recycled block files. On some file systems creating a file after many
// were deleted is slow: ext4 without a journal skips, when it allocates an
// inode, every inode freed in the last minutes, reading each one's entry in
// the inode table to find out; after a run of small objects is deleted,
// each create of the next run scans past thousands of them. A volume
// therefore keeps the files of deleted small FILE_PER_BLOCK blocks in
// recycle/ and gives them to new blocks by renaming them into place, as
// RocksDB recycles its WAL files: no inode is freed and none allocated.
//
// A kept file is moved out of its container whole, as an unlink would
// leave it to a reader that has it open; it is emptied only when a new
// block takes it, at least recycleGrace later (a read of a block opens its
// file and closes it within one request). The pool is bounded in files
// (Options.RecycleFiles) and in bytes not yet given back (recycleMaxBytes);
// a file above recycleMaxFile is removed as before. The pool belongs to no
// container: copies, scans and crash recovery never see it, and what a
// crash leaves there is emptied when the volume opens.

const (
	recycleDir      = "recycle"
	recycleMaxFile  = 1 << 20
	recycleMaxBytes = 256 << 20
	recycleGrace    = 30 * time.Second
)

// keptFile is a file in the pool: its name there, its size, when it came.
type keptFile struct {
	name string
	size int64
	at   time.Time
}

// recycler is a volume's pool of deleted blocks' files, oldest first.
type recycler struct {
	dir   string
	max   int
	grace time.Duration
	mu    sync.Mutex
	kept  []keptFile
	bytes int64
	next  uint64 // the number of the next name
}

// openRecycler opens the pool in dir (creating it) with the files a
// previous run left there, emptied. It returns nil when files cannot be
// recycled here (limit 0, or no rename-without-replace on this platform).
func openRecycler(dir string, limit int) (*recycler, error) {
	if limit <= 0 || !renameNoReplaceSupported {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, ioError("create recycle directory", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, ioError("list recycle directory", err)
	}
	r := &recycler{dir: dir, max: limit, grace: recycleGrace}
	for _, e := range entries {
		n, err := strconv.ParseUint(e.Name(), 10, 64)
		path := filepath.Join(dir, e.Name())
		if err != nil || !e.Type().IsRegular() || len(r.kept) >= limit || os.Truncate(path, 0) != nil {
			_ = os.RemoveAll(path)
			continue
		}
		r.kept = append(r.kept, keptFile{name: e.Name()}) // no reader has it open: ready now
		r.next = max(r.next, n+1)
	}
	return r, nil
}

// put keeps the file at path (a deleted block's), whole; false if it is
// too large or the pool full, or it could not be moved (the caller removes
// it then).
func (r *recycler) put(path string) bool {
	if r == nil {
		return false
	}
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() > recycleMaxFile {
		return false
	}
	size := info.Size()
	r.mu.Lock()
	if len(r.kept) >= r.max || r.bytes+size > recycleMaxBytes {
		r.mu.Unlock()
		return false
	}
	name := strconv.FormatUint(r.next, 10)
	r.next++
	r.bytes += size // reserved while the file moves
	r.mu.Unlock()
	if err := os.Rename(path, filepath.Join(r.dir, name)); err != nil {
		r.mu.Lock()
		r.bytes -= size
		r.mu.Unlock()
		return false
	}
	r.mu.Lock()
	r.kept = append(r.kept, keptFile{name: name, size: size, at: time.Now()})
	r.mu.Unlock()
	return true
}

// take moves the oldest kept file that has waited recycleGrace to path,
// which must not exist (it is never replaced), and empties it; false if
// there is none or path exists (the caller then creates the file).
func (r *recycler) take(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	if len(r.kept) == 0 || time.Since(r.kept[0].at) < r.grace {
		r.mu.Unlock()
		return false
	}
	k := r.kept[0]
	r.kept = r.kept[1:]
	r.mu.Unlock()
	src := filepath.Join(r.dir, k.name)
	err := renameNoReplace(src, path)
	if errors.Is(err, os.ErrExist) {
		r.mu.Lock()
		r.kept = append([]keptFile{k}, r.kept...)
		r.mu.Unlock()
		return false
	}
	r.mu.Lock()
	r.bytes -= k.size
	r.mu.Unlock()
	if err != nil {
		_ = os.Remove(src)
		return false
	}
	if k.size > 0 && os.Truncate(path, 0) != nil {
		_ = os.Remove(path)
		return false
	}
	return true
}
