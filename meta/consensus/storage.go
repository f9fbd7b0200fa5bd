package consensus

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// logStore is raft's Storage over the node's Pebble DB. The persisted log is
// (trunc, last]: trunc is the index of the last compacted (or snapshotted)
// entry, whose term is kept for raft's log matching. Only the node's raft
// goroutine calls it; nothing in it is synchronised.
type logStore struct {
	db *pebble.DB

	hard      *pb.HardState
	conf      *pb.ConfState
	confBytes []byte // conf, marshalled, written with every applied state
	// book is the address book: every member of conf and its address,
	// written (keyMembers) in the same batch as every new conf.
	book      map[uint64]string
	removed   []uint64 // IDs removed from the group, never reused
	groupID   uint64
	bookBytes []byte

	truncIndex, truncTerm uint64
	last                  uint64

	appliedIndex, appliedTerm uint64

	// cache holds the most recent log entries, cache[i] at index
	// cacheStart+i, and always ends at last when non-empty. It serves the
	// apply path and follower catch-up without reading Pebble.
	cache      []*pb.Entry
	cacheStart uint64
	cacheMax   int
	// cacheBytes is about what cache holds (entryCost), at most
	// cacheMaxBytes (Options.LogCacheBytes) but for the newest entry.
	cacheBytes, cacheMaxBytes int64
	// cacheBytesPub is cacheBytes for other goroutines (LogCacheBytes).
	cacheBytesPub atomic.Int64

	// snaps holds the Pebble snapshots made for outgoing MsgSnap messages
	// (with the address book as of each), by the token stored in the
	// message's snapshot data.
	snaps     map[uint64]pinnedSnapshot
	snapToken uint64

	keyBuf []byte
	valBuf []byte
}

var _ raft.Storage = (*logStore)(nil)

// pinnedSnapshot is the state an outgoing snapshot streams, and the address
// book it carries in its data. The state is pinned by an iterator opened
// when raft asks for the snapshot, not by a pebble.Snapshot: an iterator
// reads the version it was opened on, which a later IngestAndExcise of the
// state range (this node installing a snapshot itself) does not change,
// while a pebble.Snapshot's next iterator would not see the excised keys.
type pinnedSnapshot struct {
	it   *pebble.Iterator
	book []byte
}

func (p pinnedSnapshot) close() {
	if p.it != nil {
		_ = p.it.Close()
	}
}

const defaultCacheEntries = 8192

// entryCost is about what a cached entry takes in memory.
func entryCost(e *pb.Entry) int64 { return 64 + int64(len(e.Data)) }

// costOf is the cost of entries.
func costOf(ents []*pb.Entry) int64 {
	var n int64
	for _, e := range ents {
		n += entryCost(e)
	}
	return n
}

// loadLogStore reads the consensus state of db. A fresh DB is bootstrapped
// with peers as its voters at index 1, term 1, as if a snapshot of the
// empty state had been installed: every voter starts identical. A fresh DB
// that joins an existing group (join) starts with no configuration and an
// empty log at index 0, and waits for a leader's snapshot.
func loadLogStore(db *pebble.DB, peers map[uint64]string, join bool) (*logStore, error) {
	s := &logStore{db: db, cacheMax: defaultCacheEntries, cacheMaxBytes: 32 << 20, snaps: map[uint64]pinnedSnapshot{}}
	v, closer, err := db.Get(keyApplied)
	if errors.Is(err, pebble.ErrNotFound) {
		if join {
			return s, s.bootstrapJoin()
		}
		return s, s.bootstrap(peers)
	}
	if err != nil {
		return nil, err
	}
	s.appliedIndex, s.appliedTerm, s.conf, err = decodeApplied(v)
	_ = closer.Close()
	if err != nil {
		return nil, err
	}
	if s.confBytes, err = proto.Marshal(s.conf); err != nil {
		return nil, err
	}
	if err := s.loadBook(peers); err != nil {
		return nil, err
	}
	if v, closer, err = db.Get(keyTruncated); err != nil {
		return nil, fmt.Errorf("%w: truncated state: %w", ErrCorrupt, err)
	}
	s.truncIndex, s.truncTerm, err = decodeIndexTerm(v)
	_ = closer.Close()
	if err != nil {
		return nil, err
	}
	s.hard = &pb.HardState{}
	if v, closer, err = db.Get(keyHardState); err == nil {
		s.hard, err = decodeHardState(v)
		_ = closer.Close()
		if err != nil {
			return nil, err
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return nil, err
	}
	// The last index is the last log key; an empty log ends at trunc.
	s.last = s.truncIndex
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: logKey(0), UpperBound: []byte{keyPrefix, kindLog + 1}})
	if err != nil {
		return nil, err
	}
	if it.Last() {
		if s.last, err = logKeyIndex(it.Key()); err != nil {
			_ = it.Close()
			return nil, err
		}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if s.hard.GetCommit() < s.appliedIndex {
		// The apply batch of entries durable in the log may reach the disk
		// before the hard state that recorded their commit: applied
		// entries were committed.
		s.hard.Commit = new(s.appliedIndex)
	}
	if s.appliedIndex < s.truncIndex || s.appliedIndex > s.last {
		return nil, fmt.Errorf("%w: applied index %d outside the log [%d, %d]",
			ErrCorrupt, s.appliedIndex, s.truncIndex, s.last)
	}
	return s, nil
}

