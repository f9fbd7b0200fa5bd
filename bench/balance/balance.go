package balance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/trace"
	"time"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bench/rereplicate"
	"github.com/strato-io/strato/bench/teragen"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Config configures Run. Zero fields take EnsureDefaults' values.
type Config struct {
	// Size is the data written at replication THREE before the empty
	// datanodes join (each full datanode holds all of it), in keys of
	// KeySize by Threads writers.
	Size, KeySize int64
	Threads       int
	// Fill is the full datanodes' used fraction of their capacity: every
	// datanode reports a disk of Capacity() = Size / Fill.
	Fill float64
	// Threshold, Bandwidth and MaxSizePerIteration are the balancer's
	// (StartBalancerRequest; Bandwidth per source datanode, negative: no
	// cap).
	Threshold           float64
	Bandwidth           int64
	MaxSizePerIteration int64
	// NoYield starts the balancer with no_yield: its moves do not give way
	// to the foreground writes (decision 0098).
	NoYield bool
	// RateBytes is what the first phase moves, with nothing else running,
	// before the balancer is stopped: the rate against the cap, measured
	// away from the run's end (0: half of Size).
	RateBytes int64
	// Rounds of the foreground write alone and while balancing, in
	// alternating order; 0: none, the rate alone. Rows (100 bytes each)
	// are split over Writers writers, as TeraGen's map tasks.
	Rounds  int
	Rows    uint64
	Writers int
	// Interval is the sampling interval of the rate, the progress lines
	// (to Progress) and the chart (ChartPath, none when empty).
	Interval  time.Duration
	Progress  io.Writer
	ChartPath string
	// BoundDir is where the disk's copy bound is measured (the cluster's
	// directory: its disk); SkipBound skips it.
	BoundDir  string
	SkipBound bool
	// TracePrefix, when set, writes an execution trace (runtime/trace) of
	// each foreground write to TracePrefix-rN-alone.trace and
	// TracePrefix-rN-balancing.trace: where the writers and the servers
	// wait (go tool trace -pprof=syscall|sync|net FILE).
	TracePrefix string
}

// Bench defaults.
const (
	defaultSize      = 8 << 30
	defaultFill      = 0.8
	defaultThreshold = 0.05
	defaultBandwidth = 100 << 20
	defaultRows      = 5_000_000
)

