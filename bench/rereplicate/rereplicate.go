package rereplicate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"

	"time"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Config configures Run: lose a datanode of a loaded cluster and measure
// how fast its closed containers get three copies back, or, erasure
// coded, every index rebuilt.
type Config struct {
	// Size is the data written before the loss (key bytes: an erasure
	// coded bucket stores (d+p)/d of it, a THREE one three times).
	Size int64
	// EC, when set, is the bucket's erasure coding config: the lost
	// datanode's indexes are rebuilt (ReconstructECContainerCommand)
	// rather than copied. The zero value is replication THREE. The
	// cluster needs d+p+1 datanodes (d+p to hold a container and one to
	// rebuild on); Gen is refused.
	EC ec.Config
	// KeySize is the size of each key written. Default 64 MiB.
	KeySize int64
	// Threads write the data. Default 8.
	Threads int
	// Victim is the index of the datanode lost. Default 0.
	Victim int
	// Interval of the progress lines and of the throughput samples.
	// Default 1s.
	Interval time.Duration
	// Progress gets the live lines.
	Progress io.Writer
	// ChartPath, when set, receives a PNG of the throughput over time.
	ChartPath string
	// SkipBound skips measuring the hardware bound (the disk's copy rate
	// and loopback TCP).
	SkipBound bool
	// BoundDir is where the bound's copies run (the datanodes' disk).
	BoundDir string
	// Streams is each datanode's copy concurrency (datanode
	// ReplicationStreams); the bound copies with as many streams as the
	// re-replication can run at once. Default 10.
	Streams int
	// DropCaches empties the page cache before the loss, so that sources
	// read from the disk as they would long after the data was written.
	DropCaches bool
	// Gen generates the data offline (gen.Run, with the datanodes stopped)
	// instead of writing it through the client.
	Gen bool
	// ContainerSize and BlockSize of the generated data (Gen).
	ContainerSize, BlockSize int64
	// CPUProfile, when set, receives the CPU profile of the copy.
	CPUProfile string
	// CodecTime is how long the codec's encode and decode are each timed
	// on one core after an erasure coded run. Default 500ms.
	CodecTime time.Duration
}

// erasureCoded says whether the run is erasure coded.
func (c Config) erasureCoded() bool { return !c.EC.IsZero() }

// redundancy names the run's redundancy: THREE or the EC config.
func (c Config) redundancy() string {
	if c.erasureCoded() {
		return c.EC.String()
	}
	return "THREE"
}

// MinDatanodes is the smallest cluster a run of cfg can use: three copies
// and a target besides the lost datanode (4), or, erasure coded, d+p
// members and a datanode holding no index of a container to rebuild on
// (RS-3-2: 6, RS-6-3: 10).
func MinDatanodes(e ec.Config) int {
	if e.IsZero() {
		return 4
	}
	return e.Members() + 1
}

// Result is what Run measured.
type Result struct {
	// EC is the run's erasure coding config (zero: THREE).
	EC         ec.Config
	Containers int   // containers the lost datanode held
	Bytes      int64 // bytes copied to restore them (EC: of the rebuilt replicas)
	// SourceBytes is, erasure coded, the bytes the sources sent to the
	// rebuilds (about d per byte rebuilt).
	SourceBytes int64
	// Detect is from the loss to the first copy seen; Copy from the first
	// copy seen to the last.
	Detect, Copy, Total  time.Duration
	MeanGBps, PeakGBps   float64
	Samples              []float64 // GB/s per interval, from the loss
	PerTarget, PerSource map[string]int64
	Bound                Bound
	// CPUSecondsPerGB is the whole process's CPU time (meta, every
	// datanode, the sampler) per GB copied; SourceCPUSecondsPerGB the
	// sources' pushes alone (sendfile's kernel time included) and
	// TargetCPUSecondsPerGB the targets' imports alone, from a CPU
	// profile of the copy read by label (CPU).
	// (Erasure coded, TargetCPUSecondsPerGB is the targets' rebuilds:
	// reading the sources, decoding or encoding, writing and committing;
	// the sources' reads are in CPU.Other, their servers not labelled.)
	CPUSecondsPerGB                              float64
	SourceCPUSecondsPerGB, TargetCPUSecondsPerGB float64
	CPU                                          CPU
	// Codec is, erasure coded, the code's encode and decode rates on one
	// core, timed after the rebuild.
	Codec CodecRate
}