func (s *logStore) bootstrap(peers map[uint64]string) error {
	if err := s.setConf(&pb.ConfState{Voters: slices.Sorted(maps.Keys(peers))}); err != nil {
		return err
	}
	s.setBook(addressBook{addrs: maps.Clone(peers), groupID: groupIDOf(s.conf.GetVoters())})
	s.truncIndex, s.truncTerm, s.last = 1, 1, 1
	s.appliedIndex, s.appliedTerm = 1, 1
	s.hard = &pb.HardState{Term: new(uint64(1)), Vote: new(uint64(0)), Commit: new(uint64(1))}
	return s.writeBootstrap()
}

// bootstrapJoin records that this DB waits to join a group: no
// configuration, an empty log. A later Open, with or without join, goes on
// waiting rather than bootstrapping a group of its own.
func (s *logStore) bootstrapJoin() error {
	if err := s.setConf(&pb.ConfState{}); err != nil {
		return err
	}
	s.setBook(addressBook{addrs: map[uint64]string{}})
	s.hard = &pb.HardState{Term: new(uint64(0)), Vote: new(uint64(0)), Commit: new(uint64(0))}
	return s.writeBootstrap()
}

func (s *logStore) writeBootstrap() error {
	b := s.db.NewBatch()
	defer func() { _ = b.Close() }()
	_ = b.Set(keyTruncated, encodeIndexTerm(s.truncIndex, s.truncTerm), nil)
	_ = b.Set(keyApplied, encodeApplied(s.appliedIndex, s.appliedTerm, s.confBytes), nil)
	_ = b.Set(keyMembers, s.bookBytes, nil)
	_ = b.Set(keyHardState, encodeHardState(s.hard), nil)
	return b.Commit(pebble.Sync)
}

// loadBook reads the address book. A DB written before the book was
// stored takes the addresses of its members from peers.
func (s *logStore) loadBook(peers map[uint64]string) error {
	v, closer, err := s.db.Get(keyMembers)
	if errors.Is(err, pebble.ErrNotFound) {
		book := map[uint64]string{}
		for _, id := range confMembers(s.conf) {
			book[id] = peers[id]
		}
		s.setBook(addressBook{addrs: book})
		return nil
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	ab, err := decodeBook(v)
	if err != nil {
		return err
	}
	s.setBook(ab)
	return nil
}

func (s *logStore) setBook(ab addressBook) {
	ab.changeID = 0
	s.book, s.removed, s.groupID, s.bookBytes = ab.addrs, ab.removed, ab.groupID, ab.encode()
}

// InitialState implements raft.Storage.
func (s *logStore) InitialState() (*pb.HardState, *pb.ConfState, error) {
	return proto.Clone(s.hard).(*pb.HardState), proto.Clone(s.conf).(*pb.ConfState), nil
}

// FirstIndex implements raft.Storage.
func (s *logStore) FirstIndex() (uint64, error) { return s.truncIndex + 1, nil }

// LastIndex implements raft.Storage.
func (s *logStore) LastIndex() (uint64, error) { return s.last, nil }

// Term implements raft.Storage.
func (s *logStore) Term(i uint64) (uint64, error) {
	switch {
	case i == s.truncIndex:
		return s.truncTerm, nil
	case i < s.truncIndex:
		return 0, raft.ErrCompacted
	case i > s.last:
		return 0, raft.ErrUnavailable
	}
	if e := s.cached(i); e != nil {
		return e.GetTerm(), nil
	}
	v, closer, err := s.db.Get(logKey(i))
	if err != nil {
		return 0, fmt.Errorf("%w: log entry %d: %w", ErrCorrupt, i, err)
	}
	defer closer.Close()
	if len(v) < 2 {
		return 0, fmt.Errorf("%w: short log entry %d", ErrCorrupt, i)
	}
	term, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad term in log entry %d", ErrCorrupt, i)
	}
	return term, nil
}

