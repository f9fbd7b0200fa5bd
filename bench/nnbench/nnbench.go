package nnbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Ops are the operations of `strato bench meta`, in Hadoop's
// NNThroughputBenchmark's order.
var Ops = []string{"create", "mkdirs", "open", "delete", "fileStatus", "rename", "list", "blockReport", "replication", "clean"}

// Options are NNThroughputBenchmark's options. Zero values take
// Hadoop's defaults (EnsureDefaults).
type Options struct {
	Op          string // one of Ops, or "all"
	Threads     int    // default 3 (blockReport: -datanodes)
	Files       int    // -files, default 10
	FilesPerDir int    // default 4
	Dirs        int    // -dirs, default 10
	DirsPerDir  int    // default 2
	Close       bool   // create: complete each file after creating it
	UseExisting bool   // open, delete, fileStatus, rename: files exist already
	// Offset: open, delete, fileStatus, rename and list use the files of
	// the name sequence from this one on (-useExisting: a namespace of
	// many files serves ops that remove theirs, each its own range).
	Offset      int64
	KeepResults bool // do not delete the op's base directory afterwards

	Datanodes            int // blockReport, replication: default 10
	Reports              int // blockReport: default 30
	BlocksPerReport      int // blockReport: default 100
	BlocksPerFile        int // blockReport: default 10
	NodesToDecommission  int // replication: default 1
	NodeReplicationLimit int // replication: default 100
	TotalBlocks          int // replication: default 100
	Replication          int // default 3

	// Out receives the report; Progress, if set, periodic progress lines.
	Out      io.Writer
	Progress io.Writer
}

// EnsureDefaults fills unset fields with NNThroughputBenchmark's defaults.
func (o *Options) EnsureDefaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&o.Threads, 3)
	def(&o.Files, 10)
	def(&o.FilesPerDir, 4)
	def(&o.Dirs, 10)
	def(&o.DirsPerDir, 2)
	def(&o.Datanodes, 10)
	def(&o.Reports, 30)
	def(&o.BlocksPerReport, 100)
	def(&o.BlocksPerFile, 10)
	def(&o.NodesToDecommission, 1)
	def(&o.NodeReplicationLimit, 100)
	def(&o.TotalBlocks, 100)
	def(&o.Replication, 3)
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// Validate checks the options.
func (o *Options) Validate() error {
	if o.Op != "all" && !slices.Contains(Ops, o.Op) {
		return fmt.Errorf("bench: unknown -op %q (want all or one of %s)", o.Op, strings.Join(Ops, ", "))
	}
	for _, v := range []struct {
		name string
		v    int
	}{{"threads", o.Threads}, {"files", o.Files}, {"filesPerDir", o.FilesPerDir}, {"dirs", o.Dirs}, {"dirsPerDir", o.DirsPerDir},
		{"datanodes", o.Datanodes}, {"reports", o.Reports}, {"blocksPerReport", o.BlocksPerReport}, {"blocksPerFile", o.BlocksPerFile},
		{"nodeReplicationLimit", o.NodeReplicationLimit}, {"totalBlocks", o.TotalBlocks}} {
		if v.v < 1 {
			return fmt.Errorf("bench: -%s must be at least 1, not %d", v.name, v.v)
		}
	}
	if o.Replication != 1 && o.Replication != 3 {
		return fmt.Errorf("bench: -replication must be 1 or 3, not %d", o.Replication)
	}
	if o.Offset < 0 || (o.Offset > 0 && !o.UseExisting) {
		return fmt.Errorf("bench: -offset %d: must be 0, or positive with -useExisting", o.Offset)
	}
	if o.FilesPerDir < 2 || o.DirsPerDir < 2 {
		return fmt.Errorf("bench: -filesPerDir and -dirsPerDir must be at least 2")
	}
	if o.NodesToDecommission >= o.Datanodes {
		return fmt.Errorf("bench: -nodesToDecommission %d leaves no datanode in service (of %d)", o.NodesToDecommission, o.Datanodes)
	}
	return nil
}

