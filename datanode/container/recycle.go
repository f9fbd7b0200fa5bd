package container

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Recycled block files. On some file systems creating a file after many
// were deleted is slow: ext4 without a journal skips, when it allocates an
// inode, every inode freed in the last minutes, reading each one's entry in
// the inode table to find out; after a run of small objects is deleted,
// each create of the next run scans past thousands of them. A volume
// therefore keeps the files of deleted FILE_PER_BLOCK blocks, emptied, in
// recycle/ (up to Options.RecycleFiles), and gives them to new blocks by
// renaming them into place: no inode is freed and none allocated, as
// RocksDB recycles its WAL files. The files there are empty and belong to
// no container; losing them in a crash loses nothing.

const recycleDir = "recycle"

// recycler is a volume's pool of emptied block files.
type recycler struct {
	dir  string
	max  int
	mu   sync.Mutex
	free []string // names in dir, last in first out
	next uint64   // the number of the next name
}

// openRecycler opens the pool in dir (creating it), taking the files a
// previous run left there (emptied again if a crash left one that is not).
// It returns nil when files cannot be recycled here (limit 0, or no
// rename-without-replace on this platform).
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
	r := &recycler{dir: dir, max: limit}
	for _, e := range entries {
		n, err := strconv.ParseUint(e.Name(), 10, 64)
		path := filepath.Join(dir, e.Name())
		if err != nil || !e.Type().IsRegular() || len(r.free) >= limit {
			_ = os.RemoveAll(path)
			continue
		}
		if info, err := e.Info(); err != nil || info.Size() != 0 {
			if err := os.Truncate(path, 0); err != nil {
				_ = os.Remove(path)
				continue
			}
		}
		r.free = append(r.free, e.Name())
		r.next = max(r.next, n+1)
	}
	return r, nil
}

// put empties the file at path (a deleted block's) and keeps it; false if
// the pool is full or the file could not be kept (the caller removes it).
func (r *recycler) put(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	full := len(r.free) >= r.max
	name := strconv.FormatUint(r.next, 10)
	r.next++
	r.mu.Unlock()
	if full || os.Truncate(path, 0) != nil || os.Rename(path, filepath.Join(r.dir, name)) != nil {
		return false
	}
	r.mu.Lock()
	r.free = append(r.free, name)
	r.mu.Unlock()
	return true
}

// take moves a kept file to path, which must not exist (it is never
// replaced); false if the pool is empty or path exists (the caller then
// creates the file).
func (r *recycler) take(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	if len(r.free) == 0 {
		r.mu.Unlock()
		return false
	}
	name := r.free[len(r.free)-1]
	r.free = r.free[:len(r.free)-1]
	r.mu.Unlock()
	src := filepath.Join(r.dir, name)
	err := renameNoReplace(src, path)
	switch {
	case err == nil:
		return true
	case errors.Is(err, os.ErrExist):
		r.mu.Lock()
		r.free = append(r.free, name)
		r.mu.Unlock()
	default:
		_ = os.Remove(src)
	}
	return false
}

// len is how many files the pool holds.
func (r *recycler) len() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.free)
}