func (s *logStore) cached(i uint64) *pb.Entry {
	if len(s.cache) == 0 || i < s.cacheStart || i > s.last {
		return nil
	}
	return s.cache[i-s.cacheStart]
}

// Entries implements raft.Storage.
func (s *logStore) Entries(lo, hi, maxSize uint64) ([]*pb.Entry, error) {
	if lo <= s.truncIndex {
		return nil, raft.ErrCompacted
	}
	if hi > s.last+1 {
		return nil, fmt.Errorf("consensus: entries [%d, %d) past last index %d: %w", lo, hi, s.last, raft.ErrUnavailable)
	}
	if lo >= hi {
		return nil, nil
	}
	if len(s.cache) > 0 && lo >= s.cacheStart {
		src := s.cache[lo-s.cacheStart : hi-s.cacheStart]
		n, size := 0, uint64(0)
		for ; n < len(src); n++ {
			size += entrySize(src[n])
			if n > 0 && size > maxSize {
				break
			}
		}
		return append([]*pb.Entry(nil), src[:n]...), nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: logKey(lo), UpperBound: logKey(hi)})
	if err != nil {
		return nil, err
	}
	defer func() { _ = it.Close() }()
	var ents []*pb.Entry
	size := uint64(0)
	next := lo
	for valid := it.First(); valid; valid = it.Next() {
		idx, err := logKeyIndex(it.Key())
		if err != nil {
			return nil, err
		}
		if idx != next {
			return nil, fmt.Errorf("%w: log gap: want entry %d, found %d", ErrCorrupt, next, idx)
		}
		e, err := decodeEntry(idx, it.Value())
		if err != nil {
			return nil, err
		}
		size += entrySize(e)
		if len(ents) > 0 && size > maxSize {
			break
		}
		ents = append(ents, e)
		next++
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("%w: log entry %d missing", ErrCorrupt, lo)
	}
	return ents, nil
}

func entrySize(e *pb.Entry) uint64 { return uint64(len(e.Data)) + 16 }

// Snapshot implements raft.Storage. It describes the state machine as of the
// applied index, which is exactly what the DB holds while the raft goroutine
// (the only applier) is in this call, and pins that state with an
// iterator that the transport streams to the follower.
func (s *logStore) Snapshot() (*pb.Snapshot, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: stateStart})
	if err != nil {
		return nil, err
	}
	s.snapToken++
	s.snaps[s.snapToken] = pinnedSnapshot{it: it, book: s.bookBytes}
	return &pb.Snapshot{
		Data: binary.BigEndian.AppendUint64(nil, s.snapToken),
		Metadata: &pb.SnapshotMetadata{
			ConfState: proto.Clone(s.conf).(*pb.ConfState),
			Index:     new(s.appliedIndex),
			Term:      new(s.appliedTerm),
		},
	}, nil
}

// takeSnapshot returns and forgets the pinned state named by data.
func (s *logStore) takeSnapshot(data []byte) pinnedSnapshot {
	if len(data) != 8 {
		return pinnedSnapshot{}
	}
	tok := binary.BigEndian.Uint64(data)
	p := s.snaps[tok]
	delete(s.snaps, tok)
	return p
}

