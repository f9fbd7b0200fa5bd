package datanode

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The disk balancer's defaults (strato admin datanode diskbalancer start).
const (
	// DefaultDiskBalancerThreshold: a volume is balanced when its used
	// fraction of capacity is within 10 points of the datanode's mean.
	DefaultDiskBalancerThreshold = 0.1
	// DefaultDiskBalancerBandwidth caps the copies at 64 MiB/s, so that
	// the disks keep most of their time for clients.
	DefaultDiskBalancerBandwidth = 64 << 20
	// DefaultDiskBalancerGrace is how long the old copy of a moved
	// container stays after the new one serves: reads that found the old
	// one finish on it.
	DefaultDiskBalancerGrace = 30 * time.Second
)

// Results a disk balancer run ends with (DiskBalancerStats.result).
const (
	diskBalanced = "balanced"
	diskStopped  = "stopped"
	diskNoMove   = "no container move brings the volumes closer"
)

// diskBalancer moves CLOSED containers between a datanode's volumes, from
// the fullest to the emptiest, until every volume's used fraction of its
// capacity is within the threshold of the datanode's mean (HDFS's and
// Ozone's disk balancer). A move copies the container to the other
// volume, verifies it, serves it from there and deletes the old copy a
// grace period later (Store.moveContainer). One run at a time; Start
// while one runs replaces it.
type diskBalancer struct {
	s     *Store
	clock clockwork.Clock
	log   *slog.Logger
	grace time.Duration
	life  context.Context // ends when the datanode closes (close)
	end   context.CancelFunc

	mu     sync.Mutex
	st     diskBalancerStats
	cancel context.CancelFunc // of the run in progress
	wg     sync.WaitGroup     // runs, including their deletions of old copies
}

// diskBalancerStats is DiskBalancerStats as the balancer keeps it.
type diskBalancerStats struct {
	running                bool
	threshold              float64
	bandwidth              int64
	moved, bytes, failed   int64
	spreadStart, spreadNow float64
	started, finished      time.Time
	result, lastErr        string
	bytesLeft              int64
}

func newDiskBalancer(s *Store, clock clockwork.Clock, log *slog.Logger, grace time.Duration) *diskBalancer {
	if grace <= 0 {
		grace = DefaultDiskBalancerGrace
	}
	life, end := context.WithCancel(context.Background())
	return &diskBalancer{s: s, clock: clock, log: log, grace: grace, life: life, end: end}
}

// close ends the runs and waits for them: the move under way is
// abandoned, and old copies left are dropped at the next start.
func (b *diskBalancer) close() {
	b.end()
	b.wg.Wait()
}

// command carries out meta's DiskBalancerCommand.
func (b *diskBalancer) command(cmd *stratov1.DiskBalancerCommand) {
	if cmd.GetStop() {
		b.stop()
		return
	}
	if err := b.start(cmd.GetThreshold(), cmd.GetBandwidth()); err != nil {
		b.log.Warn("datanode: disk balancer not started", "err", err)
	}
}

// start begins a run (stopping the one in progress) with threshold (0:
// the default) and bandwidth in bytes/s (0: the default; negative: none).
func (b *diskBalancer) start(threshold float64, bandwidth int64) error {
	if threshold == 0 {
		threshold = DefaultDiskBalancerThreshold
	}
	if threshold < 0 || threshold >= 1 || math.IsNaN(threshold) {
		return fmt.Errorf("datanode: disk balancer threshold %v is not a fraction in (0, 1)", threshold)
	}
	switch {
	case bandwidth == 0:
		bandwidth = DefaultDiskBalancerBandwidth
	case bandwidth < 0:
		bandwidth = 0
	}
	lim, err := replication.NewLimits(1, bandwidth, b.clock)
	if err != nil {
		return err
	}
	b.stop()
	ctx, cancel := context.WithCancel(b.life)
	b.mu.Lock()
	spread, left := b.spread(threshold)
	b.st = diskBalancerStats{running: true, threshold: threshold, bandwidth: bandwidth, spreadStart: spread,
		spreadNow: spread, bytesLeft: left, started: b.clock.Now()}
	b.cancel = cancel
	b.mu.Unlock()
	b.log.Info("datanode: disk balancer started", "threshold", threshold, "bandwidth", bandwidth, "spread", spread)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.run(ctx, threshold, lim)
	}()
	return nil
}