// EnsureDefaults fills in the zero fields.
func (c *Config) EnsureDefaults() {
	if c.Size == 0 {
		c.Size = defaultSize
	}
	if c.KeySize == 0 {
		c.KeySize = 64 << 20
	}
	if c.Threads == 0 {
		c.Threads = 8
	}
	if c.Fill == 0 {
		c.Fill = defaultFill
	}
	if c.Threshold == 0 {
		c.Threshold = defaultThreshold
	}
	if c.Bandwidth == 0 {
		c.Bandwidth = defaultBandwidth
	}
	if c.RateBytes == 0 {
		c.RateBytes = c.Size / 2
	}
	if c.Rows == 0 {
		c.Rows = defaultRows
	}
	if c.Writers == 0 {
		c.Writers = 2
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Validate reports the first invalid field of a Config with its defaults.
func (c *Config) Validate() error {
	switch {
	case c.Size < c.KeySize || c.KeySize <= 0:
		return fmt.Errorf("bench: balance: --size %s must hold at least one key of --key-size %s", bytesize.Format(c.Size), bytesize.Format(c.KeySize))
	case c.Fill <= c.Threshold || c.Fill > 1:
		return fmt.Errorf("bench: balance: --fill %.2f: the full datanodes' use must be above the threshold %.2f and at most 1", c.Fill, c.Threshold)
	case c.Rounds < 0:
		return fmt.Errorf("bench: balance: --rounds %d", c.Rounds)
	}
	return nil
}

// Capacity is the disk every datanode reports.
func (c *Config) Capacity() int64 { return int64(float64(c.Size) / c.Fill) }

// bench is one run's cluster, client and configuration.
type bench struct {
	cfg  Config
	c    *minicluster.Cluster
	cl   *client.Client
	out  io.Writer
	disk measure.Disk
}

const volume, bucket = "balance", "data"

// Run runs the benchmark on c, whose datanodes report cfg.Capacity() (the
// caller starts it so) and number at least six: the first half is filled,
// the second joins empty.
func Run(ctx context.Context, cfg Config, c *minicluster.Cluster, out io.Writer) (Result, error) {
	var res Result
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	n := len(c.DatanodeAddrs())
	if n < 6 {
		return res, fmt.Errorf("bench: balance needs at least 6 datanodes (3 full, 3 empty), the cluster has %d", n)
	}
	cl, err := c.Client()
	if err != nil {
		return res, err
	}
	defer func() { _ = cl.Close() }()
	b := &bench{cfg: cfg, c: c, cl: cl, out: out}
	if b.disk, err = measure.DiskOf(c.DatanodeDir(0)); err != nil {
		fmt.Fprintf(out, "no disk statistics: %v\n", err)
	}
	kp, err := b.fill(ctx, n)
	if err != nil {
		return res, err
	}
	if !cfg.SkipBound {
		streams, bytes := n, min(cfg.Size, 4<<30)
		fmt.Fprintf(out, "measuring the bound: %d concurrent copies of %s in all on the datanodes' disk (direct I/O), TCP on loopback\n", streams, bytesize.Format(bytes))
		if res.Bound, err = rereplicate.MeasureBound(ctx, cfg.BoundDir, streams, bytes, 1); err != nil {
			return res, err
		}
	}
	if err := b.join(ctx, n); err != nil {
		return res, err
	}
	res.SpreadBefore = b.spread(ctx)
	if err := b.rate(ctx, &res); err != nil {
		return res, err
	}
	for i := range cfg.Rounds {
		r, err := b.round(ctx, i)
		if err != nil {
			return res, err
		}
		res.Rounds = append(res.Rounds, r)
	}
	if err := b.finish(ctx, &res); err != nil {
		return res, err
	}
	if _, err := keyput.ReadBack(ctx, kp, cl, "read back", out); err != nil {
		return res, err
	}
	res.summarize(cfg)
	res.Print(out, cfg)
	if cfg.ChartPath != "" {
		title := fmt.Sprintf("balancer moves (GB/s) over time, %d sources", res.Sources)
		if err := rereplicate.WriteChart(cfg.ChartPath, title, res.Samples, cfg.Interval, res.CapMBps/1e3, "cap"); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "chart: %s\n", cfg.ChartPath)
	}
	return res, nil
}

// fill stops the second half of the datanodes, writes cfg.Size into the
// first half and closes every container. It returns the keys' config.
func (b *bench) fill(ctx context.Context, n int) (keyput.Config, error) {
	fmt.Fprintf(b.out, "stopping datanodes %d-%d until the others are full\n", n/2, n-1)
	for i := n / 2; i < n; i++ {
		if err := b.c.StopDatanode(i); err != nil {
			return keyput.Config{}, err
		}
	}
	if err := b.waitHealth(ctx, stratov1.NodeHealth_NODE_DEAD, n-n/2); err != nil {
		return keyput.Config{}, err
	}
	if _, err := b.cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: volume}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return keyput.Config{}, err
	}
	req := &stratov1.CreateBucketRequest{Volume: volume, Name: bucket, Replication: stratov1.ReplicationFactor_REPLICATION_THREE}
	if _, err := b.cl.CreateBucket(ctx, req); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return keyput.Config{}, err
	}
	keys := int(b.cfg.Size / b.cfg.KeySize)
	kp := keyput.Config{Volume: volume, Bucket: bucket, Prefix: "k", Keys: keys, Size: b.cfg.KeySize, Threads: b.cfg.Threads,
		Progress: b.cfg.Progress, ProgressInterval: 5 * time.Second}
	fmt.Fprintf(b.out, "writing %d keys of %s at THREE (%s on each of %d datanodes, %.0f%% of %s)\n", keys, bytesize.Format(b.cfg.KeySize),
		bytesize.Format(int64(keys)*b.cfg.KeySize), n/2, 100*b.cfg.Fill, bytesize.Format(b.cfg.Capacity()))
	if _, err := keyput.Run(ctx, kp, b.cl, io.Discard); err != nil {
		return kp, err
	}
	return kp, rereplicate.CloseAll(ctx, b.cl)
}

