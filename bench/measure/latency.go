package measure

import (
	"fmt"
	"math/bits"
	"time"
)

// Latency histograms: log-linear buckets (16 per power of two, so any value
// is reported within 1/16 ≈ 6% of itself), one per worker so that recording
// is a plain increment, merged at the end.
const (
	histSubBits = 4
	histSub     = 1 << histSubBits
	histBuckets = 64 * histSub
)

// Histogram records durations. The zero value is empty and ready; it is not
// safe for concurrent use (give each worker its own and Merge them).
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

func histBucket(ns uint64) int {
	if ns < histSub {
		return int(ns)
	}
	exp := bits.Len64(ns) - 1 - histSubBits // ns >> exp is in [16, 32)
	return (exp+1)*histSub + int(ns>>exp) - histSub
}

// histUpper is the largest value that falls into bucket b.
func histUpper(b int) uint64 {
	if b < histSub {
		return uint64(b)
	}
	exp := b/histSub - 1
	mant := uint64(b%histSub + histSub)
	return (mant+1)<<exp - 1
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[histBucket(uint64(d))]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// Count is the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Mean is the average sample.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Max is the largest sample.
func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns an upper bound of the q-quantile (0 < q <= 1), within
// 1/16 of the true value, and never above Max.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = max(1, min(rank, h.n))
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(histUpper(b)), h.max)
		}
	}
	return h.max
}

// LatencySummary is a histogram reduced to the usual percentiles.
type LatencySummary struct {
	Mean, P50, P90, P99, P999, Max time.Duration
}

// Summary returns h's percentiles.
func (h *Histogram) Summary() LatencySummary {
	return LatencySummary{Mean: h.Mean(), P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), P999: h.Quantile(0.999), Max: h.Max()}
}

func (s LatencySummary) String() string {
	return fmt.Sprintf("mean %v  p50 %v  p90 %v  p99 %v  p99.9 %v  max %v",
		roundDur(s.Mean), roundDur(s.P50), roundDur(s.P90), roundDur(s.P99), roundDur(s.P999), roundDur(s.Max))
}

func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= time.Microsecond:
		return d.Round(10 * time.Nanosecond)
	}
	return d
}
