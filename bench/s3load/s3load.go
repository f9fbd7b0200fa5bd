package s3load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/s3"
)

// Operations. LIST lists every key under the prefix (ListObjectsV2),
// LISTVERSIONS every version and delete marker (ListObjectVersions).
const (
	OpPut          = "PUT"
	OpGet          = "GET"
	OpHead         = "HEAD"
	OpList         = "LIST"
	OpListVersions = "LISTVERSIONS"
	OpDelete       = "DELETE"
	OpMixed        = "MIXED"
)

// Config is one run.
type Config struct {
	// Endpoint, AccessKey, Secret and Region reach the S3 endpoint.
	// Endpoint, AccessKey and Secret are required; Region defaults to
	// us-east-1.
	Endpoint, AccessKey, Secret, Region string
	// Bucket holds the objects; created when missing. Default: "bench-s3".
	Bucket string
	// Prefix of the objects' keys. Default: "s3load-<unix time>/".
	Prefix string
	// Op is PUT, GET, HEAD, LIST, LISTVERSIONS, DELETE or MIXED.
	// Default: PUT.
	Op string
	// Size of each object. Default: 1 MiB.
	Size int64
	// Concurrency is the number of clients. Default: 16.
	Concurrency int
	// FillConcurrency is the number of clients uploading the objects
	// first (many small puts fill a bucket for a listing far faster than
	// the few clients that list it). Default: Concurrency.
	FillConcurrency int
	// Duration of the timed phase. Default: 30 s (when Count is 0).
	Duration time.Duration
	// Count, when not 0, ends the timed phase after that many operations
	// instead (DELETE: at most Objects).
	Count int
	// Objects is how many objects GET, HEAD, LIST, LISTVERSIONS, DELETE
	// and MIXED upload first. Default: 1 GiB of them, at least
	// Concurrency and at most 2,500 (DELETE with Count: Count).
	Objects int
	// Versions is how many times each of the Objects is put (a versioned
	// bucket keeps them all: Objects × Versions versions to list), by
	// Concurrency clients, the puts of one key spread over the upload.
	// Default: 1.
	Versions int
	// Keep leaves the objects in place at the end.
	Keep bool
	// Versioning turns versioning on in the bucket (PutBucketVersioning
	// Enabled, checked with GetBucketVersioning: an endpoint that does not
	// keep versions fails the run) before anything is put; the cleanup
	// then deletes every version. Default: the bucket as it is.
	Versioning bool
	// ServerPID, when not 0, is the server's process (on this machine),
	// whose CPU time and peak RSS Run reports.
	ServerPID int
	// Progress receives a line about each phase. Default: none.
	Progress io.Writer
}