// join starts the empty datanodes again and waits until the balancer sees
// every datanode with a fresh report.
func (b *bench) join(ctx context.Context, n int) error {
	fmt.Fprintf(b.out, "starting the empty datanodes %d-%d\n", n/2, n-1)
	for i := n / 2; i < n; i++ {
		if err := b.c.StartDatanode(i); err != nil {
			return err
		}
	}
	if err := b.waitHealth(ctx, stratov1.NodeHealth_NODE_HEALTHY, n); err != nil {
		return err
	}
	return b.until(ctx, 2*time.Minute, "every datanode reported to the balancer", func(st *stratov1.BalancerStatus) bool {
		return len(st.Datanodes) == n && st.Spread > b.cfg.Fill/2
	})
}

// rate runs the balancer with nothing else running until the sources have
// sent cfg.RateBytes (or it stopped by itself), stops it and waits for its
// moves to end, sampling the bytes the datanodes send.
func (b *bench) rate(ctx context.Context, res *Result) error {
	fmt.Fprintf(b.out, "balancing alone until %s moved: threshold %.0f%%, %s\n", bytesize.Format(b.cfg.RateBytes), 100*b.cfg.Threshold, capPhrase(b.cfg.Bandwidth))
	per0 := b.perSource()
	sent0 := sumOf(per0)
	start := time.Now()
	if err := b.start(ctx); err != nil {
		return err
	}
	var first, last time.Time
	prevPoll, prevSample, nextSample := sent0, sent0, start.Add(b.cfg.Interval)
	stopped := false
	for {
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
		now, s := time.Now(), b.sent()
		if s != prevPoll {
			if first.IsZero() {
				first = now
			}
			last, prevPoll = now, s
		}
		if !stopped && s-sent0 >= b.cfg.RateBytes {
			if err := b.stop(ctx); err != nil {
				return err
			}
			stopped = true
		}
		if now.Before(nextSample) {
			continue
		}
		res.Samples = append(res.Samples, float64(s-prevSample)/1e9/b.cfg.Interval.Seconds())
		prevSample, nextSample = s, nextSample.Add(b.cfg.Interval)
		st, err := b.status(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(b.cfg.Progress, "%4.0f s  sent %s  moves in flight %d  left %s  spread %.1f%%\n", now.Sub(start).Seconds(),
			bytesize.Format(s-sent0), st.MovesInFlight, bytesize.Format(st.BytesLeft), 100*st.Spread)
		if !st.Running && st.MovesInFlight == 0 {
			break
		}
		if now.Sub(start) > time.Hour {
			return errors.New("bench: the balancer still runs after an hour")
		}
	}
	res.PerSource = map[string]int64{}
	for id, v := range b.perSource() {
		if d := v - per0[id]; d > 0 {
			res.PerSource[id] = d
			res.Moved += d
		}
	}
	res.Sources, res.Window = len(res.PerSource), last.Sub(first)
	return nil
}

// round runs the foreground write alone and while balancing, in the order
// i's parity gives.
func (b *bench) round(ctx context.Context, i int) (Round, error) {
	var r Round
	var err error
	for _, balancing := range []bool{i%2 == 1, i%2 == 0} {
		if !balancing {
			if r.Alone, err = b.foreground(ctx, fmt.Sprintf("r%d-alone", i)); err != nil {
				return r, err
			}
			continue
		}
		gave0 := b.gaveWay()
		if r.During, r.MovedDuring, err = b.foregroundBalancing(ctx, i); err != nil {
			return r, err
		}
		r.GaveWay = b.gaveWay() - gave0
	}
	fmt.Fprintf(b.out, "round %d: foreground alone %s; while balancing %s (%+.1f%%), the balancer sent %s meanwhile (%.0f MB/s), its copies gave way to the writes %.1f s in all\n",
		i+1, r.Alone, r.During, 100*(r.During.Elapsed.Seconds()/r.Alone.Elapsed.Seconds()-1),
		bytesize.Format(r.MovedDuring), float64(r.MovedDuring)/1e6/r.During.Elapsed.Seconds(), r.GaveWay.Seconds())
	return r, nil
}

// foregroundBalancing starts the balancer, waits until a source sends,
// runs the foreground write, stops the balancer and waits until its moves
// have ended.
func (b *bench) foregroundBalancing(ctx context.Context, i int) (Usage, int64, error) {
	sent0 := b.sent()
	if err := b.start(ctx); err != nil {
		return Usage{}, 0, err
	}
	deadline := time.Now().Add(time.Minute)
	for b.sent() == sent0 {
		st, err := b.status(ctx)
		if err != nil {
			return Usage{}, 0, err
		}
		if !st.Running {
			return Usage{}, 0, fmt.Errorf("bench: the balancer stopped (%s) before round %d: too little left to move (raise --size or --fill, lower --rate-bytes or --rows)", st.Outcome, i+1)
		}
		if time.Now().After(deadline) {
			return Usage{}, 0, fmt.Errorf("bench: the balancer sent nothing in a minute: %v", st)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return Usage{}, 0, err
		}
	}
	from := b.sent()
	u, err := b.foreground(ctx, fmt.Sprintf("r%d-balancing", i))
	if err != nil {
		return Usage{}, 0, err
	}
	moved := b.sent() - from
	st, err := b.status(ctx)
	if err != nil {
		return Usage{}, 0, err
	}
	if !st.Running {
		return Usage{}, 0, fmt.Errorf("bench: the balancer stopped (%s) during round %d's write: too little left to move (raise --size or --fill, lower --rate-bytes or --rows)", st.Outcome, i+1)
	}
	if err := b.stop(ctx); err != nil {
		return Usage{}, 0, err
	}
	return u, moved, b.until(ctx, 3*time.Minute, "the stopped balancer's moves ended", func(st *stratov1.BalancerStatus) bool {
		return !st.Running && st.MovesInFlight == 0
	})
}

// foreground runs the TeraGen write into a directory of its own, then
// deletes it.
func (b *bench) foreground(ctx context.Context, name string) (Usage, error) {
	dir := fmt.Sprintf("/%s/%s/fg/%s", volume, bucket, name)
	d0, err := b.disk.Stats()
	if err != nil {
		return Usage{}, err
	}
	stopTrace, err := b.startTrace(name)
	if err != nil {
		return Usage{}, err
	}
	cpu0 := measure.CPUSeconds()
	res, err := teragen.Run(ctx, teragen.Config{Rows: b.cfg.Rows, Path: dir, Writers: b.cfg.Writers}, teragen.ClientFiles{Client: b.cl}, io.Discard)
	if terr := stopTrace(); err == nil {
		err = terr
	}
	if err != nil {
		return Usage{}, err
	}
	u := Usage{Elapsed: res.Elapsed, CPU: measure.CPUSeconds() - cpu0}
	for _, w := range res.Writers {
		u.Write, u.Hsync, u.Close = max(u.Write, w.WriteTime), max(u.Hsync, w.HsyncTime), max(u.Close, w.CloseTime)
	}
	d1, err := b.disk.Stats()
	if err != nil {
		return Usage{}, err
	}
	u.Disk = d1.Sub(d0)
	return u, b.cl.Delete(ctx, dir, true)
}

// startTrace starts the execution trace of the foreground write name,
// when asked for; the function returned stops it.
func (b *bench) startTrace(name string) (stop func() error, err error) {
	if b.cfg.TracePrefix == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(b.cfg.TracePrefix + "-" + name + ".trace")
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() error { trace.Stop(); return f.Close() }, nil
}

// finish runs the balancer to its end.
func (b *bench) finish(ctx context.Context, res *Result) error {
	fmt.Fprintln(b.out, "balancing to the end")
	start := time.Now()
	if err := b.start(ctx); err != nil {
		return err
	}
	if err := b.until(ctx, time.Hour, "balanced", func(st *stratov1.BalancerStatus) bool {
		return !st.Running && st.MovesInFlight == 0
	}); err != nil {
		return err
	}
	st, err := b.status(ctx)
	if err != nil {
		return err
	}
	res.Outcome, res.FinishTime, res.SpreadAfter = st.Outcome, time.Since(start), st.SpreadAfter
	return nil
}

// spread is the balancer's spread now.
func (b *bench) spread(ctx context.Context) float64 {
	st, err := b.status(ctx)
	if err != nil {
		return 0
	}
	return st.Spread
}

func (b *bench) stop(ctx context.Context) error {
	_, err := client.Cluster(ctx, b.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.BalancerStatus, error) {
		return cc.StopBalancer(ctx, &stratov1.StopBalancerRequest{})
	})
	return err
}

