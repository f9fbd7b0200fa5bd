package replication

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// Foreground is when a datanode last served a client: a chunk written,
// committed or read, a block put (a pipeline's forwarded writes count: a
// follower's disk is as busy as its leader's). Background copies, the
// container balancer's moves, give way to it (decision 0098): before each
// frame a background push sends, and before each frame a background
// import reads, GiveWay waits until the datanode has served no client for
// Quiet, or MaxWait has passed, so that a datanode always busy with
// clients still moves a piece every MaxWait. Copies that restore
// redundancy (re-replication, rebuilds) never give way.
//
// A nil *Foreground never waits. Touch is safe for concurrent use and
// costs one atomic store; GiveWay is too.
type Foreground struct {
	quiet, maxWait time.Duration
	clock          clockwork.Clock

	last   atomic.Int64 // unix nanoseconds of the last client request
	waited atomic.Int64 // nanoseconds spent in GiveWay waiting
}

// Defaults of NewForeground: a client request within the last 250 ms
// makes a datanode busy; a background copy sends at least one piece
// every 5 s (well inside a push's IOTimeout, which the target's waits
// must not reach).
const (
	DefaultForegroundQuiet   = 250 * time.Millisecond
	DefaultForegroundMaxWait = 5 * time.Second
)

// NewForeground returns a Foreground on clock (nil: the real clock) with
// the given quiet time and longest wait (0: the defaults).
func NewForeground(quiet, maxWait time.Duration, clock clockwork.Clock) *Foreground {
	if quiet <= 0 {
		quiet = DefaultForegroundQuiet
	}
	if maxWait <= 0 {
		maxWait = DefaultForegroundMaxWait
	}
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	return &Foreground{quiet: quiet, maxWait: maxWait, clock: clock}
}

// Touch records a client request now.
func (f *Foreground) Touch() {
	if f != nil {
		f.last.Store(f.clock.Now().UnixNano())
	}
}

// Waited is the time GiveWay has spent waiting, in all.
func (f *Foreground) Waited() time.Duration {
	if f == nil {
		return 0
	}
	return time.Duration(f.waited.Load())
}

// GiveWay waits until no client has been served for the quiet time, or
// for the longest wait, or until ctx ends (its error).
func (f *Foreground) GiveWay(ctx context.Context) error {
	if f == nil {
		return nil
	}
	start := f.clock.Now()
	defer func() { f.waited.Add(int64(f.clock.Since(start))) }()
	for {
		now := f.clock.Now()
		idle := now.Sub(time.Unix(0, f.last.Load()))
		left := f.maxWait - now.Sub(start)
		if idle >= f.quiet || left <= 0 {
			return nil
		}
		t := f.clock.NewTimer(min(f.quiet-idle, left))
		select {
		case <-t.Chan():
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
