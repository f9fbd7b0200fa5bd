package test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// call retries fn while the server is starting (connection refused).
func call(t *testing.T, addr string, fn func(ctx context.Context, ns stratov1.NamespaceServiceClient) error) error {
	mc, err := client.DialMeta([]string{addr})
	require.NoError(t, err)
	defer mc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return mc.Do(ctx, func(ctx context.Context, ns stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		return fn(ctx, ns)
	})
}

func TestMetaSIGTERMAndRestart(t *testing.T) {
	addr := freeAddr(t)
	m := startMeta(t, t.TempDir(), addr)
	require.NoError(t, call(t, addr, func(ctx context.Context, ns stratov1.NamespaceServiceClient) error {
		if _, err := ns.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"}); err != nil {
			return err
		}
		if _, err := ns.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"}); err != nil {
			return err
		}
		_, err := ns.CreateDirectory(ctx, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "x/y"})
		return err
	}))

	m.stop()
	m.start()
	require.NoError(t, call(t, addr, func(ctx context.Context, ns stratov1.NamespaceServiceClient) error {
		st, err := ns.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "x/y"})
		if err != nil {
			return err
		}
		require.True(t, st.Status.IsDirectory)
		return nil
	}))
}

func TestMetaRefusesBadFlags(t *testing.T) {
	out, err := exec.Command(binary, "meta", "--data", t.TempDir(), "--auth", "none", "--peers", "1=127.0.0.1:1,x").CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit with an error")
	require.Contains(t, string(out), "id=host:port")
	require.Equal(t, 1, strings.Count(strings.TrimSpace(string(out)), "\n")+1, "one clear line: %s", out)
}

func TestBenchMetaAllOps(t *testing.T) {
	out, err := exec.Command(binary, "bench", "meta", "-op", "all", "-threads", "4", "-files", "300", "-dirs", "300",
		"-datanodes", "4", "-reports", "20", "-blocksPerReport", "20", "-totalBlocks", "40").Output()
	require.NoError(t, err, "%s", out)
	for _, op := range []string{"create", "mkdirs", "open", "delete", "fileStatus", "rename", "blockReport", "replication", "clean"} {
		require.Contains(t, string(out), "--- "+op+" stats ---")
	}
	require.Contains(t, string(out), "# operations: 300")
	require.Contains(t, string(out), "nrThreads = 4")

	_, err = exec.Command(binary, "bench", "meta", "-op", "nope").Output()
	require.Error(t, err)
}

// TestBenchMetaCreateWithoutClose: files created without -close are left
// open, and an open file goes through Raft at once (a deferred create would
// leave nothing behind without its close).
func TestBenchMetaCreateWithoutClose(t *testing.T) {
	const files = 200
	for _, args := range [][]string{{}, {"-close"}} {
		cmd := append([]string{"bench", "meta", "-op", "create", "-threads", "2", "-files", strconv.Itoa(files)}, args...)
		out, err := exec.Command(binary, cmd...).Output()
		require.NoError(t, err, "%s", out)
		m := regexp.MustCompile(`Raft: (\d+) proposals`).FindSubmatch(out)
		require.NotNil(t, m, "%s", out)
		proposals, err := strconv.Atoi(string(m[1]))
		require.NoError(t, err)
		require.GreaterOrEqual(t, proposals, files, "%v: every create is a Raft entry: %s", args, out)
	}
}

// TestDatanodeFailedDataDirectory: a data directory that cannot be one (a
// file stands in its place) is logged and left out, and the datanode runs
// on the other, by default; with --failed-volumes-tolerated 0 it exits 1
// at once, naming the directory and why.
func TestDatanodeFailedDataDirectory(t *testing.T) {
	root := t.TempDir()
	good, bad := filepath.Join(root, "good"), filepath.Join(root, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("not a directory"), 0o644))
	args := []string{"datanode", "--data", good, "--data", bad, "--meta", freeAddr(t), "--listen", freeAddr(t)}

	out, err := exec.Command(binary, append(args, "--failed-volumes-tolerated", "0")...).CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit with an error: %s", out)
	require.Equal(t, 1, ee.ExitCode())
	require.Contains(t, string(out), "too many failed volumes: 1 of 2 failed (tolerated: 0): "+bad+": open")

	p := startProc(t, "datanode", args...)
	require.Eventually(t, func() bool {
		log, _ := os.ReadFile(p.Log)
		return strings.Contains(string(log), "starting without a failed volume")
	}, 10*time.Second, 20*time.Millisecond)
	require.True(t, p.running())
	p.stop()
}