func sumOf(m map[string]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}

func capPhrase(bw int64) string {
	if bw < 0 {
		return "no bandwidth cap"
	}
	return bytesize.Format(bw) + "/s per source"
}

// start starts the balancer with the configured parameters.
func (b *bench) start(ctx context.Context) error {
	req := &stratov1.StartBalancerRequest{Threshold: b.cfg.Threshold, Bandwidth: b.cfg.Bandwidth, MaxSizePerIteration: b.cfg.MaxSizePerIteration,
		NoYield: b.cfg.NoYield}
	_, err := client.Cluster(ctx, b.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.BalancerStatus, error) {
		return cc.StartBalancer(ctx, req)
	})
	return err
}

func (b *bench) status(ctx context.Context) (*stratov1.BalancerStatus, error) {
	return client.Cluster(ctx, b.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.BalancerStatus, error) {
		return cc.GetBalancerStatus(ctx, &stratov1.GetBalancerStatusRequest{})
	})
}

// until polls the balancer's status until ok or limit.
func (b *bench) until(ctx context.Context, limit time.Duration, what string, ok func(*stratov1.BalancerStatus) bool) error {
	deadline := time.Now().Add(limit)
	for {
		st, err := b.status(ctx)
		if err != nil {
			return err
		}
		if ok(st) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: not %s within %s: %v", what, limit, st)
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// waitHealth waits until want datanodes have health h.
func (b *bench) waitHealth(ctx context.Context, h stratov1.NodeHealth, want int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		dns, err := client.Cluster(ctx, b.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		if err != nil {
			return err
		}
		got := 0
		for _, d := range dns.Datanodes {
			if d.Health == h {
				got++
			}
		}
		if got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d datanodes %v, not %d, after 2 minutes", got, h, want)
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// sent is the bytes every datanode's pushes have sent.
func (b *bench) sent() int64 { return sumOf(b.perSource()) }

// gaveWay is the time the datanodes' background copies waited for
// clients, in all (the copies of a move wait on both ends).
func (b *bench) gaveWay() time.Duration {
	var d time.Duration
	b.eachDatanode(func(_ string, m replication.MetricsSnapshot) { d += m.GaveWay })
	return d
}

func (b *bench) perSource() map[string]int64 {
	per := map[string]int64{}
	b.eachDatanode(func(id string, m replication.MetricsSnapshot) { per[id] += m.BytesOut })
	return per
}

// eachDatanode calls f with each running datanode's ID and replication
// counters.
func (b *bench) eachDatanode(f func(id string, m replication.MetricsSnapshot)) {
	for i := range b.c.DatanodeAddrs() {
		if dn := b.c.Datanode(i); dn != nil {
			f(dn.ID(), dn.ReplicationMetrics())
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
