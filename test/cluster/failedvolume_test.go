package cluster

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestFailedVolumeReReplicated: one datanode of four has three data
// directories; one of them starts failing every call. Its next health
// check takes it out of service, the datanode reports its containers gone
// and carries on with the other two, and meta copies those containers back
// until each has three copies again; every key reads back identical, and
// meta's view of the datanode shows the failed disk and why. Fake clock,
// production intervals (heartbeats every 3 s, checks every 10 s).
func TestFailedVolumeReReplicated(t *testing.T) {
	dir := t.TempDir()
	const node = 3
	var mu sync.Mutex
	failing := "" // the directory whose every call fails, once set
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		mu.Lock()
		defer mu.Unlock()
		if failing != "" && (op.Path == failing || strings.HasPrefix(op.Path, failing+"/")) {
			return errorfs.ErrInjected
		}
		return nil
	})
	f := startFaultCluster(t, minicluster.Options{Dir: dir, Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 8 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Clock: fakeClock(),
		DatanodeFS: func(i int) vfs.FS {
			if i == node {
				return errorfs.Wrap(vfs.Default, inj)
			}
			return vfs.Default
		},
		ConfigureDatanode: func(i int, o *datanode.Options) {
			if i == node {
				o.Dirs = []string{o.Dirs[0], o.Dirs[0] + "-b", o.Dirs[0] + "-c"}
				o.VolumeCheckInterval = 10 * time.Second
				o.Store.FailedVolumesTolerated = 1
			}
		}},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	data := map[string][]byte{}
	for i := range 8 {
		p := fmt.Sprintf("/vol/bkt/f%d", i)
		data[p] = fastRandom(5<<20+i*1000, uint64(i+40))
		require.NoError(t, f.write(ctx, p, data[p], 256<<10, 0, nil))
	}
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)

	// The victim: the disk of the fourth datanode with the most containers.
	dn := f.c.Datanode(node)
	st := dn.Store().Stats()
	victim := st.Volumes[0]
	for _, v := range st.Volumes {
		if v.Containers > victim.Containers {
			victim = v
		}
	}
	require.Positive(t, victim.Containers, "%+v", st.Volumes)
	held := func() []uint64 {
		var ids []uint64
		for _, c := range dn.Store().Containers() {
			ids = append(ids, c.ID)
		}
		return ids
	}
	before := held()

	mu.Lock()
	failing = victim.Dir
	mu.Unlock()
	require.Eventually(t, func() bool {
		f.advance()
		return dn.Store().Stats().FailedVolumes == 1
	}, 10*time.Second, 10*time.Millisecond)
	after := held()
	require.Len(t, after, len(before)-victim.Containers)
	var lost []uint64
	for _, id := range before {
		if !slices.Contains(after, id) {
			lost = append(lost, id)
		}
	}
	select {
	case <-dn.Done():
		t.Fatal("one failed volume of three is tolerated")
	default:
	}

	// Meta stops counting the lost replicas on this datanode and copies
	// them back (perhaps here, to a working disk).
	require.Eventually(t, func() bool {
		f.advance()
		for _, id := range lost {
			if _, ok := f.replicas(id).Replicas[dn.ID()]; ok && !slices.Contains(held(), id) {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond)
	f.waitThreeCopies("", 60*time.Second)
	imported := int64(0)
	for i := range 4 {
		imported += int64(f.c.Datanode(i).ReplicationMetrics().ImportsCompleted)
	}
	require.GreaterOrEqual(t, imported, int64(len(lost)), "a copy of each lost replica")
	for p, want := range data {
		f.requireContent(p, want)
	}
	info := f.datanode(dn.ID())
	require.Equal(t, stratov1.NodeHealth_NODE_HEALTHY, info.Health)
	require.EqualValues(t, 1, info.Stats.FailedVolumes)
	var failed []*stratov1.VolumeStats
	for _, v := range info.Stats.VolumeStats {
		if v.State == stratov1.VolumeState_VOLUME_FAILED {
			failed = append(failed, v)
		}
	}
	require.Len(t, failed, 1)
	require.Equal(t, victim.Dir, failed[0].Dir)
	require.Contains(t, failed[0].Failure, "injected")
	require.Positive(t, failed[0].FailedUnixMs)
}
