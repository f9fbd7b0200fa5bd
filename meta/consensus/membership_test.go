package consensus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
)

// addJoiner reserves an address for a new node that will join the group,
// without starting it.
func (c *testCluster) addJoiner(id uint64) (string, net.Listener) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(c.t, err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addrs[id] = l.Addr().String()
	if c.joining == nil {
		c.joining = map[uint64]bool{}
	}
	c.joining[id] = true
	return c.addrs[id], l
}

// leader returns the running node that believes it leads, or nil.
func (c *testCluster) leader() *Node {
	for _, n := range c.running() {
		if n.IsLeader() {
			return n
		}
	}
	return nil
}

// onLeader calls f on the leader until it does not fail with a
// NotLeaderError (or a change refused only because a new leader has not
// applied its log yet).
func (c *testCluster) onLeader(ctx context.Context, f func(*Node) error) error {
	for {
		if n := c.leader(); n != nil {
			err := f(n)
			var nle *NotLeaderError
			if !errors.As(err, &nle) && !errors.Is(err, ErrProposalDropped) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestMembershipChangesUnderLoad: while eight clients write, a fourth node
// joins (as a learner, by snapshot since the log was compacted, then
// promoted to voter), the leader is removed (it hands leadership over
// first), and leadership moves to the new node. A second change while one
// is in progress is refused. Every acknowledged write ends on every
// remaining member; the removed node stops and cannot be restarted; the
// new node restarts knowing every member's address.
func TestMembershipChangesUnderLoad(t *testing.T) {
	c := newTestCluster(t, 3, func(o *Options) { o.CompactEvery, o.KeepEntries, o.PromoteMaxLag = 200, 20, 50 })
	first := c.waitLeader()
	r := c.redirector()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var (
		mu    sync.Mutex
		acked = map[string]string{}
		count atomic.Int64
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k, v := fmt.Sprintf("w%d/%06d", w, i), fmt.Sprint(i)
				pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
				err := c.propose(pctx, r, kvCmd(opPut, k, v))
				pcancel()
				if err != nil {
					continue // outcome unknown: not acknowledged, not checked
				}
				mu.Lock()
				acked[k] = v
				mu.Unlock()
				count.Add(1)
			}
		}()
	}
	progress := func(n int64) {
		t.Helper()
		target := count.Load() + n
		require.Eventually(t, func() bool { return count.Load() >= target }, 20*time.Second, 5*time.Millisecond,
			"writes go on")
	}
	progress(500)
	require.Greater(t, first.Metrics().FirstIndex, uint64(2), "the leader compacted its log")

	// Node 4 is added while it is not running yet: the addition waits for
	// it to catch up, and a second change is refused meanwhile.
	addr4, l4 := c.addJoiner(4)
	added := make(chan error, 1)
	go func() {
		added <- c.onLeader(ctx, func(n *Node) error { return n.AddMember(ctx, 4, addr4, false) })
	}()
	require.Eventually(t, func() bool {
		n := c.leader()
		return n != nil && n.view.Load().isLearner(4)
	}, 10*time.Second, 5*time.Millisecond)
	ld := c.leader()
	err := ld.TransferLeadership(ctx, first.ID()%3+1)
	require.ErrorIs(t, err, ErrChangeInProgress)
	require.Contains(t, err.Error(), "adding 4")
	require.ErrorIs(t, ld.RemoveMember(ctx, 1), ErrChangeInProgress)
	require.ErrorIs(t, ld.AddMember(ctx, 5, "127.0.0.1:1", true), ErrChangeInProgress)
	progress(200) // the learner does not count for quorum

	c.startOn(4, l4)
	require.NoError(t, <-added)
	n4 := c.node(4)
	require.Eventually(t, func() bool { return n4.view.Load().isVoter(4) }, 10*time.Second, 5*time.Millisecond)
	require.Positive(t, n4.Metrics().SnapshotsApplied, "the new node caught up by snapshot")
	progress(300)

	// Remove the leader: it hands leadership over, and the new leader
	// removes it. It stops by itself.
	old := c.leader()
	require.NotNil(t, old)
	require.NoError(t, c.onLeader(ctx, func(n *Node) error { return n.RemoveMember(ctx, old.ID()) }))
	select {
	case <-old.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the removed node did not stop")
	}
	require.ErrorIs(t, old.Err(), ErrRemoved)
	_, err = old.Propose(ctx, kvCmd(opPut, "x", "y"))
	require.ErrorIs(t, err, ErrClosed)
	c.stop(old.ID())
	progress(300)

	// Leadership moves to the new node.
	require.NoError(t, c.onLeader(ctx, func(n *Node) error { return n.TransferLeadership(ctx, 4) }))
	require.Eventually(t, n4.IsLeader, 5*time.Second, 5*time.Millisecond)
	progress(300)
	stop.Store(true)
	wg.Wait()

	state := c.waitConverged()
	mu.Lock()
	for k, v := range acked {
		require.Equal(t, v, state[string(kvKey(k))], "acknowledged write %s", k)
	}
	t.Logf("%d writes acknowledged", len(acked))
	mu.Unlock()
	for _, n := range c.running() {
		st := n.Status()
		require.Len(t, st.Voters, 3, "node %d", n.ID())
		require.NotContains(t, st.Voters, old.ID())
		require.Contains(t, st.Voters, uint64(4))
		require.Empty(t, st.Learners)
		for _, m := range st.Members {
			c.mu.Lock()
			require.Equal(t, c.addrs[m.ID], m.Addr, "node %d's address of %d", n.ID(), m.ID)
			c.mu.Unlock()
		}
	}

	// The removed node's directory refuses to serve again.
	_, err = Open(c.opts(old.ID()), &kvSM{})
	require.ErrorIs(t, err, ErrRemoved)

	// The new node restarts from its own directory and follows again.
	c.stop(4)
	c.waitLeader()
	c.start(4)
	require.Len(t, c.node(4).Status().Members, 3)
	_, err = c.leader().Propose(ctx, kvCmd(opPut, "after-restart", "v"))
	if err != nil {
		require.NoError(t, c.propose(ctx, r, kvCmd(opPut, "after-restart", "v")))
	}
	require.Equal(t, "v", c.waitConverged()["k/after-restart"])
}

// TestAddingANodeOfAnotherGroupFails: a node started without Join made a
// group of its own; added to this group, its messages are refused (it is
// another group), so it never catches up, and neither group's state
// changes.
func TestAddingANodeOfAnotherGroupFails(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader()
	ctx := context.Background()
	// A term past the stray group's, whose leader would otherwise follow.
	require.NoError(t, leader.TransferLeadership(ctx, leader.ID()%3+1))
	leader = c.waitLeader()
	require.Greater(t, leader.Metrics().Term, uint64(2))
	_, err := leader.Propose(ctx, kvCmd(opPut, "k", "v"))
	require.NoError(t, err)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	c.mu.Lock()
	c.addrs[4] = addr
	c.mu.Unlock()
	stray, err := Open(Options{ID: 4, Peers: map[uint64]string{4: addr}, FS: c.fs, Dir: "n4",
		TickInterval: 20 * time.Millisecond}, &kvSM{})
	require.NoError(t, err)
	srv := grpc.NewServer()
	stray.RegisterGRPC(srv)
	go func() { _ = srv.Serve(l) }()
	defer srv.Stop()
	defer stray.Close()
	require.True(t, stray.IsLeader(), "a group of its own")
	_, err = stray.Propose(ctx, kvCmd(opPut, "stray", "v"))
	require.NoError(t, err)

	// Long enough for the learner's addition to commit on a loaded machine
	// (a deadline there would fail the call before the wait for catch-up).
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	err = leader.AddMember(actx, 4, addr, false)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "has not caught up")
	require.True(t, stray.IsLeader())
	require.NoError(t, stray.Err())
	require.Equal(t, []uint64{4}, stray.Status().Voters)
	_, ok := readKV(t, stray.DB(), "k")
	require.False(t, ok, "nothing of the group reached it")
	require.NoError(t, leader.RemoveMember(ctx, 4))
	c.mu.Lock()
	delete(c.addrs, 4)
	c.mu.Unlock()
	state := c.waitConverged()
	require.Equal(t, "v", state["k/k"])
	require.NotContains(t, state, "k/stray")
}

