package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"
)

// sample is one point of the live charts.
type sample struct {
	UnixMs int64 `json:"t"`
	// OpsPerSec is meta's mutations per second (Raft entries applied), and
	// WriteBytesPerSec the growth of the committed keys' bytes (net of
	// deletions), over the interval before the sample.
	OpsPerSec        float64 `json:"ops_per_s"`
	WriteBytesPerSec float64 `json:"write_bytes_per_s"`
	Objects          int64   `json:"objects"`
	Bytes            int64   `json:"bytes"`
	UsedBytes        int64   `json:"datanode_used_bytes"`
}

// sampler keeps the recent samples of the live charts; a goroutine takes
// one every interval.
type sampler struct {
	c        *Console
	interval time.Duration
	cancel   context.CancelFunc
	done     chan struct{}

	mu      sync.Mutex
	samples []sample // oldest first, at most history
	history int
	last    struct {
		t              time.Time
		applied, bytes int64
		ok             bool
	}
}

func startSampler(c *Console, interval time.Duration, history int) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{c: c, interval: interval, history: history, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.take(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) stop() {
	s.cancel()
	<-s.done
}

// take takes one sample; a failed one (meta unreachable) is skipped, and
// the next rate spans the gap.
func (s *sampler) take(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.interval)
	defer cancel()
	if s.c.opts.Login {
		if s.c.opts.Token == "" {
			return // nobody to sample as: the charts stay empty
		}
		ctx = metadata.AppendToOutgoingContext(ctx, authorization, "Bearer "+s.c.opts.Token)
	}
	self, err := s.c.replicaStatus(ctx, s.c.opts.Meta)
	if err != nil {
		return
	}
	var o overview
	if err := s.c.namespaceSize(ctx, &o); err != nil {
		return
	}
	dns, err := s.c.datanodes(ctx)
	if err != nil {
		return
	}
	now := time.Now()
	sm := sample{UnixMs: now.UnixMilli(), Objects: o.Objects, Bytes: o.Bytes}
	for _, d := range dns {
		sm.UsedBytes += d.GetStats().GetUsed()
	}
	applied := int64(self.GetApplied())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last.ok {
		if dt := now.Sub(s.last.t).Seconds(); dt > 0 {
			sm.OpsPerSec = max(float64(applied-s.last.applied), 0) / dt
			sm.WriteBytesPerSec = float64(o.Bytes-s.last.bytes) / dt
		}
	}
	s.last.t, s.last.applied, s.last.bytes, s.last.ok = now, applied, o.Bytes, true
	s.samples = append(s.samples, sm)
	if len(s.samples) > s.history {
		s.samples = s.samples[len(s.samples)-s.history:]
	}
}

func (s *sampler) snapshot() []sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sample(nil), s.samples...)
}

func (c *Console) ratesAPI(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"interval_s": c.opts.SampleInterval.Seconds(), "samples": c.rates.snapshot()})
}
