package consensus

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/walfs"
)

// fillState proposes pairs of valueBytes each (random, so that they do not
// compress), from 8 proposers, until the leader's state holds about total
// bytes. A proposal refused because leadership moved (a loaded machine)
// goes to the new leader.
func fillState(t *testing.T, c *testCluster, prefix string, total, valueBytes int) {
	t.Helper()
	ctx := context.Background()
	raw := make([]byte, valueBytes)
	_, _ = rand.NewChaCha8([32]byte{}).Read(raw)
	value := string(raw)
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leader := c.waitLeader()
			for i := next.Add(1); i*int64(valueBytes) <= int64(total); i = next.Add(1) {
				cmd := kvCmd(opPut, fmt.Sprintf("%s%07d", prefix, i), value)
				_, err := leader.Propose(ctx, cmd)
				for errors.Is(err, ErrNotLeader) {
					leader = c.waitLeader()
					_, err = leader.Propose(ctx, cmd)
				}
				if !assertNoError(t, err) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// otherThan returns a running node that is not n.
func (c *testCluster) otherThan(n *Node) uint64 {
	for _, m := range c.running() {
		if m != n {
			return m.ID()
		}
	}
	return 0
}

// TestSnapshotLargerThanStagingBound has a follower install a snapshot of
// a state of 24 MiB with its stage bounded to files of 256 KiB: the pairs
// go to disk file by file (none bigger than the bound and a block), and the
// follower ends with exactly the leader's state, every pair compared.
func TestSnapshotLargerThanStagingBound(t *testing.T) {
	const fileBytes = 256 << 10
	var (
		mu      sync.Mutex
		largest int64
		files   int
	)
	c := newTestCluster(t, 3, func(o *Options) {
		o.CompactEvery, o.KeepEntries = 100, 10
		o.SnapshotFileBytes = fileBytes
		o.LogCacheBytes = 1 << 20
		fs, dir := o.FS, o.Dir
		o.installHook = func(step string) error {
			if !strings.HasPrefix(step, "file ") {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			files++
			// The file just finished is the last one in its stage.
			stages, err := fs.List(filepath.Join(dir, stagingDir))
			if err != nil {
				return err
			}
			for _, s := range stages {
				names, err := fs.List(filepath.Join(dir, stagingDir, s))
				if err != nil {
					return err
				}
				for _, name := range names {
					st, err := fs.Stat(filepath.Join(dir, stagingDir, s, name))
					if err != nil {
						return err
					}
					largest = max(largest, st.Size())
				}
			}
			return nil
		}
	})
	leader := c.waitLeader()
	follower := c.otherThan(leader)
	fillState(t, c, "old/", 1<<20, 4<<10)
	c.waitConverged()
	stoppedAt := c.node(follower).Metrics().LastIndex
	c.stop(follower)

	fillState(t, c, "big/", 24<<20, 8<<10)
	leader = c.waitLeader()
	require.Greater(t, leader.Metrics().FirstIndex, stoppedAt+1, "the leader compacted its log past the follower")
	want := dumpKV(t, leader.DB())

	c.start(follower)
	got := c.waitConverged()
	require.True(t, maps.Equal(want, got), "the follower holds exactly the leader's state")
	m := c.node(follower).Metrics()
	require.Positive(t, m.SnapshotsApplied)
	require.Greater(t, m.SnapshotBytesReceived, uint64(24<<20))
	require.GreaterOrEqual(t, m.SnapshotFilesReceived, uint64(24<<20/fileBytes))
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, files, 24<<20/fileBytes)
	require.LessOrEqual(t, largest, int64(fileBytes+64<<10), "a staged file stays within its bound")
	requireNoStage(t, c.fs, fmt.Sprintf("n%d", follower))
}

// TestSnapshotInstallCrash crashes a follower (drops every unsynced write)
// at each step of a snapshot's install: after a staged file, once every
// file is staged, before the ingestion, after it. The crashed directory
// holds either the old state with its log and applied index, or the
// snapshot's state at its index, never a mix; restarted there, the
// follower converges to the leader's state.
func TestSnapshotInstallCrash(t *testing.T) {
	for _, tc := range []struct {
		step string
		new  bool // whether the crash leaves the snapshot installed
	}{
		{"file 2", false},
		{stepStaged, false},
		{stepIngest, false},
		{stepIngested, true},
	} {
		t.Run(strings.ReplaceAll(tc.step, " ", ""), func(t *testing.T) {
			testSnapshotInstallCrash(t, tc.step, tc.new)
		})
	}
}

var errCrash = errors.New("test: crash")

func testSnapshotInstallCrash(t *testing.T, step string, installed bool) {
	var (
		fs      atomic.Pointer[vfs.MemFS] // the follower's disk
		crashed = make(chan *vfs.MemFS, 1)
		armed   atomic.Bool
	)
	fs.Store(vfs.NewCrashableMem())
	const follower = 3
	c := newTestCluster(t, 3, func(o *Options) {
		o.CompactEvery, o.KeepEntries = 100, 10
		o.SnapshotFileBytes = 64 << 10
		if o.ID != follower {
			return
		}
		o.FS = fs.Load()
		o.installHook = func(s string) error {
			if s != step || !armed.CompareAndSwap(true, false) {
				return nil
			}
			crashed <- fs.Load().CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			return errCrash
		}
	})
	var leader *Node
	require.Eventually(t, func() bool {
		leader = c.waitLeader()
		if leader.ID() == follower {
			_ = leader.TransferLeadership(context.Background(), 1)
			return false
		}
		return true
	}, 10e9, 10e6)
	fillState(t, c, "old/", 256<<10, 1<<10)
	c.waitConverged()
	n3 := c.node(follower)
	require.NoError(t, n3.DB().Flush()) // the old state durable, not only its log
	oldState, oldApplied := dumpKV(t, n3.DB()), n3.Metrics().AppliedIndex
	c.stop(follower)

	fillState(t, c, "new/", 2<<20, 4<<10)
	leader = c.waitLeader()
	_, err := leader.Propose(context.Background(), kvCmd(opDelete, "old/0000001", ""))
	require.NoError(t, err)
	require.Greater(t, leader.Metrics().FirstIndex, oldApplied+1, "the leader compacted its log")
	newState, newApplied := dumpKV(t, leader.DB()), leader.Metrics().AppliedIndex

	armed.Store(true)
	c.start(follower)
	clone := <-crashed
	c.crash(follower)

	// What the crash left: one state or the other, with its own log.
	index, state := inspectCrashed(t, clone, fmt.Sprintf("n%d", follower))
	if installed {
		require.Equal(t, newApplied, index)
		require.True(t, maps.Equal(newState, state), "the snapshot's state")
	} else {
		require.Equal(t, oldApplied, index)
		require.True(t, maps.Equal(oldState, state), "the old state")
	}

	fs.Store(clone)
	c.start(follower)
	require.True(t, maps.Equal(newState, c.waitConverged()))
	requireNoStage(t, clone, fmt.Sprintf("n%d", follower))
}

// requireNoStage checks that no staged snapshot is left in dir.
func requireNoStage(t *testing.T, fs vfs.FS, dir string) {
	t.Helper()
	stages, err := fs.List(filepath.Join(dir, stagingDir))
	if !errors.Is(err, iofs.ErrNotExist) {
		require.NoError(t, err)
	}
	require.Empty(t, stages, "a staged snapshot is removed once installed or dropped")
}

// crash stops a node whose raft goroutine may have failed: its Close
// error is not checked.
func (c *testCluster) crash(id uint64) {
	c.mu.Lock()
	n, srv := c.nodes[id], c.servers[id]
	delete(c.nodes, id)
	delete(c.servers, id)
	c.mu.Unlock()
	srv.Stop()
	_ = n.Close()
}

// inspectCrashed opens the DB in dir on fs, checks that its log and
// applied state hold together (as Open does), and returns its applied
// index and its state.
func inspectCrashed(t *testing.T, fs vfs.FS, dir string) (uint64, map[string]string) {
	t.Helper()
	wal := walfs.New(fs, 0)
	defer wal.Close()
	db, err := pebble.Open(dir, &pebble.Options{FS: wal})
	require.NoError(t, err)
	defer db.Close()
	s, err := loadLogStore(db, nil, false)
	require.NoError(t, err)
	if s.last > s.truncIndex {
		ents, err := s.Entries(s.truncIndex+1, s.last+1, ^uint64(0))
		require.NoError(t, err)
		require.Len(t, ents, int(s.last-s.truncIndex))
	}
	return s.appliedIndex, dumpKV(t, db)
}

// TestPinnedSnapshotSurvivesExcise pins an outgoing snapshot, then
// replaces the state range as installing a snapshot does: the pinned
// state still reads as it was when raft asked for it (an iterator opened
// then on a pebble.Snapshot taken before the excise reads none of the old
// keys).
func TestPinnedSnapshotSurvivesExcise(t *testing.T) {
	fs := vfs.NewMem()
	db, err := pebble.Open("db", &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatNewest})
	require.NoError(t, err)
	defer db.Close()
	s, err := loadLogStore(db, map[uint64]string{1: ""}, false)
	require.NoError(t, err)
	old := map[string]string{}
	for i := range 100 {
		k, v := fmt.Sprintf("k/old%03d", i), fmt.Sprint(i)
		require.NoError(t, db.Set([]byte(k), []byte(v), nil))
		old[k] = v
	}
	require.NoError(t, db.Flush()) // in sstables, which the excise cuts
	snap, err := s.Snapshot()
	require.NoError(t, err)
	pinned := s.takeSnapshot(snap.GetData())
	defer pinned.close()

	// The state range replaced by one ingested file.
	require.NoError(t, fs.MkdirAll("stage", 0o755))
	f, err := fs.Create("stage/new.sst", vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	w := sstable.NewWriter(objstorageprovider.NewFileWritable(f), sstable.WriterOptions{TableFormat: db.TableFormat()})
	require.NoError(t, w.Set([]byte("k/new"), []byte("x")))
	require.NoError(t, w.Close())
	_, err = db.IngestAndExcise(context.Background(), []string{"stage/new.sst"}, nil, nil,
		pebble.KeyRange{Start: stateStart, End: stateRangeEnd})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k/new": "x"}, dumpKV(t, db))

	got := map[string]string{}
	for valid := pinned.it.First(); valid; valid = pinned.it.Next() {
		got[string(pinned.it.Key())] = string(pinned.it.Value())
	}
	require.NoError(t, pinned.it.Error())
	require.Equal(t, old, got)
}
