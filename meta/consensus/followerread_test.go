package consensus

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFollowerReadsSeeAcknowledgedWrites: a read at a follower through
// FollowerRead sees every write the leader acknowledged before the read
// started: one writer bumps a counter at the leader while readers at both
// followers check that what they read is never older than the last
// acknowledged value when their read began, and a write read back at a
// follower right after its acknowledgement is there (read-your-writes),
// though the follower learns of its commit only with the leader's next
// message.
func TestFollowerReadsSeeAcknowledgedWrites(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader()
	var followers []*Node
	for _, n := range c.running() {
		if n != leader {
			followers = append(followers, n)
		}
	}
	require.Len(t, followers, 2)

	for i := range 30 {
		f := followers[i%2]
		v := fmt.Sprintf("v%d", i)
		_, err := leader.Propose(ctx, kvCmd(opPut, "ryw", v))
		require.NoError(t, err)
		require.NoError(t, f.FollowerRead(ctx))
		got, _ := readKV(t, f.DB(), "ryw")
		require.Equal(t, v, got, "write %d read back at follower %d", i, f.ID())
	}

	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for _, f := range followers {
		for range 2 {
			wg.Go(func() {
				if err := readCounterUntil(ctx, t, f, stop, &acked, func(error) bool { return false }); err != nil {
					errs <- err
				}
			})
		}
	}
	for i := int64(1); i <= 300; i++ {
		_, err := leader.Propose(ctx, kvCmd(opPut, "counter", strconv.FormatInt(i, 10)))
		require.NoError(t, err)
		acked.Store(i)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, f := range followers {
		m := f.Metrics()
		require.Positive(t, m.FollowerReads, "follower %d served reads", f.ID())
		require.Positive(t, m.FollowerReadIndexes)
		require.Zero(t, m.FollowerReadFailures)
	}
	require.Zero(t, leader.Metrics().FollowerReads, "the leader's reads are its own")
}

// TestFollowerReadFailsWhenCutOff: a follower cut off from the leader does
// not serve reads from its possibly stale state: FollowerRead fails, soon,
// with a retryable NotLeader error (the leader's reply never comes, or the
// follower no longer knows a leader), and serves again, up to date, once
// the partition heals. ReadBarrier on a follower still refuses at once.
func TestFollowerReadFailsWhenCutOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newTestCluster(t, 3, nil)
	leader := c.waitLeader()
	var f *Node
	for _, n := range c.running() {
		if n != leader {
			f = n
			break
		}
	}
	require.ErrorIs(t, f.ReadBarrier(ctx), ErrNotLeader)
	_, err := leader.Propose(ctx, kvCmd(opPut, "k", "before"))
	require.NoError(t, err)
	require.NoError(t, f.FollowerRead(ctx))

	c.partition(f.ID(), true)
	timeout := f.opts.FollowerReadTimeout
	for range 3 {
		start := time.Now()
		err := f.FollowerRead(ctx)
		require.Error(t, err)
		require.ErrorIs(t, err, ErrNotLeader)
		require.True(t, Retryable(err), "%v", err)
		require.Less(t, time.Since(start), timeout+2*time.Second, "FollowerRead gives up within its timeout")
	}
	require.Positive(t, f.Metrics().FollowerReadFailures)
	_, err = leader.Propose(ctx, kvCmd(opPut, "k", "during"))
	require.NoError(t, err)

	c.partition(f.ID(), false)
	require.Eventually(t, func() bool { return f.FollowerRead(ctx) == nil }, 20*time.Second, 20*time.Millisecond)
	v, _ := readKV(t, f.DB(), "k")
	require.Equal(t, "during", v)
}

// TestFollowerReadsAcrossLeaderChanges: while leadership moves from node
// to node under a stream of writes, FollowerRead on every member either
// fails with a retryable error or sees every write acknowledged before it
// began; and reads succeed again at each new follower.
func TestFollowerReadsAcrossLeaderChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newTestCluster(t, 3, nil)
	c.waitLeader()
	r := c.redirector()
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	var refused atomic.Int64
	for _, n := range c.running() {
		wg.Go(func() {
			retry := func(err error) bool {
				if !Retryable(err) {
					return false
				}
				refused.Add(1)
				time.Sleep(time.Millisecond)
				return true
			}
			if err := readCounterUntil(ctx, t, n, stop, &acked, retry); err != nil {
				errs <- err
			}
		})
	}
	writes := make(chan error, 1)
	go func() {
		for i := int64(1); i <= 400; i++ {
			if err := c.propose(ctx, r, kvCmd(opPut, "counter", strconv.FormatInt(i, 10))); err != nil {
				writes <- err
				return
			}
			acked.Store(i)
		}
		writes <- nil
	}()
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		l := c.waitLeader()
		var to uint64
		for _, n := range c.running() {
			if n != l {
				to = n.ID()
				break
			}
		}
		_ = l.TransferLeadership(ctx, to) // may race an election: the loop goes on
	}
	require.NoError(t, <-writes)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var served uint64
	for _, n := range c.running() {
		served += n.Metrics().FollowerReads
	}
	require.Positive(t, served)
	t.Logf("%d follower reads served, %d refused (retryable) while leadership moved", served, refused.Load())
}

// readCounterUntil takes FollowerRead points at n until stop is closed,
// and checks each time that the counter it then reads is not older than
// the last value acknowledged before the read began. A failed read point
// is retried if retry says so, else it is the error returned.
func readCounterUntil(ctx context.Context, t testing.TB, n *Node, stop <-chan struct{}, acked *atomic.Int64, retry func(error) bool) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		before := acked.Load()
		if err := n.FollowerRead(ctx); err != nil {
			if retry(err) {
				continue
			}
			return fmt.Errorf("node %d: %w", n.ID(), err)
		}
		s, _ := readKV(t, n.DB(), "counter")
		if got, _ := strconv.ParseInt(s, 10, 64); got < before {
			return fmt.Errorf("node %d read counter %d after %d was acknowledged", n.ID(), got, before)
		}
	}
}
