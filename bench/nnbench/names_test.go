package nnbench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The first names Hadoop's FileNameGenerator gives for base /b, 2 per dir.
func TestNameGeneratorMatchesHadoop(t *testing.T) {
	g := newNameGenerator("/b", 2)
	var got []string
	for i := 0; i < 8; i++ {
		got = append(got, g.next("ThroughputBench"))
	}
	require.Equal(t, []string{
		"/b/ThroughputBenchDir0/ThroughputBench0",
		"/b/ThroughputBenchDir0/ThroughputBench1",
		"/b/ThroughputBenchDir1/ThroughputBench2",
		"/b/ThroughputBenchDir1/ThroughputBench3",
		"/b/ThroughputBenchDir0/ThroughputBenchDir0/ThroughputBench4",
		"/b/ThroughputBenchDir0/ThroughputBenchDir0/ThroughputBench5",
		"/b/ThroughputBenchDir0/ThroughputBenchDir1/ThroughputBench6",
		"/b/ThroughputBenchDir0/ThroughputBenchDir1/ThroughputBench7",
	}, got)
}

func TestSplitOps(t *testing.T) {
	require.Equal(t, []int{3, 3, 4}, splitOps(10, 3))
	require.Equal(t, []int{1, 1, 0, 0}, splitOps(2, 4))
	require.Equal(t, []int{0}, splitOps(0, 1))
	for _, c := range [][2]int{{100000, 16}, {7, 7}, {1000001, 16}} {
		s := splitOps(c[0], c[1])
		sum, lo, hi := 0, s[0], s[0]
		for _, v := range s {
			sum += v
			lo, hi = min(lo, v), max(hi, v)
		}
		require.Equal(t, c[0], sum)
		require.LessOrEqual(t, hi-lo, 1)
	}
}

// TestNamesLazy: the lazy per-thread inputs are the names one generator
// gives in sequence, split as asked, whatever the directory fan-out (skip
// lands mid-directory and on its boundaries), and each list gives them again
// when ranged again.
func TestNamesLazy(t *testing.T) {
	for _, perDir := range []int{2, 3, 4, 1000} {
		g := newNameGenerator("/b", perDir)
		var want []string
		for range 100 {
			want = append(want, g.next("ThroughputBench"))
		}
		check := func(in inputs, want []string) {
			t.Helper()
			var got []string
			for _, l := range in.lists {
				for p := range l {
					got = append(got, p)
				}
			}
			if in.total != len(want) || len(got) != len(want) {
				t.Fatalf("perDir %d: %d names, total %d, want %d", perDir, len(got), in.total, len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("perDir %d: name %d is %q, want %q", perDir, i, got[i], want[i])
				}
			}
		}
		in := names("/b", perDir, []int{7, 0, 12, 1, 80})
		check(in, want)
		check(in, want) // ranged again: the same names from the start
		// -offset: the same sequence from its 37th name on.
		check(namesFrom("/b", perDir, 37, []int{20, 0, 43}), want[37:])
	}
}
