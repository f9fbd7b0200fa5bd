package test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClusterOfProcesses runs meta and three datanodes as processes, puts
// and gets a file with the CLI, restarts a datanode with SIGTERM, and reads
// the file again.
func TestClusterOfProcesses(t *testing.T) {
	root := t.TempDir()
	metaAddr := freeAddr(t)
	m := startMeta(t, filepath.Join(root, "meta"), metaAddr)
	dns := startDatanodes(t, root, metaAddr, 3)
	waitReady(t, metaAddr, append(dns, m)...)

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
		out, err := cli(metaAddr, args...)
		require.NoError(t, err, "%v: %s", args, out)
	}
	get := func() {
		outFile := filepath.Join(root, "out.bin")
		_ = os.Remove(outFile)
		out, err := cli(metaAddr, "fs", "get", "/vol/bkt/d/f.bin", outFile)
		require.NoError(t, err, out)
		got, err := os.ReadFile(outFile)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got), "read back differs")
	}
	get()

	// A datanode stopped with SIGTERM and started again serves its data.
	dns[1].stop()
	dns[1].start()
	get()
}
