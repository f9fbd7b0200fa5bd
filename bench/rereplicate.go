package bench

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/strato-io/strato/bench/gen"
	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// RereplicateConfig configures RunRereplicate: lose a datanode of a loaded
// cluster and measure how fast its closed containers get three copies back.
type RereplicateConfig struct {
	// Size is the data written before the loss (replication THREE).
	Size int64
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
	// SkipBound skips measuring the hardware bound (dd and loopback TCP).
	SkipBound bool
	// BoundDir is where dd runs (the datanodes' disk).
	BoundDir string
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
}

// RereplicateResult is what RunRereplicate measured.
type RereplicateResult struct {
	Containers int   // containers the lost datanode held
	Bytes      int64 // bytes copied to restore them
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
	CPUSecondsPerGB                              float64
	SourceCPUSecondsPerGB, TargetCPUSecondsPerGB float64
	CPU                                          ReplicationCPU
}

// Bound is the hardware's limit for re-replication in this run.
type Bound struct {
	// DiskReadMBps and DiskWriteMBps are the disk's sequential direct-I/O
	// rates, each measured alone; LoopbackMBps a TCP stream's.
	DiskReadMBps, DiskWriteMBps, LoopbackMBps float64
	// DiskCopyMBps is the rate of a sequential direct-I/O read and write
	// run at once on the same disk (the slower of the two): what a copy
	// whose source and target share the disk can reach.
	DiskCopyMBps float64
}

// MBps is the smallest of the disk's read and write rates and the
// loopback rate: the bound when sources and targets have disks of their
// own.
func (b Bound) MBps() float64 {
	return min(b.DiskReadMBps, b.DiskWriteMBps, b.LoopbackMBps)
}

// SharedMBps is the bound when every datanode shares one disk, as in a
// one-machine cluster: the disk's copy rate, or the loopback rate.
func (b Bound) SharedMBps() float64 {
	if b.DiskCopyMBps == 0 {
		return b.MBps()
	}
	return min(b.DiskCopyMBps, b.LoopbackMBps)
}

