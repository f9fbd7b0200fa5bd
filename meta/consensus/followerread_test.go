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
				for {
					select {
					case <-stop:
						return
					default:
					}
					before := acked.Load()
					if err := f.FollowerRead(ctx); err != nil {
						errs <- fmt.Errorf("follower %d: %w", f.ID(), err)
						return
					}
					s, _ := readKV(t, f.DB(), "counter")
					got, _ := strconv.ParseInt(s, 10, 64)
					if got < before {
						errs <- fmt.Errorf("follower %d read counter %d after %d was acknowledged", f.ID(), got, before)
						return
					}
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
	var served, refused atomic.Int64
	for _, n := range c.running() {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				before := acked.Load()
				if err := n.FollowerRead(ctx); err != nil {
					if !Retryable(err) {
						errs <- fmt.Errorf("node %d: %w (not retryable)", n.ID(), err)
						return
					}
					refused.Add(1)
					time.Sleep(time.Millisecond)
					continue
				}
				served.Add(1)
				s, _ := readKV(t, n.DB(), "counter")
				if got, _ := strconv.ParseInt(s, 10, 64); got < before {
					errs <- fmt.Errorf("node %d read counter %d after %d was acknowledged", n.ID(), got, before)
					return
				}
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
	require.Positive(t, served.Load())
	t.Logf("%d follower reads served, %d refused (retryable) while leadership moved", served.Load(), refused.Load())
}
