// Package clustersim simulates thousands of datanodes against a real meta
// (Ozone's freon simulate-datanode, HDFS's NNThroughputBenchmark
// blockReport): each simulated datanode registers, heartbeats every
// interval with incremental container reports (and a full one every few
// heartbeats), and carries out the close commands meta sends it. Its
// containers are real: the simulation creates them through meta's block
// allocation (one file per container, sized to fill it), so meta's
// pipelines, container closing and replication manager all run as they
// would. What is measured is meta's side: heartbeat latency, the time to
// register and to build the containers, and meta's memory.
package clustersim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Options configure a simulation.
type Options struct {
	// Meta is the gRPC address of the meta server, which must run without
	// authentication. Required (the command starts an in-process one).
	Meta string
	// Datanodes is the number of simulated datanodes. Default: 100.
	Datanodes int
	// Containers is how many containers are created (each with three
	// replicas). Default: 10 per datanode.
	Containers int
	// ContainerSize is the size hint that fills one container: meta's
	// container size. Default: 5 GiB.
	ContainerSize int64
	// HeartbeatInterval is every datanode's. Default: 3s.
	HeartbeatInterval time.Duration
	// FullReportEvery: every this many heartbeats a datanode sends a full
	// container report. Default: 20 (a minute at 3 s).
	FullReportEvery int
	// Duration is how long heartbeats are measured once the containers
	// exist. Default: 30s.
	Duration time.Duration
	// Writers create the containers in parallel. Default: 16.
	Writers int
	// Conns is how many gRPC connections to meta the datanodes share,
	// datanode i using connection i mod Conns: a real datanode has its
	// own, and one connection for thousands puts all their heartbeats
	// behind one reader and one writer at each end. Default: 64.
	Conns int
	// Restart, when set, is called after the measured heartbeats to stop
	// and start meta again on its data: every datanode registers again
	// with its full report (as on a NotFound heartbeat), and the time until
	// meta leaves safe mode is measured (Result.SafeModeExit).
	Restart func() error
	// Kill, with Stats set, is how many datanodes of one rack stop at once
	// after the measured heartbeats (before the restart): the time until meta finds
	// them DEAD and until it has planned a copy of every container they
	// held is measured (Result.KillDead, KillPlanned). Default: none.
	Kill int
	// Stats, when set, reads the in-process meta's figures (MetaStats).
	Stats func() MetaStats
	// Measuring, when set, is called as the measured heartbeats begin
	// (true) and end (false): a profile of that window alone.
	Measuring func(begin bool)
	// Log receives progress lines. Default: nowhere.
	Log io.Writer
}

// MetaStats are the in-process meta's figures the simulation reads.
type MetaStats struct {
	// Dead counts the datanodes meta holds DEAD.
	Dead int
	// Scheduled counts the copies its replication passes commanded (since
	// it became leader), Passes the passes; PassTook is how long the last
	// one took.
	Scheduled, Passes uint64
	PassTook          time.Duration
	// Closing counts the containers meta holds CLOSING.
	Closing int
	// FullReports counts the full reports meta handled, Repeated those
	// it did not read (they said nothing new: decision 0101).
	FullReports, Repeated uint64
	// CPU is the CPU time meta's process has used, PeakRSS its peak
	// resident memory, GCs its Go collections: the simulation's process,
	// with an in-process meta.
	CPU     time.Duration
	PeakRSS int64
	GCs     uint32
}

