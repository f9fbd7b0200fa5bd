package teragen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures `strato bench teragen`: Hadoop's TeraGen, its
// map tasks being concurrent writers. Zero values take defaults
// (EnsureDefaults).
type Config struct {
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
	// NoChecksum skips TeraGen's CHECKSUM counter (a CRC-32 of every row):
	// for comparisons with a writer that computes nothing, as the HDFS
	// anchor's.
	NoChecksum bool
}

// EnsureDefaults fills unset fields.
func (c *Config) EnsureDefaults() {
	if c.Writers == 0 {
		c.Writers = 2
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 5 * time.Second
	}
}

// Validate reports the first invalid field.
func (c *Config) Validate() error {
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

// WriterStats is one writer's work and where its time went, as the
// original experiment's instrumented file system counted it.
type WriterStats struct {
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

	Checksum Checksum // of this writer's rows
}

// Result is a run's outcome.
type Result struct {
	Path    string
	Writers []WriterStats
	Rows    uint64
	Bytes   uint64
	// Elapsed runs from the first Create to the last Close.
	Elapsed time.Duration
	// Checksum is the data set's: its Counter is TeraGen's CHECKSUM counter
	// (zero with NoChecksum).
	Checksum   Checksum
	NoChecksum bool
}

// MBPerSec is the data rate over Elapsed, in MB (10^6 bytes).
func (r Result) MBPerSec() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Print writes the report: per writer the original experiment's
// instrumentation lines, then the totals and TeraGen's counter line.
func (r Result) Print(w io.Writer) {
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
	if r.NoChecksum {
		fmt.Fprintln(w, "checksum: not computed")
		return
	}
	fmt.Fprintf(w, "checksum (TeraValidate's form): %s\n", r.Checksum)
	fmt.Fprintf(w, "CHECKSUM=%d\n", r.Checksum.Counter())
}

// batchRows is how many rows a writer makes before writing them.
//
// The writes are timed per batch, not per call. The original instrumentation
// sums the time of every write call, and a call costs a few nanoseconds when
// the client buffers (5 ns into a bufio.Writer here), while a pair of
// time.Now costs about 80 ns on this VM: timing each of 20 million calls
// would measure mostly the clock. So a writer makes a batch of rows first
// (and adds their checksums), then times the batch's 2×batchRows write
// calls as one stretch that holds nothing else; the sum of those stretches
// is the sum of the calls' times. The batch (100 KiB) stays in L2.
const batchRows = 1024

// Run runs TeraGen's writers into fs, prints the report to out and
// returns it. On an error the writers still running are cancelled, every
// opened file is closed, and the first error is returned.
func Run(ctx context.Context, cfg Config, fs FileCreator, out io.Writer) (Result, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	splits := Splits(cfg.Rows, cfg.Writers)
	res := Result{Path: cfg.Path, Writers: make([]WriterStats, len(splits)), Rows: cfg.Rows, Bytes: cfg.Rows * RowSize, NoChecksum: cfg.NoChecksum}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var done atomic.Uint64
	stopProgress := startProgress(cfg, &done)
	errs := make([]error, len(splits))
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range splits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			file := path.Join(cfg.Path, PartName(i))
			res.Writers[i], errs[i] = writeSplit(ctx, fs, file, s, !cfg.NoChecksum, &done)
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

// writeSplit is one map task: it creates file, writes its split's rows
// as TeraGen's TeraRecordWriter does (one write for the key, one for the
// value), then one hsync and the close.
func writeSplit(ctx context.Context, fs FileCreator, file string, s Split, sum bool, done *atomic.Uint64) (st WriterStats, err error) {
	st = WriterStats{File: file, FirstRow: s.FirstRow, Rows: s.Rows}
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

	g := NewGenerator(s.FirstRow)
	buf := make([]byte, batchRows*RowSize)
	for left := s.Rows; left > 0; {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		n := min(left, batchRows)
		batch := buf[:n*RowSize]
		for off := 0; off < len(batch); off += RowSize {
			row := batch[off : off+RowSize]
			g.Next(row)
			if sum {
				st.Checksum.AddRow(row)
			}
		}
		t := time.Now()
		for off := 0; off < len(batch); off += RowSize {
			k, v := off+KeySize, off+RowSize
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

func startProgress(cfg Config, done *atomic.Uint64) (stop func()) {
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
				mbps := float64((rows-lastRows)*RowSize) / 1e6 / now.Sub(last).Seconds()
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