// RunRereplicate writes cfg.Size into the cluster, closes every container,
// stops datanode cfg.Victim and deletes its data, then samples meta until
// every container the victim held has three healthy copies again, and reads
// every key back.
func RunRereplicate(ctx context.Context, cfg RereplicateConfig, c *minicluster.Cluster, out io.Writer) (RereplicateResult, error) {
	if cfg.KeySize == 0 {
		cfg.KeySize = 64 << 20
	}
	if cfg.Threads == 0 {
		cfg.Threads = 8
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	var res RereplicateResult
	cl, err := c.Client()
	if err != nil {
		return res, err
	}
	defer func() { _ = cl.Close() }()

	// 1. Data.
	if _, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "rerepl"}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return res, err
	}
	if _, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "rerepl", Name: "data",
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE}); err != nil && !errors.Is(client.Classify(err), client.ErrExists) {
		return res, err
	}
	var keyNames []string
	keySize := cfg.KeySize
	// The bound is measured while nothing else runs: with the datanodes
	// stopped for the offline generation, or after the writes. dd keeps
	// the disk so busy that a running datanode's heartbeats can be late
	// enough for meta to declare it dead.
	measure := func() error {
		if cfg.SkipBound {
			return nil
		}
		fmt.Fprintln(out, "measuring the bound: dd (direct I/O) on the datanodes' disk, TCP on loopback")
		var err error
		if res.Bound, err = measureBound(ctx, cfg.BoundDir); err != nil {
			return err
		}
		fmt.Fprintf(out, "bound: disk read %.0f MB/s, disk write %.0f MB/s, loopback TCP %.0f MB/s -> %.0f MB/s\n",
			res.Bound.DiskReadMBps, res.Bound.DiskWriteMBps, res.Bound.LoopbackMBps, res.Bound.MBps())
		fmt.Fprintf(out, "shared-disk bound: disk read and write at once %.0f MB/s each -> %.0f MB/s (all datanodes share this disk)\n",
			res.Bound.DiskCopyMBps, res.Bound.SharedMBps())
		return nil
	}
	if cfg.Gen {
		keySize = cfg.BlockSize
		if keyNames, err = generate(ctx, cfg, c, out, measure); err != nil {
			return res, err
		}
	} else {
		keys := int((cfg.Size + cfg.KeySize - 1) / cfg.KeySize)
		fmt.Fprintf(out, "writing %d keys of %s (%s, replication THREE)\n", keys, bytesize.Format(cfg.KeySize), bytesize.Format(int64(keys)*cfg.KeySize))
		kp := keyput.Config{Volume: "rerepl", Bucket: "data", Prefix: "k", Keys: keys, Size: cfg.KeySize, Threads: cfg.Threads,
			Progress: cfg.Progress, ProgressInterval: 5 * time.Second}
		if _, err := keyput.Run(ctx, kp, cl, io.Discard); err != nil {
			return res, err
		}
		for i := range keys {
			keyNames = append(keyNames, fmt.Sprintf("k/%d", i))
		}
	}
	payload := keyput.Payload(keySize)

	// 2. Close every container and wait until they are CLOSED.
	fmt.Fprintln(out, "closing every container")
	if err := closeAll(ctx, cl); err != nil {
		return res, err
	}

	// 3. The bound (written data: now).
	if !cfg.Gen {
		if err := measure(); err != nil {
			return res, err
		}
	}

	// 4. Lose the victim, once meta sees every copy on a healthy node, its
	// replication work is idle, and no copy is under way; what the victim
	// holds is read just before it goes.
	if cfg.DropCaches {
		if err := dropCaches(); err != nil {
			fmt.Fprintf(out, "could not drop the page cache (%v): sources may read from memory\n", err)
		} else {
			fmt.Fprintln(out, "page cache dropped")
		}
	}
	if err := waitQuiet(ctx, c, cl); err != nil {
		return res, err
	}
	victimID := c.Datanode(cfg.Victim).ID()
	lost, err := containersOn(ctx, cl, victimID)
	if err != nil {
		return res, err
	}
	res.Containers = len(lost)
	var lostBytes int64
	for _, l := range lost {
		lostBytes += l.size
	}
	fmt.Fprintf(out, "stopping datanode %s and deleting its data: %d containers, %s to copy\n", victimID, len(lost), bytesize.Format(lostBytes))
	cpu0 := cpuSeconds()
	prof := startLabelProfile()
	defer func() { _, _ = prof.stop("") }()
	if err := c.StopDatanode(cfg.Victim); err != nil {
		return res, err
	}
	if err := os.RemoveAll(c.DatanodeDir(cfg.Victim)); err != nil {
		return res, err
	}
	start := time.Now()

	// 5. Sample until every lost container has three good copies: bytes
	// pushed (the datanodes' replication counters) for the rate, meta's
	// replica map for what is left.
	pushed := func() (total int64, per map[string]int64) {
		per = map[string]int64{}
		for i := range c.DatanodeAddrs() {
			if dn := c.Datanode(i); dn != nil {
				b := dn.ReplicationMetrics().BytesOut
				per[dn.ID()] += b
				total += b
			}
		}
		return total, per
	}
	base, basePer := pushed()
	// The copy's window is timed finer than the samples: from the first
	// byte any source sent to the last import any target committed.
	win := watchCopies(c, 10*time.Millisecond)
	defer win.stop()
	prev, prevT := base, time.Now()
	tick := time.NewTicker(cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
		// The rate is over the time that really passed (asking meta what
		// is left may take longer than an interval on a busy machine).
		now := time.Now()
		total, _ := pushed()
		rate := float64(total-prev) / 1e9 / now.Sub(prevT).Seconds()
		res.Samples = append(res.Samples, rate)
		res.PeakGBps = max(res.PeakGBps, rate)
		prev, prevT = total, now
		_, left, perTarget, err := restored(ctx, cl, lost, victimID)
		if err != nil {
			return res, err
		}
		fmt.Fprintf(cfg.Progress, "rereplicate: %6.1fs  %s copied, %.2f GB/s, %d containers left\n",
			now.Sub(start).Seconds(), bytesize.Format(total-base), rate, left)
		if left == 0 {
			res.PerTarget = perTarget
			break
		}
	}
	total, per := pushed()
	res.Bytes = total - base
	var counted int64
	for _, b := range res.PerTarget {
		counted += b
	}
	if counted > res.Bytes {
		return res, fmt.Errorf("bench: meta shows %s of new copies but the sources sent %s: its replica map changed under the benchmark, the run is void (%s)",
			bytesize.Format(counted), bytesize.Format(res.Bytes), describeNewHolders(ctx, cl, lost))
	}
	res.PerSource = map[string]int64{}
	for id, b := range per {
		if d := b - basePer[id]; d > 0 {
			res.PerSource[id] = d
		}
	}
	cpu := cpuSeconds() - cpu0
	res.Total = time.Since(start)
	first, last := win.stop()
	if !first.IsZero() {
		res.Detect, res.Copy = first.Sub(start), last.Sub(first)
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

	// 6. Every key reads back, verified.
	if err := verifyKeys(ctx, cl, keyNames, payload, keySize, out); err != nil {
		return res, err
	}
	printRereplicate(out, res)
	if cfg.ChartPath != "" {
		if err := writeChart(cfg.ChartPath, res.Samples, cfg.Interval, res.Bound.MBps()/1e3, res.Bound.SharedMBps()/1e3); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "chart: %s\n", cfg.ChartPath)
	}
	return res, nil
}

