package bench

import (
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
)

// KeyPutConfig configures RunKeyPut, Ozone freon's ockg ("ozone client key
// generator"): N keys of a fixed size written by T threads through the
// client.
type KeyPutConfig struct {
	Volume, Bucket string
	// Prefix names the keys: Prefix/0, Prefix/1, ...
	Prefix  string
	Keys    int
	Size    int64
	Threads int
	// Progress, when set, gets a line every ProgressInterval.
	Progress         io.Writer
	ProgressInterval time.Duration
}

// EnsureDefaults fills in the defaults (freon ockg's: 100 keys of 10 MiB,
// 10 threads).
func (c *KeyPutConfig) EnsureDefaults() {
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

// KeyPutResult is what RunKeyPut measured.
type KeyPutResult struct {
	Keys    int
	Bytes   int64
	Elapsed time.Duration
	Latency measure.LatencySummary
}

// MBps is the throughput in 10^6 bytes per second.
func (r KeyPutResult) MBps() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// RunKeyPut writes the keys and prints freon's summary to out.
func RunKeyPut(ctx context.Context, cfg KeyPutConfig, c *client.Client, out io.Writer) (KeyPutResult, error) {
	cfg.EnsureDefaults()
	if cfg.Keys < 1 || cfg.Size < 0 || cfg.Threads < 1 || cfg.Volume == "" || cfg.Bucket == "" {
		return KeyPutResult{}, errors.New("bench: key put needs a volume, a bucket, keys >= 1, threads >= 1 and a size >= 0")
	}
	// One random buffer, shared read-only: the payload does not matter, its
	// generation must not be timed.
	data := randomPayload(min(cfg.Size, 64<<20))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next    atomic.Int64
		done    atomic.Int64
		written atomic.Int64
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
					fmt.Fprintf(cfg.Progress, "key put: %d/%d keys, %.1f MB/s\n", done.Load(), cfg.Keys,
						float64(written.Load())/1e6/el.Seconds())
				}
			}
		}()
	}
	for t := range cfg.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(cfg.Keys) || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				err := putKey(ctx, c, cfg, fmt.Sprintf("%s/%d", cfg.Prefix, i), data, &written)
				if err != nil {
					errOnce.Do(func() { runErr = err; cancel() })
					return
				}
				hists[t].Record(time.Since(t0))
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stopProgress)
	elapsed := time.Since(start)
	if runErr != nil {
		return KeyPutResult{}, runErr
	}
	var h measure.Histogram
	for i := range hists {
		h.Merge(&hists[i])
	}
	res := KeyPutResult{Keys: cfg.Keys, Bytes: written.Load(), Elapsed: elapsed, Latency: h.Summary()}
	fmt.Fprintf(out, "Total keys      : %d\n", res.Keys)
	fmt.Fprintf(out, "Key size        : %d bytes\n", cfg.Size)
	fmt.Fprintf(out, "Threads         : %d\n", cfg.Threads)
	fmt.Fprintf(out, "Total bytes     : %d\n", res.Bytes)
	fmt.Fprintf(out, "Total time      : %.3f s\n", elapsed.Seconds())
	fmt.Fprintf(out, "Throughput      : %.1f MB/s\n", res.MBps())
	fmt.Fprintf(out, "Key latency     : %s\n", res.Latency)
	return res, nil
}

func putKey(ctx context.Context, c *client.Client, cfg KeyPutConfig, key string, data []byte, written *atomic.Int64) error {
	w, err := c.CreateKey(ctx, cfg.Volume, cfg.Bucket, key, client.WriteOptions{SizeHint: cfg.Size})
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

// randomPayload is n pseudo-random bytes, the same on every call.
func randomPayload(n int64) []byte {
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return data
}