func (s *logStore) closeSnapshots() {
	for tok, p := range s.snaps {
		p.close()
		delete(s.snaps, tok)
	}
}

// writeEntries adds ents (contiguous, first index possibly at or below last,
// replacing a conflicting suffix) to b. commitEntries updates the in-memory
// view once b is committed.
func (s *logStore) writeEntries(b *pebble.Batch, ents []*pb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	first := ents[0].GetIndex()
	if first <= s.truncIndex || first > s.last+1 {
		return fmt.Errorf("consensus: append at %d outside (%d, %d]", first, s.truncIndex, s.last+1)
	}
	for _, e := range ents {
		s.keyBuf = appendLogKey(s.keyBuf[:0], e.GetIndex())
		s.valBuf = appendEntryValue(s.valBuf[:0], e)
		if err := b.Set(s.keyBuf, s.valBuf, nil); err != nil {
			return err
		}
	}
	if newLast := ents[len(ents)-1].GetIndex(); newLast < s.last {
		return b.DeleteRange(logKey(newLast+1), logKey(s.last+1), nil)
	}
	return nil
}

func (s *logStore) commitEntries(ents []*pb.Entry) {
	if len(ents) == 0 {
		return
	}
	first := ents[0].GetIndex()
	if len(s.cache) > 0 && first >= s.cacheStart && first <= s.last+1 {
		s.cacheBytes -= costOf(s.cache[first-s.cacheStart:])
		s.cache = s.cache[:first-s.cacheStart]
	} else {
		s.cache, s.cacheStart, s.cacheBytes = s.cache[:0], first, 0
	}
	s.cache = append(s.cache, ents...)
	s.cacheBytes += costOf(ents)
	s.last = ents[len(ents)-1].GetIndex()
	// Past either bound the oldest entries go; the newest always stays.
	over := max(len(s.cache)-s.cacheMax, 0)
	bytes := s.cacheBytes - costOf(s.cache[:over])
	for ; bytes > s.cacheMaxBytes && over < len(s.cache)-1; over++ {
		bytes -= entryCost(s.cache[over])
	}
	if over > 0 {
		s.cacheBytes = bytes
		// Trim from the front, reusing the backing array once it has grown
		// to twice the cap.
		if cap(s.cache) >= 2*s.cacheMax {
			n := copy(s.cache, s.cache[over:])
			clear(s.cache[n:])
			s.cache = s.cache[:n]
		} else {
			s.cache = s.cache[over:]
		}
		s.cacheStart += uint64(over)
	}
	s.cacheBytesPub.Store(s.cacheBytes)
}

// writeCompaction adds to b the removal of log entries up to index, which
// must be applied. commitCompaction updates the in-memory view.
func (s *logStore) writeCompaction(b *pebble.Batch, index, term uint64) error {
	if err := b.DeleteRange(logKey(s.truncIndex+1), logKey(index+1), nil); err != nil {
		return err
	}
	return b.Set(keyTruncated, encodeIndexTerm(index, term), nil)
}

func (s *logStore) commitCompaction(index, term uint64) {
	s.truncIndex, s.truncTerm = index, term
	if len(s.cache) > 0 && s.cacheStart <= index {
		drop := min(index-s.cacheStart+1, uint64(len(s.cache)))
		s.cacheBytes -= costOf(s.cache[:drop])
		s.cache = s.cache[drop:]
		s.cacheStart += drop
		s.cacheBytesPub.Store(s.cacheBytes)
	}
}

// commitSnapshotLog makes the in-memory view that of a log replaced by the
// snapshot's (index, term), once the snapshot's ingestion (installSnapshot)
// replaced it on disk.
func (s *logStore) commitSnapshotLog(index, term uint64, cs *pb.ConfState) error {
	s.truncIndex, s.truncTerm, s.last = index, term, index
	s.cache, s.cacheStart, s.cacheBytes = s.cache[:0], 0, 0
	s.cacheBytesPub.Store(0)
	return s.setConf(cs)
}

func (s *logStore) setConf(cs *pb.ConfState) error {
	b, err := proto.Marshal(cs)
	if err != nil {
		return err
	}
	s.conf, s.confBytes = cs, b
	return nil
}
