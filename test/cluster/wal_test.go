package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

// The HBase WAL test: a region server's write-ahead log is a file it
// hsyncs after every edit; when the server dies, the master recovers the
// log's lease, waits until the file is closed, and replays every edit the
// dead server acknowledged (hsynced). Here the writer is a process of its
// own (this test binary run again as TestWALWriterProcess), killed with
// SIGKILL after it reported some hsyncs.

const walEditSize = 3000

// walEdit is edit i of the log: its number and reproducible bytes.
func walEdit(i int) []byte {
	b := fastRandom(walEditSize, uint64(i)+100)
	copy(b, fmt.Sprintf("edit %08d|", i))
	return b
}

// TestWALWriterProcess is the writer process: it creates the log named by
// STRATO_WAL_PATH on the meta at STRATO_WAL_META, hsyncs edit after edit
// and prints "synced N" after each, until it is killed.
func TestWALWriterProcess(t *testing.T) {
	addr, path := os.Getenv("STRATO_WAL_META"), os.Getenv("STRATO_WAL_PATH")
	if addr == "" {
		t.Skip("the writer process of TestWALRecoverLeaseAfterKill")
	}
	ctx := context.Background()
	cl, err := client.New(client.Options{Meta: []string{addr}, NoToken: true})
	require.NoError(t, err)
	w, err := cl.Create(ctx, path, client.CreateOptions{})
	require.NoError(t, err)
	for i := 0; ; i++ {
		_, err := w.Write(walEdit(i))
		require.NoError(t, err)
		require.NoError(t, w.Hsync())
		fmt.Printf("synced %d\n", i)
		if i >= 10_000 {
			select {} // wait to be killed
		}
	}
}

func TestWALRecoverLeaseAfterKill(t *testing.T) {
	if os.Getenv("STRATO_WAL_META") != "" {
		t.Skip("in the writer process")
	}
	ctx, cl, c := startAppendCluster(t)
	addr := c.MetaAddr()
	const path = "/vol/bkt/wal/region1.log"
	require.NoError(t, cl.Mkdirs(ctx, "/vol/bkt/wal"))

	cmd := exec.Command(os.Args[0], "-test.run=^TestWALWriterProcess$")
	cmd.Env = append(os.Environ(), "STRATO_WAL_META="+addr, "STRATO_WAL_PATH="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Kill the writer (SIGKILL) once it acknowledged 50 edits.
	acked := -1
	sc := bufio.NewScanner(out)
	for acked < 49 && sc.Scan() {
		if n, ok := strings.CutPrefix(sc.Text(), "synced "); ok {
			acked, err = strconv.Atoi(n)
			require.NoError(t, err)
		}
	}
	require.Equal(t, 49, acked, "the writer process stopped early: %v", sc.Err())
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killed = true

	closed, err := cl.IsFileClosed(ctx, path)
	require.NoError(t, err)
	require.False(t, closed, "the dead writer still holds the log")
	recovered, length, err := cl.RecoverLease(ctx, path)
	require.NoError(t, err)
	require.True(t, recovered)
	deadline := time.Now().Add(30 * time.Second)
	for !closed {
		require.True(t, time.Now().Before(deadline), "the log never closed")
		closed, err = cl.IsFileClosed(ctx, path)
		require.NoError(t, err)
	}
	// Replay: every acknowledged edit is there, whole, in order (the
	// writer may have hsynced a few more before it died, never a part).
	log := readAll(ctx, t, cl, path)
	require.Equal(t, int64(len(log)), length)
	require.Zero(t, len(log)%walEditSize, "the log ends on an hsync: %d bytes", len(log))
	n := len(log) / walEditSize
	require.GreaterOrEqual(t, n, acked+1)
	for i := range n {
		require.True(t, bytes.Equal(walEdit(i), log[i*walEditSize:(i+1)*walEditSize]), "edit %d", i)
	}
	t.Logf("writer killed after %d acknowledged edits; %d replayed", acked+1, n)

	// The fencing, in process: a writer that hsynced, then lost its lease
	// to a recovery, can neither hsync nor close; the log keeps what it
	// had published.
	w, err := cl.Append(ctx, path, client.WriteOptions{})
	require.NoError(t, err)
	_, err = w.Write(walEdit(n))
	require.NoError(t, err)
	require.NoError(t, w.Hsync())
	_, err = w.Write(walEdit(n + 1))
	require.NoError(t, err)
	other, err := client.New(client.Options{Meta: []string{addr}, NoToken: true})
	require.NoError(t, err)
	defer func() { _ = other.Close() }()
	_, length, err = other.RecoverLease(ctx, path)
	require.NoError(t, err)
	require.Equal(t, int64((n+1)*walEditSize), length)
	require.Error(t, w.Hsync(), "a late hsync of the fenced writer")
	require.Error(t, w.Close(), "a late close of the fenced writer")
	log = readAll(ctx, t, cl, path)
	require.Equal(t, (n+1)*walEditSize, len(log))
	require.True(t, bytes.Equal(walEdit(n), log[n*walEditSize:]))
}