// Run writes cfg.Size into the cluster, closes every container, stops
// datanode cfg.Victim and deletes its data, then samples meta until every
// container the victim held has three healthy copies again (erasure coded:
// every index, the victim's rebuilt elsewhere), and reads every key back.
func Run(ctx context.Context, cfg Config, c *minicluster.Cluster, out io.Writer) (Result, error) {
	var res Result
	res.EC = cfg.EC
	if err := cfg.check(len(c.DatanodeAddrs())); err != nil {
		return res, err
	}
	cfg.ensureDefaults()
	cl, err := c.Client()
	if err != nil {
		return res, err
	}
	defer func() { _ = cl.Close() }()

	// 1. Data. The bound is measured while nothing else runs: with the
	// datanodes stopped for the offline generation, or after the writes.
	// dd keeps the disk so busy that a running datanode's heartbeats can
	// be late enough for meta to declare it dead.
	measureBound := func() error { return measureBoundOf(ctx, cfg, c, cl, out, &res) }
	keyNames, keySize, err := writeData(ctx, cfg, c, cl, out, measureBound)
	if err != nil {
		return res, err
	}
	payload := keyput.Payload(keySize)

	// 2. Close every container and wait until they are CLOSED.
	fmt.Fprintln(out, "closing every container")
	if err := CloseAll(ctx, cl); err != nil {
		return res, err
	}

	// 3. The bound (written data: now).
	if !cfg.Gen {
		if err := measureBound(); err != nil {
			return res, err
		}
	}

	// 4. Lose the victim once the cluster is quiet.
	victimID, lost, err := loseVictim(ctx, cfg, c, cl, out, &res)
	if err != nil {
		return res, err
	}
	// 5. The meter's baseline and the copy window start before the
	// victim stops: meta may schedule copies while it is stopping (a
	// holder silent for the stale window no longer counts), and bytes sent
	// before a baseline taken later would not be counted.
	var mt meter = copyMeter{c: c, victim: cfg.Victim}
	if cfg.erasureCoded() {
		mt = rebuildMeter{c: c, victim: cfg.Victim, lost: lost}
	}
	sm := startSampling(cfg, mt)
	cpu0 := measure.CPUSeconds()
	prof := startLabelProfile()
	defer func() { _, _ = prof.stop("") }()
	// The victim stops while the sampling runs: stopping it and deleting
	// its data can take seconds on a busy disk, and meta may begin copying
	// meanwhile.
	start := time.Now()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopped := make(chan error, 1)
	go func() {
		err := c.StopDatanode(cfg.Victim)
		if err == nil {
			err = os.RemoveAll(c.DatanodeDir(cfg.Victim))
		}
		if err != nil {
			cancel() // the sampling would wait for copies that never come
		} else {
			fmt.Fprintf(out, "datanode stopped and its data deleted in %.1f s\n", time.Since(start).Seconds())
		}
		stopped <- err
	}()

	// 6. Sample until every lost container has three good copies (every
	// index).
	win, err := sampleCopy(sctx, cfg, c, cl, mt, sm, lost, victimID, start, &res)
	if serr := <-stopped; serr != nil {
		if win != nil {
			win.stop()
		}
		return res, serr
	}
	if err != nil {
		return res, err
	}
	cpu := measure.CPUSeconds() - cpu0
	res.Total = time.Since(start)
	if first, last := win.stop(); !first.IsZero() {
		res.Detect, res.Copy = first.Sub(start), last.Sub(first)
	}
	if res.Bytes > 0 && res.Copy < cfg.Interval {
		// First and last byte seen at one sample: the phase took at most
		// one interval (a small run), and the mean is at least this.
		res.Copy = cfg.Interval
	}
	if res.Copy > 0 {
		res.MeanGBps = float64(res.Bytes) / 1e9 / res.Copy.Seconds()
	}
	byRole, perr := prof.stop(cfg.CPUProfile)
	if perr != nil {
		fmt.Fprintf(out, "no CPU by role: %v\n", perr)
	}
	res.CPU = byRole
	if gb := float64(res.Bytes) / 1e9; gb > 0 {
		res.CPUSecondsPerGB = cpu / gb
		res.SourceCPUSecondsPerGB = byRole.Total(replication.RolePush) / gb
		res.TargetCPUSecondsPerGB = byRole.Total(replication.RoleImport) / gb
	}

	// 7. Every key reads back, verified.
	if err := verifyKeys(ctx, cl, keyNames, payload, keySize, out); err != nil {
		return res, err
	}
	// 8. The code's own speed, on one core, while nothing else runs.
	if cfg.erasureCoded() {
		if res.Codec, err = measureCodec(cfg.EC, cfg.CodecTime); err != nil {
			return res, err
		}
	}
	printResult(out, res)
	if cfg.ChartPath != "" {
		if err := WriteChart(cfg.ChartPath, "re-replication throughput (GB/s) over time", res.Samples, cfg.Interval, res.Bound.MBps()/1e3, "bound"); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "chart: %s\n", cfg.ChartPath)
	}
	return res, nil
}

