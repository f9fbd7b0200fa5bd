package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchBalance runs the benchmark small: the balancer moves containers
// from the full datanodes to the empty ones at a rate the report compares
// with its cap, the foreground rounds run, the balancer ends balanced and
// every key reads back.
func TestBenchBalance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of six datanodes and waits for three to be declared dead")
	}
	dir := t.TempDir()
	r := execute(nil, "bench", "balance", "--size", "192MiB", "--key-size", "8MiB", "--container-size", "16MiB",
		"--rate-bytes", "48MiB", "--bandwidth", "32MiB", "--rounds", "1", "--rows", "100000",
		"--dead-after", "2s", "--skip-bound", "--interval", "200ms",
		"--dir", filepath.Join(dir, "c"), "--chart", filepath.Join(dir, "b.png"))
	require.Zero(t, r.code, r.stderr)
	out := r.stdout
	m := regexp.MustCompile(`rate: 3 sources sent ([0-9.]+) MiB in [0-9.]+ s from the first byte to the last: \d+ MB/s, (\d+)% of the cap`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	sent, _ := strconv.ParseFloat(m[1], 64)
	require.GreaterOrEqual(t, sent, 48.0, out)
	require.Regexp(t, `round 1: foreground alone [0-9.]+ s .*; while balancing [0-9.]+ s .*the balancer sent`, out)
	require.Regexp(t, `foreground: TeraGen, 2 writers, 100000 rows .* cost [-+][0-9.]+%, floor [-+][0-9.]+%`, out)
	require.Contains(t, out, "balanced: balanced")
	require.Contains(t, out, "all identical")
	require.FileExists(t, filepath.Join(dir, "b.png"))
}

// TestBenchBalanceRefuses: too few datanodes, or a fill at or below the
// threshold, fail at once with a clear error.
func TestBenchBalanceRefuses(t *testing.T) {
	r := execute(nil, "bench", "balance", "--fill", "0.05", "--dir", t.TempDir())
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--fill 0.05: the full datanodes' use must be above the threshold")
	r = execute(nil, "bench", "balance", "--datanodes", "4", "--dir", t.TempDir())
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "--datanodes 4: the balance needs at least 6")
	r = execute(nil, "bench", "balance", "--bandwidth", "fast", "--dir", t.TempDir())
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "--bandwidth: a size per second or none")
}
