package test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startProc starts a strato process whose output is shown if the test fails.
func startProc(t *testing.T, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, logs.String())
		}
	})
	return cmd
}

// TestClusterOfProcesses runs meta and three datanodes as processes, puts
// and gets a file with the CLI, restarts a datanode with SIGTERM, and reads
// the file again.
func TestClusterOfProcesses(t *testing.T) {
	root := t.TempDir()
	metaAddr := freeAddr(t)
	startMeta(t, filepath.Join(root, "meta"), metaAddr)
	dnAddrs := make([]string, 3)
	dns := make([]*exec.Cmd, 3)
	startDN := func(i int) {
		dns[i] = startProc(t, fmt.Sprintf("datanode %d", i), "datanode", "--data", filepath.Join(root, fmt.Sprint("dn", i)),
			"--meta", metaAddr, "--listen", dnAddrs[i], "--heartbeat-interval", "200ms")
	}
	for i := range dns {
		dnAddrs[i] = freeAddr(t)
		startDN(i)
	}
	cli := func(args ...string) (string, error) {
		out, err := exec.Command(binary, append(args, "--meta", metaAddr)...).CombinedOutput()
		return string(out), err
	}
	// Wait for the three datanodes to register and safe mode to end.
	deadline := time.Now().Add(30 * time.Second)
	for {
		sm, err1 := cli("admin", "safemode", "status")
		dl, err2 := cli("admin", "datanode", "list")
		if err1 == nil && err2 == nil && strings.Contains(sm, "OFF") && strings.Count(dl, "HEALTHY") == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready: %v %v\n%s\n%s", err1, err2, sm, dl)
		}
		time.Sleep(100 * time.Millisecond)
	}

	data := make([]byte, 9<<20+77)
	_, _ = rand.Read(data)
	in := filepath.Join(root, "in.bin")
	require.NoError(t, os.WriteFile(in, data, 0o644))
	for _, args := range [][]string{
		{"sh", "volume", "create", "vol"},
		{"sh", "bucket", "create", "/vol/bkt"},
		{"fs", "mkdir", "-p", "/vol/bkt/d"},
		{"fs", "put", in, "/vol/bkt/d/f.bin"},
	} {
		out, err := cli(args...)
		require.NoError(t, err, "%v: %s", args, out)
	}
	get := func() {
		outFile := filepath.Join(root, "out.bin")
		_ = os.Remove(outFile)
		out, err := cli("fs", "get", "/vol/bkt/d/f.bin", outFile)
		require.NoError(t, err, out)
		got, err := os.ReadFile(outFile)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got), "read back differs")
	}
	get()

	// A datanode stopped with SIGTERM and started again serves its data.
	require.NoError(t, dns[1].Process.Signal(syscall.SIGTERM))
	require.NoError(t, dns[1].Wait())
	startDN(1)
	get()
}
