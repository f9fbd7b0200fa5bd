package consensus

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"

	"github.com/strato-io/strato/leader"
)

// testCluster runs voters in this process, each with its own gRPC server on
// 127.0.0.1, talking over real gRPC.
type testCluster struct {
	t     testing.TB
	fs    vfs.FS
	addrs map[uint64]string
	mod   func(*Options)

	mu      sync.Mutex
	joining map[uint64]bool // nodes whose next start joins (Options.Join)
	// selfOnly starts nodes with only their own address in Peers: the
	// group's membership and addresses must come from their directories.
	selfOnly bool
	nodes    map[uint64]*Node
	sms      map[uint64]*kvSM
	servers  map[uint64]*grpc.Server
}

func newTestCluster(t testing.TB, size int, mod func(*Options)) *testCluster {
	c := &testCluster{t: t, fs: vfs.NewMem(), addrs: map[uint64]string{}, mod: mod,
		nodes: map[uint64]*Node{}, sms: map[uint64]*kvSM{}, servers: map[uint64]*grpc.Server{}}
	lis := map[uint64]net.Listener{}
	for id := uint64(1); id <= uint64(size); id++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lis[id], c.addrs[id] = l, l.Addr().String()
	}
	for id, l := range lis {
		c.startOn(id, l)
	}
	t.Cleanup(c.stopAll)
	return c
}

func (c *testCluster) opts(id uint64) Options {
	c.mu.Lock()
	o := Options{
		ID: id, Peers: maps.Clone(c.addrs), FS: c.fs, Dir: fmt.Sprintf("n%d", id),
		TickInterval: 20 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1,
	}
	if c.joining[id] {
		o.Peers, o.Join = map[uint64]string{id: c.addrs[id]}, true
		delete(c.joining, id)
	} else if c.selfOnly {
		o.Peers = map[uint64]string{id: c.addrs[id]}
	}
	c.mu.Unlock()
	if c.mod != nil {
		c.mod(&o)
	}
	return o
}

func (c *testCluster) startOn(id uint64, l net.Listener) {
	sm := &kvSM{}
	n, err := Open(c.opts(id), sm)
	require.NoError(c.t, err)
	srv := grpc.NewServer()
	n.RegisterGRPC(srv)
	go func() { _ = srv.Serve(l) }()
	c.mu.Lock()
	c.nodes[id], c.sms[id], c.servers[id] = n, sm, srv
	c.mu.Unlock()
}

// start restarts a stopped node on its address and directory.
func (c *testCluster) start(id uint64) {
	c.mu.Lock()
	addr := c.addrs[id]
	c.mu.Unlock()
	l, err := net.Listen("tcp", addr)
	require.NoError(c.t, err)
	c.startOn(id, l)
}

// stop kills a node: its server goes away and its node closes.
func (c *testCluster) stop(id uint64) {
	c.mu.Lock()
	n, srv := c.nodes[id], c.servers[id]
	delete(c.nodes, id)
	delete(c.servers, id)
	c.mu.Unlock()
	if srv != nil {
		srv.Stop()
	}
	if n != nil {
		require.NoError(c.t, n.Close())
	}
}

func (c *testCluster) stopAll() {
	c.mu.Lock()
	ids := slices.Collect(maps.Keys(c.addrs))
	c.mu.Unlock()
	for _, id := range ids {
		c.stop(id)
	}
}

func (c *testCluster) node(id uint64) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[id]
}

func (c *testCluster) running() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ns []*Node
	for _, n := range c.nodes {
		ns = append(ns, n)
	}
	return ns
}

// byAddr returns the running node serving addr, or nil.
func (c *testCluster) byAddr(addr string) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, a := range c.addrs {
		if a == addr {
			return c.nodes[id]
		}
	}
	return nil
}

// waitLeader waits until every running node agrees on one running leader.
func (c *testCluster) waitLeader() *Node {
	var leader *Node
	require.Eventually(c.t, func() bool {
		ns := c.running()
		leader = nil
		var id uint64
		for _, n := range ns {
			lid, _ := n.Leader()
			if lid == 0 || (id != 0 && lid != id) {
				return false
			}
			id = lid
			if n.IsLeader() {
				leader = n
			}
		}
		return leader != nil && leader.ID() == id
	}, 10*time.Second, 5*time.Millisecond)
	return leader
}

// waitConverged waits until every running node has applied the same index
// and holds the same state, and returns that state.
func (c *testCluster) waitConverged() map[string]string {
	var state map[string]string
	require.Eventually(c.t, func() bool {
		ns := c.running()
		var applied uint64
		for i, n := range ns {
			m := n.Metrics()
			if m.AppliedIndex != m.CommitIndex || (i > 0 && m.AppliedIndex != applied) {
				return false
			}
			applied = m.AppliedIndex
		}
		state = nil
		for _, n := range ns {
			s := dumpKV(c.t, n.DB())
			if state != nil && !maps.Equal(s, state) {
				return false
			}
			state = s
		}
		return true
	}, 20*time.Second, 10*time.Millisecond)
	return state
}