func printRereplicate(out io.Writer, r RereplicateResult) {
	fmt.Fprintf(out, "containers re-replicated: %d\n", r.Containers)
	fmt.Fprintf(out, "bytes copied: %s\n", bytesize.Format(r.Bytes))
	fmt.Fprintf(out, "total time: %.1f s (detection %.1f s, copying %.1f s)\n", r.Total.Seconds(), r.Detect.Seconds(), r.Copy.Seconds())
	fmt.Fprintf(out, "throughput: mean %.2f GB/s, peak %.2f GB/s\n", r.MeanGBps, r.PeakGBps)
	if b := r.Bound.MBps(); b > 0 {
		fmt.Fprintf(out, "bound: %.2f GB/s; mean is %.0f%% of it\n", b/1e3, 100*r.MeanGBps*1e3/b)
		sb := r.Bound.SharedMBps()
		fmt.Fprintf(out, "shared-disk bound: %.2f GB/s; mean is %.0f%% of it\n", sb/1e3, 100*r.MeanGBps*1e3/sb)
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

// copyWindow watches the datanodes' replication counters and remembers
// when the first byte was sent and when the last byte was sent or the
// last import committed.
type copyWindow struct {
	mu          sync.Mutex
	first, last time.Time
	done        chan struct{}
	stopped     chan struct{}
}

func watchCopies(c *minicluster.Cluster, every time.Duration) *copyWindow {
	w := &copyWindow{done: make(chan struct{}), stopped: make(chan struct{})}
	read := func() (bytes, imports int64) {
		for i := range c.DatanodeAddrs() {
			if dn := c.Datanode(i); dn != nil {
				m := dn.ReplicationMetrics()
				bytes += m.BytesOut
				imports += m.ImportsCompleted + m.ImportsFailed
			}
		}
		return bytes, imports
	}
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

// generate stops every datanode, runs gen.Run into their volumes, calls
// whileStopped, starts them again and waits until meta knows every
// replica. It returns the keys.
func generate(ctx context.Context, cfg RereplicateConfig, c *minicluster.Cluster, out io.Writer, whileStopped func() error) ([]string, error) {
	addrs := c.DatanodeAddrs()
	var dns []gen.Datanode
	for i := range addrs {
		dns = append(dns, gen.Datanode{ID: c.Datanode(i).ID(), Dir: c.DatanodeDir(i), Addr: addrs[i]})
	}
	for i := range dns {
		if err := c.StopDatanode(i); err != nil {
			return nil, err
		}
	}
	res, err := gen.Run(ctx, gen.Config{Size: cfg.Size, ContainerSize: cfg.ContainerSize, BlockSize: cfg.BlockSize,
		Datanodes: dns, Volume: "rerepl", Bucket: "data", Progress: cfg.Progress}, c.Meta(), out)
	if err != nil {
		return nil, err
	}
	if err := whileStopped(); err != nil {
		return nil, err
	}
	// Meta saw every datanode die during the generation. Restarted, it
	// waits for their reports (safe mode, a new leader's settle period)
	// instead of copying, as they come back one by one, containers whose
	// other holders have not re-registered yet: those copies made fourth
	// replicas, then deletions, before the loss was even staged.
	for i := range c.MetaAddrs() {
		if err := c.StopMeta(i); err != nil {
			return nil, err
		}
	}
	for i := range c.MetaAddrs() {
		if err := c.StartMeta(i); err != nil {
			return nil, err
		}
	}
	for i := range dns {
		if err := c.StartDatanode(i); err != nil {
			return nil, err
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		return nil, err
	}
	// Every generated container reported by its three holders.
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	defer func() { _ = cl.Close() }()
	if err := waitReplicated(ctx, cl, time.Minute); err != nil {
		return nil, err
	}
	var keys []string
	after := ""
	for {
		resp, err := cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "rerepl", Bucket: "data", Prefix: "gen/", StartAfter: after})
		if err != nil {
			return nil, err
		}
		for _, k := range resp.Keys {
			keys = append(keys, k.Name)
		}
		if !resp.Truncated || len(resp.Keys) == 0 {
			break
		}
		after = resp.NextStartAfter
	}
	if len(keys) != res.Keys {
		return nil, fmt.Errorf("bench: %d generated keys listed, %d made", len(keys), res.Keys)
	}
	return keys, nil
}

// closeAll closes every open container and waits until all are CLOSED.
func closeAll(ctx context.Context, cl *client.Client) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		cs, err := listContainers(ctx, cl)
		if err != nil {
			return err
		}
		open := 0
		for _, c := range cs {
			switch c.State {
			case stratov1.ContainerState_CONTAINER_OPEN:
				open++
				if err := cl.CloseContainer(ctx, c.Id, "", "bench rereplicate"); err != nil {
					return err
				}
			case stratov1.ContainerState_CONTAINER_CLOSING:
				open++
			}
		}
		if open == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d containers still not closed", open)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func listContainers(ctx context.Context, cl *client.Client) ([]*stratov1.ContainerInfo, error) {
	var all []*stratov1.ContainerInfo
	var after uint64
	for {
		resp, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
			return cc.ListContainers(ctx, &stratov1.ListContainersRequest{StartAfter: after, Limit: 1000})
		})
		if err != nil {
			return nil, err
		}
		if len(resp.Containers) == 0 {
			return all, nil
		}
		all = append(all, resp.Containers...)
		after = resp.Containers[len(resp.Containers)-1].Id
	}
}

