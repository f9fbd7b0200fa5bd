package chunkwrite

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bytesize"
)

// Plan is everything `strato bench chunk-write` can run in one
// go: one configuration or the original matrix, each case repeated, and
// the references (RAW on the same threads and files, dd with direct I/O)
// measured in the same run so that ratios compare like with like.
type Plan struct {
	// Options is the single run, and the base of every matrix case.
	Options Options
	// Matrix runs MatrixSizes × MatrixLayouts with Options.Threads
	// threads, each case followed by a sync.
	Matrix        bool
	MatrixSizes   []int64  // default 1k, 10k, 100k, 1M, 4M
	MatrixLayouts []string // default FILE_PER_BLOCK, FILE_PER_CHUNK, RAW
	// MatrixBytes and MatrixMaxChunks size each matrix case when
	// Options.Chunks is not set: min(MatrixMaxChunks, MatrixBytes/size)
	// chunks. Defaults 256 MiB and 100,000.
	MatrixBytes     int64
	MatrixMaxChunks int
	// WithRaw also runs RAW with the same options after a single run.
	WithRaw bool
	// DD also runs `dd bs=4M count=DDCount oflag=direct` in Options.Dir.
	DD      bool
	DDCount int // default 1024 (4 GiB)
	// Repeat runs every case this many times, interleaved, and reports
	// the median by rate. Default 1.
	Repeat int
	// Out receives the report.
	Out io.Writer
}

// Run runs the plan and prints its report.
func (p Plan) Run(ctx context.Context) ([]Result, error) {
	o := p.Options
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if p.Repeat < 1 {
		p.Repeat = 1
	}
	out := p.Out
	if out == nil {
		out = io.Discard
	}
	var cases []Options
	if p.Matrix {
		sizes := p.MatrixSizes
		if len(sizes) == 0 {
			sizes = []int64{1 << 10, 10 << 10, 100 << 10, 1 << 20, 4 << 20}
		}
		layouts := p.MatrixLayouts
		if len(layouts) == 0 {
			layouts = Layouts
		}
		if p.MatrixBytes == 0 {
			p.MatrixBytes = 256 << 20
		}
		if p.MatrixMaxChunks == 0 {
			p.MatrixMaxChunks = 100_000
		}
		for _, s := range sizes {
			for _, l := range layouts {
				c := o
				c.ChunkSize, c.Layout, c.Sync = s, l, true
				if p.Options.Chunks == 0 {
					c.Chunks = int(max(1, min(int64(p.MatrixMaxChunks), p.MatrixBytes/s)))
				}
				cases = append(cases, c)
			}
		}
	} else {
		cases = append(cases, o)
		if p.WithRaw && o.Layout != LayoutRaw {
			c := o
			c.Layout = LayoutRaw
			cases = append(cases, c)
		}
	}
	for i := range cases {
		if err := cases[i].Validate(); err != nil {
			return nil, err
		}
	}

	var dd []measure.DDResult
	runDD := func() error {
		if !p.DD {
			return nil
		}
		r, err := measure.DD(ctx, o.Dir, p.DDCount)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(out, "reference: %s: %s in %.3f s, %.1f MB/s\n", r.Command, bytesize.Format(r.Bytes), r.Elapsed.Seconds(), r.MBPerSec())
		dd = append(dd, r)
		return nil
	}
	runs := make([][]Result, len(cases))
	for round := range p.Repeat {
		if err := runDD(); err != nil {
			return nil, err
		}
		for i, c := range cases {
			r, err := Run(ctx, c)
			if err != nil {
				return nil, fmt.Errorf("%s-%s: %w", c.Layout, bytesize.Exact(c.ChunkSize), err)
			}
			if p.Repeat > 1 {
				_, _ = fmt.Fprintf(out, "[round %d/%d] ", round+1, p.Repeat)
			}
			r.Print(out)
			runs[i] = append(runs[i], r)
		}
	}
	if err := runDD(); err != nil {
		return nil, err
	}

	med := make([]Result, len(runs))
	for i, rs := range runs {
		med[i] = medianByRate(rs)
	}
	_, _ = fmt.Fprintln(out)
	if p.Repeat > 1 {
		_, _ = fmt.Fprintf(out, "medians of %d runs (by rate):\n", p.Repeat)
	}
	printTable(out, med, runs, dd)
	_, _ = fmt.Fprintln(out)
	printChart(out, med)
	return med, nil
}