func (o *Options) ensureDefaults() {
	if o.Datanodes == 0 {
		o.Datanodes = 100
	}
	if o.Containers == 0 {
		o.Containers = 10 * o.Datanodes
	}
	if o.ContainerSize == 0 {
		o.ContainerSize = 5 << 30
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = 3 * time.Second
	}
	if o.FullReportEvery == 0 {
		o.FullReportEvery = 20
	}
	if o.Duration == 0 {
		o.Duration = 30 * time.Second
	}
	if o.Writers == 0 {
		o.Writers = 16
	}
	if o.Conns <= 0 {
		o.Conns = 64
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Result is what a simulation measured.
type Result struct {
	Datanodes, Containers int
	// Replicas counts the replicas the datanodes reported at the end, and
	// Closed those of them CLOSED (meta closed full containers and the
	// datanodes carried the commands out).
	Replicas, Closed int
	// Register is the time every datanode took to register (in parallel),
	// Create the time to build the containers (while heartbeating).
	Register, Create time.Duration
	// Admin is what the operator's paged lists took, with the heartbeats
	// going on (adminCalls).
	Admin []AdminCall
	// Settle is the time from the last allocation until meta held every
	// container CLOSED (with Options.Stats).
	Settle time.Duration
	// Heartbeats measured over Duration, and their latency; the full
	// reports among them apart.
	Heartbeats, FullReports       int
	P50, P99, Max                 time.Duration
	FullP50, FullP99              time.Duration
	HeartbeatErrors, CreateErrors int64
	// SafeModeExit is the time from meta's restart (Options.Restart) until
	// it left safe mode, every datanode having registered again.
	SafeModeExit time.Duration
	// CPU is the CPU time of this process (meta's and the simulation's,
	// with an in-process meta) over the measured heartbeats; MaxRSS its
	// peak resident memory over the whole run.
	CPU    time.Duration
	MaxRSS int64
	// GCs counts the garbage collections of this process over the
	// measured heartbeats, GCPause their stop-the-world pauses added up.
	GCs     uint32
	GCPause time.Duration
	// Passes and PassTook: with Options.Stats, the replication passes
	// during the measured heartbeats and how long the last one took.
	Passes   uint64
	PassTook time.Duration
	// MetaCPU, MetaGCs: with Options.Stats, the CPU time and collections
	// of meta's process over the measured heartbeats; MetaMaxRSS its
	// peak resident memory over the whole run.
	MetaCPU    time.Duration
	MetaGCs    uint32
	MetaMaxRSS int64
	// FullRead and FullRepeated: with Options.Stats, the full reports of
	// the measured heartbeats that meta read, and that it did not read
	// (they said nothing new).
	FullRead, FullRepeated uint64
	// Options.Kill: the datanodes stopped (Killed, fewer than Kill if
	// their rack has fewer) and the containers they held (Orphaned),
	// the time from their stop until meta held them all DEAD (KillDead)
	// and until it had commanded a copy of each (KillPlanned, to 100 ms:
	// meta copies the replicas of STALE datanodes already, so this may
	// come first), and how long the last pass took (KillPassTook).
	Killed, Orphaned                    int
	KillDead, KillPlanned, KillPassTook time.Duration
}

// Run runs a simulation.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.ensureDefaults()
	if o.Meta == "" {
		return nil, errors.New("clustersim: no meta address")
	}
	var (
		conn *grpc.ClientConn // the first: the namespace and the operator's calls
		err  error
	)
	s := &sim{o: o}
	for range o.Conns {
		c, err := grpc.NewClient(o.Meta, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		defer func() { _ = c.Close() }()
		if conn == nil {
			conn = c
		}
		s.dns = append(s.dns, stratov1.NewDatanodeServiceClient(c))
	}
	s.ns = stratov1.NewNamespaceServiceClient(conn)
	res := &Result{Datanodes: o.Datanodes, Containers: o.Containers}

	start := time.Now()
	if err := s.register(ctx); err != nil {
		return nil, err
	}
	res.Register = time.Since(start)
	fmt.Fprintf(o.Log, "clustersim: %d datanodes registered in %v\n", o.Datanodes, res.Register.Round(time.Millisecond))

	hctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, d := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.heartbeats(hctx, d)
		}()
	}
	start = time.Now()
	if err := s.createContainers(ctx); err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	res.Create = time.Since(start)
	fmt.Fprintf(o.Log, "clustersim: %d containers created in %v (%d allocations failed)\n", o.Containers,
		res.Create.Round(time.Millisecond), s.createErrors.Load())

	if err := s.settle(ctx, res); err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	if err := s.measure(ctx, res); err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	// The measured heartbeats, logged now: what follows (a kill, a
	// restart) may fail or be stopped.
	s.mu.Lock()
	measured := append(slices.Clone(s.lat), s.full...)
	fullN, fullP99 := len(s.full), pct(slices.Clone(s.full), 99)
	s.mu.Unlock()
	fmt.Fprintf(o.Log, "clustersim: measured %d heartbeats: p50 %v, p99 %v, max %v; %d full reports, p99 %v; cpu %v; %d collections, %v of pauses\n",
		len(measured), pct(measured, 50).Round(time.Microsecond), pct(measured, 99).Round(time.Microsecond), pct(measured, 100).Round(time.Microsecond),
		fullN, fullP99.Round(time.Microsecond), res.CPU.Round(time.Millisecond), res.GCs, res.GCPause.Round(time.Microsecond))
	if res.Admin, err = adminCalls(ctx, stratov1.NewAdminServiceClient(conn), s.nodes[0].id, uint64(o.Containers/2)); err != nil {
		stop()
		wg.Wait()
		return nil, err
	}
	for _, a := range res.Admin {
		fmt.Fprintf(o.Log, "clustersim: %s: %v (median of %d), %d records\n", a.Call, a.Took.Round(time.Microsecond), adminRounds, a.Records)
	}
	if o.Kill > 0 && o.Stats != nil {
		if err := s.kill(ctx, res); err != nil {
			stop()
			wg.Wait()
			return nil, err
		}
		fmt.Fprintf(o.Log, "clustersim: %d datanodes stopped: DEAD after %v, copies of their %d containers planned after %v\n",
			res.Killed, res.KillDead.Round(time.Millisecond), res.Orphaned, res.KillPlanned.Round(time.Millisecond))
	}
	if o.Restart != nil {
		if res.SafeModeExit, err = s.restart(ctx, conn); err != nil {
			stop()
			wg.Wait()
			return nil, err
		}
		fmt.Fprintf(o.Log, "clustersim: meta restarted; out of safe mode after %v\n", res.SafeModeExit.Round(time.Millisecond))
	}
	stop()
	wg.Wait()

	s.mu.Lock()
	lat, full := s.lat, s.full
	s.mu.Unlock()
	res.Heartbeats, res.FullReports = len(lat)+len(full), len(full)
	all := append(slices.Clone(lat), full...)
	res.P50, res.P99, res.Max = pct(all, 50), pct(all, 99), pct(all, 100)
	res.FullP50, res.FullP99 = pct(full, 50), pct(full, 99)
	res.HeartbeatErrors, res.CreateErrors = s.hbErrors.Load(), s.createErrors.Load()
	res.MaxRSS = maxRSS()
	if o.Stats != nil {
		res.MetaMaxRSS = o.Stats().PeakRSS
	}
	for _, d := range s.nodes {
		d.mu.Lock()
		res.Replicas += len(d.replicas)
		for _, r := range d.replicas {
			if r.state == stratov1.ContainerState_CONTAINER_CLOSED {
				res.Closed++
			}
		}
		d.mu.Unlock()
	}
	return res, ctx.Err()
}