// redirector is a client that finds the leader among the cluster's addresses.
func (c *testCluster) redirector() *leader.Redirector {
	var addrs []string
	for _, a := range c.addrs {
		addrs = append(addrs, a)
	}
	return &leader.Redirector{Addrs: addrs, Hint: DefaultHint, Backoff: 5 * time.Millisecond}
}

func (c *testCluster) propose(ctx context.Context, r *leader.Redirector, cmd []byte) error {
	return r.Do(ctx, func(ctx context.Context, addr string) error {
		n := c.byAddr(addr)
		if n == nil {
			return ErrClosed
		}
		_, err := n.Propose(ctx, cmd)
		return err
	})
}

func TestThreeVotersElectAndRedirect(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader()
	for _, n := range c.running() {
		if n == leader {
			continue
		}
		_, err := n.Propose(ctx, kvCmd(opPut, "k", "v"))
		var nle *NotLeaderError
		require.ErrorAs(t, err, &nle)
		require.ErrorIs(t, err, ErrNotLeader)
		require.Equal(t, leader.ID(), nle.LeaderID)
		require.Equal(t, c.addrs[leader.ID()], nle.LeaderAddr)
		require.ErrorIs(t, n.ReadBarrier(ctx), ErrNotLeader)
		require.Equal(t, "follower", n.Status().Role)
	}
	for i := range 50 {
		_, err := leader.Propose(ctx, kvCmd(opPut, fmt.Sprintf("k%d", i), "v"))
		require.NoError(t, err)
	}
	_, err := leader.Propose(ctx, kvCmd(opCreate, "k1", "again"))
	require.ErrorIs(t, err, errExists)
	require.NoError(t, leader.ReadBarrier(ctx))
	require.Positive(t, leader.Metrics().ReadIndexes)
	v, ok := readKV(t, leader.DB(), "k49")
	require.True(t, ok)
	require.Equal(t, "v", v)
	require.Len(t, c.waitConverged(), 50)

	// A client that starts at a follower is sent to the leader.
	r := c.redirector()
	for i := range 10 {
		require.NoError(t, c.propose(ctx, r, kvCmd(opPut, fmt.Sprintf("r%d", i), "v")))
	}
	require.Len(t, c.waitConverged(), 60)
}

// TestThreeVotersLeaderKilledUnderLoad kills the leader while 16 clients
// propose, and checks that a new leader takes over and that every
// acknowledged write is on the survivors and, after a restart, on the
// killed node.
func TestThreeVotersLeaderKilledUnderLoad(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	old := c.waitLeader()
	r := c.redirector()

	var (
		mu         sync.Mutex
		acked      = map[string]string{}
		ackedAfter atomic.Int64
		killed     atomic.Bool
		stop       atomic.Bool
		wg         sync.WaitGroup
	)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k, v := fmt.Sprintf("w%02d/%06d", w, i), fmt.Sprint(i)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				err := c.propose(ctx, r, kvCmd(opPut, k, v))
				cancel()
				if err != nil {
					// Outcome unknown (e.g. the leader died with it in
					// flight): not acknowledged, so not checked.
					continue
				}
				mu.Lock()
				acked[k] = v
				mu.Unlock()
				if killed.Load() {
					ackedAfter.Add(1)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	killed.Store(true)
	c.stop(old.ID())
	newLeader := c.waitLeader()
	require.NotEqual(t, old.ID(), newLeader.ID())
	require.Eventually(t, func() bool { return ackedAfter.Load() > 100 }, 10*time.Second, 5*time.Millisecond,
		"clients make progress with the new leader")
	stop.Store(true)
	wg.Wait()

	// A linearizable read on the new leader sees every acknowledged write,
	// before the group has converged.
	require.NoError(t, newLeader.ReadBarrier(context.Background()))
	mu.Lock()
	for k, v := range acked {
		got, ok := readKV(t, newLeader.DB(), k)
		require.True(t, ok, "acknowledged write %s not visible after ReadBarrier", k)
		require.Equal(t, v, got)
	}
	mu.Unlock()

	check := func(state map[string]string) {
		t.Helper()
		for k, v := range acked {
			require.Equal(t, v, state[string(kvKey(k))], "acknowledged write %s", k)
		}
	}
	state := c.waitConverged()
	check(state)
	t.Logf("%d writes acknowledged, %d after the leader was killed", len(acked), ackedAfter.Load())

	// The old leader comes back as a follower and catches up.
	c.start(old.ID())
	c.waitLeader()
	state = c.waitConverged()
	check(state)
	require.Len(t, c.running(), 3)
}

// TestFollowerCatchesUpBySnapshot stops a follower, makes the leader compact
// its log past the follower's position, and checks that the follower is
// sent a snapshot that replaces its whole state.
func TestFollowerCatchesUpBySnapshot(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, 3, func(o *Options) { o.CompactEvery, o.KeepEntries = 100, 10 })
	leader := c.waitLeader()
	var follower uint64
	for _, n := range c.running() {
		if n != leader {
			follower = n.ID()
		}
	}
	put := func(op byte, k, v string) {
		_, err := leader.Propose(ctx, kvCmd(op, k, v))
		require.NoError(t, err)
	}
	put(opPut, "doomed", "x")
	put(opRaw, "\xff\xffdoomed-raw", "x")
	put(opPut, "kept", "old")
	c.waitConverged()
	c.stop(follower)

	put(opDelete, "doomed", "")
	put(opDelRaw, "\xff\xffdoomed-raw", "") // past stateRangeEnd: the excise span reaches it
	put(opRaw, "\xff\xffnew-raw", "y")
	for i := range 400 {
		put(opPut, fmt.Sprintf("k%03d", i), "v")
	}
	put(opPut, "kept", "new")
	require.Greater(t, leader.Metrics().FirstIndex, uint64(200), "the leader compacted its log")

	c.start(follower)
	state := c.waitConverged()
	f := c.node(follower)
	require.Positive(t, f.Metrics().SnapshotsApplied, "the follower caught up by snapshot")
	c.mu.Lock()
	restores := c.sms[follower].restoreCalls()
	c.mu.Unlock()
	require.Len(t, restores, 2, "Restore at Open and after the snapshot")
	require.Greater(t, restores[1], restores[0])
	// The sender counts the snapshot once the follower's ack reaches it.
	require.Eventually(t, func() bool {
		sent := uint64(0)
		for _, n := range c.running() {
			sent += n.Metrics().SnapshotsSent
		}
		return sent > 0
	}, 5*time.Second, 5*time.Millisecond)
	require.NotContains(t, state, "k/doomed")
	require.Equal(t, "new", state["k/kept"])
	require.NotContains(t, state, "\xff\xffdoomed-raw")
	require.Equal(t, "y", state["\xff\xffnew-raw"])
	require.Len(t, state, 402) // k000..k399, kept, and the new raw key
	// And the follower keeps following from the log after the snapshot.
	put(opPut, "after", "snapshot")
	state = c.waitConverged()
	require.Equal(t, "snapshot", state["k/after"])

	// The installed snapshot is durable: restart the follower once more.
	c.stop(follower)
	c.start(follower)
	require.Equal(t, state, c.waitConverged())
}