// stop ends the run in progress: no new move starts, the one under way is
// abandoned (its copy removed). Old copies still wait out their grace.
func (b *diskBalancer) stop() {
	b.mu.Lock()
	cancel := b.cancel
	b.cancel = nil
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// oldCopy is a moved container's copy left on its old volume until at.
type oldCopy struct {
	id  uint64
	src *container.Volume
	at  time.Time
}

func (b *diskBalancer) run(ctx context.Context, threshold float64, lim *replication.Limits) {
	var pending []oldCopy
	skip := map[uint64]bool{} // containers whose move failed in this run
	result := ""
	for result == "" {
		pending = b.dropDue(pending)
		if ctx.Err() != nil {
			result = diskStopped
			break
		}
		mv, why := b.plan(threshold, skip)
		if mv == nil {
			result = why
			break
		}
		src, n, err := b.s.moveContainer(ctx, mv.id, mv.dst, lim)
		b.mu.Lock()
		if err != nil {
			skip[mv.id] = true
			if ctx.Err() == nil {
				b.st.failed++
				b.st.lastErr = fmt.Sprintf("container %d: %v", mv.id, err)
			}
		} else {
			b.st.moved++
			b.st.bytes += n
			pending = append(pending, oldCopy{id: mv.id, src: src, at: b.clock.Now().Add(b.grace)})
		}
		b.st.spreadNow, b.st.bytesLeft = b.spread(threshold)
		b.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			b.log.Warn("datanode: disk balancer move failed", "container", mv.id, "to", mv.dst.Dir(), "err", err)
		}
	}
	b.mu.Lock()
	b.st.running, b.st.result, b.st.finished = false, result, b.clock.Now()
	b.st.spreadNow, b.st.bytesLeft = b.spread(threshold)
	st := b.st
	b.mu.Unlock()
	b.log.Info("datanode: disk balancer ended", "result", result, "moved", st.moved, "bytes", st.bytes,
		"failed", st.failed, "spread_start", st.spreadStart, "spread", st.spreadNow)
	for len(pending) > 0 {
		t := b.clock.NewTimer(pending[0].at.Sub(b.clock.Now()))
		select {
		case <-b.life.Done():
			t.Stop()
			return // a restart finds the duplicates and drops them (OpenStore)
		case <-t.Chan():
		}
		pending = b.dropDue(pending)
	}
}

// dropDue deletes the old copies whose grace has passed and returns the
// others.
func (b *diskBalancer) dropDue(pending []oldCopy) []oldCopy {
	now := b.clock.Now()
	for len(pending) > 0 && !pending[0].at.After(now) {
		oc := pending[0]
		if err := b.s.dropOldCopy(oc.id, oc.src); err != nil {
			b.log.Warn("datanode: disk balancer: old copy not deleted", "container", oc.id, "volume", oc.src.Dir(), "err", err)
		}
		pending = pending[1:]
	}
	return pending
}

// move is one planned move.
type move struct {
	id  uint64
	dst *container.Volume
}

// volumeUse is a healthy volume's use as the balancer weighs it.
type volumeUse struct {
	v            *container.Volume
	used, room   int64   // room: free bytes past open containers' growth (-1: not known)
	weight, frac float64 // frac: used / weight
	closed       []container.Info
}

