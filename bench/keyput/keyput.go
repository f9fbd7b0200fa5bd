package keyput

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Config configures Run, Ozone freon's ockg ("ozone client key
// generator"): N keys of a fixed size written by T threads through the
// client.
type Config struct {
	Volume, Bucket string
	// Prefix names the keys: Prefix/0, Prefix/1, ...
	Prefix  string
	Keys    int
	Size    int64
	Threads int
	// Replication and ErasureCoding are the keys' own (default: the
	// bucket's), as client.WriteOptions takes them.
	Replication   stratov1.ReplicationFactor
	ErasureCoding *stratov1.ErasureCoding
	// Progress, when set, gets a line every ProgressInterval.
	Progress         io.Writer
	ProgressInterval time.Duration
}

// EnsureDefaults fills in the defaults (freon ockg's: 100 keys of 10 MiB,
// 10 threads).
func (c *Config) EnsureDefaults() {
	if c.Keys == 0 {
		c.Keys = 100
	}
	if c.Size == 0 {
		c.Size = 10 << 20
	}
	if c.Threads == 0 {
		c.Threads = 10
	}
	if c.Prefix == "" {
		c.Prefix = fmt.Sprintf("ockg-%d", time.Now().Unix())
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = 5 * time.Second
	}
}

// Result is what Run measured.
type Result struct {
	Keys    int
	Bytes   int64
	Elapsed time.Duration
	Latency measure.LatencySummary
}

// MBps is the throughput in 10^6 bytes per second.
func (r Result) MBps() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// Run writes the keys and prints freon's summary to out.
func Run(ctx context.Context, cfg Config, c *client.Client, out io.Writer) (Result, error) {
	cfg.EnsureDefaults()
	if cfg.Keys < 1 || cfg.Size < 0 || cfg.Threads < 1 || cfg.Volume == "" || cfg.Bucket == "" {
		return Result{}, errors.New("bench: key put needs a volume, a bucket, keys >= 1, threads >= 1 and a size >= 0")
	}
	// One random buffer, shared read-only: the payload does not matter, its
	// generation must not be timed.
	data := Payload(cfg.Size)
	res, err := each(ctx, cfg, "key put", func(ctx context.Context, key string, done *atomic.Int64) error {
		return putKey(ctx, c, cfg, key, data, done)
	})
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "Total keys      : %d\n", res.Keys)
	fmt.Fprintf(out, "Key size        : %d bytes\n", cfg.Size)
	fmt.Fprintf(out, "Threads         : %d\n", cfg.Threads)
	fmt.Fprintf(out, "Total bytes     : %d\n", res.Bytes)
	fmt.Fprintf(out, "Total time      : %.3f s\n", res.Elapsed.Seconds())
	fmt.Fprintf(out, "Throughput      : %.1f MB/s\n", res.MBps())
	fmt.Fprintf(out, "Key latency     : %s\n", res.Latency)
	return res, nil
}

// ReadBack reads every key Run wrote with cfg, cfg.Threads at a time, and
// checks each is the payload Run wrote; it prints one line (what, MB/s,
// latency) to out.
func ReadBack(ctx context.Context, cfg Config, c *client.Client, what string, out io.Writer) (Result, error) {
	cfg.EnsureDefaults()
	data := Payload(cfg.Size)
	res, err := each(ctx, cfg, what, func(ctx context.Context, key string, done *atomic.Int64) error {
		r, err := c.OpenKey(ctx, cfg.Volume, cfg.Bucket, key)
		if err != nil {
			return fmt.Errorf("bench: open %s: %w", key, err)
		}
		defer func() { _ = r.Close() }()
		buf := make([]byte, cfg.Size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("bench: read %s: %w", key, err)
		}
		if d := FirstDiff(buf, data, cfg.Size); d >= 0 {
			return fmt.Errorf("bench: %s differs from what was written at byte %d", key, d)
		}
		done.Add(cfg.Size)
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	fmt.Fprintf(out, "%-16s: %d keys, %d bytes in %.3f s, %.1f MB/s, all identical; key latency %s\n",
		what, res.Keys, res.Bytes, res.Elapsed.Seconds(), res.MBps(), res.Latency)
	return res, nil
}

// each runs fn for the keys cfg.Prefix/0 ... cfg.Prefix/(Keys-1) on
// cfg.Threads goroutines, fn counting its bytes in the counter it is given,
// with a progress line every cfg.ProgressInterval; it stops at the first
// error.
func each(ctx context.Context, cfg Config, what string, fn func(ctx context.Context, key string, bytes *atomic.Int64) error) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64
		done    atomic.Int64
		moved   atomic.Int64
		errOnce sync.Once
		runErr  error
		wg      sync.WaitGroup
		hists   = make([]measure.Histogram, cfg.Threads)
	)
	start := time.Now()
	stopProgress := make(chan struct{})
	if cfg.Progress != nil {
		go func() {
			t := time.NewTicker(cfg.ProgressInterval)
			defer t.Stop()
			for {
				select {
				case <-stopProgress:
					return
				case <-t.C:
					el := time.Since(start)
					fmt.Fprintf(cfg.Progress, "%s: %d/%d keys, %.1f MB/s\n", what, done.Load(), cfg.Keys,
						float64(moved.Load())/1e6/el.Seconds())
				}
			}
		}()
	}
	for t := range cfg.Threads {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(cfg.Keys) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := fn(ctx, fmt.Sprintf("%s/%d", cfg.Prefix, i), &moved); err != nil {
					errOnce.Do(func() { runErr = err; cancel() })
					return
				}
				hists[t].Record(time.Since(t0))
				done.Add(1)
			}
		})
	}
	wg.Wait()
	close(stopProgress)
	elapsed := time.Since(start)
	if runErr != nil {
		return Result{}, runErr
	}
	var h measure.Histogram
	for i := range hists {
		h.Merge(&hists[i])
	}
	return Result{Keys: cfg.Keys, Bytes: moved.Load(), Elapsed: elapsed, Latency: h.Summary()}, nil
}

func putKey(ctx context.Context, c *client.Client, cfg Config, key string, data []byte, written *atomic.Int64) error {
	w, err := c.CreateKey(ctx, cfg.Volume, cfg.Bucket, key, client.WriteOptions{SizeHint: cfg.Size,
		Replication: cfg.Replication, ErasureCoding: cfg.ErasureCoding})
	if err != nil {
		return fmt.Errorf("bench: create %s: %w", key, err)
	}
	for left := cfg.Size; left > 0; {
		n := min(left, int64(len(data)))
		if _, err := w.Write(data[:n]); err != nil {
			_ = w.Close()
			return fmt.Errorf("bench: write %s: %w", key, err)
		}
		left -= n
		written.Add(n)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("bench: close %s: %w", key, err)
	}
	return nil
}

// Payload is the data a key of size bytes repeats: at most 64 MiB of
// pseudo-random bytes, the same on every call, so that a key written by Run
// (or generated offline with the same payload) can be verified (FirstDiff).
func Payload(size int64) []byte {
	data := make([]byte, min(size, 64<<20))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return data
}

// FirstDiff returns where got first differs from a key of size bytes of
// repeated data, or -1 when it is that key.
func FirstDiff(got, data []byte, size int64) int64 {
	for off := 0; off < len(got); off += len(data) {
		n := min(len(data), len(got)-off)
		if !bytes.Equal(got[off:off+n], data[:n]) {
			for i := range n {
				if got[off+i] != data[i] {
					return int64(off + i)
				}
			}
		}
	}
	if int64(len(got)) != size {
		return min(int64(len(got)), size)
	}
	return -1
}
