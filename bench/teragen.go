package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/bench/teragen"
)

// FileCreator is the file system a benchmark writes into: strato through
// its client, the local disk (LocalFiles), later HDFS. Create may be called
// from several goroutines at once; each FileWriter it returns is used by one.
type FileCreator interface {
	// Create creates the file at path, a slash-separated path in the file
	// system's namespace, with any missing parent directories, replacing a
	// file that is there (Hadoop's FileSystem.create), and opens it for
	// writing.
	Create(ctx context.Context, path string) (FileWriter, error)
}

// FileWriter is a file open for writing, with the calls of Hadoop's
// FSDataOutputStream that TeraGen's record writer makes.
type FileWriter interface {
	io.Writer
	// Hsync makes everything written so far durable.
	Hsync() error
	// Close finishes the file. It is called once, also after an error.
	Close() error
}

// TeraGenConfig configures `strato bench teragen`: Hadoop's TeraGen, its
// map tasks being concurrent writers. Zero values take defaults
// (EnsureDefaults).
type TeraGenConfig struct {
	// Rows is the number of 100-byte rows, TeraGen's first argument.
	// Required.
	Rows uint64
	// Path is the output directory, TeraGen's second argument: writer i
	// writes Path/part-m-0000i. Required.
	Path string
	// Writers is the number of concurrent writers, TeraGen's map tasks
	// (mapreduce.job.maps); the rows are split among them as TeraGen splits
	// them. Default 2, mapreduce.job.maps's default.
	Writers int
	// Progress, if set, receives a line every ProgressInterval (default 5 s)
	// with the rows written so far and the rate since the previous line.
	Progress         io.Writer
	ProgressInterval time.Duration
}

// EnsureDefaults fills unset fields.
func (c *TeraGenConfig) EnsureDefaults() {
	if c.Writers == 0 {
		c.Writers = 2
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 5 * time.Second
	}
}

// Validate reports the first invalid field.
func (c *TeraGenConfig) Validate() error {
	switch {
	case c.Path == "":
		return errors.New("bench: teragen: no output path")
	case c.Writers < 1:
		return fmt.Errorf("bench: teragen: --writers %d: need at least one writer", c.Writers)
	case c.Rows > 1<<63-1:
		return fmt.Errorf("bench: teragen: %d rows: more than a Java long holds", c.Rows)
	}
	return nil
}

// TeraGenWriterStats is one writer's work and where its time went, as the
// original experiment's instrumented file system counted it.
type TeraGenWriterStats struct {
	File     string // Path/part-m-NNNNN
	FirstRow uint64
	Rows     uint64

	CreateTime time.Duration
	WriteCalls int64
	WriteTime  time.Duration // the sum over the Write calls
	HsyncCalls int64
	HsyncTime  time.Duration
	CloseCalls int64
	CloseTime  time.Duration
	// Elapsed runs from Create to the end of Close; the rest of it, beside
	// the calls above, is making the rows.
	Elapsed time.Duration

	Checksum teragen.Checksum // of this writer's rows
}

// TeraGenResult is a run's outcome.
type TeraGenResult struct {
	Path    string
	Writers []TeraGenWriterStats
	Rows    uint64
	Bytes   uint64
	// Elapsed runs from the first Create to the last Close.
	Elapsed time.Duration
	// Checksum is the data set's: its Counter is TeraGen's CHECKSUM counter.
	Checksum teragen.Checksum
}

// MBPerSec is the data rate over Elapsed, in MB (10^6 bytes).
func (r TeraGenResult) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Print writes the report: per writer the original experiment's
// instrumentation lines, then the totals and TeraGen's counter line.
func (r TeraGenResult) Print(w io.Writer) {
	for i, s := range r.Writers {
		fmt.Fprintf(w, "writer %d: %s, rows %d (from %d), create %d ms, elapsed %d ms\n",
			i, s.File, s.Rows, s.FirstRow, s.CreateTime.Milliseconds(), s.Elapsed.Milliseconds())
		fmt.Fprintf(w, "write.call: %d\n", s.WriteCalls)
		fmt.Fprintf(w, "write.allTime: %d\n", s.WriteTime.Milliseconds())
		fmt.Fprintf(w, "hsync.call: %d\n", s.HsyncCalls)
		fmt.Fprintf(w, "hsync.allTime: %d\n", s.HsyncTime.Milliseconds())
		fmt.Fprintf(w, "close.call: %d\n", s.CloseCalls)
		fmt.Fprintf(w, "close.allTime: %d\n", s.CloseTime.Milliseconds())
	}
	fmt.Fprintf(w, "rows: %d\n", r.Rows)
	fmt.Fprintf(w, "bytes: %d\n", r.Bytes)
	fmt.Fprintf(w, "elapsed: %.3f s\n", r.Elapsed.Seconds())
	fmt.Fprintf(w, "MB/s: %.1f\n", r.MBPerSec())
	fmt.Fprintf(w, "checksum (TeraValidate's form): %s\n", r.Checksum)
	fmt.Fprintf(w, "CHECKSUM=%d\n", r.Checksum.Counter())
}

// teraGenBatch is how many rows a writer makes before writing them.
//
// The writes are timed per batch, not per call. The original instrumentation
// sums the time of every write call, and a call costs a few nanoseconds when
// the client buffers (5 ns into a bufio.Writer here), while a pair of
// time.Now costs about 80 ns on this VM: timing each of 20 million calls
// would measure mostly the clock. So a writer makes a batch of rows first
// (and adds their checksums), then times the batch's 2×teraGenBatch write
// calls as one stretch that holds nothing else; the sum of those stretches
// is the sum of the calls' times. The batch (100 KiB) stays in L2.
const teraGenBatch = 1024

