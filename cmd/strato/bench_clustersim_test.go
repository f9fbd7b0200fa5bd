package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bytesize"
)

// TestMain lets the test binary be strato itself: with STRATO_TEST_MAIN
// set it runs main, so that a command that starts strato as a child
// process (bench cluster-sim --meta-process) starts this binary, the code
// under test.
func TestMain(m *testing.M) {
	if os.Getenv("STRATO_TEST_MAIN") != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestClusterSimMetaProcess: cluster-sim against a meta process of its
// own. The containers are made and CLOSED and the heartbeats measured
// without an error; meta's CPU time and peak memory are its process's;
// the stopped datanodes are found DEAD and their containers' copies
// planned (read from meta's /metrics); meta, stopped with SIGTERM and
// started again on its data, leaves safe mode.
func TestClusterSimMetaProcess(t *testing.T) {
	t.Setenv("STRATO_TEST_MAIN", "1")
	dir := t.TempDir()
	r := execute(nil, "bench", "cluster-sim", "--meta-process", "--dir", dir, "--datanodes", "100", "--containers", "300",
		"--container-size", "16MiB", "--heartbeat-interval", "200ms", "--full-report-every", "5", "--duration", "2s",
		"--kill", "5", "--dead-after", "2s")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "meta in its own process")
	require.Regexp(t, `heartbeats: \d+ in 2s \(\d+/s\), 0 errors`, r.stdout)
	m := regexp.MustCompile(`replicas reported (\d+), CLOSED (\d+)`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	require.Equal(t, m[1], m[2], "every replica reported CLOSED")
	require.Regexp(t, `datanodes of a rack stopped \(\d+ containers\): DEAD after \S+, every copy planned after`, r.stdout)
	require.Regexp(t, `out of safe mode in \S+`, r.stdout)
	require.Regexp(t, `not read, as they said nothing new: [1-9]`, r.stdout)

	m = regexp.MustCompile(`meta's process: cpu (\S+) over the measured heartbeats, \S+ per heartbeat; \d+ collections; peak rss (.+)\n`).FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	cpu, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	require.Positive(t, cpu, "meta's process worked while the heartbeats were measured")
	rss, err := bytesize.Parse(strings.ReplaceAll(m[2], " ", ""))
	require.NoError(t, err)
	require.Greater(t, rss, int64(10<<20), "meta's peak resident memory: a Go server's")

	log, err := os.ReadFile(filepath.Join(dir, "meta.log"))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(log), "meta serving"), "meta started, and started again: %s", log)

	r = execute(nil, "bench", "cluster-sim", "--meta-process", "--meta", "127.0.0.1:1")
	require.NotEqual(t, 0, r.code)
	require.Contains(t, r.stderr, "exclude each other")
}

// TestMetaBlockSizeAboveContainerSize: a block larger than its container
// is refused as a usage error, before anything starts.
func TestMetaBlockSizeAboveContainerSize(t *testing.T) {
	r := execute(nil, "meta", "--data", t.TempDir(), "--auth", "none", "--container-size", "1MiB", "--block-size", "2MiB")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "--block-size 2 MiB is larger than --container-size 1 MiB")
}