// check refuses a configuration this cluster of datanodes cannot run.
func (c *Config) check(datanodes int) error {
	if c.erasureCoded() {
		if err := c.EC.Validate(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		if c.Gen {
			return fmt.Errorf("bench: the offline generator writes replicated containers only; an erasure coded run (%s) writes through the client (--gen=false)", c.EC)
		}
	}
	if need := MinDatanodes(c.EC); datanodes < need {
		return fmt.Errorf("bench: %s needs at least %d datanodes (a container's %d holders, a target, and the lost one), the cluster has %d",
			c.redundancy(), need, need-1, datanodes)
	}
	return nil
}

// ensureDefaults fills in the zero fields of Run's defaults.
func (c *Config) ensureDefaults() {
	if c.CodecTime == 0 {
		c.CodecTime = 500 * time.Millisecond
	}
	if c.KeySize == 0 {
		c.KeySize = 64 << 20
	}
	if c.Threads == 0 {
		c.Threads = 8
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// writeData makes the bucket and fills it with cfg.Size: generated offline
// (calling measure while the datanodes are stopped) or written through the
// client. It returns the keys' names and size.
func writeData(ctx context.Context, cfg Config, c *minicluster.Cluster, cl *client.Client, out io.Writer, measure func() error) ([]string, int64, error) {
	if _, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "rerepl"}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return nil, 0, err
	}
	bucket := &stratov1.CreateBucketRequest{Volume: "rerepl", Name: "data", Replication: stratov1.ReplicationFactor_REPLICATION_THREE}
	if cfg.erasureCoded() {
		bucket.Replication, bucket.ErasureCoding = stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED, client.ErasureCoding(cfg.EC)
	}
	if _, err := cl.CreateBucket(ctx, bucket); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return nil, 0, err
	}
	if cfg.Gen {
		keyNames, err := generate(ctx, cfg, c, out, measure)
		return keyNames, cfg.BlockSize, err
	}
	keys := int((cfg.Size + cfg.KeySize - 1) / cfg.KeySize)
	fmt.Fprintf(out, "writing %d keys of %s (%s, %s)\n", keys, bytesize.Format(cfg.KeySize), bytesize.Format(int64(keys)*cfg.KeySize), redundancyPhrase(cfg))
	kp := keyput.Config{Volume: "rerepl", Bucket: "data", Prefix: "k", Keys: keys, Size: cfg.KeySize, Threads: cfg.Threads,
		Progress: cfg.Progress, ProgressInterval: 5 * time.Second}
	if _, err := keyput.Run(ctx, kp, cl, io.Discard); err != nil {
		return nil, 0, err
	}
	keyNames := make([]string, keys)
	for i := range keys {
		keyNames[i] = fmt.Sprintf("k/%d", i)
	}
	return keyNames, cfg.KeySize, nil
}

