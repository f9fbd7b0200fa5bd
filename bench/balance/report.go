package balance

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"time"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bench/rereplicate"
	"github.com/strato-io/strato/bytesize"
)

// Usage is one foreground write: its time, the process's CPU seconds and
// what the disk did meanwhile.
type Usage struct {
	Elapsed time.Duration
	CPU     float64
	Disk    measure.DiskStats
	// Write, Hsync and Close are the writers' time in those calls, the
	// slowest writer's.
	Write, Hsync, Close time.Duration
}

// diskMBps is the disk's bytes read and written per second during u.
func (u Usage) diskMBps() float64 {
	return float64(u.Disk.Read+u.Disk.Written) / 1e6 / u.Elapsed.Seconds()
}

func (u Usage) String() string {
	return fmt.Sprintf("%.3f s (write %.2f s, hsync %.2f s, close %.2f s; CPU %.1f s, disk %s read %s written, busy %.0f%%)",
		u.Elapsed.Seconds(), u.Write.Seconds(), u.Hsync.Seconds(), u.Close.Seconds(), u.CPU,
		bytesize.Format(u.Disk.Read), bytesize.Format(u.Disk.Written), 100*u.Disk.Busy.Seconds()/u.Elapsed.Seconds())
}

// Round is one foreground round: the write alone and while the balancer
// moved containers, and the bytes the sources sent during the second.
type Round struct {
	Alone, During Usage
	MovedDuring   int64
	// GaveWay is the time the copies waited for the writes (both ends of
	// each move counted) while balancing.
	GaveWay time.Duration
}

// Cost is the write's slowdown while balancing.
func (r Round) Cost() float64 { return r.During.Elapsed.Seconds()/r.Alone.Elapsed.Seconds() - 1 }

// Floor is the least the slowdown could be on this machine: the time the
// write while balancing needs at least, the larger of its disk bytes at
// the best disk rate seen in the run (diskMBps) and its CPU seconds over
// the cores, against the write alone.
func (r Round) Floor(diskMBps float64) float64 {
	need := float64(r.During.Disk.Read+r.During.Disk.Written) / 1e6 / diskMBps
	need = max(need, r.During.CPU/float64(runtime.NumCPU()))
	return need/r.Alone.Elapsed.Seconds() - 1
}

// Result is what Run measured.
type Result struct {
	// Rate: the first phase, nothing else running. The datanodes that
	// sent bytes, the bytes they sent, each one's; Window from the first
	// byte to the last; MBps is Moved over Window, CapMBps the cap of the
	// sources that sent (0: no cap).
	Sources       int
	Moved         int64
	PerSource     map[string]int64
	Window        time.Duration
	MBps, CapMBps float64
	Samples       []float64 // GB/s per Interval
	Bound         rereplicate.Bound

	// Foreground rounds, medians and the median cost and floor.
	Rounds                    []Round
	AloneMedian, DuringMedian time.Duration
	Cost, Floor               float64

	// The run to the end: its outcome, time, and the spread before the
	// first phase and after the last.
	Outcome                   string
	FinishTime                time.Duration
	SpreadBefore, SpreadAfter float64
}

// summarize computes the medians, the cost and the rates.
func (r *Result) summarize(cfg Config) {
	if r.Window > 0 {
		r.MBps = float64(r.Moved) / 1e6 / r.Window.Seconds()
	}
	if cfg.Bandwidth > 0 {
		r.CapMBps = float64(cfg.Bandwidth) * float64(r.Sources) / 1e6
	}
	if len(r.Rounds) == 0 {
		return
	}
	var disk float64
	for _, x := range r.Rounds {
		disk = max(disk, x.Alone.diskMBps(), x.During.diskMBps())
	}
	var alone, during []time.Duration
	var costs, floors []float64
	for _, x := range r.Rounds {
		alone, during = append(alone, x.Alone.Elapsed), append(during, x.During.Elapsed)
		costs, floors = append(costs, x.Cost()), append(floors, x.Floor(disk))
	}
	r.AloneMedian, r.DuringMedian = median(alone), median(during)
	r.Cost, r.Floor = median(costs), median(floors)
}

func median[T time.Duration | float64](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Print writes the summary.
func (r *Result) Print(out io.Writer, cfg Config) {
	fmt.Fprintf(out, "rate: %d sources sent %s in %.1f s from the first byte to the last: %.0f MB/s",
		r.Sources, bytesize.Format(r.Moved), r.Window.Seconds(), r.MBps)
	if r.CapMBps > 0 {
		fmt.Fprintf(out, ", %.0f%% of the cap (%s/s per source, %.0f MB/s in all)", 100*r.MBps/r.CapMBps, bytesize.Format(cfg.Bandwidth), r.CapMBps)
	}
	fmt.Fprintln(out)
	for _, id := range slices.Sorted(maps.Keys(r.PerSource)) {
		fmt.Fprintf(out, "  %s sent %s: %.0f MB/s over the window\n", id, bytesize.Format(r.PerSource[id]), float64(r.PerSource[id])/1e6/r.Window.Seconds())
	}
	if r.Bound.CopyMBps > 0 {
		fmt.Fprintf(out, "bound: %d concurrent direct-I/O copies on the disk %.0f MB/s, loopback TCP %.0f MB/s: the balancer at %.0f%% of it\n",
			r.Bound.Streams, r.Bound.CopyMBps, r.Bound.LoopbackMBps, 100*r.MBps/r.Bound.MBps())
	}
	if len(r.Rounds) > 0 {
		fmt.Fprintf(out, "foreground: TeraGen, %d writers, %d rows (%s), hsync and close: alone %.3f s, while balancing %.3f s (medians of %d rounds, alternating order): cost %+.1f%%, floor %+.1f%% (the disk bytes and CPU of the writes while balancing, at the best rates of the run)\n",
			cfg.Writers, cfg.Rows, bytesize.Format(int64(cfg.Rows)*100), r.AloneMedian.Seconds(), r.DuringMedian.Seconds(), len(r.Rounds), 100*r.Cost, 100*r.Floor)
	}
	fmt.Fprintf(out, "balanced: %s, the last run %.1f s; spread %.1f%% -> %.1f%%\n", r.Outcome, r.FinishTime.Seconds(), 100*r.SpreadBefore, 100*r.SpreadAfter)
}