// TestAddResumesAfterLeaderLoss: the leader that added a learner dies
// before promoting it; adding it again on the new leader resumes at the
// promotion. Then every node restarts knowing only its own address: the
// membership and every address come from the directories.
func TestAddResumesAfterLeaderLoss(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := leader.Propose(ctx, kvCmd(opPut, "before", "v"))
	require.NoError(t, err)
	addr4, l4 := c.addJoiner(4)
	c.startOn(4, l4)
	require.NoError(t, leader.AddMember(ctx, 4, addr4, true))
	require.Equal(t, []uint64{4}, leader.Status().Learners)
	c.stop(leader.ID())
	c.start(leader.ID())

	require.NoError(t, c.onLeader(ctx, func(n *Node) error { return n.AddMember(ctx, 4, addr4, false) }))
	require.NoError(t, c.propose(ctx, c.redirector(), kvCmd(opPut, "after", "v")))
	require.Eventually(t, func() bool { return len(c.node(4).Status().Voters) == 4 }, 10*time.Second, 5*time.Millisecond)

	c.stopAll()
	c.selfOnly = true
	for id := uint64(1); id <= 4; id++ {
		c.start(id)
	}
	c.waitLeader()
	require.NoError(t, c.propose(ctx, c.redirector(), kvCmd(opPut, "restarted", "v")))
	state := c.waitConverged()
	require.Equal(t, "v", state["k/before"])
	require.Equal(t, "v", state["k/after"])
	require.Equal(t, "v", state["k/restarted"])
	for _, n := range c.running() {
		require.Equal(t, []uint64{1, 2, 3, 4}, n.Status().Voters)
		for _, m := range n.Status().Members {
			require.Equal(t, c.addrs[m.ID], m.Addr)
		}
	}
}