// EnsureDefaults fills in the defaults.
func (c *Config) EnsureDefaults() {
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	if c.Bucket == "" {
		c.Bucket = "bench-s3"
	}
	if c.Prefix == "" {
		c.Prefix = fmt.Sprintf("s3load-%d/", time.Now().Unix())
	}
	c.Op = strings.ToUpper(c.Op)
	if c.Op == "" {
		c.Op = OpPut
	}
	if c.Size == 0 {
		c.Size = 1 << 20
	}
	if c.Concurrency == 0 {
		c.Concurrency = 16
	}
	if c.Duration == 0 && c.Count == 0 {
		c.Duration = 30 * time.Second
	}
	if c.Objects == 0 {
		switch {
		case c.Op == OpDelete && c.Count > 0:
			c.Objects = c.Count
		default:
			c.Objects = int(min(max(int64(1<<30)/max(c.Size, 1), int64(c.Concurrency)), 2500))
		}
	}
	if c.FillConcurrency == 0 {
		c.FillConcurrency = c.Concurrency
	}
	if c.Versions == 0 {
		c.Versions = 1
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch c.Op {
	case OpPut, OpGet, OpHead, OpList, OpListVersions, OpDelete, OpMixed:
	default:
		return fmt.Errorf("bench s3: unknown operation %q (PUT, GET, HEAD, LIST, LISTVERSIONS, DELETE, MIXED)", c.Op)
	}
	switch {
	case c.Size < 0 || c.Size > 5<<30:
		return fmt.Errorf("bench s3: object size %d must be in [0, 5 GiB]", c.Size)
	case c.Concurrency < 1 || c.FillConcurrency < 1:
		return errors.New("bench s3: concurrency must be at least 1")
	case c.Duration < 0 || c.Count < 0 || c.Objects < 1 || c.Versions < 1:
		return errors.New("bench s3: duration, count and objects must not be negative (objects and versions at least 1)")
	}
	return nil
}

// OpResult is what one kind of operation did in the timed phase.
type OpResult struct {
	Op      string
	Ops     int64
	Errors  int64
	Bytes   int64 // payload moved (PUT: sent, GET: received)
	Items   int64 // LIST: keys listed; LISTVERSIONS: versions and delete markers
	Elapsed time.Duration
	Latency measure.LatencySummary
	// FirstError is the first failure's message, if any.
	FirstError string
}

// OpsPerSec is the rate of successful operations.
func (r OpResult) OpsPerSec() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// MBPerSec is the payload rate in MB (10^6 bytes) per second.
func (r OpResult) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Result is a run's outcome.
type Result struct {
	Config  Config
	Ops     []OpResult // one per kind of operation run, in a fixed order
	Elapsed time.Duration
	// The server's CPU time (user+system) during the timed phase and its
	// peak RSS at the end (ServerPID set, Linux).
	ServerCPU     time.Duration
	ServerPeakRSS int64
}

// Bytes is the payload moved by every operation.
func (r Result) Bytes() int64 {
	var n int64
	for _, o := range r.Ops {
		n += o.Bytes
	}
	return n
}

// ServerCPUPerGB is the server's CPU seconds per GB (10^9 bytes) moved.
func (r Result) ServerCPUPerGB() float64 {
	if r.Bytes() == 0 {
		return 0
	}
	return r.ServerCPU.Seconds() / (float64(r.Bytes()) / 1e9)
}

// worker state: one per client, merged at the end.
type stats struct {
	hist       measure.Histogram
	ops, errs  int64
	bytes      int64
	items      int64
	firstError string
}

func (s *stats) fail(err error) {
	s.errs++
	if s.firstError == "" {
		s.firstError = err.Error()
	}
}

// Run runs the benchmark and prints its report to out.
func Run(ctx context.Context, cfg Config, out io.Writer) (Result, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	c, err := s3.NewClient(s3.ClientOptions{Endpoint: cfg.Endpoint, AccessKey: cfg.AccessKey, Secret: cfg.Secret, Region: cfg.Region})
	if err != nil {
		return Result{}, err
	}
	if err := c.CreateBucket(ctx, cfg.Bucket); err != nil {
		return Result{}, fmt.Errorf("bench s3: bucket %s: %w", cfg.Bucket, err)
	}
	if cfg.Versioning {
		if err := c.EnableVersioning(ctx, cfg.Bucket); err != nil {
			return Result{}, fmt.Errorf("bench s3: versioning bucket %s: %w", cfg.Bucket, err)
		}
	}
	r := &runner{cfg: cfg, c: c, payload: Payload(cfg.Size)}
	if cfg.Op != OpPut {
		if err := r.prepare(ctx); err != nil {
			return Result{}, err
		}
	}
	fmt.Fprintf(cfg.Progress, "bench s3: %s of %s objects, %d clients, %s\n", cfg.Op, bytesize.Format(cfg.Size), cfg.Concurrency, r.limit())
	res := r.run(ctx)
	if !cfg.Keep {
		fmt.Fprintf(cfg.Progress, "bench s3: deleting the objects under %s/%s\n", cfg.Bucket, cfg.Prefix)
		if err := r.cleanup(ctx); err != nil {
			fmt.Fprintf(cfg.Progress, "bench s3: cleanup: %v\n", err)
		}
	}
	Report(out, res)
	return res, ctx.Err()
}

type runner struct {
	cfg     Config
	c       *s3.Client
	payload []byte

	mu      sync.Mutex
	present []bool // MIXED, DELETE: which prepared objects exist
	busy    []bool // MIXED: objects an operation is working on
	next    atomic.Int64
	bufs    sync.Pool // of *[]byte, readBufSize: drain's
}

func (r *runner) limit() string {
	if r.cfg.Count > 0 {
		return strconv.Itoa(r.cfg.Count) + " operations"
	}
	return r.cfg.Duration.String()
}

// readBufSize is the buffer GET bodies are read into and dropped:
// io.Copy(io.Discard, body) reads 8 KiB at a time (io.Discard's own
// buffers), a system call per 8 KiB that the load generator spends the
// shared cores on, against whatever server it measures.
const readBufSize = 1 << 20

// readBuf returns a buffer of readBufSize for drain (return it with
// r.bufs.Put).
func (r *runner) readBuf() *[]byte {
	if b, ok := r.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufSize)
	return &b
}