// measureBoundOf measures the bound of the rebuild cfg asks for
// (MeasureBound) into res.Bound, unless cfg.SkipBound.
func measureBoundOf(ctx context.Context, cfg Config, c *minicluster.Cluster, cl *client.Client, out io.Writer, res *Result) error {
	if cfg.SkipBound {
		return nil
	}
	var held map[uint64]lostContainer
	if cfg.erasureCoded() {
		// What the victim holds decides the rebuild's shape: the writes
		// spread over every EC pipeline's containers, far fewer bytes
		// each than ContainerSize at this size.
		var err error
		if held, err = containersOn(ctx, cl, c.Datanode(cfg.Victim).ID()); err != nil {
			return err
		}
	}
	streams, bytes, reads := boundShape(cfg, len(c.DatanodeAddrs()), held)
	var err error
	if reads == 1 {
		fmt.Fprintf(out, "measuring the bound: %d concurrent copies of %s in all on the datanodes' disk (direct I/O, then reading through the page cache), TCP on loopback\n",
			streams, bytesize.Format(bytes))
		if res.Bound, err = MeasureBound(ctx, cfg.BoundDir, streams, bytes, reads); err != nil {
			return err
		}
		fmt.Fprintf(out, "bound: disk copy %.0f MB/s (%d streams; direct I/O %.0f MB/s, reading through the page cache %.0f MB/s; writing the sources alone %.0f MB/s), loopback TCP %.0f MB/s -> %.0f MB/s\n",
			res.Bound.CopyMBps, res.Bound.Streams, res.Bound.DirectCopyMBps, res.Bound.CachedReadMBps, res.Bound.WriteMBps, res.Bound.LoopbackMBps, res.Bound.MBps())
		return nil
	}
	fmt.Fprintf(out, "measuring the bound: %d concurrent rebuilds of %s in all on the datanodes' disk (direct I/O, then reading through the page cache), each reading %d files for the one it writes (%s read), TCP on loopback\n",
		streams, bytesize.Format(bytes), reads, bytesize.Format(bytes*int64(reads)))
	if res.Bound, err = MeasureBound(ctx, cfg.BoundDir, streams, bytes, reads); err != nil {
		return err
	}
	fmt.Fprintf(out, "bound: disk rebuild %.0f MB/s written (%d reads + 1 write per byte, %d streams; direct I/O %.0f MB/s, reading through the page cache %.0f MB/s; writing the sources alone %.0f MB/s), loopback TCP %.0f MB/s / %d = %.0f MB/s -> %.0f MB/s\n",
		res.Bound.CopyMBps, reads, res.Bound.Streams, res.Bound.DirectCopyMBps, res.Bound.CachedReadMBps, res.Bound.WriteMBps, res.Bound.LoopbackMBps, reads,
		res.Bound.LoopbackMBps/float64(reads), res.Bound.MBps())
	return nil
}

// redundancyPhrase says how the data is stored, for the writing line.
func redundancyPhrase(cfg Config) string {
	if cfg.erasureCoded() {
		return "erasure coded " + cfg.EC.String()
	}
	return "replication THREE"
}

