package scanner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
)

// Defaults of Options.
const (
	// DefaultMetaInterval is Ozone's metadata scan interval.
	DefaultMetaInterval = 3 * time.Hour
	// DefaultDataInterval is how often every byte is read again: HDFS's
	// block scanner's and Ozone's data scanner's week.
	DefaultDataInterval = 7 * 24 * time.Hour
	// DefaultBandwidth is the data scan's cap per volume: a few percent of
	// a disk's sequential bandwidth, so that the foreground barely notices
	// (a 12 TB disk half full is read in about two days at it, well within
	// the week).
	DefaultBandwidth = 32 << 20
)

// Options configure a Scanner.
type Options struct {
	// MetaInterval is the time between metadata scans of a volume's
	// containers. Default: DefaultMetaInterval; negative: no metadata
	// scans.
	MetaInterval time.Duration
	// DataInterval is the time between the starts of data scans of a
	// volume's containers (a pass that takes longer is followed by the next
	// at once). Default: DefaultDataInterval; negative: no data scans.
	DataInterval time.Duration
	// Bandwidth caps a data scan's reads, in bytes per second per volume.
	// Default: DefaultBandwidth; negative: no cap.
	Bandwidth int64
	// Disable turns the scanner off: Start starts nothing, Request does
	// nothing.
	Disable bool
	// Unhealthy, when set, is called with the ID of every container the
	// scanner marked UNHEALTHY.
	Unhealthy func(id uint64)
	// Clock is the time scans are scheduled and paced on. Default: the
	// real clock.
	Clock clockwork.Clock
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills unset fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.MetaInterval == 0 {
		o.MetaInterval = DefaultMetaInterval
	}
	if o.DataInterval == 0 {
		o.DataInterval = DefaultDataInterval
	}
	if o.Bandwidth == 0 {
		o.Bandwidth = DefaultBandwidth
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports the first invalid setting. Every value is valid: a
// negative one turns its part off.
func (o *Options) Validate() error { return nil }

// Store is what the scanner needs of a datanode's containers.
type Store interface {
	// ClosedContainers returns, per volume (always in the same order and
	// number), the IDs of its CLOSED containers, none being imported.
	ClosedContainers() [][]uint64
	// Container returns a container (container.ErrNotFound once deleted).
	Container(id uint64) (*container.Container, error)
}

// Scanner scans a Store's CLOSED containers in the background.
type Scanner struct {
	opts  Options
	store Store
	m     metrics
	vols  []*volume

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a scanner of store; Start starts it.
func New(opts Options, store Store) (*Scanner, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Scanner{opts: opts, store: store}
	for i := range store.ClosedContainers() {
		v := &volume{s: s, idx: i, wake: make(chan struct{}, 1)}
		if opts.Bandwidth > 0 {
			l, err := replication.NewLimits(1, opts.Bandwidth, opts.Clock)
			if err != nil {
				return nil, fmt.Errorf("scanner: %w", err)
			}
			v.limit = l
		}
		s.vols = append(s.vols, v)
	}
	s.m.disabled = opts.Disable
	return s, nil
}

// Start runs a goroutine per volume until Stop (nothing when disabled).
func (s *Scanner) Start() {
	if s.opts.Disable {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	start := s.opts.Clock.Now()
	for _, v := range s.vols {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			v.run(ctx, start)
		}()
	}
}

// Stop ends the scans (one in progress stops at its next chunk) and waits
// for the goroutines.
func (s *Scanner) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
}

// Request asks for a scan of container id next, a data scan or a metadata
// one, ahead of the periodic passes. It reports whether the scan was queued:
// not for a container this datanode does not hold CLOSED, nor when the
// scanner is disabled.
func (s *Scanner) Request(id uint64, data bool) bool {
	if s.opts.Disable {
		return false
	}
	for i, ids := range s.store.ClosedContainers() {
		for _, cid := range ids {
			if cid == id && i < len(s.vols) {
				s.vols[i].request(id, data)
				return true
			}
		}
	}
	return false
}

// Metrics returns a snapshot of the scanner's counters.
func (s *Scanner) Metrics() Metrics {
	m := s.m.snapshot()
	for i, v := range s.vols {
		meta, data := v.passes()
		if i == 0 || meta.Before(m.LastMetaPass) {
			m.LastMetaPass = meta
		}
		if i == 0 || data.Before(m.LastDataPass) {
			m.LastDataPass = data
		}
	}
	return m
}

// scan runs one scan of container id on volume v, and marks the container
// UNHEALTHY if it finds damage.
func (s *Scanner) scan(ctx context.Context, v *volume, id uint64, data bool) {
	c, err := s.store.Container(id)
	if err != nil || c.State() != container.Closed {
		return // deleted, or no longer CLOSED: nothing to scan
	}
	s.m.begin()
	defer s.m.end()
	var rep container.ScanReport
	if data {
		// Bytes are counted as they are read, so that the metrics show a
		// long scan's progress.
		rep, err = c.ScanWith(ctx, container.ScanOptions{Wait: func(ctx context.Context, n int64) error {
			err := v.limit.Wait(ctx, n)
			if err == nil {
				s.m.bytes.Add(n)
			}
			return err
		}})
	} else {
		rep, err = c.ScanMeta(ctx)
	}
	s.m.scanned(data)
	if ctx.Err() != nil {
		return
	}
	var bad []container.BadBlock
	if err != nil {
		if !errors.Is(err, container.ErrCorrupt) {
			s.opts.Logger.Warn("datanode: scan failed", "container", id, "data", data, "err", err)
			return
		}
		bad = append(bad, container.BadBlock{Err: err})
	}
	for _, b := range rep.Bad {
		if _, err := c.GetBlock(b.LocalID); b.LocalID != 0 && errors.Is(err, container.ErrBlockNotFound) {
			continue // deleted while the scan read it
		}
		bad = append(bad, b)
	}
	if len(bad) == 0 {
		return
	}
	if cur, err := s.store.Container(id); err != nil || cur != c {
		return // deleted while scanned
	}
	if err := c.MarkUnhealthy(); err != nil {
		if !errors.Is(err, container.ErrNotFound) {
			s.opts.Logger.Warn("datanode: cannot mark a damaged container UNHEALTHY", "container", id, "err", err)
		}
		return
	}
	s.m.corrupt()
	s.opts.Logger.Error("datanode: scan found a damaged replica; marked UNHEALTHY", "container", id, "data_scan", data,
		"bad_blocks", len(bad), "first", bad[0].Err)
	if s.opts.Unhealthy != nil {
		s.opts.Unhealthy(id)
	}
}

// volume runs the scans of one volume, one container at a time.
type volume struct {
	s     *Scanner
	idx   int
	limit *replication.Limits // nil: no cap
	wake  chan struct{}

	mu       sync.Mutex
	demand   []request
	lastMeta time.Time // end of the last full metadata pass
	lastData time.Time // end of the last full data pass
}

type request struct {
	id   uint64
	data bool
}

func (v *volume) request(id uint64, data bool) {
	v.mu.Lock()
	v.demand = append(v.demand, request{id, data})
	v.mu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

func (v *volume) popDemand() (request, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.demand) == 0 {
		return request{}, false
	}
	r := v.demand[0]
	v.demand = v.demand[1:]
	return r, true
}

func (v *volume) passes() (meta, data time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lastMeta, v.lastData
}

func (v *volume) passDone(data bool, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if data {
		v.lastData = at
	} else {
		v.lastMeta = at
	}
}

func (v *volume) closed() []uint64 {
	all := v.s.store.ClosedContainers()
	if v.idx >= len(all) {
		return nil
	}
	return all[v.idx]
}

// run scans until ctx ends: requested scans first, then a metadata pass
// when one is due (between two containers of a data pass, which takes
// days), then the data pass's next container. The first passes are due an
// interval after start, so that a restarted datanode does not start with
// a burst of reads.
func (v *volume) run(ctx context.Context, start time.Time) {
	o, clock := &v.s.opts, v.s.opts.Clock
	nextMeta, nextData := start.Add(o.MetaInterval), start.Add(o.DataInterval)
	var pass []uint64 // containers left in the data pass under way
	for ctx.Err() == nil {
		if r, ok := v.popDemand(); ok {
			v.s.scan(ctx, v, r.id, r.data)
			continue
		}
		now := clock.Now()
		switch {
		case o.MetaInterval > 0 && !now.Before(nextMeta):
			for _, id := range v.closed() {
				if ctx.Err() != nil {
					return
				}
				v.s.scan(ctx, v, id, false)
			}
			v.passDone(false, clock.Now())
			nextMeta = now.Add(o.MetaInterval)
			continue
		case len(pass) > 0:
			id := pass[0]
			pass = pass[1:]
			v.s.scan(ctx, v, id, true)
			if len(pass) == 0 && ctx.Err() == nil {
				v.passDone(true, clock.Now())
			}
			continue
		case o.DataInterval > 0 && !now.Before(nextData):
			pass, nextData = v.closed(), now.Add(o.DataInterval)
			if len(pass) == 0 {
				v.passDone(true, now)
			}
			continue
		}
		v.sleep(ctx, now, nextMeta, nextData)
	}
}

// sleep waits for ctx, a request, or the next pass due.
func (v *volume) sleep(ctx context.Context, now, nextMeta, nextData time.Time) {
	o := &v.s.opts
	var due time.Time
	if o.MetaInterval > 0 {
		due = nextMeta
	}
	if o.DataInterval > 0 && (due.IsZero() || nextData.Before(due)) {
		due = nextData
	}
	var timer <-chan time.Time
	if !due.IsZero() {
		t := o.Clock.NewTimer(due.Sub(now))
		defer t.Stop()
		timer = t.Chan()
	}
	select {
	case <-ctx.Done():
	case <-v.wake:
	case <-timer:
	}
}
