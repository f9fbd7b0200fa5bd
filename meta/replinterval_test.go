package meta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/meta/cluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestReplicationInterval: with ReplicationInterval 10s and a tick of 1s,
// 30 s of ticks run about 3 replication passes, not 30.
func TestReplicationInterval(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := startServer(t, Options{Dir: t.TempDir(), TickInterval: time.Second, ReplicationInterval: 10 * time.Second, Clock: clock}, listen(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.WaitReady(ctx))
	beat := func() {
		for i, id := range []string{"dn1", "dn2", "dn3"} {
			if resp, err := s.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: id}); err != nil || resp.GetReregister() {
				_, err = s.Register(ctx, &stratov1.RegisterRequest{
					Details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("127.0.0.1:%d", 19200+i)},
					Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}})
				require.NoError(t, err)
			}
		}
	}
	beat()
	// Past the leader's settle period, out of safe mode.
	for s.cl.Settling(clock.Now()) || s.cl.SafeMode().InSafeMode {
		clock.Advance(time.Second)
		beat()
		require.NoError(t, ctx.Err())
	}
	tick := func() {
		clock.Advance(time.Second)
		beat()
		// The background goroutine ticks (a tick it has no time for is
		// coalesced with the next: the interval still holds).
		time.Sleep(30 * time.Millisecond)
	}
	tick()
	start := s.Metrics().ReplicationPasses
	for range 30 {
		tick()
	}
	got := s.Metrics().ReplicationPasses - start
	require.GreaterOrEqual(t, got, uint64(2), "passes in 30 ticks of 1 s at a 10 s interval")
	require.LessOrEqual(t, got, uint64(4), "passes in 30 ticks of 1 s at a 10 s interval")
}

// TestReplicationIntervalDefault: left at its default, the interval is
// ten times the last pass's length after a pass that found nothing to
// repair (every tick for a short pass), and every tick after one that
// found containers short of copies; set, it is what it says.
func TestReplicationIntervalDefault(t *testing.T) {
	s := &Server{}
	require.Zero(t, s.replicationInterval(), "no pass yet")
	s.replTook = 2 * time.Second
	require.Equal(t, 20*time.Second, s.replicationInterval())
	s.lastRepl.UnderReplicated = 1
	require.Zero(t, s.replicationInterval(), "repairs are not spaced")
	s.lastRepl.UnderReplicated, s.lastRepl.Scheduled = 0, 3
	require.Zero(t, s.replicationInterval())
	s.opts.ReplicationInterval = 5 * time.Second
	require.Equal(t, 5*time.Second, s.replicationInterval())
}

// TestReplicationDueOnRepairGen: at the default interval, a pass after a
// long one waits ten times its length unless the cluster changed in a way
// that may leave containers short of copies (a datanode registering here):
// then it runs at the next tick. A set interval is kept as it is.
func TestReplicationDueOnRepairGen(t *testing.T) {
	cl, err := cluster.New(cluster.Options{}, nil)
	require.NoError(t, err)
	s := &Server{cl: cl}
	now := time.Unix(1_700_000_000, 0)
	require.True(t, s.replicationDue(now), "the first pass")
	s.replTook = time.Minute // the idle interval is now 10 minutes
	require.False(t, s.replicationDue(now.Add(time.Second)), "nothing changed")
	register := func(id string) {
		require.NoError(t, cl.Register(now, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: id, DataAddr: "127.0.0.1:1"}}))
	}
	register("dn1")
	require.True(t, s.replicationDue(now.Add(2*time.Second)), "a change runs the pass at the next tick")
	require.False(t, s.replicationDue(now.Add(3*time.Second)), "once")
	require.True(t, s.replicationDue(now.Add(11*time.Minute)), "the idle interval")

	s.opts.ReplicationInterval = time.Hour
	register("dn2")
	require.False(t, s.replicationDue(now.Add(12*time.Minute)), "a set interval is kept")
}
