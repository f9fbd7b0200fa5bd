package consensus

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	pb "go.etcd.io/raft/v3/raftpb"
)

// Online backup and restore.
//
// A backup is a Pebble checkpoint of the node's DB (hard links to its
// sstables, a copy of its logs and manifest), taken while the node runs.
// Every apply batch carries the applied state (keyApplied) with the
// commands it applies, and a checkpoint holds whole batches, so the
// checkpoint's state is exactly the state at the applied index it stores:
// nothing has to stop the raft goroutine. The checkpoint is opened
// read-only and its state range is read from it; the raft log, hard state
// and address book it also holds are not part of a backup (the
// configuration and book go in its description, BackupInfo).
//
// A restore (Seed) writes the state into a new directory and makes it the
// start of a new group: the log is empty and truncated at the backup's
// index and term, as if every new voter had installed the same snapshot,
// which is how a fresh group starts at index 1 (bootstrap) too.

// ErrNotEmpty is returned by Seed for a directory that already holds files.
var ErrNotEmpty = errors.New("consensus: the directory is not empty")

// BackupInfo describes the state a Checkpoint holds.
type BackupInfo struct {
	// Index and Term are the applied index and its term: the state is the
	// result of every entry up to Index, and of none after.
	Index, Term uint64
	// Voters and Learners are the group's configuration at Index.
	Voters, Learners []uint64
	// Members is the address book at Index (member ID to address).
	Members map[uint64]string
	// GroupID is the Raft group's ID (a hash of its first voters).
	GroupID uint64
}

// Checkpoint is a consistent, read-only copy of a node's state, taken by
// Node.Checkpoint. It is independent of the node: the node goes on
// applying, compacting and even closing. Close removes it.
type Checkpoint struct {
	fs   vfs.FS
	dir  string
	db   *pebble.DB
	info BackupInfo
}

// Checkpoint takes a Pebble checkpoint of the node's DB in dir, which must
// not exist; on the node's filesystem (e.g. under Options.Dir) its sstables
// are hard links and it costs little space until the DB compacts them
// away. It can be called from any goroutine, on a leader or a follower;
// the state it holds is the one at its BackupInfo's Index.
func (n *Node) Checkpoint(dir string) (*Checkpoint, error) {
	select {
	case <-n.donec:
		return nil, ErrClosed
	default:
	}
	n.cpMu.RLock()
	if n.dbClosed {
		n.cpMu.RUnlock()
		return nil, ErrClosed
	}
	err := n.db.Checkpoint(dir, pebble.WithFlushedWAL())
	n.cpMu.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("consensus: checkpoint %s: %w", dir, err)
	}
	po := &pebble.Options{}
	if n.opts.Pebble != nil {
		po = n.opts.Pebble.Clone()
	}
	po.FS, po.ReadOnly = n.opts.FS, true
	po.Logger = pebbleLogger{raftLogger{n.log.With("component", "pebble-checkpoint")}}
	db, err := pebble.Open(dir, po)
	if err != nil {
		_ = n.opts.FS.RemoveAll(dir)
		return nil, fmt.Errorf("consensus: open checkpoint %s: %w", dir, err)
	}
	c := &Checkpoint{fs: n.opts.FS, dir: dir, db: db}
	if c.info, err = readBackupInfo(db); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// readBackupInfo reads the applied state and address book of db.
func readBackupInfo(db *pebble.DB) (BackupInfo, error) {
	var info BackupInfo
	v, closer, err := db.Get(keyApplied)
	if err != nil {
		return info, fmt.Errorf("%w: checkpoint without an applied state: %w", ErrCorrupt, err)
	}
	var cs *pb.ConfState
	info.Index, info.Term, cs, err = decodeApplied(v)
	_ = closer.Close()
	if err != nil {
		return info, err
	}
	info.Voters, info.Learners = cs.GetVoters(), cs.GetLearners()
	info.Members = map[uint64]string{}
	if v, closer, err = db.Get(keyMembers); err == nil {
		ab, derr := decodeBook(v)
		_ = closer.Close()
		if derr != nil {
			return info, derr
		}
		for _, id := range confMembers(cs) {
			info.Members[id] = ab.addrs[id]
		}
		info.GroupID = ab.groupID
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return info, err
	}
	return info, nil
}

// Info describes the checkpoint's state.
func (c *Checkpoint) Info() BackupInfo { return c.info }

// DB is the checkpoint's DB, read-only (the state machine's keys are every
// key not beginning with 0x00).
func (c *Checkpoint) DB() *pebble.DB { return c.db }

