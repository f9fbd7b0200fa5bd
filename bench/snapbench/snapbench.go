// Package snapbench measures bucket snapshots against their targets
// (strato bench snapshot): taking a snapshot of a bucket of many keys, the
// create rate of a bucket with snapshots beside one without, and snapdiff
// of many changes in a big bucket. It drives an in-process meta server
// directly, as strato bench meta's standalone mode does.
package snapbench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/bench/nnbench"
	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Options are the benchmark's sizes.
type Options struct {
	Keys      int // files in each bucket before anything is measured
	Threads   int // concurrent clients
	Snapshots int // snapshots taken of the bucket with snapshots
	Changes   int // changes snapdiff reports
	Creates   int // files each create round makes
	Rounds    int // create rounds per bucket, alternating
	Out       io.Writer
	Progress  io.Writer
}

// Result is what Run measured.
type Result struct {
	SnapshotCreate []time.Duration // each snapshot's create
	WithRates      []float64       // creates/s in the bucket with snapshots, per round
	WithoutRates   []float64       // and in the bucket without
	Diff           time.Duration   // snapdiff of Changes changes, snapshot to snapshot
	DiffNow        time.Duration   // and snapshot to now
	DiffEntries    int
}

const (
	volume     = "bench"
	snapBucket = "snap"
	plain      = "plain"
	perDir     = 1000
)

// Run runs the benchmark against srv.
func Run(ctx context.Context, o Options, srv *meta.Server) (Result, error) {
	var res Result
	targets := map[string]*nnbench.ServiceTarget{}
	for _, b := range []string{snapBucket, plain} {
		t := &nnbench.ServiceTarget{NS: srv, Datanodes: srv, Admin: srv, Volume: volume, Bucket: b}
		if err := t.Setup(ctx, 0); err != nil {
			return res, err
		}
		targets[b] = t
		start := time.Now()
		if err := create(ctx, t, "fill", o.Keys, o.Threads, o.Progress); err != nil {
			return res, err
		}
		fmt.Fprintf(o.Out, "filled /%s/%s with %d files in %v\n", volume, b, o.Keys, time.Since(start).Round(time.Millisecond))
	}
	for i := 1; i <= o.Snapshots; i++ {
		start := time.Now()
		if _, err := srv.CreateSnapshot(ctx, &stratov1.CreateSnapshotRequest{Volume: volume, Bucket: snapBucket, Name: fmt.Sprintf("s%d", i)}); err != nil {
			return res, err
		}
		res.SnapshotCreate = append(res.SnapshotCreate, time.Since(start))
	}
	// Create rounds, alternating which bucket goes first.
	for r := range o.Rounds {
		order := []string{snapBucket, plain}
		if r%2 == 1 {
			order = []string{plain, snapBucket}
		}
		for _, b := range order {
			start := time.Now()
			if err := create(ctx, targets[b], fmt.Sprintf("round%d", r), o.Creates, o.Threads, nil); err != nil {
				return res, err
			}
			rate := float64(o.Creates) / time.Since(start).Seconds()
			if b == snapBucket {
				res.WithRates = append(res.WithRates, rate)
			} else {
				res.WithoutRates = append(res.WithoutRates, rate)
			}
			fmt.Fprintf(o.Progress, "create round %d, %s: %.0f creates/s\n", r, b, rate)
		}
	}
	// Changes after a snapshot taken now (the create rounds are changes
	// too): a quarter each of creates, overwrites, renames and deletes of
	// the filled files.
	last := "before"
	if _, err := srv.CreateSnapshot(ctx, &stratov1.CreateSnapshotRequest{Volume: volume, Bucket: snapBucket, Name: last}); err != nil {
		return res, err
	}
	if err := change(ctx, targets[snapBucket], o.Changes, o.Threads); err != nil {
		return res, err
	}
	start := time.Now()
	n, err := diff(ctx, srv, last, "")
	if err != nil {
		return res, err
	}
	res.DiffNow, res.DiffEntries = time.Since(start), n
	if _, err := srv.CreateSnapshot(ctx, &stratov1.CreateSnapshotRequest{Volume: volume, Bucket: snapBucket, Name: "after"}); err != nil {
		return res, err
	}
	start = time.Now()
	if _, err := diff(ctx, srv, last, "after"); err != nil {
		return res, err
	}
	res.Diff = time.Since(start)
	return res, nil
}

