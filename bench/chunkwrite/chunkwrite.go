package chunkwrite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/schollz/progressbar/v3"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
)

// Chunk-write layouts: the two container layouts, and RAW, the reference: a
// bare loop of pwrite calls on the same threads and the same number of files
// as FILE_PER_BLOCK, with no checksum, no bookkeeping and no metadata.
const (
	LayoutFilePerBlock = "FILE_PER_BLOCK"
	LayoutFilePerChunk = "FILE_PER_CHUNK"
	LayoutRaw          = "RAW"
)

// Layouts are the layouts `bench chunk-write -l` accepts.
var Layouts = []string{LayoutFilePerBlock, LayoutFilePerChunk, LayoutRaw}

// Options configure `strato bench chunk-write`, which mirrors
// Ozone's `freon cmdw` (ChunkManagerDiskWrite): chunks written straight into
// a container store on local disk, no network. Zero values take defaults
// (EnsureDefaults).
type Options struct {
	// Chunks is the total number of chunks (-n). Default 1024.
	Chunks int
	// ChunkSize is the size of each chunk in bytes (-s). Default 4 MiB.
	ChunkSize int64
	// ChunksPerBlock is how many chunks make a block (-c). Default 16.
	ChunksPerBlock int
	// Threads is the number of writers (-t). Default 16.
	Threads int
	// Layout is FILE_PER_BLOCK, FILE_PER_CHUNK or RAW (-l). Default
	// FILE_PER_BLOCK.
	Layout string
	// Dir is where the run's directory is created (--dir). Default: the
	// system temporary directory. The run's own directory is removed
	// afterwards unless Keep is set.
	Dir string
	// Keep leaves the written data in place (its path is in the result).
	Keep bool
	// Checksum is the chunks' checksum type (--checksum). Default CRC32C.
	// The store verifies every chunk against it, as a datanode does.
	Checksum checksum.Type
	// ChecksumSet says Checksum was given (so that NONE can be chosen).
	ChecksumSet bool
	// BytesPerChecksum is the checksum window. Default 16 KiB.
	BytesPerChecksum uint32
	// Sync fsyncs everything written at the end, inside the timed run
	// (--sync), as the original experiment did.
	Sync bool
	// NoDirectIO turns off the store's O_DIRECT path for large aligned
	// chunks (container.Options.DisableDirectIO).
	NoDirectIO bool
	// Progress shows a progress bar on ProgressOut (a terminal); when
	// false and ProgressOut is set, a line every ProgressInterval instead.
	Progress         bool
	ProgressOut      io.Writer
	ProgressInterval time.Duration
}

// EnsureDefaults fills unset fields.
func (o *Options) EnsureDefaults() {
	if o.Chunks == 0 {
		o.Chunks = 1024
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = 4 << 20
	}
	if o.ChunksPerBlock == 0 {
		o.ChunksPerBlock = 16
	}
	if o.Threads == 0 {
		o.Threads = 16
	}
	if o.Layout == "" {
		o.Layout = LayoutFilePerBlock
	}
	o.Layout = strings.ToUpper(o.Layout)
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if !o.ChecksumSet && o.Checksum == checksum.NONE {
		o.Checksum = checksum.DefaultType
	}
	if o.BytesPerChecksum == 0 {
		o.BytesPerChecksum = checksum.DefaultBytesPerChecksum
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = 5 * time.Second
	}
}

// Validate reports the first invalid option.
func (o *Options) Validate() error {
	switch {
	case o.Chunks < 1:
		return fmt.Errorf("bench: -n %d: need at least one chunk", o.Chunks)
	case o.ChunkSize < 1 || o.ChunkSize > 1<<30:
		return fmt.Errorf("bench: -s %d: chunk size must be in [1, 1G]", o.ChunkSize)
	case o.ChunksPerBlock < 1:
		return fmt.Errorf("bench: -c %d: need at least one chunk per block", o.ChunksPerBlock)
	case o.Threads < 1:
		return fmt.Errorf("bench: -t %d: need at least one thread", o.Threads)
	case !o.Checksum.Valid():
		return fmt.Errorf("bench: unknown checksum type %v", o.Checksum)
	}
	for _, l := range Layouts {
		if o.Layout == l {
			return nil
		}
	}
	return fmt.Errorf("bench: -l %q: want one of %s", o.Layout, strings.Join(Layouts, ", "))
}

// Result is one run's outcome.
type Result struct {
	Layout    string
	ChunkSize int64
	Chunks    int
	Threads   int
	Sync      bool
	// Elapsed is the whole timed run, the final fsync included when Sync.
	Elapsed time.Duration
	// SyncTime is the part of Elapsed spent in the final fsync.
	SyncTime time.Duration
	// Latency is per WriteChunk call (per pwrite for RAW).
	Latency measure.LatencySummary
	// Dir is the run's data directory (removed unless Keep).
	Dir string
}

