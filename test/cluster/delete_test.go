package cluster

import (
	"context"
	"flag"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// deleteOptions: production heartbeats (3 s) and ticks (1 s) on a fake
// clock that the waits move on.
func deleteOptions() minicluster.Options {
	return minicluster.Options{BlockSize: 4 << 20, HeartbeatInterval: 3 * time.Second, Clock: fakeClock()}
}

// usage is what every datanode holds: committed bytes and block files.
type usage struct {
	used  [3]int64
	files [3]int
}

func (f *faultCluster) usage() usage {
	f.t.Helper()
	var u usage
	for i := range 3 {
		u.used[i] = f.c.Datanode(i).Store().Stats().Used
		blocks, err := filepath.Glob(filepath.Join(f.c.DatanodeDir(i), "containers", "*", "chunks", "*"))
		require.NoError(f.t, err)
		u.files[i] = len(blocks)
	}
	return u
}

// waitSpace waits until every datanode holds want committed bytes in want
// block files and the deleted-blocks table is empty, and returns how long
// that took (in real time; timeout too).
func (f *faultCluster) waitSpace(used int64, files int, timeout time.Duration) time.Duration {
	f.t.Helper()
	start := time.Now()
	want := usage{used: [3]int64{used, used, used}, files: [3]int{files, files, files}}
	for {
		u := f.usage()
		entries, blocks, err := f.c.Meta().DeletedBlocksBacklog(f.t.Context())
		require.NoError(f.t, err)
		if u == want && entries == 0 {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			f.t.Fatalf("after %v: datanodes hold %+v, want %+v; deleted-blocks table: %d entries, %d blocks; %+v",
				timeout, u, want, entries, blocks, f.c.Meta().BlockDeletionStats())
		}
		time.Sleep(f.advance())
	}
}

// TestDeleteKeyFreesSpace: deleting a key of many blocks gives its space back
// on every replica (rows, used bytes, block files), open and closed
// containers alike, and empties meta's deleted-blocks table; overwriting a
// key frees the old version's blocks and keeps the new one's.
func TestDeleteKeyFreesSpace(t *testing.T) {
	f := startFaultCluster(t, deleteOptions(), stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()

	// 64 MiB in 4 MiB blocks: 16 blocks on each of the three datanodes.
	data := fastRandom(64<<20, 1)
	require.NoError(t, f.write(ctx, "/vol/bkt/big", data, 1<<20, 0, nil))
	f.waitSpace(64<<20, 16, 10*time.Second)
	require.NoError(t, f.cl.Delete(ctx, "/vol/bkt/big", false))
	took := f.waitSpace(0, 0, 30*time.Second)
	t.Logf("64 MiB key deleted: space back on all replicas in %v", took)

	// Overwrite, in a closed container: the old version's blocks go, the
	// new one stays readable.
	old := fastRandom(20<<20, 2)
	require.NoError(t, f.write(ctx, "/vol/bkt/k", old, 1<<20, 0, nil))
	f.waitSpace(20<<20, 5, 10*time.Second)
	for _, ci := range f.containers() {
		err := f.cl.CloseContainer(ctx, ci.Id, "", "test")
		require.NoError(t, err)
	}
	f.waitClosed()
	newer := fastRandom(9<<20, 3)
	w, err := f.cl.Create(ctx, "/vol/bkt/k", client.CreateOptions{Overwrite: true})
	require.NoError(t, err)
	_, err = w.Write(newer)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	took = f.waitSpace(9<<20, 3, 30*time.Second)
	t.Logf("overwritten 20 MiB key: space back on all replicas in %v", took)
	f.requireContent("/vol/bkt/k", newer)
	st := f.c.Meta().BlockDeletionStats()
	require.Zero(t, st.InFlight)
	require.Equal(t, uint64(2), st.Purged)
}

// waitClosed waits until every replica of every container reports CLOSED.
func (f *faultCluster) waitClosed() {
	f.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, ci := range f.containers() {
		for {
			closed := 0
			for _, r := range f.replicas(ci.Id).Replicas {
				if r.State == stratov1.ContainerState_CONTAINER_CLOSED {
					closed++
				}
			}
			if closed == 3 {
				break
			}
			require.True(f.t, time.Now().Before(deadline), "container %d not closed on every replica", ci.Id)
			time.Sleep(f.advance())
		}
	}
}

// TestDeleteKeyFreesSpace1GiB: a 1 GiB key deleted, its space back on all
// replicas, timed on the real clock (100 ms heartbeats and ticks). It
// writes 3 GiB to the disk, so it runs only when named (go test
// ./test/cluster -run 1GiB).
func TestDeleteKeyFreesSpace1GiB(t *testing.T) {
	if !strings.Contains(flag.Lookup("test.run").Value.String(), "1GiB") || testing.Short() {
		t.Skip("writes 3 GiB: run with -run 1GiB")
	}
	f := startFaultCluster(t, minicluster.Options{BlockSize: 256 << 20, HeartbeatInterval: 100 * time.Millisecond, TickInterval: 100 * time.Millisecond},
		stratov1.ReplicationFactor_REPLICATION_THREE, 4<<20)
	ctx := context.Background()
	data := fastRandom(1<<30, 4)
	start := time.Now()
	require.NoError(t, f.write(ctx, "/vol/bkt/1g", data, 4<<20, 0, nil))
	t.Logf("1 GiB written in %v", time.Since(start))
	f.waitSpace(1<<30, 4, 10*time.Second)
	require.NoError(t, f.cl.Delete(ctx, "/vol/bkt/1g", false))
	took := f.waitSpace(0, 0, 60*time.Second)
	t.Logf("1 GiB key deleted: space back on all replicas in %v", took)
}
