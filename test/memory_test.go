package test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMetaMemoryBounded: a `strato meta` with small cache bounds, filled
// with 60,000 files in 6,000 directories (past every bound), holds each cache within its bound
// (its metrics) and its peak RSS under the bounds plus an allowance for
// the runtime; every file is found again once the caches have evicted.
func TestMetaMemoryBounded(t *testing.T) {
	addr, httpAddr := freeAddr(t), freeAddr(t)
	m := startMeta(t, t.TempDir(), addr, "--http", httpAddr,
		"--block-cache", "4MiB", "--memtable-size", "1MiB", "--dir-cache", "256KiB", "--apply-cache", "512KiB", "--raft-log-cache", "256KiB")
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if _, err := cli(addr, "sh", "volume", "list"); err == nil {
			break
		}
		require.Less(t, time.Since(start), 30*time.Second, "meta did not answer")
	}
	const files = "60000"
	out, err := run("bench", "meta", "--meta", addr, "-op", "create", "-threads", "8", "-files", files, "-filesPerDir", "10", "-close", "-keepResults")
	require.NoError(t, err, out)
	out, err = run("bench", "meta", "--meta", addr, "-op", "open", "-threads", "8", "-files", files, "-filesPerDir", "10", "-useExisting", "-keepResults")
	require.NoError(t, err, out)
	require.Contains(t, out, "# operations: "+files, "every file opened")

	metrics := scrape(t, "http://"+httpAddr+"/metrics")
	for _, c := range []string{"dir_cache", "apply_cache", "block_cache", "memtable", "raft_log_cache"} {
		held, bound := metrics["strato_meta_"+c+"_bytes"], metrics["strato_meta_"+c+"_max_bytes"]
		t.Logf("%s: %.0f of %.0f bytes", c, held, bound)
		require.Positive(t, bound, c)
		require.LessOrEqual(t, held, bound, c)
	}
	// 6,000 directories: the directory caches and the log's reach their
	// bounds (the apply cache's maximum counts 4 MiB of snapshot states
	// beside its 512 KiB).
	for c, least := range map[string]float64{"dir_cache": 128 << 10, "apply_cache": 128 << 10, "raft_log_cache": 128 << 10} {
		require.Greater(t, metrics["strato_meta_"+c+"_bytes"], least, "%s filled toward its bound", c)
	}
	// The bounds come to about 12 MiB (4 MiB of snapshot states included);
	// the Go runtime, gRPC and the requests in flight take the rest.
	hwm := peakRSS(t, m.Pid())
	t.Logf("peak RSS %d MiB", hwm>>20)
	require.Less(t, hwm, int64(96<<20))
}

// scrape reads a Prometheus text endpoint's unlabelled samples.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// peakRSS is a process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	require.Positive(t, pid)
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
