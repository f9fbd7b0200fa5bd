package consensus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

func singleOpts(fs vfs.FS, dir string) Options {
	return Options{ID: 1, FS: fs, Dir: dir, TickInterval: 10 * time.Millisecond}
}

func openSingle(t testing.TB, fs vfs.FS, dir string) (*Node, *kvSM) {
	t.Helper()
	sm := &kvSM{}
	n, err := Open(singleOpts(fs, dir), sm)
	require.NoError(t, err)
	require.True(t, n.IsLeader(), "a single voter leads as soon as it is open")
	return n, sm
}

func waitLeader(t testing.TB, n *Node) {
	t.Helper()
	require.Eventually(t, n.IsLeader, 5*time.Second, time.Millisecond)
}

func TestSingleVoterAppliesInOrderAndRecovers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n, _ := openSingle(t, vfs.Default, dir)
	id, _ := n.Leader()
	require.Equal(t, uint64(1), id)

	var last uint64
	for i := range 100 {
		res, err := n.Propose(ctx, kvCmd(opPut, fmt.Sprintf("key%03d", i), fmt.Sprintf("v%d", i)))
		require.NoError(t, err)
		idx := res.(uint64)
		require.Greater(t, idx, last, "results come back in log order")
		last = idx
	}
	// A state-machine error is the proposer's result, and the node goes on.
	_, err := n.Propose(ctx, kvCmd(opCreate, "key007", "again"))
	require.ErrorIs(t, err, errExists)
	_, err = n.Propose(ctx, kvCmd(opCreate, "fresh", "x"))
	require.NoError(t, err)

	require.NoError(t, n.ReadBarrier(ctx))
	v, ok := readKV(t, n.DB(), "key007")
	require.True(t, ok)
	require.Equal(t, "v7", v)
	// Status reads the commit and applied indexes at different moments: a
	// sole voter publishes entries it applied while their append was
	// fsynced before raft, at its next turn, counts them committed
	// (decision 0006), so the two meet once the loop has turned.
	var st Status
	require.Eventually(t, func() bool { st = n.Status(); return st.Commit == st.Applied }, 10*time.Second, time.Millisecond)
	require.Equal(t, "leader", st.Role)
	require.GreaterOrEqual(t, st.Applied, last+1)
	before := dumpKV(t, n.DB())
	require.Len(t, before, 101)
	require.NoError(t, n.Close())
	_, err = n.Propose(ctx, kvCmd(opPut, "late", "x"))
	require.ErrorIs(t, err, ErrClosed)

	// Restart on the same directory: everything acknowledged is there, and
	// nothing is applied twice (the applied index was recorded).
	n2, sm2 := openSingle(t, vfs.Default, dir)
	defer n2.Close()
	require.Equal(t, before, dumpKV(t, n2.DB()))
	require.Zero(t, sm2.applyCalls, "entries at or below the stored applied index are not re-applied")
	restores := sm2.restoreCalls()
	require.Len(t, restores, 1, "Open lets the state machine load its state")
	require.GreaterOrEqual(t, restores[0], last+1)
	res, err := n2.Propose(ctx, kvCmd(opPut, "after", "restart"))
	require.NoError(t, err)
	require.Greater(t, res.(uint64), last)
	require.Equal(t, 1, sm2.applyCalls)
}

func TestGroupCommitBatchesConcurrentProposals(t *testing.T) {
	for _, afterSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("ApplyAfterSync=%v", afterSync), func(t *testing.T) {
			opts := singleOpts(vfs.Default, t.TempDir())
			opts.ApplyAfterSync = afterSync
			n, err := Open(opts, &kvSM{})
			require.NoError(t, err)
			defer n.Close()
			testGroupCommit(t, n)
			applied := n.Metrics().EntriesAppliedDuringSync
			if afterSync {
				require.Zero(t, applied)
			} else {
				require.Positive(t, applied, "a sole voter applies its entries while their fsync runs")
			}
		})
	}
}

func testGroupCommit(t *testing.T, n *Node) {
	before := n.Metrics()
	const workers, each = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := n.Propose(context.Background(), kvCmd(opPut, fmt.Sprintf("w%d/%d", w, i), "v")); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	m := n.Metrics()
	proposals := m.Proposals - before.Proposals
	fsyncs := m.Fsyncs - before.Fsyncs
	require.Equal(t, uint64(workers*each), proposals)
	require.Len(t, dumpKV(t, n.DB()), workers*each)
	t.Logf("%d proposals, %d log appends, %d fsyncs, %d apply batches", proposals,
		m.LogAppends-before.LogAppends, fsyncs, m.ApplyBatches-before.ApplyBatches)
	require.Less(t, fsyncs, proposals/2, "concurrent proposals share fsyncs")
}

