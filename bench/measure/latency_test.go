package measure

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestHistogramQuantiles(t *testing.T) {
	var h Histogram
	for i := 1; i <= 10000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := time.Duration(q*10000) * time.Microsecond
		got := h.Quantile(q)
		require.GreaterOrEqual(t, got, want, q)
		require.LessOrEqual(t, float64(got), float64(want)*(1+1.0/16), q)
	}
	require.Equal(t, 10*time.Millisecond, h.Max())
	require.Equal(t, h.Max(), h.Quantile(1))
	var other Histogram
	other.Record(time.Second)
	h.Merge(&other)
	require.Equal(t, uint64(10001), h.Count())
	require.Equal(t, time.Second, h.Quantile(1))
	for v := uint64(0); v < 1<<20; v = v*2 + 1 {
		b := histBucket(v)
		require.GreaterOrEqual(t, histUpper(b), v)
		if b > 0 {
			require.Less(t, histUpper(b-1), v)
		}
	}
}