func printResult(out io.Writer, r Result) {
	if !r.EC.IsZero() {
		printRebuildResult(out, r)
		return
	}
	fmt.Fprintf(out, "containers re-replicated: %d\n", r.Containers)
	fmt.Fprintf(out, "bytes copied: %s\n", bytesize.Format(r.Bytes))
	fmt.Fprintf(out, "total time: %.1f s (detection %.1f s, copying %.1f s)\n", r.Total.Seconds(), r.Detect.Seconds(), r.Copy.Seconds())
	fmt.Fprintf(out, "throughput: mean %.2f GB/s, peak %.2f GB/s\n", r.MeanGBps, r.PeakGBps)
	if b := r.Bound.MBps(); b > 0 {
		fmt.Fprintf(out, "bound: %.2f GB/s; the copy phase's mean is %.0f%% of it\n", b/1e3, 100*r.MeanGBps*1e3/b)
	}
	for _, side := range []struct {
		dir string
		m   map[string]int64
	}{{"from", r.PerSource}, {"to", r.PerTarget}} {
		ids := make([]string, 0, len(side.m))
		for id := range side.m {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			rate := 0.0
			if r.Copy > 0 {
				rate = float64(side.m[id]) / 1e9 / r.Copy.Seconds()
			}
			fmt.Fprintf(out, "  %s %s: %s (%.2f GB/s)\n", side.dir, id, bytesize.Format(side.m[id]), rate)
		}
	}
	fmt.Fprintf(out, "CPU: %.2f s per GB copied (the whole process: meta, all datanodes, the sampler)\n", r.CPUSecondsPerGB)
	if r.SourceCPUSecondsPerGB > 0 || r.TargetCPUSecondsPerGB > 0 {
		fmt.Fprintf(out, "CPU by side (profile labels): sources' pushes %.2f s per GB, targets' imports %.2f s per GB, the rest %.1f s\n",
			r.SourceCPUSecondsPerGB, r.TargetCPUSecondsPerGB, r.CPU.Other)
		ids := make([]string, 0, len(r.CPU.Push))
		for id := range r.CPU.Push {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if b := r.PerSource[id]; b > 0 {
				fmt.Fprintf(out, "  source %s: %.2f CPU s for %s (%.2f s per GB)\n", id, r.CPU.Push[id], bytesize.Format(b), r.CPU.Push[id]/(float64(b)/1e9))
			}
		}
	}
}

// printRebuildResult is printResult for an erasure coded run.
func printRebuildResult(out io.Writer, r Result) {
	d := r.EC.Data
	fmt.Fprintf(out, "containers rebuilt: %d (%s: the lost datanode's index of each)\n", r.Containers, r.EC)
	fmt.Fprintf(out, "bytes rebuilt: %s (replicas of the lost indexes); the sources sent %s (%.2f per byte rebuilt; a rebuild needs d = %d)\n",
		bytesize.Format(r.Bytes), bytesize.Format(r.SourceBytes), float64(r.SourceBytes)/float64(max(r.Bytes, 1)), d)
	fmt.Fprintf(out, "total time: %.1f s (detection %.1f s, rebuilding %.1f s)\n", r.Total.Seconds(), r.Detect.Seconds(), r.Copy.Seconds())
	fmt.Fprintf(out, "throughput: mean %.2f GB/s rebuilt, peak %.2f GB/s\n", r.MeanGBps, r.PeakGBps)
	if b := r.Bound.MBps(); b > 0 {
		fmt.Fprintf(out, "bound: %.2f GB/s rebuilt (%d reads + 1 write per byte on the disk, loopback / %d); the rebuild phase's mean is %.0f%% of it\n",
			b/1e3, r.Bound.reads(), r.Bound.reads(), 100*r.MeanGBps*1e3/b)
	}
	for _, side := range []struct {
		dir string
		m   map[string]int64
	}{{"read from", r.PerSource}, {"rebuilt on", r.PerTarget}} {
		for _, id := range slices.Sorted(maps.Keys(side.m)) {
			rate := 0.0
			if r.Copy > 0 {
				rate = float64(side.m[id]) / 1e9 / r.Copy.Seconds()
			}
			fmt.Fprintf(out, "  %s %s: %s (%.2f GB/s)\n", side.dir, id, bytesize.Format(side.m[id]), rate)
		}
	}
	fmt.Fprintf(out, "CPU: %.2f s per GB rebuilt (the whole process: meta, all datanodes, the sampler)\n", r.CPUSecondsPerGB)
	if r.TargetCPUSecondsPerGB > 0 {
		fmt.Fprintf(out, "CPU by side (profile labels): targets' rebuilds %.2f s per GB (reading the sources, decoding, writing, committing), the rest %.1f s (sources' reads, meta, the sampler)\n",
			r.TargetCPUSecondsPerGB, r.CPU.Other)
	}
	if c := r.Codec; c.EncodeGBps > 0 {
		fmt.Fprintf(out, "codec %s on one core: encode %.2f GB/s, decode (one data cell lost) %.2f GB/s (data bytes of full stripes of %s cells)\n",
			r.EC, c.EncodeGBps, c.DecodeGBps, bytesize.Format(int64(r.EC.CellSize)))
	}
}

