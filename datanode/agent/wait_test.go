package agent

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"
)

// TestAgentWait: a heartbeat is due at the regular tick, at once after
// heartbeatSoon, and on fast ticks only while heartbeats are hurried.
func TestAgentWait(t *testing.T) {
	clock := clockwork.NewFakeClock()
	a := &Agent{soon: make(chan struct{}, 1), opts: Options{Clock: clock}}
	ctx, cancel := context.WithCancel(context.Background())
	regular, fast := make(chan time.Time, 1), make(chan time.Time, 1)
	due := func() chan bool {
		ch := make(chan bool, 1)
		go func() { ch <- a.wait(ctx, regular, fast) }()
		return ch
	}
	pending := func(ch chan bool) {
		select {
		case <-ch:
			t.Fatal("heartbeat due too early")
		case <-time.After(50 * time.Millisecond):
		}
	}

	// A fast tick while not hurried is no heartbeat; the regular one is.
	ch := due()
	fast <- time.Now()
	pending(ch)
	regular <- time.Now()
	require.True(t, <-ch)

	// heartbeatSoon: due at once, and fast ticks count for a while.
	a.HeartbeatSoon()
	require.True(t, <-due())
	ch = due()
	pending(ch)
	fast <- time.Now()
	require.True(t, <-ch)
	// Later, fast ticks stop counting.
	clock.Advance(3 * fastBeat)
	ch = due()
	fast <- time.Now()
	pending(ch)
	cancel()
	require.False(t, <-ch)
}