// path is file i of a run's files.
func path(run string, i int) string {
	return fmt.Sprintf("/%s/d%d/f%d", run, i/perDir, i)
}

// create makes n files of run with threads clients.
func create(ctx context.Context, t *nnbench.ServiceTarget, run string, n, threads int, progress io.Writer) error {
	return parallel(n, threads, progress, "create "+run, func(i int) error {
		h, err := t.Create(ctx, path(run, i), true)
		if err != nil {
			return err
		}
		return t.Complete(ctx, h)
	})
}

// change makes n changes to the filled files.
func change(ctx context.Context, t *nnbench.ServiceTarget, n, threads int) error {
	q := n / 4
	return parallel(n, threads, nil, "change", func(i int) error {
		switch {
		case i < q: // new files
			h, err := t.Create(ctx, path("new", i), true)
			if err != nil {
				return err
			}
			return t.Complete(ctx, h)
		case i < 2*q: // overwrites
			h, err := t.Create(ctx, path("fill", i), true)
			if err != nil {
				return err
			}
			return t.Complete(ctx, h)
		case i < 3*q: // renames within their directory
			return t.Rename(ctx, path("fill", i), path("fill", i)+".renamed")
		default:
			return t.Delete(ctx, path("fill", i), false)
		}
	})
}

// diff pages through a snapdiff and returns its entries' count.
func diff(ctx context.Context, srv *meta.Server, from, to string) (int, error) {
	n, token := 0, ""
	for {
		r, err := srv.SnapshotDiff(ctx, &stratov1.SnapshotDiffRequest{Volume: volume, Bucket: snapBucket, From: from, To: to, Token: token})
		if err != nil {
			return n, err
		}
		n += len(r.Entries)
		if token = r.NextToken; token == "" {
			return n, nil
		}
	}
}

// parallel runs op(0..n-1) on threads goroutines, reporting progress every
// tenth when progress is set.
func parallel(n, threads int, progress io.Writer, what string, op func(int) error) error {
	var next, done atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range max(threads, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := op(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("%s %d: %w", what, i, err)
					}
					mu.Unlock()
					return
				}
				if d := done.Add(1); progress != nil && n >= 10 && d%int64(n/10) == 0 {
					fmt.Fprintf(progress, "%s: %d/%d\n", what, d, n)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// Median is the median of xs.
func Median[T int64 | float64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// Print writes the result with its targets.
func (r Result) Print(w io.Writer, o Options) {
	fmt.Fprintf(w, "snapshot create, bucket of %d files: median %v, max %v over %d (target <= 10ms)\n",
		o.Keys, Median(r.SnapshotCreate).Round(time.Microsecond), slices.Max(r.SnapshotCreate).Round(time.Microsecond), len(r.SnapshotCreate))
	with, without := Median(r.WithRates), Median(r.WithoutRates)
	var ratios []float64
	for i := range min(len(r.WithRates), len(r.WithoutRates)) {
		ratios = append(ratios, r.WithRates[i]/r.WithoutRates[i])
	}
	fmt.Fprintf(w, "create rate, %d files a round, %d rounds each, alternating: with %d snapshots %.0f/s, without %.0f/s (medians); "+
		"median of the rounds' ratios %.1f%% (target >= 90%%)\n", o.Creates, o.Rounds, o.Snapshots, with, without, 100*Median(ratios))
	fmt.Fprintf(w, "snapdiff of %d changes (%d entries) in a bucket of %d files: snapshot to snapshot %v, to now %v (target <= 2s)\n",
		o.Changes, r.DiffEntries, o.Keys, r.Diff.Round(time.Millisecond), r.DiffNow.Round(time.Millisecond))
}