// Name is the test name used in reports: layout-size, e.g. FILE_PER_BLOCK-4M.
func (r Result) Name() string { return r.Layout + "-" + bytesize.Exact(r.ChunkSize) }

// Bytes is the total data written.
func (r Result) Bytes() int64 { return int64(r.Chunks) * r.ChunkSize }

// ChunksPerSec is the chunk rate over Elapsed.
func (r Result) ChunksPerSec() float64 { return float64(r.Chunks) / r.Elapsed.Seconds() }

// MBPerSec is the data rate over Elapsed, in MB (10^6 bytes, as dd reports).
func (r Result) MBPerSec() float64 { return float64(r.Bytes()) / 1e6 / r.Elapsed.Seconds() }

// Print writes the result the way freon reports a run.
func (r Result) Print(w io.Writer) {
	_, _ = fmt.Fprintf(w, "%s: %d chunks of %s (%s), %d threads, sync %v\n", r.Name(), r.Chunks, bytesize.Exact(r.ChunkSize),
		bytesize.Format(r.Bytes()), r.Threads, r.Sync)
	_, _ = fmt.Fprintf(w, "  elapsed        %.3f s (final sync %.3f s)\n", r.Elapsed.Seconds(), r.SyncTime.Seconds())
	_, _ = fmt.Fprintf(w, "  rate           %.0f chunks/s, %.1f MB/s\n", r.ChunksPerSec(), r.MBPerSec())
	_, _ = fmt.Fprintf(w, "  chunk latency  %v\n", r.Latency)
}

// chunkWriter is what a worker drives: write a chunk, finish a block, and
// sync everything at the end.
type chunkWriter interface {
	write(block uint64, off int64, data []byte, sums checksum.Data) error
	finish(block uint64, length int64) error
	sync() error
	close() error
}

// Run runs one chunk-write benchmark.
func Run(ctx context.Context, o Options) (Result, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	raiseFileLimit()
	dir, err := os.MkdirTemp(o.Dir, "chunkwrite-"+strings.ToLower(o.Layout)+"-"+bytesize.Exact(o.ChunkSize)+"-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	res := Result{Layout: o.Layout, ChunkSize: o.ChunkSize, Chunks: o.Chunks, Threads: o.Threads, Sync: o.Sync, Dir: dir}
	if !o.Keep {
		defer func() { _ = os.RemoveAll(dir) }()
	}

	blocks := (o.Chunks + o.ChunksPerBlock - 1) / o.ChunksPerBlock
	var w chunkWriter
	switch o.Layout {
	case LayoutRaw:
		w = &rawWriter{dir: dir, files: make([]*os.File, blocks), written: make([]bool, blocks)}
	default:
		layout, _ := container.ParseLayout(o.Layout)
		w, err = newContainerWriter(dir, layout, o)
		if err != nil {
			return res, err
		}
	}
	defer func() { _ = w.close() }()

	var done atomic.Int64
	stopProgress := startChunkProgress(o, &done)
	hists := make([]measure.Histogram, o.Threads)
	errs := make([]error, o.Threads)
	var wg sync.WaitGroup
	// Random bytes and their checksums, prepared per thread before the
	// clock starts: the client's cost is not what is measured; the store's
	// verification of every chunk is.
	data := make([][]byte, o.Threads)
	sums := make([]checksum.Data, o.Threads)
	for t := range o.Threads {
		data[t] = measure.AlignedBuffer(int(o.ChunkSize))
		rng := rand.New(rand.NewPCG(uint64(t), 1))
		var word [8]byte
		for i := 0; i < len(data[t]); i += 8 {
			binary.LittleEndian.PutUint64(word[:], rng.Uint64())
			copy(data[t][i:], word[:])
		}
		if o.Layout != LayoutRaw {
			sums[t] = checksum.Compute(o.Checksum, o.BytesPerChecksum, data[t])
		}
	}
	start := time.Now()
	for t := range o.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = chunkWorker(ctx, w, &hists[t], &done, t, o, blocks, data[t], sums[t])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopProgress()
		return res, err
	}
	if o.Sync {
		s := time.Now()
		if err := w.sync(); err != nil {
			stopProgress()
			return res, err
		}
		res.SyncTime = time.Since(s)
	}
	res.Elapsed = time.Since(start)
	stopProgress()
	var h measure.Histogram
	for i := range hists {
		h.Merge(&hists[i])
	}
	res.Latency = h.Summary()
	return res, w.close()
}

// chunkWorker writes blocks t, t+threads, ... in order, each chunk by chunk.
func chunkWorker(ctx context.Context, w chunkWriter, h *measure.Histogram, done *atomic.Int64, t int, o Options, blocks int, data []byte, sums checksum.Data) error {
	var pending int64
	for b := t; b < blocks; b += o.Threads {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		id := uint64(b + 1)
		n := min(o.ChunksPerBlock, o.Chunks-b*o.ChunksPerBlock)
		var off int64
		for range n {
			s := time.Now()
			if err := w.write(id, off, data, sums); err != nil {
				return err
			}
			h.Record(time.Since(s))
			off += o.ChunkSize
			if pending++; pending == 256 {
				done.Add(pending)
				pending = 0
			}
		}
		if err := w.finish(id, off); err != nil {
			return err
		}
	}
	done.Add(pending)
	return nil
}