// Target is the metadata service under test: in the benchmark's
// process (standalone: direct calls, no RPC) or over gRPC (remote). Paths
// are FSO paths inside the benchmark's bucket, such as
// /nnThroughputBenchmark/create/ThroughputBenchDir0/ThroughputBench0.
type Target interface {
	// Create creates an empty file (parents as needed, overwriting) and
	// returns what Complete needs to commit it.
	// Create creates path; willComplete tells that Complete follows, so the
	// create may be deferred to it (a file left open must exist at once).
	Create(ctx context.Context, path string, willComplete bool) (CreateHandle, error)
	// Complete commits a file created by Create.
	Complete(ctx context.Context, h CreateHandle) error
	Mkdirs(ctx context.Context, path string) error
	// Open looks up a file's block locations (HDFS getBlockLocations).
	Open(ctx context.Context, path string) error
	FileStatus(ctx context.Context, path string) error
	Delete(ctx context.Context, path string, recursive bool) error
	Rename(ctx context.Context, src, dst string) error
	Exists(ctx context.Context, path string) (bool, error)
	// List lists one page of directory dir after the entry named after
	// ("": from the first): how many entries, the last one's name, and
	// whether more follow.
	List(ctx context.Context, dir, after string) (n int, last string, more bool, err error)

	// Cluster side: simulated datanodes.
	RegisterDatanode(ctx context.Context, dn SimDatanode) error
	// CreateFileWithBlocks creates and commits a file of n blocks and
	// returns, per block, the datanodes (by index) holding it and its
	// container.
	CreateFileWithBlocks(ctx context.Context, path string, n, replication int) ([]SimBlock, error)
	// ContainerReport sends a full container report for dn, listing the
	// containers as closed replicas or as open ones.
	ContainerReport(ctx context.Context, dn SimDatanode, containers []uint64, closed bool) error
	// Decommission and ReplicationWork exist only in standalone mode (as
	// in Hadoop, the replication benchmark needs the server in process).
	Decommission(ctx context.Context, dn SimDatanode) error
	ReplicationWork(ctx context.Context, limit int) (scheduled int, err error)
	// CloseContainers marks every container closed (replication input).
	CloseContainers(ctx context.Context) error
}

// CreateHandle is what a target needs to complete a created file.
type CreateHandle struct {
	Path  string
	ID    uint64
	Token []byte // a deferred create's (ID 0)
}

// SimDatanode is a simulated datanode: an index and an identity.
type SimDatanode struct {
	Index int
	ID    string
	Addr  string
}

// SimBlock is an allocated block: its container and the indices of the
// simulated datanodes chosen to hold it.
type SimBlock struct {
	Container uint64
	Nodes     []string
}

// ErrReplicationRemote: the replication benchmark needs meta in process.
var ErrReplicationRemote = errors.New("bench: the replication benchmark runs only in standalone mode (meta in this process)")

// Stats is the result of one op's run.
type Stats struct {
	Op         string
	Inputs     []string // "name = value" lines, as Hadoop prints them
	Ops        int64
	Elapsed    time.Duration
	Cumulative time.Duration // sum of the timed calls
	Extra      []string      // lines after the stats (replication)
}

// OpsPerSec is operations per second of elapsed time.
func (s Stats) OpsPerSec() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

// AverageMillis is the mean time of one timed call in milliseconds.
func (s Stats) AverageMillis() float64 {
	if s.Ops == 0 {
		return 0
	}
	return float64(s.Cumulative.Microseconds()) / 1000 / float64(s.Ops)
}

// Print writes the report in NNThroughputBenchmark's shape.
func (s Stats) Print(w io.Writer) {
	fmt.Fprintf(w, "--- %s inputs ---\n", s.Op)
	for _, l := range s.Inputs {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "--- %s stats ---\n", s.Op)
	fmt.Fprintf(w, "# operations: %d\n", s.Ops)
	fmt.Fprintf(w, "Elapsed Time: %d\n", s.Elapsed.Milliseconds())
	fmt.Fprintf(w, "Ops per sec: %.1f\n", s.OpsPerSec())
	fmt.Fprintf(w, "Average Time: %.3f\n", s.AverageMillis())
	for _, l := range s.Extra {
		fmt.Fprintln(w, l)
	}
}

