package replication

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// DefaultStreams is the default number of concurrent pushes of a datanode.
const DefaultStreams = 10

// Limits bound a datanode's pushes: how many run at once, and how many
// bytes per second they send together. A nil *Limits bounds nothing.
type Limits struct {
	streams chan struct{}
	bw      *bucket
}

// NewLimits returns limits of streams concurrent pushes (0 means
// DefaultStreams) sharing bandwidth bytes per second (0 means no cap),
// measured on clock (nil: the real clock).
func NewLimits(streams int, bandwidth int64, clock clockwork.Clock) (*Limits, error) {
	if streams == 0 {
		streams = DefaultStreams
	}
	if streams < 0 || bandwidth < 0 {
		return nil, fmt.Errorf("replication: streams %d and bandwidth %d must not be negative", streams, bandwidth)
	}
	l := &Limits{streams: make(chan struct{}, streams)}
	if bandwidth > 0 {
		if clock == nil {
			clock = clockwork.NewRealClock()
		}
		l.bw = &bucket{rate: float64(bandwidth), clock: clock}
	}
	return l, nil
}

// Acquire waits for a stream slot (a datanode rebuilding an erasure coded
// replica takes one, as a push does); Release gives it back.
func (l *Limits) Acquire(ctx context.Context) error { return l.acquire(ctx) }

// Release gives back a slot Acquire took.
func (l *Limits) Release() { l.release() }

// acquire waits for a stream slot.
func (l *Limits) acquire(ctx context.Context) error {
	if l == nil {
		return nil
	}
	select {
	case l.streams <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *Limits) release() {
	if l != nil {
		<-l.streams
	}
}

// Wait blocks until n more bytes may go under the bandwidth cap (at once
// without one). Besides pushes, a datanode's background scanner paces its
// reads of a volume with limits of its own.
func (l *Limits) Wait(ctx context.Context, n int64) error { return l.wait(ctx, n) }

// wait blocks until n more bytes may be sent.
func (l *Limits) wait(ctx context.Context, n int64) error {
	if l == nil || l.bw == nil {
		return nil
	}
	return l.bw.wait(ctx, n)
}

// pieceSize is how much a stream sends between two looks at the bucket.
func (l *Limits) pieceSize() int64 {
	if l == nil || l.bw == nil {
		return 1 << 62
	}
	// About 1/20 s of the whole rate, between 16 KiB and 1 MiB: fine enough
	// that a cap shared by several streams stays smooth.
	return min(max(int64(l.bw.rate/20), 16<<10), 1<<20)
}

// bucket is a token bucket in its virtual-time form (GCRA): next is when
// the bytes granted so far will have drained at rate; a caller whose
// grant ends in the future sleeps until then. A burst of up to burst of
// idle time is allowed.
type bucket struct {
	rate  float64 // bytes per second
	clock clockwork.Clock

	mu   sync.Mutex
	next time.Time
}

const burst = 100 * time.Millisecond

func (b *bucket) wait(ctx context.Context, n int64) error {
	now := b.clock.Now()
	b.mu.Lock()
	if b.next.Before(now.Add(-burst)) {
		b.next = now.Add(-burst)
	}
	b.next = b.next.Add(time.Duration(float64(n) / b.rate * float64(time.Second)))
	d := b.next.Sub(now)
	b.mu.Unlock()
	if d <= 0 {
		return nil
	}
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.Chan():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Metrics counts a datanode's replication traffic. The zero value is
// ready; it is safe for concurrent use. Snapshot reads it.
type Metrics struct {
	bytesOut, bytesIn                             atomic.Int64
	pushesInFlight, pushesCompleted, pushesFailed atomic.Int64
	importsInFlight, importsCompleted             atomic.Int64
	importsFailed                                 atomic.Int64
}

// MetricsSnapshot is a point-in-time copy of Metrics, in the shape of
// Prometheus counters and gauges.
type MetricsSnapshot struct {
	// BytesOut counts block bytes sent by pushes (including those of pushes
	// that failed); BytesIn block bytes received by imports.
	BytesOut, BytesIn int64
	// PushesInFlight is a gauge (waiting for a stream slot included);
	// PushesCompleted and PushesFailed count finished pushes.
	PushesInFlight, PushesCompleted, PushesFailed int64
	// ImportsInFlight is a gauge; ImportsCompleted and ImportsFailed count
	// finished imports (an abort counts as failed).
	ImportsInFlight, ImportsCompleted, ImportsFailed int64
	// GaveWay is the time background copies waited for clients, in all
	// (Foreground.Waited; a Datanode fills it in).
	GaveWay time.Duration
}

// Snapshot returns the counters' current values. A nil *Metrics reads as
// zeros.
func (m *Metrics) Snapshot() MetricsSnapshot {
	if m == nil {
		return MetricsSnapshot{}
	}
	return MetricsSnapshot{
		BytesOut: m.bytesOut.Load(), BytesIn: m.bytesIn.Load(),
		PushesInFlight: m.pushesInFlight.Load(), PushesCompleted: m.pushesCompleted.Load(), PushesFailed: m.pushesFailed.Load(),
		ImportsInFlight: m.importsInFlight.Load(), ImportsCompleted: m.importsCompleted.Load(), ImportsFailed: m.importsFailed.Load(),
	}
}