func startChunkProgress(o Options, done *atomic.Int64) (stop func()) {
	if o.ProgressOut == nil {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	label := fmt.Sprintf("%s-%s", o.Layout, bytesize.Exact(o.ChunkSize))
	go func() {
		defer close(finished)
		if o.Progress {
			bar := progressbar.NewOptions64(int64(o.Chunks), progressbar.OptionSetWriter(o.ProgressOut),
				progressbar.OptionSetDescription(label), progressbar.OptionShowCount(),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-quit:
					_ = bar.Set64(done.Load())
					_ = bar.Finish()
					return
				case <-tick.C:
					_ = bar.Set64(done.Load())
				}
			}
		}
		tick := time.NewTicker(o.ProgressInterval)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				d := done.Load()
				_, _ = fmt.Fprintf(o.ProgressOut, "%s: %d/%d chunks, %.0f chunks/s\n", label, d, o.Chunks, float64(d)/time.Since(start).Seconds())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-finished
		})
	}
}

// containerWriter writes into one OPEN container of a fresh volume.
type containerWriter struct {
	v *container.Volume
	c *container.Container
}

func newContainerWriter(dir string, layout container.Layout, o Options) (*containerWriter, error) {
	opts := container.Options{
		FS:           vfs.Default,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxChunkSize: max(container.DefaultMaxChunkSize, o.ChunkSize),
		MaxBlockSize: max(container.DefaultMaxBlockSize, o.ChunkSize*int64(o.ChunksPerBlock)),

		DisableDirectIO: o.NoDirectIO,
	}
	v, err := container.OpenVolume(dir, opts)
	if err != nil {
		return nil, err
	}
	c, err := v.Create(1, layout)
	if err != nil {
		_ = v.Close()
		return nil, err
	}
	return &containerWriter{v: v, c: c}, nil
}

func (w *containerWriter) write(block uint64, off int64, data []byte, sums checksum.Data) error {
	return w.c.WriteChunk(block, off, data, sums, container.WriteOptions{})
}

func (w *containerWriter) finish(block uint64, length int64) error {
	_, err := w.c.PutBlock(block, length, container.PutOptions{Final: true})
	return err
}

func (w *containerWriter) sync() error { return w.c.Sync() }

func (w *containerWriter) close() error {
	if w.v == nil {
		return nil
	}
	err := w.v.Close()
	w.v = nil
	return err
}

// raiseFileLimit raises the soft limit of open files to the hard one, as a
// datanode with many blocks open would run: the threads' open blocks must
// fit whatever the shell's default.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// rawWriter is the reference: one file per block, a pwrite per chunk, the
// file closed when its block is complete and fsynced by name at the end (as
// the store does with a block a Final PutBlock released), so that the open
// files are the blocks being written, not every block of the run. Each
// block belongs to one worker, so its slot needs no lock.
type rawWriter struct {
	dir     string
	files   []*os.File // by block, open while it is written
	written []bool     // by block: a file to sync
}

func (w *rawWriter) path(block uint64) string {
	return filepath.Join(w.dir, fmt.Sprintf("%d.raw", block))
}

func (w *rawWriter) write(block uint64, off int64, data []byte, _ checksum.Data) error {
	f := w.files[block-1]
	if f == nil {
		var err error
		f, err = os.OpenFile(w.path(block), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		w.files[block-1], w.written[block-1] = f, true
	}
	_, err := f.WriteAt(data, off)
	return err
}

func (w *rawWriter) finish(block uint64, _ int64) error {
	f := w.files[block-1]
	w.files[block-1] = nil
	if f == nil {
		return nil
	}
	return f.Close()
}

func (w *rawWriter) sync() error {
	var paths []string
	for i, ok := range w.written {
		if ok {
			paths = append(paths, w.path(uint64(i+1)))
		}
	}
	return parallelSyncPaths(paths, 8)
}

// parallelSyncPaths fsyncs the files at paths, par at a time.
func parallelSyncPaths(paths []string, par int) error {
	ch := make(chan string)
	errs := make([]error, par)
	var wg sync.WaitGroup
	for i := range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				f, err := os.Open(p)
				if err == nil {
					err = f.Sync()
					f.Close()
				}
				if err != nil && errs[i] == nil {
					errs[i] = err
				}
			}
		}()
	}
	for _, p := range paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	return errors.Join(errs...)
}

func (w *rawWriter) close() error {
	for i, f := range w.files {
		if f != nil {
			f.Close()
			w.files[i] = nil
		}
	}
	return nil
}
