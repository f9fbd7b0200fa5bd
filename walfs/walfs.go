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

import "github.com/cockroachdb/pebble/v2/vfs"

// walCategory is the write category Pebble creates its logs with.
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// FS wraps a vfs.FS; Size bytes of zeros go into every new log.
type FS struct {
	vfs.FS
	Size int64
}

// New wraps fs for a database whose memtables hold memTableSize bytes
// (Pebble's default, 4 MiB, when 0): a log is rotated with its memtable, so
// new logs start with that many zeros and 1 MiB more.
func New(fs vfs.FS, memTableSize uint64) vfs.FS {
	return &FS{FS: fs, Size: int64(max(memTableSize, defaultMemTableSize)) + 1<<20}
}

const defaultMemTableSize = 4 << 20

// Create creates name; a log is filled with zeros and synced before Pebble
// writes to it. If filling fails (a full disk), the log is returned as it
// is: the zeros written so far are ones Pebble writes over or reads as the
// log's end, and its own first write meets the same error. Failing the
// create instead would make Pebble panic (it cannot do without a new log).
func (fs *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil || category != walCategory {
		return f, err
	}
	_ = fill(f, fs.Size)
	return f, nil
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