// uses returns the healthy volumes' use: the bytes of the containers each
// serves, so that the old copy of a moved container, which goes after its
// grace, counts no more, and the CLOSED containers it serves. A volume's
// weight is its capacity; when a volume does not report one, every volume
// weighs the same (the mean use), so that used bytes are evened out.
func (b *diskBalancer) uses() (out []volumeUse, mean float64) {
	stats := b.s.volumeStats()
	b.s.mu.RLock()
	where := make(map[uint64]*container.Volume, len(b.s.where))
	for id, v := range b.s.where {
		where[id] = v
	}
	vols := make([]*container.Volume, len(b.s.health))
	for i, h := range b.s.health {
		vols[i] = h.vol
	}
	b.s.mu.RUnlock()
	var total, capSum float64
	known := true
	for i, vs := range stats {
		if vs.State != VolumeHealthy {
			continue
		}
		u := volumeUse{v: vols[i], room: -1, weight: float64(vs.Capacity)}
		for _, in := range u.v.List() {
			if w := where[in.ID]; w != nil && w != u.v {
				continue // a moved container's old copy
			}
			u.used += in.UsedBytes
			if in.State == container.Closed && where[in.ID] == u.v {
				u.closed = append(u.closed, in)
			}
		}
		if vs.Capacity > 0 {
			u.room = vs.Available - vs.Reserved
		} else {
			known = false
		}
		total += float64(u.used)
		capSum += float64(vs.Capacity)
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, 0
	}
	if !known || capSum == 0 {
		capSum = 0
		for i := range out {
			out[i].weight = max(total/float64(len(out)), 1)
			capSum += out[i].weight
		}
	}
	for i := range out {
		out[i].frac = float64(out[i].used) / out[i].weight
	}
	return out, total / capSum
}

// spread returns the largest minus the smallest used fraction of the
// healthy volumes, and the bytes the volumes above the mean by more than
// threshold hold past it.
func (b *diskBalancer) spread(threshold float64) (float64, int64) {
	uses, mean := b.uses()
	if len(uses) == 0 {
		return 0, 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var left float64
	for _, u := range uses {
		lo, hi = min(lo, u.frac), max(hi, u.frac)
		if u.frac-mean > threshold {
			left += float64(u.used) - mean*u.weight
		}
	}
	return hi - lo, int64(left)
}

// plan picks the next move: a CLOSED container from the fullest volume to
// the emptiest, the one that brings the two closest to the mean; nil and
// why when the volumes are within threshold, or no move would bring them
// closer (the sum of the two volumes' distances from the mean must fall,
// so runs end and never move a container back and forth).
func (b *diskBalancer) plan(threshold float64, skip map[uint64]bool) (*move, string) {
	uses, mean := b.uses()
	if len(uses) < 2 {
		return nil, diskBalanced
	}
	src, dst := &uses[0], &uses[0]
	for i := range uses {
		if uses[i].frac > src.frac {
			src = &uses[i]
		}
		if uses[i].frac < dst.frac {
			dst = &uses[i]
		}
	}
	if src.frac-mean <= threshold && mean-dst.frac <= threshold {
		return nil, diskBalanced
	}
	dist := func(srcUsed, dstUsed float64) float64 {
		return math.Abs(srcUsed/src.weight-mean) + math.Abs(dstUsed/dst.weight-mean)
	}
	best := dist(float64(src.used), float64(dst.used))
	var pick *move
	for _, in := range src.closed {
		size := in.UsedBytes
		if size <= 0 || skip[in.ID] || (dst.room >= 0 && size > dst.room) {
			continue
		}
		if d := dist(float64(src.used-size), float64(dst.used+size)); d < best-1e-12 {
			best, pick = d, &move{id: in.ID, dst: dst.v}
		}
	}
	if pick == nil {
		return nil, diskNoMove
	}
	return pick, ""
}

// stats returns the balancer's state for the heartbeat (nil before its
// first run).
func (b *diskBalancer) stats() *stratov1.DiskBalancerStats {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.st
	if st.started.IsZero() {
		return nil
	}
	out := &stratov1.DiskBalancerStats{Running: st.running, Threshold: st.threshold, Bandwidth: st.bandwidth,
		ContainersMoved: st.moved, BytesMoved: st.bytes, MovesFailed: st.failed, SpreadStart: st.spreadStart,
		SpreadNow: st.spreadNow, StartedUnixMs: st.started.UnixMilli(), Result: st.result, LastError: st.lastErr,
		BytesLeft: st.bytesLeft}
	if !st.finished.IsZero() {
		out.FinishedUnixMs = st.finished.UnixMilli()
	}
	if st.running {
		out.SpreadNow, out.BytesLeft = b.spread(st.threshold)
	}
	return out
}