// drain reads body to its end into buf, which it then returns to the pool,
// and counts the bytes.
func (r *runner) drain(body io.Reader, buf *[]byte) (int64, error) {
	defer r.bufs.Put(buf)
	var n int64
	for {
		k, err := body.Read(*buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func (r *runner) key(i int) string { return fmt.Sprintf("%sobj-%07d", r.cfg.Prefix, i) }

func (r *runner) put(ctx context.Context, key string) error {
	_, err := r.c.PutObject(ctx, r.cfg.Bucket, key, bytes.NewReader(r.payload), int64(len(r.payload)))
	return err
}

// prepare uploads the objects the operation works on, untimed: each
// Versions times, put i going to object i mod Objects.
func (r *runner) prepare(ctx context.Context) error {
	objects := r.cfg.Objects
	n := objects * r.cfg.Versions
	fmt.Fprintf(r.cfg.Progress, "bench s3: uploading %d objects of %s first (%d puts)\n", objects, bytesize.Format(r.cfg.Size), n)
	r.present = make([]bool, objects)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, r.cfg.FillConcurrency)
	for range min(r.cfg.FillConcurrency, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := r.put(ctx, r.key(i%objects)); err != nil {
					errs <- fmt.Errorf("bench s3: preparing %s: %w", r.key(i%objects), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	for i := range r.present {
		r.present[i] = true
	}
	r.busy = make([]bool, objects)
	return ctx.Err()
}

// mixed is warp's default mix, in percent.
var mixed = []struct {
	op     string
	weight int
}{{OpGet, 45}, {OpHead, 30}, {OpPut, 15}, {OpDelete, 10}}

func (r *runner) run(ctx context.Context) Result {
	ops := []string{r.cfg.Op}
	if r.cfg.Op == OpMixed {
		ops = []string{OpGet, OpHead, OpPut, OpDelete}
	}
	cpu0 := processCPU(r.cfg.ServerPID)
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if r.cfg.Count == 0 {
		dctx, cancel = context.WithTimeout(ctx, r.cfg.Duration)
	}
	defer cancel()
	all := make([]map[string]*stats, r.cfg.Concurrency)
	var issued atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range r.cfg.Concurrency {
		m := map[string]*stats{}
		for _, op := range ops {
			m[op] = &stats{}
		}
		all[w] = m
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for n := 0; dctx.Err() == nil; n++ {
				if r.cfg.Count > 0 && issued.Add(1) > int64(r.cfg.Count) {
					return
				}
				op := r.cfg.Op
				if op == OpMixed {
					x := rnd.IntN(100)
					for _, mo := range mixed {
						if x < mo.weight {
							op = mo.op
							break
						}
						x -= mo.weight
					}
				}
				// The duration stops new operations; one under way
				// finishes (cut off, a PUT could still land after the
				// cleanup's listing).
				if !r.one(ctx, op, w, n, rnd, m[op]) {
					return
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := Result{Config: r.cfg, Elapsed: elapsed}
	if r.cfg.ServerPID != 0 {
		res.ServerCPU = processCPU(r.cfg.ServerPID) - cpu0
		res.ServerPeakRSS = processPeakRSS(r.cfg.ServerPID)
	}
	for _, op := range ops {
		var merged stats
		for _, m := range all {
			s := m[op]
			merged.hist.Merge(&s.hist)
			merged.ops += s.ops
			merged.errs += s.errs
			merged.bytes += s.bytes
			merged.items += s.items
			if merged.firstError == "" {
				merged.firstError = s.firstError
			}
		}
		res.Ops = append(res.Ops, OpResult{Op: op, Ops: merged.ops, Errors: merged.errs, Bytes: merged.bytes, Items: merged.items,
			Elapsed: elapsed, Latency: merged.hist.Summary(), FirstError: merged.firstError})
	}
	return res
}

// pick returns a prepared object that exists (want) or not and no other
// operation is working on, or -1; the caller releases it with done.
func (r *runner) pick(rnd *rand.Rand, want bool) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.present)
	ok := func(i int) bool {
		if r.present[i] != want || r.busy[i] {
			return false
		}
		r.busy[i] = true
		return true
	}
	for tries := 0; tries < 8; tries++ {
		if i := rnd.IntN(n); ok(i) {
			return i
		}
	}
	for j, i := 0, rnd.IntN(n); j < n; j, i = j+1, (i+1)%n {
		if ok(i) {
			return i
		}
	}
	return -1
}

// done releases an object pick returned, now present or not.
func (r *runner) done(i int, present bool) {
	r.mu.Lock()
	r.present[i], r.busy[i] = present, false
	r.mu.Unlock()
}

// one runs one operation; false when the worker has nothing left to do.
func (r *runner) one(ctx context.Context, op string, w, n int, rnd *rand.Rand, s *stats) bool {
	var err error
	var moved, items int64
	t0 := time.Now()
	switch op {
	case OpPut:
		key := fmt.Sprintf("%sc%03d/o%08d", r.cfg.Prefix, w, n)
		i := -1
		if r.present != nil { // MIXED: recreate a deleted object, or overwrite one
			if i = r.pick(rnd, false); i < 0 {
				if i = r.pick(rnd, true); i < 0 {
					return true
				}
			}
			key = r.key(i)
		}
		t0 = time.Now()
		err = r.put(ctx, key)
		if err == nil {
			moved = r.cfg.Size
		}
		if i >= 0 {
			r.mu.Lock()
			r.present[i], r.busy[i] = r.present[i] || err == nil, false
			r.mu.Unlock()
		}
	case OpGet, OpHead:
		i := r.pick(rnd, true)
		if i < 0 {
			return true
		}
		defer r.done(i, true)
		t0 = time.Now()
		if op == OpHead {
			_, err = r.c.HeadObject(ctx, r.cfg.Bucket, r.key(i))
			break
		}
		var body io.ReadCloser
		if body, _, err = r.c.GetObject(ctx, r.cfg.Bucket, r.key(i)); err == nil {
			moved, err = r.drain(body, r.readBuf())
			err = errors.Join(err, body.Close())
			if err == nil && moved != r.cfg.Size {
				err = fmt.Errorf("GET %s: %d bytes, not %d", r.key(i), moved, r.cfg.Size)
			}
		}
	case OpDelete:
		var i int
		if r.cfg.Op == OpDelete { // each prepared object once
			if i = int(r.next.Add(1) - 1); i >= len(r.present) {
				return false
			}
		} else if i = r.pick(rnd, true); i < 0 {
			return true
		}
		t0 = time.Now()
		err = r.c.DeleteObject(ctx, r.cfg.Bucket, r.key(i))
		if r.cfg.Op == OpMixed {
			r.done(i, err != nil)
		}
	case OpList:
		err = r.eachKey(ctx, func(s3.ObjectInfo) { items++ })
	case OpListVersions:
		err = r.eachVersion(ctx, func(s3.ObjectInfo) { items++ })
	}
	d := time.Since(t0)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return true
	}
	s.hist.Record(d)
	s.ops++
	s.bytes += moved
	s.items += items
	return true
}

// eachKey calls f with every key under the prefix (ListObjectsV2, pages
// of 1,000).
func (r *runner) eachKey(ctx context.Context, f func(s3.ObjectInfo)) error {
	token := ""
	for {
		page, next, err := r.c.ListObjects(ctx, r.cfg.Bucket, r.cfg.Prefix, token, 1000)
		for _, o := range page {
			f(o)
		}
		if err != nil || next == "" {
			return err
		}
		token = next
	}
}

// eachVersion calls f with every version and delete marker under the
// prefix (ListObjectVersions, pages of 1,000).
func (r *runner) eachVersion(ctx context.Context, f func(s3.ObjectInfo)) error {
	var page s3.VersionPage
	for {
		var err error
		page, err = r.c.ListObjectVersions(ctx, r.cfg.Bucket, r.cfg.Prefix, page.NextKeyMarker, page.NextVersionMarker, 1000)
		for _, o := range append(page.Versions, page.DeleteMarkers...) {
			f(o)
		}
		if err != nil || page.NextKeyMarker == "" {
			return err
		}
	}
}

// cleanup deletes every object under the prefix; with Versioning, every
// version and delete marker, so that the bucket keeps no data.
func (r *runner) cleanup(ctx context.Context) error {
	objs := make(chan s3.ObjectInfo, 1000)
	var wg sync.WaitGroup
	var first atomic.Value
	for range r.cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range objs {
				if err := r.c.DeleteObjectVersion(ctx, r.cfg.Bucket, o.Key, o.VersionID); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	each := r.eachKey
	if r.cfg.Versioning {
		each = r.eachVersion
	}
	err := each(ctx, func(o s3.ObjectInfo) { objs <- o })
	close(objs)
	wg.Wait()
	if e, ok := first.Load().(error); ok && err == nil {
		err = e
	}
	return err
}

// Payload returns size pseudo-random bytes, the same for every run.
func Payload(size int64) []byte {
	b := make([]byte, size)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < len(b); i += 8 {
		v := rnd.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// Report prints a result: a table of the operations, the server's CPU and
// memory when measured, and one "summary" line per operation of key=value
// pairs for scripts.
func Report(out io.Writer, res Result) {
	cfg := res.Config
	fmt.Fprintf(out, "bench s3: %s, objects of %s, %d clients, %.1f s, %s bucket %s\n",
		cfg.Op, bytesize.Format(cfg.Size), cfg.Concurrency, res.Elapsed.Seconds(), cfg.Endpoint, cfg.Bucket)
	fmt.Fprintf(out, "%-7s %9s %10s %10s %7s   %s\n", "OP", "OPS", "OPS/S", "MB/S", "ERRORS", "LATENCY")
	for _, o := range res.Ops {
		fmt.Fprintf(out, "%-7s %9d %10.1f %10.1f %7d   %v\n", o.Op, o.Ops, o.OpsPerSec(), o.MBPerSec(), o.Errors, o.Latency)
		if o.Items > 0 {
			fmt.Fprintf(out, "        %d keys (or versions) listed, %.0f per second\n", o.Items, float64(o.Items)/o.Elapsed.Seconds())
		}
		if o.FirstError != "" {
			fmt.Fprintf(out, "        first error: %s\n", o.FirstError)
		}
	}
	if cfg.ServerPID != 0 {
		fmt.Fprintf(out, "server pid %d: CPU %.1f s (%.2f CPU-s per GB moved), peak RSS %s\n",
			cfg.ServerPID, res.ServerCPU.Seconds(), res.ServerCPUPerGB(), bytesize.Format(res.ServerPeakRSS))
	}
	for _, o := range res.Ops {
		fmt.Fprintf(out, "summary op=%s size=%d clients=%d ops=%d errors=%d seconds=%.3f ops_per_sec=%.2f mb_per_sec=%.2f p50_ms=%.3f p99_ms=%.3f server_cpu_s=%.3f server_cpu_s_per_gb=%.3f server_peak_rss=%d items=%d items_per_sec=%.2f\n",
			o.Op, cfg.Size, cfg.Concurrency, o.Ops, o.Errors, o.Elapsed.Seconds(), o.OpsPerSec(), o.MBPerSec(),
			ms(o.Latency.P50), ms(o.Latency.P99), res.ServerCPU.Seconds(), res.ServerCPUPerGB(), res.ServerPeakRSS, o.Items, float64(o.Items)/o.Elapsed.Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// processCPU is a process's user+system CPU time (Linux /proc), 0 when
// unknown.
func processCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	const clkTck = 100                       // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / clkTck
}

// processPeakRSS is a process's peak resident set (VmHWM), 0 when unknown.
func processPeakRSS(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
