// Package backup owns the directory a backup of meta is written to (by
// `strato admin meta backup`) and restored from (`strato meta --restore`).
//
// A backup directory holds two files:
//
//	state.kv       the state machine's pairs at one applied Raft index, in
//	               key order: a header line, then per pair
//	               uvarint(len key) key uvarint(len value) value
//	manifest.json  what the state is (Manifest): the cluster ID, the
//	               applied index and term, the membership, the replica it
//	               came from, when, by which strato, and the pairs' count,
//	               bytes and CRC-32C
//
// The raft log, hard state and address book are not in a backup: a
// restore starts a new group at the backup's index (consensus.Seed).
// manifest.json is written last, after state.kv is synced: a directory
// without it is an unfinished backup, and Open refuses it.
//
// A Writer or a Reader is used by one goroutine.
package backup

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Names of the files of a backup directory, and the state file's header.
const (
	ManifestFile = "manifest.json"
	StateFile    = "state.kv"
	stateHeader  = "strato meta state v1\n"
	// Format is the version of the directory's layout in Manifest.Format.
	Format = 1
)

var (
	// ErrCorrupt classifies a backup whose state file does not match its
	// manifest, or cannot be decoded.
	ErrCorrupt = errors.New("backup: corrupt backup")
	// ErrIncomplete is returned by Open for a directory without a manifest
	// (a backup that did not finish).
	ErrIncomplete = errors.New("backup: incomplete backup (no manifest.json)")
	// ErrExists is returned by Create for a directory that holds files.
	ErrExists = errors.New("backup: the directory is not empty")
)

// Member is one replica of the meta group at the backup's index.
type Member struct {
	ID   uint64 `json:"id"`
	Addr string `json:"addr"`
	Role string `json:"role"` // voter or learner
}