func TestRedirectorGivesUpOnOtherErrors(t *testing.T) {
	r := &leader.Redirector{Addrs: []string{"a", "b"}, Hint: DefaultHint}
	calls := 0
	boom := errors.New("boom")
	err := r.Do(context.Background(), func(ctx context.Context, addr string) error {
		calls++
		if addr == "a" {
			return &NotLeaderError{LeaderID: 2, LeaderAddr: "b"}
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 2, calls)
}

// partition cuts (or, with nil, heals) every link to and from id.
func (c *testCluster) partition(id uint64, cut bool) {
	for _, n := range c.running() {
		if !cut {
			n.transport.drop.Store(nil)
			continue
		}
		f := func(m *pb.Message) bool { return m.GetTo() == id || m.GetFrom() == id }
		n.transport.drop.Store(&f)
	}
}

// TestPartitionedLeaderDropsItsProposals cuts the leader off with a
// proposal in flight. The others elect a leader and go on; when the
// partition heals, the old leader's uncommitted entry is replaced and its
// proposer learns that the command was dropped (safe to retry), and the
// command is nowhere.
func TestPartitionedLeaderDropsItsProposals(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, 3, nil)
	old := c.waitLeader()
	_, err := old.Propose(ctx, kvCmd(opPut, "before", "v"))
	require.NoError(t, err)
	c.waitConverged()

	c.partition(old.ID(), true)
	lost := make(chan error, 1)
	go func() {
		pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_, err := old.Propose(pctx, kvCmd(opPut, "lost", "v"))
		lost <- err
	}()
	var leader *Node
	require.Eventually(t, func() bool {
		for _, n := range c.running() {
			if n != old && n.IsLeader() {
				leader = n
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond)
	_, err = leader.Propose(ctx, kvCmd(opPut, "during", "v"))
	require.NoError(t, err)
	// CheckQuorum: the cut-off leader steps down and refuses proposals.
	require.Eventually(t, func() bool { return !old.IsLeader() }, 10*time.Second, 5*time.Millisecond)
	_, err = old.Propose(ctx, kvCmd(opPut, "refused", "v"))
	require.ErrorIs(t, err, ErrNotLeader)

	c.partition(old.ID(), false)
	select {
	case err := <-lost:
		require.ErrorIs(t, err, ErrProposalDropped)
		require.True(t, Retryable(err))
	case <-time.After(15 * time.Second):
		t.Fatal("the partitioned leader's proposal was never resolved")
	}
	state := c.waitConverged()
	require.Contains(t, state, "k/before")
	require.Contains(t, state, "k/during")
	require.NotContains(t, state, "k/lost")
	require.NotContains(t, state, "k/refused")
}
