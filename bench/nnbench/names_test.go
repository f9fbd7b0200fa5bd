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