// TestCrashKeepsAcknowledgedProposals crashes a node (keeping only synced
// data) while 16 proposers run, several times, and checks that every
// proposal acknowledged before the crash is in the recovered state.
func TestCrashKeepsAcknowledgedProposals(t *testing.T) {
	fs := vfs.NewCrashableMem()
	const dir = "meta"
	for round := range 3 {
		n, err := Open(singleOpts(fs, dir), &kvSM{})
		require.NoError(t, err)
		waitLeader(t, n)

		var (
			mu    sync.Mutex
			acked = map[string]string{}
			stop  atomic.Bool
			wg    sync.WaitGroup
		)
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					k, v := fmt.Sprintf("r%d/w%d/%d", round, w, i), fmt.Sprintf("%d", i)
					if _, err := n.Propose(context.Background(), kvCmd(opPut, k, v)); err != nil {
						return
					}
					mu.Lock()
					acked[k] = v
					mu.Unlock()
				}
			}()
		}
		time.Sleep(150 * time.Millisecond)
		mu.Lock()
		want := make(map[string]string, len(acked))
		for k, v := range acked {
			want[k] = v
		}
		mu.Unlock()
		crashed := fs.CrashClone(vfs.CrashCloneCfg{})
		stop.Store(true)
		wg.Wait()
		require.NoError(t, n.Close())
		require.NotEmpty(t, want)

		// Recover from the crash image and check every acknowledged write.
		fs = crashed
		n, err = Open(singleOpts(fs, dir), &kvSM{})
		require.NoError(t, err)
		waitLeader(t, n)
		for k, v := range want {
			got, ok := readKV(t, n.DB(), k)
			require.True(t, ok, "acknowledged %s lost in crash round %d", k, round)
			require.Equal(t, v, got)
		}
		t.Logf("round %d: %d acknowledged writes survived the crash", round, len(want))
		require.NoError(t, n.Close())
	}
}

func TestLogCompaction(t *testing.T) {
	fs := vfs.NewMem()
	opts := singleOpts(fs, "meta")
	opts.CompactEvery, opts.KeepEntries = 50, 10
	n, err := Open(opts, &kvSM{})
	require.NoError(t, err)
	waitLeader(t, n)
	for i := range 200 {
		_, err := n.Propose(context.Background(), kvCmd(opPut, fmt.Sprintf("k%d", i), "v"))
		require.NoError(t, err)
	}
	m := n.Metrics()
	require.GreaterOrEqual(t, m.Compactions, uint64(3))
	require.Greater(t, m.FirstIndex, uint64(100))
	require.NoError(t, n.Close())
	// The compacted log still restarts.
	n, err = Open(opts, &kvSM{})
	require.NoError(t, err)
	defer n.Close()
	waitLeader(t, n)
	require.Len(t, dumpKV(t, n.DB()), 200)
	_, err = n.Propose(context.Background(), kvCmd(opPut, "more", "v"))
	require.NoError(t, err)
}

func TestProposeHonoursContext(t *testing.T) {
	n, _ := openSingle(t, vfs.NewMem(), "meta")
	defer n.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := n.Propose(ctx, kvCmd(opPut, "k", "v"))
	// Either it was taken before the cancellation was seen, or not at all.
	if err != nil {
		require.True(t, errors.Is(err, context.Canceled))
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Options)
		ok   bool
	}{
		{"defaults", func(*Options) {}, true},
		{"no id", func(o *Options) { o.ID = 0 }, false},
		{"no dir", func(o *Options) { o.Dir = "" }, false},
		{"peers without self", func(o *Options) { o.Peers = map[uint64]string{2: "a:1"} }, false},
		{"peer without address", func(o *Options) { o.Peers = map[uint64]string{1: "", 2: ""} }, false},
		{"three voters", func(o *Options) { o.Peers = map[uint64]string{1: "a:1", 2: "b:1", 3: "c:1"} }, true},
		{"election not above heartbeat", func(o *Options) { o.ElectionTicks, o.HeartbeatTicks = 2, 2 }, false},
		{"keep not below compact", func(o *Options) { o.CompactEvery, o.KeepEntries = 10, 10 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{ID: 1, Dir: "d"}
			tc.mod(&o)
			err := o.EnsureDefaults().Validate()
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalidOptions)
			}
		})
	}
}

// TestStoredMembershipWins: once a directory holds a group, its stored
// membership is the group's, whatever Peers says.
func TestStoredMembershipWins(t *testing.T) {
	fs := vfs.NewMem()
	n, _ := openSingle(t, fs, "meta")
	_, err := n.Propose(context.Background(), kvCmd(opPut, "k", "v"))
	require.NoError(t, err)
	require.NoError(t, n.Close())
	opts := singleOpts(fs, "meta")
	opts.Peers = map[uint64]string{1: "127.0.0.1:1", 2: "127.0.0.1:2"}
	n, err = Open(opts, &kvSM{})
	require.NoError(t, err)
	defer n.Close()
	require.True(t, n.IsLeader(), "still the single voter it was created as")
	require.Equal(t, []uint64{1}, n.Status().Voters)
	require.Equal(t, []Member{{ID: 1, Addr: "127.0.0.1:1"}}, n.Status().Members, "the address Peers gives wins locally")
	v, ok := readKV(t, n.DB(), "k")
	require.True(t, ok)
	require.Equal(t, "v", v)
}
