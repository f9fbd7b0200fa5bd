package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchRereplicate runs the benchmark small: the lost datanode's
// containers are copied back, every key reads back, and the report has
// its rates and the CPU split.
func TestBenchRereplicate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster and waits for a datanode to be declared dead")
	}
	dir := t.TempDir()
	r := execute(nil, "bench", "rereplicate", "--size", "96MiB", "--container-size", "16MiB", "--datanodes", "4",
		"--dead-after", "2s", "--skip-bound", "--drop-caches=false", "--interval", "200ms",
		"--dir", filepath.Join(dir, "c"), "--chart", filepath.Join(dir, "r.png"))
	require.Zero(t, r.code, r.stderr)
	out := r.stdout
	require.Contains(t, out, "reading every key back")
	m := regexp.MustCompile(`containers re-replicated: (\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	n, _ := strconv.Atoi(m[1])
	require.Positive(t, n, out)
	require.Regexp(t, `throughput: mean [0-9.]+ GB/s`, out)
	require.Contains(t, out, "CPU: ")
	require.FileExists(t, filepath.Join(dir, "r.png"))
}

// TestBenchRereplicateRefuses: an erasure coded run on too few datanodes,
// or with a config that does not parse, fails at once with a clear error.
func TestBenchRereplicateRefuses(t *testing.T) {
	r := execute(nil, "bench", "rereplicate", "--replication", "rs-6-3-1024k", "--datanodes", "9", "--dir", t.TempDir())
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "--datanodes 9: rs-6-3-1024k needs at least 10")
	r = execute(nil, "bench", "rereplicate", "--replication", "rs-3", "--dir", t.TempDir())
	require.NotZero(t, r.code)
	require.Contains(t, r.stderr, "--replication: THREE or an erasure coding config")
}