// AdminCall is the latency of one of the operator's calls: the median of
// adminRounds, and the records of its reply.
type AdminCall struct {
	Call    string
	Took    time.Duration
	Records int
}

const adminRounds = 5

// adminCalls times what `strato admin` and the console ask meta for, at
// the simulation's scale: the first page of datanodes and of containers, a
// page from the middle of the containers (after container mid), the
// containers of one datanode (a filtered listing), the pipelines and the
// cluster summary.
func adminCalls(ctx context.Context, admin stratov1.AdminServiceClient, node string, mid uint64) ([]AdminCall, error) {
	calls := []struct {
		name string
		f    func() (int, error)
	}{
		{"datanodes, first page", func() (int, error) {
			r, err := admin.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
			return len(r.GetDatanodes()), err
		}},
		{"containers, first page", func() (int, error) {
			r, err := admin.ListContainers(ctx, &stratov1.ListContainersRequest{})
			return len(r.GetContainers()), err
		}},
		{"containers, a page from the middle", func() (int, error) {
			r, err := admin.ListContainers(ctx, &stratov1.ListContainersRequest{StartAfter: mid})
			return len(r.GetContainers()), err
		}},
		{"containers of one datanode", func() (int, error) {
			r, err := admin.ListContainers(ctx, &stratov1.ListContainersRequest{DatanodeId: node})
			return len(r.GetContainers()), err
		}},
		{"pipelines", func() (int, error) {
			r, err := admin.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
			return len(r.GetPipelines()), err
		}},
		{"cluster summary", func() (int, error) {
			_, err := admin.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
			return 1, err
		}},
	}
	out := make([]AdminCall, 0, len(calls))
	for _, c := range calls {
		took := make([]time.Duration, 0, adminRounds)
		n := 0
		for range adminRounds {
			start := time.Now()
			k, err := c.f()
			if err != nil {
				return nil, fmt.Errorf("clustersim: %s: %w", c.name, err)
			}
			took, n = append(took, time.Since(start)), k
		}
		out = append(out, AdminCall{Call: c.name, Took: pct(took, 50), Records: n})
	}
	return out, nil
}