// Manifest describes a backup.
type Manifest struct {
	Format       int       `json:"format"`
	ClusterID    string    `json:"cluster_id"`
	AppliedIndex uint64    `json:"applied_index"`
	AppliedTerm  uint64    `json:"applied_term"`
	GroupID      uint64    `json:"group_id"`
	Members      []Member  `json:"members"`
	ReplicaID    uint64    `json:"replica_id"`
	ReplicaAddr  string    `json:"replica_addr"`
	Created      time.Time `json:"created"`
	Version      string    `json:"strato_version"`
	// Pairs and Bytes count the state file's pairs and their keys' and
	// values' bytes; CRC32C is the state file's checksum (Castagnoli).
	Pairs  uint64 `json:"pairs"`
	Bytes  uint64 `json:"bytes"`
	CRC32C uint32 `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes a backup directory.
type Writer struct {
	fs    vfs.FS
	dir   string
	f     vfs.File
	w     *bufio.Writer
	crc   hash.Hash32
	prev  []byte
	pairs uint64
	bytes uint64
	buf   []byte
}

// Create makes dir (it may exist, empty) and starts its state file.
func Create(fs vfs.FS, dir string) (*Writer, error) {
	if names, err := fs.List(dir); err == nil && len(names) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrExists, dir)
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := fs.Create(fs.PathJoin(dir, StateFile), vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, err
	}
	w := &Writer{fs: fs, dir: dir, f: f, crc: crc32.New(castagnoli)}
	w.w = bufio.NewWriterSize(io.MultiWriter(f, w.crc), 1<<20)
	if _, err := w.w.WriteString(stateHeader); err != nil {
		_ = f.Close()
		return nil, err
	}
	return w, nil
}

// Add appends a pair; keys must come in strictly increasing order.
func (w *Writer) Add(k, v []byte) error {
	if w.prev != nil && bytes.Compare(w.prev, k) >= 0 {
		return fmt.Errorf("%w: key %x after %x", ErrCorrupt, k, w.prev)
	}
	w.prev = append(w.prev[:0], k...)
	w.buf = binary.AppendUvarint(w.buf[:0], uint64(len(k)))
	w.buf = append(w.buf, k...)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(v)))
	w.buf = append(w.buf, v...)
	if _, err := w.w.Write(w.buf); err != nil {
		return err
	}
	w.pairs++
	w.bytes += uint64(len(k) + len(v))
	return nil
}

// Pairs and Bytes are what Add wrote so far.
func (w *Writer) Pairs() uint64 { return w.pairs }

// Bytes is the keys' and values' bytes Add wrote so far.
func (w *Writer) Bytes() uint64 { return w.bytes }

// Finish syncs the state file and writes the manifest, with the format
// and the state's count, bytes and checksum filled in, and returns it. The
// backup is complete once it returns no error.
func (w *Writer) Finish(m Manifest) (Manifest, error) {
	return m, w.finish(&m)
}

func (w *Writer) finish(m *Manifest) error {
	if err := w.w.Flush(); err != nil {
		_ = w.f.Close()
		return err
	}
	if err := w.f.Sync(); err != nil {
		_ = w.f.Close()
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	m.Format, m.Pairs, m.Bytes, m.CRC32C = Format, w.pairs, w.bytes, w.crc.Sum32()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := w.fs.PathJoin(w.dir, ManifestFile+".tmp")
	f, err := w.fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := w.fs.Rename(tmp, w.fs.PathJoin(w.dir, ManifestFile)); err != nil {
		return err
	}
	d, err := w.fs.OpenDir(w.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Abort closes the state file of a backup that will not be finished.
func (w *Writer) Abort() { _ = w.f.Close() }

// Reader reads a backup directory.
type Reader struct {
	fs  vfs.FS
	dir string
	m   Manifest
}

// Open reads dir's manifest.
func Open(fs vfs.FS, dir string) (*Reader, error) {
	f, err := fs.Open(fs.PathJoin(dir, ManifestFile))
	if err != nil {
		if _, serr := fs.Stat(fs.PathJoin(dir, StateFile)); serr == nil {
			return nil, fmt.Errorf("%w: %s", ErrIncomplete, dir)
		}
		return nil, fmt.Errorf("backup: %s: %w", dir, err)
	}
	defer f.Close()
	r := &Reader{fs: fs, dir: dir}
	if err := json.NewDecoder(f).Decode(&r.m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, ManifestFile, err)
	}
	if r.m.Format != Format {
		return nil, fmt.Errorf("%w: format %d, this strato reads %d", ErrCorrupt, r.m.Format, Format)
	}
	if r.m.AppliedIndex == 0 || r.m.AppliedTerm == 0 {
		return nil, fmt.Errorf("%w: applied index %d term %d", ErrCorrupt, r.m.AppliedIndex, r.m.AppliedTerm)
	}
	return r, nil
}

// Manifest is the backup's manifest.
func (r *Reader) Manifest() Manifest { return r.m }

// Pairs calls f with every pair of the state file, in key order (k and v
// are valid only during the call), and checks the file against the
// manifest: an error wrapping ErrCorrupt if it does not match. Call it
// once with a no-op f to verify a backup before using it.
func (r *Reader) Pairs(f func(k, v []byte) error) error {
	file, err := r.fs.Open(r.fs.PathJoin(r.dir, StateFile))
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer file.Close()
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(io.TeeReader(file, crc), 1<<20)
	head := make([]byte, len(stateHeader))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != stateHeader {
		return fmt.Errorf("%w: %s has no header", ErrCorrupt, StateFile)
	}
	var k, v, prev []byte
	var pairs, nbytes uint64
	for {
		klen, err := binary.ReadUvarint(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: pair %d: %w", ErrCorrupt, pairs, err)
		}
		if k, err = readN(br, k, klen); err != nil {
			return fmt.Errorf("%w: pair %d key: %w", ErrCorrupt, pairs, err)
		}
		vlen, err := binary.ReadUvarint(br)
		if err != nil {
			return fmt.Errorf("%w: pair %d: %w", ErrCorrupt, pairs, err)
		}
		if v, err = readN(br, v, vlen); err != nil {
			return fmt.Errorf("%w: pair %d value: %w", ErrCorrupt, pairs, err)
		}
		if prev != nil && bytes.Compare(prev, k) >= 0 {
			return fmt.Errorf("%w: pair %d out of order", ErrCorrupt, pairs)
		}
		prev = append(prev[:0], k...)
		pairs++
		nbytes += klen + vlen
		if err := f(k, v); err != nil {
			return err
		}
	}
	if pairs != r.m.Pairs || nbytes != r.m.Bytes || crc.Sum32() != r.m.CRC32C {
		return fmt.Errorf("%w: %s holds %d pairs, %d bytes, CRC-32C %08x; the manifest says %d, %d, %08x",
			ErrCorrupt, StateFile, pairs, nbytes, crc.Sum32(), r.m.Pairs, r.m.Bytes, r.m.CRC32C)
	}
	return nil
}

// maxLen bounds a key or value read from a state file (a damaged length
// must not allocate without limit).
const maxLen = 1 << 30

func readN(r io.Reader, buf []byte, n uint64) ([]byte, error) {
	if n > maxLen {
		return nil, fmt.Errorf("length %d", n)
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return buf, err
}