// copyWindow watches a meter's activity and remembers when the first byte
// was sent and when the last byte was sent or written or the last import
// committed.
type copyWindow struct {
	mu          sync.Mutex
	first, last time.Time
	done        chan struct{}
	stopped     chan struct{}
}

func watchCopies(mt meter, every time.Duration) *copyWindow {
	w := &copyWindow{done: make(chan struct{}), stopped: make(chan struct{})}
	read := mt.activity
	b0, i0 := read()
	go func() {
		defer close(w.stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			b, i := read()
			if b == b0 && i == i0 {
				continue
			}
			now := time.Now()
			w.mu.Lock()
			if w.first.IsZero() && b > b0 {
				w.first = now
			}
			w.last = now
			w.mu.Unlock()
			b0, i0 = b, i
		}
	}()
	return w
}

// stop ends the watch (again is fine) and returns the window.
func (w *copyWindow) stop() (first, last time.Time) {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first, w.last
}

// verifyKeys reads every key back and checks it is what was written,
// printing a verification line.
func verifyKeys(ctx context.Context, cl *client.Client, keyNames []string, payload []byte, keySize int64, out io.Writer) error {
	fmt.Fprintln(out, "reading every key back")
	var readBytes int64
	for _, k := range keyNames {
		r, err := cl.OpenKey(ctx, "rerepl", "data", k)
		if err != nil {
			return err
		}
		got, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil {
			return fmt.Errorf("bench: read back %s: %w", k, err)
		}
		if at := keyput.FirstDiff(got, payload, keySize); at >= 0 {
			fmt.Fprintf(out, "verification: FAILED: key %s (%d bytes read, %d written) differs first at byte %d\n", k, len(got), keySize, at)
			return fmt.Errorf("bench: %s read back differs at byte %d", k, at)
		}
		readBytes += int64(len(got))
	}
	fmt.Fprintf(out, "verification: %d keys, %s read back, all identical to what was written\n", len(keyNames), bytesize.Format(readBytes))
	return nil
}

// boundShape is the bound's concurrency and size for a run: the bytes the
// lost datanode holds (its share of three copies, or, erasure coded, of
// the (d+p)/d stored; the sizes of held when known), as many streams as
// copies can run at once (each survivor's streams, no more than the
// containers to copy: len(held) when known; a rebuild is one per
// container too), and the bytes read per byte written (1, or d).
func boundShape(cfg Config, datanodes int, held map[uint64]lostContainer) (streams int, bytes int64, reads int) {
	datanodes = max(datanodes, MinDatanodes(cfg.EC))
	bytes, reads = cfg.Size*3/int64(datanodes), 1
	if cfg.erasureCoded() {
		bytes = cfg.Size * int64(cfg.EC.Members()) / int64(cfg.EC.Data*datanodes)
		reads = cfg.EC.Data
	}
	streams = max(cfg.Streams, 1) * (datanodes - 1)
	switch {
	case len(held) > 0:
		bytes = 0
		for _, l := range held {
			bytes += l.size
		}
		streams = min(streams, len(held))
	case cfg.Gen && cfg.ContainerSize > 0:
		streams = min(streams, int(max((bytes+cfg.ContainerSize-1)/cfg.ContainerSize, 1)))
	}
	return streams, bytes, reads
}

// loseVictim waits until the cluster is quiet (every copy on a healthy
// node, meta's replication work idle, no copy under way) and returns what
// the victim holds, read just before it goes.
func loseVictim(ctx context.Context, cfg Config, c *minicluster.Cluster, cl *client.Client, out io.Writer, res *Result) (string, map[uint64]lostContainer, error) {
	if cfg.DropCaches {
		if err := dropCaches(); err != nil {
			fmt.Fprintf(out, "could not drop the page cache (%v): sources may read from memory\n", err)
		} else {
			fmt.Fprintln(out, "page cache dropped")
		}
	}
	if err := waitQuiet(ctx, c, cl); err != nil {
		return "", nil, err
	}
	victimID := c.Datanode(cfg.Victim).ID()
	lost, err := containersOn(ctx, cl, victimID)
	if err != nil {
		return "", nil, err
	}
	res.Containers = len(lost)
	var lostBytes int64
	for _, l := range lost {
		lostBytes += l.size
	}
	what := "copy"
	if cfg.erasureCoded() {
		what = "rebuild (its index of each)"
	}
	fmt.Fprintf(out, "stopping datanode %s and deleting its data: %d containers, %s to %s\n", victimID, len(lost), bytesize.Format(lostBytes), what)
	return victimID, lost, nil
}