// settle waits (with Options.Stats) until meta holds no container CLOSING:
// the last containers filled were closed by the datanodes and meta
// recorded them CLOSED, so that the heartbeats are measured in a steady
// cluster. It records how long that took.
func (s *sim) settle(ctx context.Context, res *Result) error {
	if s.o.Stats == nil {
		return nil
	}
	start := time.Now()
	n := s.o.Stats().Closing
	for ; n > 0 && time.Since(start) < settleLimit; n = s.o.Stats().Closing {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	res.Settle = time.Since(start)
	if n > 0 {
		// A container closed before its first write is on no datanode
		// and stays CLOSING.
		fmt.Fprintf(s.o.Log, "clustersim: %d containers still CLOSING in meta %v after the last allocation\n", n, res.Settle.Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(s.o.Log, "clustersim: every container CLOSED in meta %v after the last allocation\n", res.Settle.Round(time.Millisecond))
	return nil
}

// settleLimit bounds settle's wait.
const settleLimit = 5 * time.Minute

// measure lets the heartbeats run for o.Duration, recording their latency
// and the process's CPU time (and meta's passes, with o.Meta).
func (s *sim) measure(ctx context.Context, res *Result) error {
	var before MetaStats
	if s.o.Stats != nil {
		before = s.o.Stats()
	}
	cpu0, err := cpuTime()
	if err != nil {
		return err
	}
	var gc0, gc1 runtime.MemStats
	runtime.ReadMemStats(&gc0)
	if s.o.Measuring != nil {
		s.o.Measuring(true)
	}
	s.measuring.Store(true)
	select {
	case <-time.After(s.o.Duration):
	case <-ctx.Done():
	}
	s.measuring.Store(false)
	if s.o.Measuring != nil {
		s.o.Measuring(false)
	}
	runtime.ReadMemStats(&gc1)
	cpu1, err := cpuTime()
	if err != nil {
		return err
	}
	res.CPU = cpu1 - cpu0
	res.GCs = gc1.NumGC - gc0.NumGC
	res.GCPause = time.Duration(gc1.PauseTotalNs - gc0.PauseTotalNs)
	if s.o.Stats != nil {
		after := s.o.Stats()
		res.Passes, res.PassTook = after.Passes-before.Passes, after.PassTook
		res.FullRepeated = after.Repeated - before.Repeated
		res.FullRead = after.FullReports - before.FullReports - res.FullRepeated
		res.MetaCPU, res.MetaGCs = after.CPU-before.CPU, after.GCs-before.GCs
	}
	return ctx.Err()
}

// SelfUsage is this process's CPU time so far, peak resident memory and
// Go collections: an in-process meta's MetaStats.CPU, PeakRSS and GCs.
func SelfUsage() (cpu time.Duration, peakRSS int64, gcs uint32) {
	cpu, _ = cpuTime()
	gc := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(gc)
	return cpu, maxRSS(), uint32(gc[0].Value.Uint64())
}

// cpuTime is the CPU time this process has used.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("clustersim: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// maxRSS is this process's peak resident memory, in bytes.
func maxRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// kill stops the heartbeats of o.Kill datanodes of one rack at once (a
// rack lost: every container keeps a replica on another rack) and waits
// until meta holds them DEAD and has commanded a copy of every container
// they held, and records both times and the last pass's.
func (s *sim) kill(ctx context.Context, res *Result) error {
	killed := 0
	orphans := map[uint64]bool{}
	for _, d := range s.nodes {
		if killed == s.o.Kill || d.details.GetRack() != s.nodes[0].details.GetRack() {
			continue
		}
		killed++
		d.mu.Lock()
		d.dead = true
		for id := range d.replicas {
			orphans[id] = true
		}
		d.mu.Unlock()
	}
	res.Killed, res.Orphaned = killed, len(orphans)
	start := time.Now()
	sched0 := s.o.Stats().Scheduled
	var deadAt, plannedAt time.Time
	lastLog := start
	for {
		st := s.o.Stats()
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			fmt.Fprintf(s.o.Log, "clustersim: %d of %d stopped datanodes DEAD, %d of %d copies planned\n", st.Dead, killed, st.Scheduled-sched0, len(orphans))
		}
		if deadAt.IsZero() && st.Dead >= killed {
			deadAt = time.Now()
			res.KillDead = deadAt.Sub(start)
		}
		if plannedAt.IsZero() && st.Scheduled-sched0 >= uint64(len(orphans)) {
			plannedAt = time.Now()
			res.KillPlanned, res.KillPassTook = plannedAt.Sub(start), st.PassTook
		}
		if !deadAt.IsZero() && !plannedAt.IsZero() {
			return nil
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("clustersim: %d of %d copies planned 10 minutes after %d datanodes stopped", st.Scheduled-sched0, len(orphans), killed)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pct is the p-th percentile of ds (sorted here), 0 for none.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, len(ds)*p/100)]
}

type sim struct {
	o     Options
	dns   []stratov1.DatanodeServiceClient // Options.Conns
	ns    stratov1.NamespaceServiceClient
	nodes []*node
	byID  map[string]*node

	measuring, restarting  atomic.Bool
	mu                     sync.Mutex
	lat, full              []time.Duration
	hbErrors, createErrors atomic.Int64
}

func (s *sim) register(ctx context.Context) error {
	s.byID = map[string]*node{}
	for i := range s.o.Datanodes {
		d := &node{id: fmt.Sprintf("sim-%05d", i), dn: s.dns[i%len(s.dns)], replicas: map[uint64]simReplica{}, changed: map[uint64]bool{}}
		s.nodes = append(s.nodes, d)
		s.byID[d.id] = d
	}
	sem := make(chan struct{}, 64)
	errc := make(chan error, 1)
	var wg sync.WaitGroup
	for i, d := range s.nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			d.details = &stratov1.DatanodeDetails{Id: d.id, DataAddr: fmt.Sprintf("10.%d.%d.%d:9870", i>>16, (i>>8)&255, i&255),
				Hostname: d.id, Rack: fmt.Sprintf("/rack%d", i%25)}
			_, err := d.dn.Register(ctx, &stratov1.RegisterRequest{Details: d.details, Stats: s.stats(),
				Report: &stratov1.ContainerReport{Full: true}})
			if err != nil {
				select {
				case errc <- fmt.Errorf("clustersim: register %s: %w", d.id, err):
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

func (s *sim) stats() *stratov1.NodeStats {
	return &stratov1.NodeStats{Capacity: 100 << 40, Remaining: 80 << 40, Used: 20 << 40, Volumes: 12}
}

// heartbeats sends d's heartbeats until ctx ends, the first at a random
// point of the interval, and its first full report after a random number
// of them (datanodes start at different times: their full reports do not
// come in step).
func (s *sim) heartbeats(ctx context.Context, d *node) {
	t := time.NewTimer(rand.N(s.o.HeartbeatInterval))
	defer t.Stop()
	d.mu.Lock()
	d.beats = rand.N(s.o.FullReportEvery)
	d.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(s.o.HeartbeatInterval)
		req := &stratov1.HeartbeatRequest{DatanodeId: d.id, Stats: s.stats()}
		d.mu.Lock()
		if d.dead {
			d.mu.Unlock()
			return
		}
		d.beats++
		full := d.beats%s.o.FullReportEvery == 0
		switch {
		case full || len(d.changed) > 0:
			req.Report = d.report(full)
		}
		d.mu.Unlock()
		start := time.Now()
		resp, err := d.dn.Heartbeat(ctx, req)
		took := time.Since(start)
		if status.Code(err) == codes.NotFound || resp.GetReregister() {
			s.reregister(ctx, d) // meta restarted: it knows this datanode no more
			continue
		}
		if err != nil {
			if ctx.Err() == nil && !s.restarting.Load() {
				s.hbErrors.Add(1)
			}
			continue
		}
		if s.measuring.Load() {
			s.mu.Lock()
			if full {
				s.full = append(s.full, took)
			} else {
				s.lat = append(s.lat, took)
			}
			s.mu.Unlock()
		}
		s.carryOut(d, resp.GetCommands())
	}
}

// createContainers allocates one block filling a container for each of
// o.Containers files, and has each member of its pipeline report a
// replica of the container, as a datanode does on the first write.
func (s *sim) createContainers(ctx context.Context) error {
	if _, err := s.ns.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "sim"}); err != nil {
		return fmt.Errorf("clustersim: create volume: %w", err)
	}
	if _, err := s.ns.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "sim", Name: "containers"}); err != nil {
		return fmt.Errorf("clustersim: create bucket: %w", err)
	}
	seen := map[uint64]bool{}
	var seenMu sync.Mutex
	var next atomic.Int64
	var wg sync.WaitGroup
	lastLog := time.Now()
	for range s.o.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seenMu.Lock()
				done := len(seen) >= s.o.Containers
				if time.Since(lastLog) > 5*time.Second {
					fmt.Fprintf(s.o.Log, "clustersim: %d of %d containers\n", len(seen), s.o.Containers)
					lastLog = time.Now()
				}
				seenMu.Unlock()
				if done || ctx.Err() != nil {
					return
				}
				i := next.Add(1)
				resp, err := s.ns.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "sim", Bucket: "containers",
					Path: fmt.Sprintf("d%d/f%d", i/1000, i), Recursive: true, SizeHint: s.o.ContainerSize})
				if err != nil || len(resp.GetBlocks()) == 0 {
					s.createErrors.Add(1)
					if s.createErrors.Load() > int64(s.o.Containers) {
						return
					}
					continue
				}
				b := resp.GetBlocks()[0]
				cid := b.GetBlockId().GetContainerId()
				seenMu.Lock()
				seen[cid] = true
				seenMu.Unlock()
				for _, m := range b.GetPipeline().GetMembers() {
					if d := s.byID[m.GetId()]; d != nil {
						// Reported full: meta closes the container
						// at once, as it does one its writers filled.
						d.set(cid, simReplica{state: stratov1.ContainerState_CONTAINER_OPEN,
							used: s.o.ContainerSize, count: 1, bcs: uint64(i)})
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := len(seen); n < s.o.Containers {
		return fmt.Errorf("clustersim: %d of %d containers made (%d allocations failed)", n, s.o.Containers, s.createErrors.Load())
	}
	return ctx.Err()
}

// reregister registers d again with a full report of its replicas.
func (s *sim) reregister(ctx context.Context, d *node) {
	d.mu.Lock()
	rep := d.report(true)
	d.mu.Unlock()
	if _, err := d.dn.Register(ctx, &stratov1.RegisterRequest{Details: d.details, Stats: s.stats(), Report: rep}); err != nil && ctx.Err() == nil {
		s.hbErrors.Add(1)
	}
}

// restart restarts meta (Options.Restart) and waits until it leaves safe
// mode, the datanodes registering again as their heartbeats find it.
func (s *sim) restart(ctx context.Context, conn *grpc.ClientConn) (time.Duration, error) {
	s.restarting.Store(true)
	defer s.restarting.Store(false)
	start := time.Now()
	if err := s.o.Restart(); err != nil {
		return 0, fmt.Errorf("clustersim: restart meta: %w", err)
	}
	admin := stratov1.NewAdminServiceClient(conn)
	for {
		st, err := admin.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
		if err == nil && !st.GetInSafeMode() {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