// lostContainer is a container the victim held: its size and the
// datanodes that held it.
type lostContainer struct {
	size    int64
	holders map[string]bool
}

// containersOn returns the non-empty containers a datanode holds.
func containersOn(ctx context.Context, cl *client.Client, dn string) (map[uint64]lostContainer, error) {
	cs, err := listContainers(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[uint64]lostContainer{}
	for _, c := range cs {
		reps, err := replicasOf(ctx, cl, c.Id)
		if err != nil {
			return nil, err
		}
		if r := reps[dn]; r != nil && r.UsedBytes > 0 {
			l := lostContainer{size: r.UsedBytes, holders: map[string]bool{}}
			for id := range reps {
				l.holders[id] = true
			}
			out[c.Id] = l
		}
	}
	return out, nil
}

func replicasOf(ctx context.Context, cl *client.Client, id uint64) (map[string]*stratov1.ContainerReplica, error) {
	resp, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
		return cc.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
	})
	if err != nil {
		return nil, err
	}
	return resp.Replicas, nil
}

// describeNewHolders names, for the first lost container with a holder it
// did not have before, its holders then and its replicas now.
func describeNewHolders(ctx context.Context, cl *client.Client, lost map[uint64]lostContainer) string {
	ids := slices.Sorted(maps.Keys(lost))
	for _, id := range ids {
		reps, err := replicasOf(ctx, cl, id)
		if err != nil {
			return err.Error()
		}
		for dn, r := range reps {
			if !lost[id].holders[dn] {
				return fmt.Sprintf("container %d: holders before the loss %v; now %s is one too (%v, bcsID %d, %d bytes)",
					id, slices.Sorted(maps.Keys(lost[id].holders)), dn, r.State, r.BcsId, r.UsedBytes)
			}
		}
	}
	return "no container shows a new holder now"
}