// TestSoleVoterRecordsItsAddress: a group of one whose directory was made
// listening elsewhere (port 0, as a benchmark's in-process meta) records
// the address it now runs at before it adds a member, so that the new
// member, which reaches the members at the book's addresses, catches up.
func TestSoleVoterRecordsItsAddress(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	first, err := Open(Options{ID: 1, Peers: map[uint64]string{1: "127.0.0.1:0"}, FS: fs, Dir: "n1",
		TickInterval: 20 * time.Millisecond}, &kvSM{})
	require.NoError(t, err)
	_, err = first.Propose(ctx, kvCmd(opPut, "k", "v"))
	require.NoError(t, err)
	require.NoError(t, first.Close())

	serve := func(id uint64, join bool) (*Node, string) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		n, err := Open(Options{ID: id, Peers: map[uint64]string{id: addr}, Join: join, FS: fs, Dir: fmt.Sprintf("n%d", id),
			TickInterval: 20 * time.Millisecond}, &kvSM{})
		require.NoError(t, err)
		srv := grpc.NewServer()
		n.RegisterGRPC(srv)
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { srv.Stop(); _ = n.Close() })
		return n, addr
	}
	leader, addr1 := serve(1, false)
	require.True(t, leader.IsLeader())
	joiner, addr2 := serve(2, true)
	actx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, leader.AddMember(actx, 2, addr2, false))
	require.Eventually(t, func() bool {
		v, ok := readKV(t, joiner.DB(), "k")
		return ok && v == "v"
	}, 10*time.Second, 20*time.Millisecond)
	ms, err := leader.Members(ctx)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	for _, m := range ms {
		want := map[uint64]string{1: addr1, 2: addr2}[m.ID]
		require.Equal(t, want, m.Addr, "member %d", m.ID)
	}
	require.Equal(t, addr1, joiner.view.Load().addrs[1], "the joiner's book")
}
