package test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestFollowerReadsProcesses: three meta processes and a client with
// follower reads on. Every file the client writes is there, whole, when
// the client stats, lists and reads it right after (read-your-writes,
// though the reads go to every replica in turn); the followers serve
// reads (strato_meta_follower_reads_total moves on them, not on the
// leader), and a client without follower reads still reads from the
// leader alone.
func TestFollowerReadsProcesses(t *testing.T) {
	root := t.TempDir()
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	https := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	var peers []string
	for i, a := range addrs {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, a))
	}
	var all []*proc
	for i, a := range addrs {
		all = append(all, startMeta(t, filepath.Join(root, fmt.Sprint("meta", i+1)), a,
			"--id", fmt.Sprint(i+1), "--peers", strings.Join(peers, ","), "--http", https[i]))
	}
	metaList := strings.Join(addrs, ",")
	all = append(all, startDatanodes(t, root, metaList, 3)...)
	waitReady(t, metaList, all...)

	newClient := func(followerReads bool) *client.Client {
		cl, err := client.New(client.Options{Meta: addrs, FollowerReads: followerReads, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	cl := newClient(true)
	ctx := t.Context()
	_, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	for i := range 24 {
		dir := fmt.Sprintf("/vol/bkt/d%02d", i)
		data := make([]byte, 64<<10+i)
		_, _ = rand.Read(data)
		w, err := cl.Create(ctx, dir+"/f", client.CreateOptions{Recursive: true})
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
		require.NoError(t, w.Close())

		st, err := cl.Stat(ctx, dir+"/f")
		require.NoError(t, err, "file %d right after its close", i)
		require.EqualValues(t, len(data), st.GetLength())
		ls, err := cl.List(ctx, dir)
		require.NoError(t, err)
		require.Len(t, ls, 1)
		r, err := cl.Open(ctx, dir+"/f")
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.True(t, bytes.Equal(data, got), "file %d read back differs", i)

		require.NoError(t, cl.Delete(ctx, dir+"/f", false))
		_, err = cl.Stat(ctx, dir+"/f")
		require.ErrorIs(t, err, client.ErrNotFound, "file %d right after its deletion", i)
	}
	served, _ := cl.Meta().FollowerReadStats()
	require.Positive(t, served, "reads served by replicas other than the leader")

	leader, _ := metaLeaderCommit(t, addrs)
	followerReads := func() []float64 {
		out := make([]float64, len(https))
		for i, h := range https {
			code, body, err := httpGet("http://" + h + "/metrics")
			require.NoError(t, err)
			require.Equal(t, 200, code)
			out[i] = sample(body, "strato_meta_follower_reads_total")
			require.GreaterOrEqual(t, out[i], 0.0, "meta %d exports strato_meta_follower_reads_total", i+1)
			require.GreaterOrEqual(t, sample(body, "strato_meta_raft_follower_read_indexes_total"), 0.0)
		}
		return out
	}
	counts := followerReads()
	for i, n := range counts {
		if i == leader {
			require.Zero(t, n, "the leader serves its reads as leader")
		} else {
			require.Positive(t, n, "follower meta %d served reads", i+1)
		}
	}

	// A client without follower reads asks the leader alone.
	plain := newClient(false)
	for range 10 {
		_, err := plain.Stat(ctx, "/vol/bkt/d00")
		require.NoError(t, err)
	}
	require.Equal(t, counts, followerReads())
	served, fallbacks := plain.Meta().FollowerReadStats()
	require.Zero(t, served+fallbacks)

	// The CLI: --follower-reads sends its reads to the followers too. Each
	// command starts its rotation at a random replica (one read each: all
	// twelve at the leader has odds of 1 in 3^12).
	for range 12 {
		out, err := cli(metaList, "fs", "ls", "/vol/bkt", "--follower-reads")
		require.NoError(t, err, "%s", out)
		require.Contains(t, out, "d00")
	}
	after := followerReads()
	var more float64
	for i := range after {
		more += after[i] - counts[i]
	}
	require.Positive(t, more, "strato fs ls --follower-reads was served by followers")
}
