package test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// balancerStatus is what `strato admin balancer status --json` prints
// that the test reads (64-bit integers are JSON numbers).
type balancerStatus struct {
	Running       bool    `json:"running"`
	Outcome       string  `json:"outcome"`
	StartedUnixMs int64   `json:"startedUnixMs"`
	Mean          float64 `json:"mean"`
	MovesInFlight int     `json:"movesInFlight"`
	Datanodes     []struct {
		ID          string  `json:"id"`
		Used        int64   `json:"used"`
		Capacity    int64   `json:"capacity"`
		Utilization float64 `json:"utilization"`
		Class       string  `json:"class"`
	} `json:"datanodes"`
}

func balancerStatusOf(metas string) (*balancerStatus, error) {
	out, err := cli(metas, "admin", "balancer", "status", "--json")
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, out)
	}
	st := &balancerStatus{}
	return st, json.Unmarshal([]byte(out), st)
}

// TestBalancerProcesses: three meta replicas and six datanodes as
// processes. Three datanodes take the files, three more start empty, and
// `strato admin balancer start` moves containers onto them (copies slowed
// to 1 MiB/s) while the files are read; the meta leader is killed while
// moves are under way, and the new leader resumes the same run until every
// datanode is within the threshold. Every file reads back identical, and
// every container has its three copies and no more.
func TestBalancerProcesses(t *testing.T) {
	root := t.TempDir()
	addrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	metaList := strings.Join(addrs, ",")
	metas := startMetaGroup(t, root, "meta", addrs)
	var dns []*proc
	startDNs := func(from, to int) {
		for i := from; i < to; i++ {
			dns = append(dns, startDatanode(t, filepath.Join(root, fmt.Sprint("dn", i)), metaList,
				"--heartbeat-interval", "200ms", "--replication-bandwidth", fmt.Sprint(1<<20), "--rack", fmt.Sprintf("/rack%d", i%3+1)))
		}
	}
	startDNs(0, 3)
	waitReady(t, metaList, append(append([]*proc{}, metas...), dns...)...)
	files := putFiles(t, root, metaList, 9, 3<<20)
	read := func(name string) { t.Helper(); getFile(t, root, metaList, name, files[name]) }
	cl, err := client.New(client.Options{Meta: addrs, AttemptTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	written := writtenContainers(t, cl)
	require.NotEmpty(t, written)
	for id := range written {
		out, err := cli(metaList, "admin", "container", "close", fmt.Sprint(id))
		require.NoError(t, err, out)
	}
	startDNs(3, 6)
	var st *balancerStatus
	require.Eventually(t, func() bool {
		var err error
		st, err = balancerStatusOf(metaList)
		if err != nil || len(st.Datanodes) != 6 {
			return false
		}
		for _, c := range writtenContainers(t, cl) {
			if c[0] != int(stratov1.ContainerState_CONTAINER_CLOSED) {
				return false
			}
		}
		return true
	}, time.Minute, 200*time.Millisecond)

	// The datanodes share one disk: the threshold is half of the full
	// ones' distance from the mean, so that they are over and the empty
	// ones under.
	full := 1.0
	for _, d := range st.Datanodes {
		if d.Utilization > st.Mean {
			full = min(full, d.Utilization)
		}
	}
	threshold := (full - st.Mean) / 2
	require.Positive(t, threshold)
	out, err := cli(metaList, "admin", "balancer", "start", "--threshold", fmt.Sprintf("%.12f%%", 100*threshold), "--bandwidth", "0")
	require.NoError(t, err, out)
	st, err = balancerStatusOf(metaList)
	require.NoError(t, err)
	run := st.StartedUnixMs

	// Reads go on while it moves; the leader is killed with moves under way.
	killed := false
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for i := 0; ; i++ {
		read(names[i%len(names)])
		st, err = balancerStatusOf(metaList)
		if err != nil {
			require.True(t, time.Now().Before(deadline), "%v", err)
			continue
		}
		if !killed && st.MovesInFlight > 0 {
			leader := metaLeader(t, metaList)
			killAll(metas[leader])
			killed = true
			t.Logf("killed meta %d, the leader, with %d moves under way", leader+1, st.MovesInFlight)
		}
		if !st.Running && st.MovesInFlight == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the balancer still runs: %+v", st)
		time.Sleep(200 * time.Millisecond)
	}
	require.True(t, killed, "the leader was killed mid-balance")
	require.Equal(t, run, st.StartedUnixMs, "the new leader resumed the same run")
	require.Equal(t, "balanced", st.Outcome)
	for _, d := range st.Datanodes {
		require.Equal(t, "within", d.Class, "%+v", st)
		require.Positive(t, d.Used, "datanode %s holds containers", d.ID)
	}
	for name := range files {
		read(name)
	}
	require.Eventually(t, func() bool {
		now := writtenContainers(t, cl)
		for id := range written {
			if now[id][1] != 3 {
				return false
			}
		}
		return len(now) == len(written)
	}, time.Minute, 500*time.Millisecond, "three copies of every container, the sources' replicas dropped")
}

// writtenContainers maps each container with a replica to its state and
// its replicas' count, as the meta leader lists them.
func writtenContainers(t *testing.T, cl *client.Client) map[uint64][2]int {
	resp, err := client.Cluster(t.Context(), cl, func(ctx context.Context, a client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
		return a.ListContainers(ctx, &stratov1.ListContainersRequest{Limit: 10000, WithReplicas: true})
	})
	if err != nil {
		return nil
	}
	out := map[uint64][2]int{}
	for i, c := range resp.GetContainers() {
		if n := len(resp.Replicas[i].GetReplicas()); n > 0 {
			out[c.GetId()] = [2]int{int(c.GetState()), n}
		}
	}
	return out
}

// putFiles creates /vol/bkt and puts n files of random bytes in it
// (/vol/bkt/f0 ..., of size, size+1, ... bytes) with strato fs put, and
// returns them by name.
func putFiles(t *testing.T, root, metas string, n, size int) map[string][]byte {
	t.Helper()
	for _, args := range [][]string{{"sh", "volume", "create", "vol"}, {"sh", "bucket", "create", "/vol/bkt"}} {
		out, err := cli(metas, args...)
		require.NoError(t, err, "%v: %s", args, out)
	}
	files := map[string][]byte{}
	for i := range n {
		data := make([]byte, size+i)
		_, _ = rand.Read(data)
		in := filepath.Join(root, fmt.Sprint("in", i))
		require.NoError(t, os.WriteFile(in, data, 0o644))
		name := fmt.Sprintf("/vol/bkt/f%d", i)
		out, err := cli(metas, "fs", "put", in, name)
		require.NoError(t, err, out)
		files[name] = data
	}
	return files
}

// getFile gets name with strato fs get and checks it reads back want.
func getFile(t *testing.T, root, metas, name string, want []byte) {
	t.Helper()
	out := filepath.Join(root, "out")
	_ = os.Remove(out)
	msg, err := cli(metas, "fs", "get", name, out)
	require.NoError(t, err, msg)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "%s reads back different bytes", name)
}
