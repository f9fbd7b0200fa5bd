// Package appends is `strato bench append`: the latency of appending to a
// closed file, the way a log shipper or an HBase-style writer reopens one.
// Run writes a base file of Config.BaseSize once, then Config.Count times
// opens it with Append, writes Config.Size bytes and closes it, and reports
// the latency of each whole append (open, write, close) as percentiles.
// Run is sequential: one append at a time, as one writer's lease allows.
package appends

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/client"
)

// Config is one run.
type Config struct {
	// Path is the file appended to: /volume/bucket/path.
	Path string
	// BaseSize is the size of the file written before the appends.
	// Default 1 GiB.
	BaseSize int64
	// Size is the bytes each append writes. Default 1 MiB.
	Size int64
	// Count is how many appends are timed. Default 100.
	Count int
	// Progress receives a line per phase. Default: nowhere.
	Progress io.Writer
}

// EnsureDefaults fills the defaults.
func (c *Config) EnsureDefaults() {
	if c.BaseSize <= 0 {
		c.BaseSize = 1 << 30
	}
	if c.Size <= 0 {
		c.Size = 1 << 20
	}
	if c.Count <= 0 {
		c.Count = 100
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Result is a run's measurements.
type Result struct {
	Latency measure.LatencySummary
	Base    time.Duration // writing the base file
	Length  int64         // the file's length at the end
}

// Run writes the base file, appends to it Count times and reports on out.
func Run(ctx context.Context, cfg Config, cl *client.Client, out io.Writer) (Result, error) {
	cfg.EnsureDefaults()
	buf := make([]byte, 4<<20)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	start := time.Now()
	w, err := cl.Create(ctx, cfg.Path, client.CreateOptions{Overwrite: true, Recursive: true,
		WriteOptions: client.WriteOptions{SizeHint: cfg.BaseSize}})
	if err != nil {
		return Result{}, err
	}
	if err := write(w, buf, cfg.BaseSize); err != nil {
		w.Abort()
		return Result{}, err
	}
	if err := w.Close(); err != nil {
		return Result{}, err
	}
	res := Result{Base: time.Since(start)}
	fmt.Fprintf(cfg.Progress, "base file %s: %d bytes in %v\n", cfg.Path, cfg.BaseSize, res.Base.Round(time.Millisecond))
	var h measure.Histogram
	for i := range cfg.Count {
		t0 := time.Now()
		w, err := cl.Append(ctx, cfg.Path, client.WriteOptions{SizeHint: cfg.Size})
		if err != nil {
			return res, fmt.Errorf("append %d: %w", i, err)
		}
		if err := write(w, buf, cfg.Size); err != nil {
			w.Abort()
			return res, fmt.Errorf("append %d: %w", i, err)
		}
		if err := w.Close(); err != nil {
			return res, fmt.Errorf("append %d: %w", i, err)
		}
		h.Record(time.Since(t0))
	}
	st, err := cl.Stat(ctx, cfg.Path)
	if err != nil {
		return res, err
	}
	res.Length, res.Latency = st.Length, h.Summary()
	if want := cfg.BaseSize + int64(cfg.Count)*cfg.Size; res.Length != want {
		return res, fmt.Errorf("bench append: %s is %d bytes, want %d", cfg.Path, res.Length, want)
	}
	_, err = fmt.Fprintf(out, "appends: %d of %d bytes to a closed file of %d bytes (then %d)\nappend latency (open, write, close): %v\n",
		cfg.Count, cfg.Size, cfg.BaseSize, res.Length, res.Latency)
	return res, err
}

func write(w *client.Writer, buf []byte, n int64) error {
	for n > 0 {
		k := min(n, int64(len(buf)))
		if _, err := w.Write(buf[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}