// Pairs calls f with every key and value of the state range, in key order.
// k and v are valid only during the call. It stops at f's first error.
func (c *Checkpoint) Pairs(f func(k, v []byte) error) error {
	it, err := c.db.NewIter(&pebble.IterOptions{LowerBound: stateStart})
	if err != nil {
		return err
	}
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return err
		}
		if err := f(it.Key(), v); err != nil {
			_ = it.Close()
			return err
		}
	}
	return it.Close()
}

// Close closes the checkpoint's DB and removes its directory.
func (c *Checkpoint) Close() error {
	err := c.db.Close()
	if rerr := c.fs.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	return err
}

// Seed makes opts.Dir (absent, or an empty directory) the data directory of
// a new group whose state is a backup's: put is called once with a function
// that writes one state pair (keys must not begin with 0x00) and must write
// them all. The group's voters are opts.Peers (opts.ID alone when empty);
// every voter of a restored group is seeded from the same backup with the
// same index and term. The log starts empty, truncated at (index, term);
// the first leader's entries follow it. Open the directory with Open as
// usual; the state machine's Restorer sees index.
func Seed(opts Options, index, term uint64, put func(set func(k, v []byte) error) error) (err error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return err
	}
	if opts.Join {
		return fmt.Errorf("%w: a seeded directory starts a group: Join is for empty replicas", ErrInvalidOptions)
	}
	if index == 0 || term == 0 {
		return fmt.Errorf("%w: seed at index %d term %d", ErrInvalidOptions, index, term)
	}
	if names, lerr := opts.FS.List(opts.Dir); lerr == nil && len(names) > 0 {
		return fmt.Errorf("%w: %s holds %d files", ErrNotEmpty, opts.Dir, len(names))
	}
	peers := maps.Clone(opts.Peers)
	if len(peers) == 0 {
		peers = map[uint64]string{opts.ID: ""}
	}
	if _, ok := peers[opts.ID]; !ok {
		return fmt.Errorf("%w: ID %d is not among the peers %v", ErrInvalidOptions, opts.ID, slices.Sorted(maps.Keys(peers)))
	}
	po := &pebble.Options{}
	if opts.Pebble != nil {
		po = opts.Pebble.Clone()
	}
	po.FS = opts.FS
	po.FormatMajorVersion = pebble.FormatNewest
	po.Logger = pebbleLogger{raftLogger{opts.Logger.With("component", "pebble")}}
	db, err := pebble.Open(opts.Dir, po)
	if err != nil {
		return fmt.Errorf("consensus: open %s: %w", opts.Dir, err)
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			// The directory was empty: leave it so rather than half seeded
			// (it would open as a fresh group holding part of the state).
			if names, lerr := opts.FS.List(opts.Dir); lerr == nil {
				for _, name := range names {
					_ = opts.FS.RemoveAll(opts.FS.PathJoin(opts.Dir, name))
				}
			}
		}
	}()
	// Pairs go in batches of about 4 MiB, unsynced; the consensus keys go
	// last with a synced batch, so a directory whose seeding stopped has
	// no applied state and no group, and Open would start a fresh one:
	// the caller removes such a directory.
	b := db.NewBatch()
	defer func() { _ = b.Close() }()
	set := func(k, v []byte) error {
		if !validStateKey(k) {
			return fmt.Errorf("%w: key %x outside the state range", ErrCorrupt, k)
		}
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
		if b.Len() >= 4<<20 {
			if err := b.Commit(pebble.NoSync); err != nil {
				return err
			}
			b.Reset()
		}
		return nil
	}
	if err := put(set); err != nil {
		return err
	}
	s := &logStore{db: db}
	if err := s.setConf(&pb.ConfState{Voters: slices.Sorted(maps.Keys(peers))}); err != nil {
		return err
	}
	s.setBook(addressBook{addrs: peers, groupID: groupIDOf(s.conf.GetVoters())})
	s.truncIndex, s.truncTerm, s.last = index, term, index
	s.appliedIndex, s.appliedTerm = index, term
	s.hard = &pb.HardState{Term: new(term), Vote: new(uint64(0)), Commit: new(index)}
	_ = b.Set(keyTruncated, encodeIndexTerm(s.truncIndex, s.truncTerm), nil)
	_ = b.Set(keyApplied, encodeApplied(s.appliedIndex, s.appliedTerm, s.confBytes), nil)
	_ = b.Set(keyMembers, s.bookBytes, nil)
	_ = b.Set(keyHardState, encodeHardState(s.hard), nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	// The pairs are in the WAL; a flush leaves the new directory as
	// sstables, as a restored replica will read them.
	return db.Flush()
}