func medianByRate(rs []Result) Result {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b Result) int { return int(a.Elapsed - b.Elapsed) })
	return s[len(s)/2]
}

// printTable prints the report table of the original experiment,
// `testname rate chunks sec sync` (rate in MB/s, sync = seconds of the
// final fsync), with chunks/s and the ratios to RAW of the same size and,
// for 4 MiB chunks, to dd. With several rounds, the ratios are medians of
// the per-round ratios (each measured side by side in one round).
func printTable(w io.Writer, results []Result, runs [][]Result, dd []measure.DDResult) {
	raw := map[int64][]Result{}
	for i, r := range results {
		if r.Layout == LayoutRaw {
			raw[r.ChunkSize] = runs[i]
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	_, _ = fmt.Fprintln(tw, "testname\trate\tchunks\tsec\tsync\tchunks/s\tvs RAW\tvs dd\t")
	for i, r := range results {
		vsRaw, vsDD := "-", "-"
		if rr, ok := raw[r.ChunkSize]; ok && r.Layout != LayoutRaw && len(rr) == len(runs[i]) {
			var ratios []float64
			for k := range rr {
				ratios = append(ratios, runs[i][k].MBPerSec()/rr[k].MBPerSec())
			}
			vsRaw = fmt.Sprintf("%.0f%%", 100*median(ratios))
		}
		if len(dd) > 0 && r.ChunkSize == 4<<20 {
			var ratios []float64
			for k, x := range runs[i] {
				// Each round's dd ran right before it.
				ratios = append(ratios, x.MBPerSec()/dd[min(k, len(dd)-1)].MBPerSec())
			}
			vsDD = fmt.Sprintf("%.0f%%", 100*median(ratios))
		}
		_, _ = fmt.Fprintf(tw, "%s\t%.1f\t%d\t%.3f\t%.3f\t%.0f\t%s\t%s\t\n", r.Name(), r.MBPerSec(), r.Chunks, r.Elapsed.Seconds(), r.SyncTime.Seconds(), r.ChunksPerSec(), vsRaw, vsDD)
	}
	_ = tw.Flush()
	if len(dd) > 0 {
		var rates []float64
		for _, d := range dd {
			rates = append(rates, d.MBPerSec())
		}
		_, _ = fmt.Fprintf(w, "dd (bs=4M oflag=direct): median %.1f MB/s of %d runs\n", median(rates), len(dd))
	}
	_, _ = fmt.Fprintln(w, "rate: MB/s (10^6 bytes), sec: elapsed including the final sync, sync: seconds in the final sync")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printChart draws a terminal bar chart of MB/s, one group per
// chunk size, bars scaled to the fastest of their group.
func printChart(w io.Writer, results []Result) {
	const width = 50
	var sizes []int64
	best := map[int64]float64{}
	for _, r := range results {
		if _, ok := best[r.ChunkSize]; !ok {
			sizes = append(sizes, r.ChunkSize)
		}
		best[r.ChunkSize] = max(best[r.ChunkSize], r.MBPerSec())
	}
	nameW := 0
	for _, r := range results {
		nameW = max(nameW, len(r.Layout))
	}
	_, _ = fmt.Fprintln(w, "MB/s by chunk size (bars relative to the fastest layout of each size)")
	for _, s := range sizes {
		_, _ = fmt.Fprintf(w, "%s\n", bytesize.Exact(s))
		for _, r := range results {
			if r.ChunkSize != s {
				continue
			}
			n := 0
			if best[s] > 0 {
				n = int(r.MBPerSec()/best[s]*width + 0.5)
			}
			_, _ = fmt.Fprintf(w, "  %-*s %s%s %8.1f\n", nameW, r.Layout, strings.Repeat("█", n), strings.Repeat(" ", width-n), r.MBPerSec())
		}
	}
}