const metaBaseDir = "/nnThroughputBenchmark"

// splitOps divides n operations over t threads as NNThroughputBenchmark
// does: each thread gets the same number (±1); with fewer operations than
// threads the extra threads get none.
func splitOps(n, t int) []int {
	out := make([]int, t)
	scheduled := 0
	i := 0
	for ; scheduled < n; i++ {
		out[i] = (n - scheduled) / (t - i)
		if out[i] == 0 {
			out[i] = 1
		}
		scheduled += out[i]
	}
	return out
}

// Run runs the benchmark op(s) against target and prints each op's
// report to o.Out as it finishes. It returns the stats of every op run.
func Run(ctx context.Context, o Options, target Target, standalone bool) ([]Stats, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ops := []string{o.Op}
	if o.Op == "all" {
		// Hadoop's ops: list is strato's own (no NNThroughputBenchmark
		// counterpart), run by name only.
		ops = slices.DeleteFunc(slices.Clone(Ops), func(op string) bool { return op == "list" })
	}
	var all []Stats
	for _, op := range ops {
		if op == "replication" && !standalone {
			if o.Op == "all" {
				fmt.Fprintln(o.Out, "(replication skipped: it needs meta in this process, as in Hadoop)")
				continue
			}
			return all, ErrReplicationRemote
		}
		r := &metaRun{o: o, t: target, op: op}
		st, err := r.run(ctx)
		if err != nil {
			return all, fmt.Errorf("bench meta %s: %w", op, err)
		}
		st.Print(o.Out)
		fmt.Fprintln(o.Out)
		all = append(all, st)
	}
	return all, nil
}

type metaRun struct {
	o  Options
	t  Target
	op string
}

func (r *metaRun) base() string { return metaBaseDir + "/" + r.op }

// inputs are an op's per-thread inputs, and how many there are in all.
type inputs struct {
	lists []iter.Seq[string]
	total int
}

// sliceInputs are inputs held in memory.
func sliceInputs(in [][]string) inputs {
	out := inputs{}
	for _, l := range in {
		out.lists, out.total = append(out.lists, slices.Values(l)), out.total+len(l)
	}
	return out
}

// names are the per-thread inputs of a file op: thread i gets the next
// split[i] names of the generator's sequence, made as the thread asks for
// them (a run of 100M files holds none of them in memory).
func names(base string, perDir int, split []int) inputs {
	return namesFrom(base, perDir, 0, split)
}

// namesFrom is names starting at the sequence's name number start. Each
// thread's generator is moved to its first name here, before the timed
// run, as Hadoop's benchmark makes every name before it starts its clock:
// moved inside the run, the threads that start far into the sequence spent
// the first part of it skipping (mkdirs: 18% fewer ops/s).
func namesFrom(base string, perDir int, start int64, split []int) inputs {
	const prefix = "ThroughputBench"
	g := newNameGenerator(base, perDir)
	g.skip(start, prefix)
	out := inputs{}
	for _, n := range split {
		first := *g // a copy, at the thread's first name
		out.lists = append(out.lists, func(yield func(string) bool) {
			g := first
			for range n {
				if !yield(g.next(prefix)) {
					return
				}
			}
		})
		g.skip(int64(n), prefix)
		out.total += n
	}
	return out
}

