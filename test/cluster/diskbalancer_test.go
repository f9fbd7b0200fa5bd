package cluster

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestDiskBalancerCluster: a datanode that held everything on one disk
// restarts with two new, empty ones; the disk balancer, started through
// meta's DiskBalancer RPC, moves closed containers onto them while keys
// are read without a break. Its progress comes back in the datanode's
// heartbeats; at the end every disk holds containers, each container is on
// one disk, and every key reads back identical, from that datanode alone
// too.
func TestDiskBalancerCluster(t *testing.T) {
	var three atomic.Bool
	f := startFaultCluster(t, minicluster.Options{Datanodes: 3, BlockSize: 1 << 20, ContainerSize: 2 << 20,
		HeartbeatInterval: 100 * time.Millisecond,
		ConfigureDatanode: func(i int, o *datanode.Options) {
			o.DiskBalancerGrace = 200 * time.Millisecond
			if i == 0 && three.Load() {
				o.Dirs = []string{o.Dirs[0], o.Dirs[0] + "-b", o.Dirs[0] + "-c"}
			}
		}}, stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	data := map[string][]byte{}
	for i := range 6 {
		p := fmt.Sprintf("/vol/bkt/f%d", i)
		data[p] = fastRandom(3<<20+i*1000, uint64(i+70))
		require.NoError(t, f.write(ctx, p, data[p], 256<<10, 0, nil))
	}
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)

	require.NoError(t, f.c.StopDatanode(0))
	three.Store(true)
	require.NoError(t, f.c.StartDatanode(0))
	require.NoError(t, f.c.WaitReady(ctx))
	dn := f.c.Datanode(0)
	vols := dn.Store().Stats().Volumes
	require.Len(t, vols, 3)
	require.Zero(t, vols[1].Containers)
	require.Zero(t, vols[2].Containers)

	stop := make(chan struct{})
	readErr := make(chan error, 1)
	var reads atomic.Int64
	go func() {
		defer close(readErr)
		for {
			for p, want := range data {
				select {
				case <-stop:
					return
				default:
				}
				got, err := f.read(ctx, p)
				if err == nil && string(got) != string(want) {
					err = fmt.Errorf("%s: wrong bytes", p)
				}
				if err != nil {
					readErr <- err
					return
				}
				reads.Add(1)
			}
		}
	}()

	// The test's data is a sliver of the disks' capacity: a threshold of a
	// billionth of it asks for as even a spread as containers allow.
	_, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.DiskBalancerResponse, error) {
		return cc.DiskBalancer(ctx, &stratov1.DiskBalancerRequest{DatanodeId: dn.ID(),
			Command: &stratov1.DiskBalancerCommand{Threshold: 1e-9, Bandwidth: 8 << 20}})
	})
	require.NoError(t, err)
	var st *stratov1.DiskBalancerStats
	require.Eventually(t, func() bool {
		dns, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		require.NoError(t, err)
		for _, d := range dns.Datanodes {
			if d.GetDetails().GetId() == dn.ID() {
				st = d.GetStats().GetDiskBalancer()
			}
		}
		return st != nil && !st.Running
	}, 60*time.Second, 50*time.Millisecond)
	t.Logf("disk balancer: %v", st)
	require.Zero(t, st.MovesFailed, st.LastError)
	require.Positive(t, st.ContainersMoved)
	require.Less(t, st.SpreadNow, st.SpreadStart)

	// The old copies go after their grace.
	require.Eventually(t, func() bool {
		seen := map[uint64]int{}
		for _, v := range dn.Store().Stats().Volumes {
			entries, err := os.ReadDir(v.Dir + "/containers")
			require.NoError(t, err)
			for _, e := range entries {
				var id uint64
				if _, err := fmt.Sscan(e.Name(), &id); err == nil {
					seen[id]++
				}
			}
		}
		for _, n := range seen {
			if n != 1 {
				return false
			}
		}
		return len(seen) > 0
	}, 10*time.Second, 20*time.Millisecond)
	close(stop)
	require.NoError(t, <-readErr)
	require.Positive(t, reads.Load())
	for _, v := range dn.Store().Stats().Volumes {
		require.Positive(t, v.Containers, "%s took containers", v.Dir)
	}

	// From that datanode alone.
	require.NoError(t, f.c.StopDatanode(1))
	require.NoError(t, f.c.StopDatanode(2))
	for p, want := range data {
		f.requireContent(p, want)
	}
}