// RunTeraGen runs TeraGen's writers into fs, prints the report to out and
// returns it. On an error the writers still running are cancelled, every
// opened file is closed, and the first error is returned.
func RunTeraGen(ctx context.Context, cfg TeraGenConfig, fs FileCreator, out io.Writer) (TeraGenResult, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return TeraGenResult{}, err
	}
	splits := teragen.Splits(cfg.Rows, cfg.Writers)
	res := TeraGenResult{Path: cfg.Path, Writers: make([]TeraGenWriterStats, len(splits)), Rows: cfg.Rows, Bytes: cfg.Rows * teragen.RowSize}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var done atomic.Uint64
	stopProgress := startTeraGenProgress(cfg, &done)
	errs := make([]error, len(splits))
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range splits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			file := path.Join(cfg.Path, teragen.PartName(i))
			res.Writers[i], errs[i] = teraGenWriter(ctx, fs, file, s, &done)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	stopProgress()
	if err := firstError(errs); err != nil {
		return res, err
	}
	for _, s := range res.Writers {
		res.Checksum.Merge(s.Checksum)
	}
	res.Print(out)
	return res, nil
}

// firstError is the first error that is not a cancellation caused by
// another writer's error, or the cancellation if there is nothing else.
func firstError(errs []error) error {
	var canceled error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled):
			if canceled == nil {
				canceled = err
			}
		default:
			return err
		}
	}
	return canceled
}

// teraGenWriter is one map task: it creates file, writes its split's rows
// as TeraGen's TeraRecordWriter does (one write for the key, one for the
// value), then one hsync and the close.
func teraGenWriter(ctx context.Context, fs FileCreator, file string, s teragen.Split, done *atomic.Uint64) (st TeraGenWriterStats, err error) {
	st = TeraGenWriterStats{File: file, FirstRow: s.FirstRow, Rows: s.Rows}
	start := time.Now()
	w, err := fs.Create(ctx, file)
	st.CreateTime = time.Since(start)
	if err != nil {
		return st, fmt.Errorf("bench: teragen: create %s: %w", file, err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = w.Close()
		}
	}()

	g := teragen.NewGenerator(s.FirstRow)
	buf := make([]byte, teraGenBatch*teragen.RowSize)
	for left := s.Rows; left > 0; {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		n := min(left, teraGenBatch)
		batch := buf[:n*teragen.RowSize]
		for off := 0; off < len(batch); off += teragen.RowSize {
			row := batch[off : off+teragen.RowSize]
			g.Next(row)
			st.Checksum.AddRow(row)
		}
		t := time.Now()
		for off := 0; off < len(batch); off += teragen.RowSize {
			k, v := off+teragen.KeySize, off+teragen.RowSize
			if _, err := w.Write(batch[off:k:k]); err != nil {
				return st, fmt.Errorf("bench: teragen: write %s: %w", file, err)
			}
			if _, err := w.Write(batch[k:v:v]); err != nil {
				return st, fmt.Errorf("bench: teragen: write %s: %w", file, err)
			}
		}
		st.WriteTime += time.Since(t)
		st.WriteCalls += 2 * int64(n)
		left -= n
		done.Add(n)
	}

	t := time.Now()
	err = w.Hsync()
	st.HsyncTime, st.HsyncCalls = time.Since(t), 1
	if err != nil {
		return st, fmt.Errorf("bench: teragen: hsync %s: %w", file, err)
	}
	t = time.Now()
	err = w.Close()
	closed = true
	st.CloseTime, st.CloseCalls = time.Since(t), 1
	st.Elapsed = time.Since(start)
	if err != nil {
		return st, fmt.Errorf("bench: teragen: close %s: %w", file, err)
	}
	return st, nil
}

func startTeraGenProgress(cfg TeraGenConfig, done *atomic.Uint64) (stop func()) {
	if cfg.Progress == nil {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(cfg.ProgressInterval)
		defer tick.Stop()
		last, lastRows := time.Now(), uint64(0)
		for {
			select {
			case <-quit:
				return
			case now := <-tick.C:
				rows := done.Load()
				mbps := float64((rows-lastRows)*teragen.RowSize) / 1e6 / now.Sub(last).Seconds()
				fmt.Fprintf(cfg.Progress, "teragen: %d/%d rows, %.1f MB/s\n", rows, cfg.Rows, mbps)
				last, lastRows = now, rows
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

// LocalFiles is a FileCreator over the local file system: the file
// system's root is the directory Root, Hsync is fsync.
type LocalFiles struct {
	Root string
	// BufferSize, if positive, puts a buffer of that many bytes in front of
	// each file, as Hadoop's clients buffer (io.file.buffer.size; a DFS
	// packet is 64 KiB); Hsync and Close flush it. 0: every Write is a
	// write(2).
	BufferSize int
}

// Create implements FileCreator. A path cannot leave Root: ".." stops at
// the root, as it does at "/".
func (l LocalFiles) Create(_ context.Context, name string) (FileWriter, error) {
	local := filepath.Join(l.Root, filepath.FromSlash(path.Clean("/"+name)))
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(local)
	if err != nil {
		return nil, err
	}
	lf := &localFile{f: f}
	if l.BufferSize > 0 {
		lf.buf = bufio.NewWriterSize(f, l.BufferSize)
	}
	return lf, nil
}

type localFile struct {
	f   *os.File
	buf *bufio.Writer // nil: unbuffered
}

func (l *localFile) Write(p []byte) (int, error) {
	if l.buf != nil {
		return l.buf.Write(p)
	}
	return l.f.Write(p)
}

func (l *localFile) flush() error {
	if l.buf == nil {
		return nil
	}
	return l.buf.Flush()
}

func (l *localFile) Hsync() error {
	if err := l.flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *localFile) Close() error {
	err := l.flush()
	return errors.Join(err, l.f.Close())
}
