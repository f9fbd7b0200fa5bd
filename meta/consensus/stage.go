package consensus

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	pb "go.etcd.io/raft/v3/raftpb"
)

// stagingDir is where incoming snapshots are staged, under Options.Dir.
// Pebble ignores it; Open removes what a crash left there.
const stagingDir = "snapshot-staging"

// snapshotStage writes the pairs of an incoming snapshot, as they arrive in
// key order, into sstables of at most about fileBytes each, ready for
// DB.IngestAndExcise. It holds no more than the sstable writer's current
// block in memory. Each file is synced when it is finished.
type snapshotStage struct {
	fs        vfs.FS
	dir       string
	wopts     sstable.WriterOptions
	fileBytes uint64
	// hook is the fault tests' hook, asked after each finished file.
	hook func(string) error

	w     *sstable.Writer
	files []string
	last  []byte // the last key written, nil before the first
	pairs uint64
	bytes uint64 // keys and values received
}

func newSnapshotStage(n *Node, m *pb.Message) (*snapshotStage, error) {
	dir := filepath.Join(n.opts.Dir, stagingDir,
		fmt.Sprintf("%d-%d", m.GetSnapshot().GetMetadata().GetIndex(), n.stageSeq.Add(1)))
	if err := n.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &snapshotStage{
		fs:        n.fs,
		dir:       dir,
		wopts:     n.pebbleOpts.MakeWriterOptions(0, n.db.TableFormat()),
		fileBytes: uint64(n.opts.SnapshotFileBytes),
		hook:      n.opts.installHook,
	}, nil
}

// add writes a chunk's pairs, checking that keys are state keys in strictly
// increasing order.
func (s *snapshotStage) add(keys, values [][]byte) error {
	if len(keys) != len(values) {
		return fmt.Errorf("%w: snapshot chunk has %d keys and %d values", ErrCorrupt, len(keys), len(values))
	}
	for i, k := range keys {
		if !validStateKey(k) || (s.last != nil && bytes.Compare(s.last, k) >= 0) {
			return fmt.Errorf("%w: snapshot key %x out of order or outside the state range", ErrCorrupt, k)
		}
		if s.w == nil {
			if err := s.create(); err != nil {
				return err
			}
		}
		if err := s.w.Set(k, values[i]); err != nil {
			return err
		}
		s.last = append(s.last[:0], k...)
		s.pairs++
		s.bytes += uint64(len(k) + len(values[i]))
		if s.w.Raw().EstimatedSize() >= s.fileBytes {
			if err := s.finish(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *snapshotStage) create() error {
	path := filepath.Join(s.dir, fmt.Sprintf("%06d.sst", len(s.files)))
	f, err := s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	s.w = sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.wopts)
	s.files = append(s.files, path)
	return nil
}

// finish closes (and syncs) the current file.
func (s *snapshotStage) finish() error {
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	if err != nil {
		return err
	}
	if s.hook != nil {
		return s.hook(fmt.Sprintf("file %d", len(s.files)))
	}
	return nil
}

// writeConsensus writes the file of consensus keys that goes in with the
// state: the whole log deleted, the truncated index and term, the applied
// state, the members and the hard state. Their keys sort before every
// state key, so the file overlaps none of the state files.
func (s *snapshotStage) writeConsensus(index, term uint64, applied, members []byte, hs *pb.HardState) error {
	if err := s.finish(); err != nil {
		return err
	}
	path := filepath.Join(s.dir, "consensus.sst")
	f, err := s.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), s.wopts)
	s.files = append(s.files, path)
	for _, kv := range []struct{ k, v []byte }{
		{keyHardState, encodeHardState(hs)},
		{keyTruncated, encodeIndexTerm(index, term)},
		{keyApplied, applied},
		{keyMembers, members},
	} {
		if err := w.Set(kv.k, kv.v); err != nil {
			_ = w.Close()
			return err
		}
	}
	// Every log key, [0x00 0x01, 0x00 0x02).
	if err := w.DeleteRange([]byte{keyPrefix, kindLog}, []byte{keyPrefix, kindLog + 1}); err != nil {
		_ = w.Close()
		return err
	}
	return w.Close()
}

// paths are the staged files; the consensus file is the last.
func (s *snapshotStage) paths() []string { return s.files }

// discard removes the stage's directory (ingestion already took the files
// it ingested).
func (s *snapshotStage) discard() {
	if s.w != nil {
		_ = s.w.Close()
		s.w = nil
	}
	_ = s.fs.RemoveAll(s.dir)
}

// removeStaging removes what a crash left of staged snapshots in dir.
func removeStaging(fs vfs.FS, dir string) error {
	return fs.RemoveAll(filepath.Join(dir, stagingDir))
}

// incomingSnapshot is a snapshot received and staged by the transport,
// handed to the raft goroutine with its MsgSnap.
type incomingSnapshot struct {
	msg      *pb.Message
	stage    *snapshotStage
	received time.Duration // how long the stream took
	done     chan error
}