func (r *metaRun) run(ctx context.Context) (Stats, error) {
	o := r.o
	st := Stats{Op: r.op}
	var err error
	switch r.op {
	case "create":
		st, err = r.create(ctx, r.base(), o.Files, o.Close)
	case "mkdirs":
		in := names(r.base(), o.DirsPerDir, splitOps(o.Dirs, o.Threads))
		st, err = r.timed(ctx, in, func(ctx context.Context, p string) error { return r.t.Mkdirs(ctx, p) })
		st.Inputs = []string{fmt.Sprintf("nrDirs = %d", o.Dirs), fmt.Sprintf("nrThreads = %d", o.Threads), fmt.Sprintf("nrDirsPerDir = %d", o.DirsPerDir)}
	case "open", "delete", "fileStatus", "rename":
		in, perr := r.existingFiles(ctx)
		if perr != nil {
			return st, perr
		}
		var f func(ctx context.Context, p string) error
		switch r.op {
		case "open":
			f = r.t.Open
		case "fileStatus":
			f = r.t.FileStatus
		case "delete":
			f = func(ctx context.Context, p string) error { return r.t.Delete(ctx, p, false) }
		case "rename":
			f = func(ctx context.Context, p string) error { return r.t.Rename(ctx, p, p+".r") }
		}
		st, err = r.timed(ctx, in, f)
		st.Inputs = r.fileInputs()
	case "list":
		in, perr := r.existingFiles(ctx)
		if perr != nil {
			return st, perr
		}
		st, err = r.list(ctx, in)
		st.Inputs = r.fileInputs()
	case "blockReport":
		st, err = r.blockReport(ctx, o.Datanodes, o.Reports, o.BlocksPerReport, o.BlocksPerFile)
	case "replication":
		st, err = r.replication(ctx)
	case "clean":
		start := time.Now()
		err = r.t.Delete(ctx, metaBaseDir, true)
		if isNotFound(err) {
			err = nil
		}
		st = Stats{Ops: 1, Elapsed: time.Since(start), Cumulative: time.Since(start), Inputs: []string{"Remove directory " + metaBaseDir}}
		return withOp(st, r.op), err
	}
	if err != nil {
		return st, err
	}
	if !o.KeepResults && r.op != "blockReport" && r.op != "replication" {
		if err := r.t.Delete(ctx, r.base(), true); err != nil && !isNotFound(err) {
			return st, fmt.Errorf("cleaning up %s: %w", r.base(), err)
		}
	}
	return withOp(st, r.op), nil
}

func withOp(st Stats, op string) Stats {
	st.Op = op
	return st
}

func (r *metaRun) fileInputs() []string {
	return []string{fmt.Sprintf("nrFiles = %d", r.o.Files), fmt.Sprintf("nrThreads = %d", r.o.Threads), fmt.Sprintf("nrFilesPerDir = %d", r.o.FilesPerDir)}
}

// create times Create only (as Hadoop times create() only); with close each
// file is completed right after, untimed.
func (r *metaRun) create(ctx context.Context, base string, files int, closeFiles bool) (Stats, error) {
	in := names(base, r.o.FilesPerDir, splitOps(files, r.o.Threads))
	st, err := r.run2(ctx, in, func(ctx context.Context, p string) (time.Duration, error) {
		start := time.Now()
		h, err := r.t.Create(ctx, p, closeFiles)
		d := time.Since(start)
		if err != nil {
			return d, err
		}
		if closeFiles {
			if err := r.t.Complete(ctx, h); err != nil {
				return d, err
			}
		}
		return d, nil
	})
	st.Inputs = r.fileInputs()
	st.Inputs[0] = fmt.Sprintf("nrFiles = %d", files)
	return st, err
}

// list lists, page by page, every directory the op's files are in, the
// directories dealt out to the threads (one directory, when -filesPerDir
// is at least -files, is one thread's); an op is an entry listed, so the
// rate is entries/s.
func (r *metaRun) list(ctx context.Context, in inputs) (Stats, error) {
	var all []string
	for _, l := range in.lists {
		for p := range l {
			if d := path.Dir(p); len(all) == 0 || all[len(all)-1] != d {
				all = append(all, d)
			}
		}
	}
	dirs := make([][]string, min(r.o.Threads, len(all)))
	for i, d := range all {
		dirs[i%len(dirs)] = append(dirs[i%len(dirs)], d)
	}
	var total atomic.Int64
	st, err := r.run2(ctx, sliceInputs(dirs), func(ctx context.Context, dir string) (time.Duration, error) {
		start := time.Now()
		for after, more := "", true; more; {
			n, last, m, err := r.t.List(ctx, dir, after)
			if err != nil {
				return time.Since(start), err
			}
			total.Add(int64(n))
			after, more = last, m && n > 0
		}
		return time.Since(start), nil
	})
	st.Ops = total.Load()
	return st, err
}