// waitMetaIdle waits until meta's replication work has, for two seconds
// (two of its ticks), found every container with its copies: nothing
// under-replicated, missing or in flight.
func waitMetaIdle(ctx context.Context, c *minicluster.Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var since time.Time
	for {
		m := c.Meta().Metrics()
		idle := m.Leader && m.Containers > 0 && m.UnderReplicated == 0 && m.Missing == 0 && m.ReplicationsInFlight == 0
		switch {
		case !idle:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= 2*time.Second:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: meta's replication work is not idle before the loss: %+v", m)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitNoCopies waits until no datanode pushes or imports a container.
func waitNoCopies(ctx context.Context, c *minicluster.Cluster, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var busy int64
		for i := range c.DatanodeAddrs() {
			if dn := c.Datanode(i); dn != nil {
				m := dn.ReplicationMetrics()
				busy += m.PushesInFlight + m.ImportsInFlight
			}
		}
		if busy == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d container copies still under way before the loss", busy)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitReplicated waits until every CLOSED container has three replicas on
// HEALTHY datanodes in meta's view: a datanode slowed down long enough to
// be declared dead (a busy disk during the bound's dd) loses its replicas
// in meta until it reports again, which must not count as copies later.
func waitReplicated(ctx context.Context, cl *client.Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		dns, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		if err != nil {
			return err
		}
		healthy := map[string]bool{}
		for _, d := range dns.Datanodes {
			healthy[d.GetDetails().GetId()] = d.Health == stratov1.NodeHealth_NODE_HEALTHY
		}
		cs, err := listContainers(ctx, cl)
		if err != nil {
			return err
		}
		short := 0
		for _, ci := range cs {
			if ci.State != stratov1.ContainerState_CONTAINER_CLOSED {
				continue
			}
			reps, err := replicasOf(ctx, cl, ci.Id)
			if err != nil {
				return err
			}
			n := 0
			for dn := range reps {
				if healthy[dn] {
					n++
				}
			}
			if n < 3 {
				short++
			}
		}
		if short == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %d closed containers without three replicas on healthy datanodes", short)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// restored sums the bytes of lost containers copied so far (CLOSED
// replicas on healthy datanodes that did not hold them before), counts the
// containers still short of three good copies, and splits the bytes by the
// datanode that received them.
func restored(ctx context.Context, cl *client.Client, lost map[uint64]lostContainer, victim string) (copied int64, left int, perTarget map[string]int64, err error) {
	perTarget = map[string]int64{}
	dns, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	if err != nil {
		return 0, 0, nil, err
	}
	healthy := map[string]bool{}
	for _, d := range dns.Datanodes {
		healthy[d.GetDetails().GetId()] = d.Health == stratov1.NodeHealth_NODE_HEALTHY
	}
	ids := make([]uint64, 0, len(lost))
	for id := range lost {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		reps, err := replicasOf(ctx, cl, id)
		if err != nil {
			return 0, 0, nil, err
		}
		good := 0
		for dn, r := range reps {
			if dn == victim || !healthy[dn] || r.State != stratov1.ContainerState_CONTAINER_CLOSED {
				continue
			}
			good++
			if !lost[id].holders[dn] {
				copied += lost[id].size
				perTarget[dn] += lost[id].size
			}
		}
		if good < 3 {
			left++
		}
	}
	return copied, left, perTarget, nil
}

// measureBound measures the disk's sequential direct-I/O read and write
// rates in dir and the TCP rate on loopback.
func measureBound(ctx context.Context, dir string) (Bound, error) {
	var b Bound
	if dir == "" {
		dir = os.TempDir()
	}
	w, err := measure.DD(ctx, dir, 512)
	if err != nil {
		return b, err
	}
	b.DiskWriteMBps = w.MBPerSec()
	// Read back a file written for the purpose (RunDD removes its own).
	f := filepath.Join(dir, "bound.read")
	if out, err := exec.CommandContext(ctx, "dd", "if=/dev/zero", "of="+f, "bs=4M", "count=512", "oflag=direct").CombinedOutput(); err != nil {
		return b, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	defer func() { _ = os.Remove(f) }()
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "dd", "if="+f, "of=/dev/null", "bs=4M", "iflag=direct").CombinedOutput(); err != nil {
		return b, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	b.DiskReadMBps = float64(512*4<<20) / 1e6 / time.Since(t0).Seconds()
	// A copy between two datanodes on this one disk reads and writes it at
	// once: dd does the same, and the slower of the two is the copy rate.
	g := filepath.Join(dir, "bound.write")
	defer func() { _ = os.Remove(g) }()
	_ = dropCaches() // the read must come from the disk
	var rd, wr float64
	var rerr, werr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rd, rerr = timedDD(ctx, "if="+f, "of=/dev/null", "bs=4M", "iflag=direct")
	}()
	go func() {
		defer wg.Done()
		wr, werr = timedDD(ctx, "if=/dev/zero", "of="+g, "bs=4M", "count=512", "oflag=direct")
	}()
	wg.Wait()
	if err := errors.Join(rerr, werr); err != nil {
		return b, err
	}
	b.DiskCopyMBps = min(rd, wr)
	if b.LoopbackMBps, err = loopbackMBps(2 << 30); err != nil {
		return b, err
	}
	return b, nil
}

// timedDD runs dd with args, which move 512 pieces of 4 MiB, and returns
// its rate in MB/s.
func timedDD(ctx context.Context, args ...string) (float64, error) {
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "dd", args...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	return float64(512*4<<20) / 1e6 / time.Since(t0).Seconds(), nil
}

// loopbackMBps sends n bytes over a TCP connection on 127.0.0.1.
func loopbackMBps(n int64) (float64, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := l.Accept()
		if err != nil {
			return
		}
		k, _ := io.Copy(io.Discard, c)
		got.Store(k)
		_ = c.Close()
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4<<20)
	t0 := time.Now()
	for sent := int64(0); sent < n; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
	}
	_ = c.Close()
	wg.Wait()
	if got.Load() < n {
		return 0, errors.New("bench: loopback transfer cut short")
	}
	return float64(n) / 1e6 / time.Since(t0).Seconds(), nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// writeChart draws GB/s per interval as a PNG line chart with the bound as
// a dashed line.
// A second dashed line (orange) marks the shared-disk bound when it is
// set and differs.
func writeChart(path string, samples []float64, interval time.Duration, boundGBps, sharedGBps float64) error {
	const w, h, margin = 800, 400, 40
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	bg, axis, line, bound := color.RGBA{255, 255, 255, 255}, color.RGBA{0, 0, 0, 255}, color.RGBA{30, 90, 200, 255}, color.RGBA{200, 60, 60, 255}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, bg)
		}
	}
	top := boundGBps
	for _, s := range samples {
		top = max(top, s)
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.1
	px := func(i int) int {
		if len(samples) <= 1 {
			return margin
		}
		return margin + i*(w-2*margin)/(len(samples)-1)
	}
	py := func(v float64) int { return h - margin - int(v/top*float64(h-2*margin)) }
	for x := margin; x < w-margin; x++ {
		img.Set(x, h-margin, axis)
	}
	for y := margin; y < h-margin; y++ {
		img.Set(margin, y, axis)
	}
	shared := color.RGBA{230, 140, 20, 255}
	dashed := func(v float64, c color.Color) {
		for x := margin; x < w-margin; x++ {
			if (x/6)%2 == 0 {
				img.Set(x, py(v), c)
			}
		}
	}
	if boundGBps > 0 {
		dashed(boundGBps, bound)
	}
	if sharedGBps > 0 && sharedGBps != boundGBps {
		dashed(sharedGBps, shared)
	}
	for i := 1; i < len(samples); i++ {
		drawLine(img, px(i-1), py(samples[i-1]), px(i), py(samples[i]), line)
	}
	text := func(x, y int, c color.Color, s string) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
		d.DrawString(s)
	}
	text(margin, margin-15, axis, "re-replication throughput (GB/s) over time")
	text(4, margin+4, axis, fmt.Sprintf("%.2f", top))
	text(4, h-margin+4, axis, "0")
	secs := interval.Seconds() * float64(max(len(samples)-1, 0))
	text(w-margin-60, h-margin+18, axis, fmt.Sprintf("%.0f s", secs))
	text(margin, h-margin+18, axis, "0 s")
	if boundGBps > 0 {
		text(w-margin-200, py(boundGBps)-4, bound, fmt.Sprintf("bound %.2f GB/s", boundGBps))
	}
	if sharedGBps > 0 && sharedGBps != boundGBps {
		text(w-margin-260, py(sharedGBps)-4, shared, fmt.Sprintf("shared-disk bound %.2f GB/s", sharedGBps))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func drawLine(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := 1, 1
	if x0 > x1 {
		sx = -1
	}
	if y0 > y1 {
		sy = -1
	}
	e := dx + dy
	for {
		for t := -1; t <= 1; t++ {
			img.Set(x0, y0+t, c)
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// dropCaches writes dirty pages back and empties the page cache (Linux,
// root).
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200)
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

// waitQuiet waits until meta sees every copy on a healthy node, its
// replication work is idle, and no copy is under way.
func waitQuiet(ctx context.Context, c *minicluster.Cluster, cl *client.Client) error {
	if err := waitReplicated(ctx, cl, 2*time.Minute); err != nil {
		return err
	}
	if err := waitMetaIdle(ctx, c, 2*time.Minute); err != nil {
		return err
	}
	return waitNoCopies(ctx, c, time.Minute)
}