// sampling is what sampleCopy counts from: the meter's bytes moved, in all
// and per source, when the loss began, and the copy window watching since.
type sampling struct {
	base    int64
	basePer map[string]int64
	win     *copyWindow
}

// startSampling reads the meter's baseline and starts the copy window.
func startSampling(cfg Config, mt meter) sampling {
	// A rebuild's meter lists the targets' import directories: watched
	// less often than the copies' counters.
	every := 10 * time.Millisecond
	if cfg.erasureCoded() {
		every = 50 * time.Millisecond
	}
	base, basePer := mt.moved(), mt.perSource()
	return sampling{base: base, basePer: basePer, win: watchCopies(mt, every)}
}

// sampleCopy samples until every lost container has its good copies
// (three, or every index): the meter's bytes moved since sm's baseline for
// the rate, meta's replica map for what is left and the bytes per target,
// the meter's bytes per source. The copy window it returns is timed finer
// than the samples: from the first byte any source sent to the last import
// (or rebuild) any target committed.
func sampleCopy(ctx context.Context, cfg Config, c *minicluster.Cluster, cl *client.Client, mt meter, sm sampling, lost map[uint64]lostContainer,
	victimID string, start time.Time, res *Result) (*copyWindow, error) {
	base, basePer, win := sm.base, sm.basePer, sm.win
	prev, prevT := base, start
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	verb, unit := "copied", "containers"
	if cfg.erasureCoded() {
		verb = "rebuilt"
	}
	for {
		select {
		case <-ctx.Done():
			win.stop()
			return nil, ctx.Err()
		case <-tick.C:
		}
		// The rate is over the time that really passed (asking meta what
		// is left may take longer than an interval on a busy machine).
		now := time.Now()
		total := mt.moved()
		rate := float64(total-prev) / 1e9 / now.Sub(prevT).Seconds()
		res.Samples = append(res.Samples, rate)
		res.PeakGBps = max(res.PeakGBps, rate)
		prev, prevT = total, now
		_, left, perTarget, err := restored(ctx, cl, lost, victimID)
		if err != nil {
			win.stop()
			return nil, err
		}
		fmt.Fprintf(cfg.Progress, "rereplicate: %6.1fs  %s %s, %.2f GB/s, %d %s left\n",
			now.Sub(start).Seconds(), bytesize.Format(total-base), verb, rate, left, unit)
		if left == 0 {
			res.PerTarget = perTarget
			break
		}
	}
	total, per := mt.moved(), mt.perSource()
	var counted int64
	for _, b := range res.PerTarget {
		counted += b
	}
	res.PerSource = map[string]int64{}
	var sent int64
	for id, b := range per {
		if d := b - basePer[id]; d > 0 {
			res.PerSource[id] = d
			sent += d
		}
	}
	if cfg.erasureCoded() {
		// The bytes rebuilt are the new replicas meta lists; the meter saw
		// them written.
		res.Bytes, res.SourceBytes = counted, sent
		if counted > total-base {
			win.stop()
			return nil, fmt.Errorf("bench: meta shows %s of rebuilt replicas but the targets wrote %s: its replica map changed under the benchmark, the run is void (%s)",
				bytesize.Format(counted), bytesize.Format(total-base), describeNewHolders(ctx, cl, lost))
		}
		return win, nil
	}
	res.Bytes = total - base
	if counted > res.Bytes {
		win.stop()
		return nil, fmt.Errorf("bench: meta shows %s of new copies but the sources sent %s: its replica map changed under the benchmark, the run is void (%s)",
			bytesize.Format(counted), bytesize.Format(res.Bytes), describeNewHolders(ctx, cl, lost))
	}
	return win, nil
}