// existingFiles prepares the files of open/delete/fileStatus/rename: unless
// -useExisting, a create run (untimed in this op's report) makes them under
// the create op's base, which is then renamed to this op's base.
func (r *metaRun) existingFiles(ctx context.Context) (inputs, error) {
	createBase := metaBaseDir + "/create"
	if !r.o.UseExisting {
		if _, err := r.create(ctx, createBase, r.o.Files, true); err != nil {
			return inputs{}, fmt.Errorf("creating %d input files: %w", r.o.Files, err)
		}
		r.progress("created %d files", r.o.Files)
	}
	in := namesFrom(r.base(), r.o.FilesPerDir, r.o.Offset, splitOps(r.o.Files, r.o.Threads))
	have, err := r.t.Exists(ctx, r.base())
	if err != nil {
		return inputs{}, err
	}
	if !have {
		// The create op's files, or, with -useExisting, those an earlier
		// op of this kind took (one namespace serves open, fileStatus,
		// rename and delete in turn).
		from := []string{createBase}
		if r.o.UseExisting {
			for _, op := range []string{"open", "fileStatus", "rename", "delete", "list"} {
				if op != r.op {
					from = append(from, metaBaseDir+"/"+op)
				}
			}
		}
		found := false
		for _, dir := range from {
			ok, err := r.t.Exists(ctx, dir)
			if err != nil {
				return inputs{}, err
			}
			if ok {
				if err := r.t.Rename(ctx, dir, r.base()); err != nil {
					return inputs{}, err
				}
				found = true
				break
			}
		}
		if !found {
			return inputs{}, fmt.Errorf("%s does not exist", r.base())
		}
	}
	return in, nil
}

func (r *metaRun) timed(ctx context.Context, in inputs, f func(context.Context, string) error) (Stats, error) {
	return r.run2(ctx, in, func(ctx context.Context, p string) (time.Duration, error) {
		start := time.Now()
		err := f(ctx, p)
		return time.Since(start), err
	})
}

func (r *metaRun) progress(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "bench meta %s: "+format+"\n", append([]any{r.op}, args...)...)
	}
}

// run2 runs one goroutine per input list, timing the whole phase and
// summing the per-call durations f reports. The first error stops all.
func (r *metaRun) run2(ctx context.Context, in inputs, f func(context.Context, string) (time.Duration, error)) (Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		done       atomic.Int64
		cumulative atomic.Int64
		firstErr   error
		errOnce    sync.Once
		wg         sync.WaitGroup
	)
	stop := r.startProgress(&done, in.total)
	start := time.Now()
	for _, list := range in.lists {
		wg.Add(1)
		go func(list iter.Seq[string]) {
			defer wg.Done()
			for p := range list {
				if ctx.Err() != nil {
					return
				}
				d, err := f(ctx, p)
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("%s: %w", p, err); cancel() })
					return
				}
				cumulative.Add(int64(d))
				done.Add(1)
			}
		}(list)
	}
	wg.Wait()
	elapsed := time.Since(start)
	stop()
	return Stats{Ops: done.Load(), Elapsed: elapsed, Cumulative: time.Duration(cumulative.Load())}, firstErr
}

// startProgress prints a line every few seconds while a phase runs.
func (r *metaRun) startProgress(done *atomic.Int64, total int) (stop func()) {
	if r.o.Progress == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				n := done.Load()
				r.progress("%d/%d ops (%.0f%%), %.0f ops/s", n, total, 100*float64(n)/float64(max(total, 1)), float64(n)/time.Since(start).Seconds())
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}
