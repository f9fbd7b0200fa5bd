package cluster

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// rot is one damaged replica of TestRot: a block of a key, the datanode
// whose replica of its container is damaged, how, and the longest the
// scanner may take to find it.
type rot struct {
	key    string
	bl     *stratov1.BlockLocation
	holder string
	how    string
	within time.Duration
	found  time.Time // when meta first saw the replica UNHEALTHY
}

// TestRot: rot on cold replicas is found by the background scanner before
// any reader meets it. Three keys, each in a container of its own, closed;
// on one replica each a byte is flipped in a block file (only a data scan,
// which reads every byte, sees it), a block file is truncated and one is
// deleted (the metadata scan, which stats files, sees those). Each is
// found within its scan period, the replica is marked UNHEALTHY on its
// datanode and reported at once, meta copies a good replica to the fourth
// datanode and deletes the bad one, the scanners' counters move (on the
// datanodes and in their heartbeats), and every key reads right
// throughout. The damaged replicas are never the first a reader tries, so
// that the scanner, not a reader's report, is what finds them.
//
// A row of the volume's database that does not decode is not staged here:
// the database's log goes through the volume's own file system (walfs), so
// a test cannot edit a row from outside a running volume; TestScanMeta in
// datanode/container covers it.
//
// On a fake clock with 3 s heartbeats, a metadata scan every minute and a
// data scan every three, moved two seconds at each look.
func TestRot(t *testing.T) {
	const metaEvery, dataEvery = time.Minute, 3 * time.Minute
	clock := fakeClock()
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 30 * time.Minute, Clock: clock,
		Scan: scanner.Options{MetaInterval: metaEvery, DataInterval: dataEvery}},
		stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	data := map[string][]byte{}
	var rots []*rot
	hows := []string{"flip", "truncate", "delete"}
	seen := map[uint64]bool{}
	for i, how := range hows {
		p := fmt.Sprintf("/vol/bkt/k%d", i)
		data[p] = fastRandom(3<<20+i*777, uint64(i+40))
		require.NoError(t, f.write(ctx, p, data[p], 256<<10, 0, nil))
		f.closeAllContainers() // the next key goes to a new container
		ki, err := f.cl.LookupKey(ctx, "vol", "bkt", fmt.Sprintf("k%d", i))
		require.NoError(t, err)
		bl := ki.Blocks[0]
		require.False(t, seen[bl.BlockId.ContainerId], "key %s shares container %d", p, bl.BlockId.ContainerId)
		seen[bl.BlockId.ContainerId] = true
		within := metaEvery
		if how == "flip" {
			within = dataEvery
		}
		// The last member: readers try the first.
		rots = append(rots, &rot{key: p, bl: bl, holder: bl.Pipeline.Members[len(bl.Pipeline.Members)-1].Id, how: how, within: within})
	}
	f.waitThreeCopies("", 20*time.Second)

	damaged := clock.Now()
	for _, r := range rots {
		path := f.blockFile(r.holder, r.bl)
		switch r.how {
		case "flip":
			flipByte(t, path, 1<<20+4321)
		case "truncate":
			require.NoError(t, os.Truncate(path, 12345))
		case "delete":
			require.NoError(t, os.Remove(path))
		}
	}
	readAll := func() {
		for p, want := range data {
			f.requireContent(p, want)
		}
	}
	readAll()

	deadline := time.Now().Add(30 * time.Second)
	for looks := 0; ; looks++ {
		clock.Advance(2 * time.Second)
		time.Sleep(10 * time.Millisecond)
		done := true
		for _, r := range rots {
			reps := f.replicas(r.bl.BlockId.ContainerId).Replicas
			if r.found.IsZero() {
				if reps[r.holder].GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY {
					r.found = clock.Now()
				} else {
					done = false
					continue
				}
			}
			if !threeGood(reps, r.holder) {
				done = false
			}
		}
		if done {
			break
		}
		if looks%25 == 0 {
			readAll()
		}
		require.False(t, time.Now().After(deadline), "damaged replicas not all found and replaced by %v of the clock", clock.Since(damaged))
	}
	readAll()

	for _, r := range rots {
		// Found within the period (and a few heartbeats to report it).
		require.LessOrEqual(t, r.found.Sub(damaged), r.within+10*time.Second, "%s of container %d on %s", r.how, r.bl.BlockId.ContainerId, r.holder)
		// The datanode no longer holds it: meta deleted the bad copy.
		_, err := f.c.Datanode(f.index(r.holder)).Store().Container(r.bl.BlockId.ContainerId)
		require.ErrorIs(t, err, container.ErrNotFound, "%s: the bad replica on %s is deleted", r.how, r.holder)
	}
	var corruptions, metaScans, dataScans, bytes int64
	for i := range 4 {
		m := f.c.Datanode(i).ScanMetrics()
		corruptions += m.Corruptions
		metaScans += m.MetaScans
		dataScans += m.DataScans
		bytes += m.BytesScanned
	}
	require.Equal(t, int64(3), corruptions, "the scanners, not readers, found every damaged replica")
	require.Positive(t, metaScans)
	require.Positive(t, dataScans)
	require.Positive(t, bytes)
	// Meta sees the counters in the heartbeats.
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		dns, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		require.NoError(t, err)
		var n int64
		for _, d := range dns.Datanodes {
			n += d.GetStats().GetScan().GetCorruptions()
		}
		return n == 3
	}, 5*time.Second, 10*time.Millisecond)
}

// threeGood: a container's replicas are three CLOSED ones, none on bad
// (the datanode whose copy was damaged), and none UNHEALTHY.
func threeGood(reps map[string]*stratov1.ContainerReplica, bad string) bool {
	n := 0
	for dn, r := range reps {
		switch {
		case r.GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY, dn == bad:
			return false
		case r.GetState() == stratov1.ContainerState_CONTAINER_CLOSED:
			n++
		}
	}
	return n == 3
}

// TestScanContainerCommand: strato admin container scan's RPC reaches
// every holder of a container, whose scanner then finds a flipped byte at
// once, long before its periodic data scan (a week by default).
func TestScanContainerCommand(t *testing.T) {
	clock := fakeClock()
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 30 * time.Minute, Clock: clock},
		stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	want := fastRandom(2<<20, 77)
	require.NoError(t, f.write(ctx, "/vol/bkt/k", want, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	ki, err := f.cl.LookupKey(ctx, "vol", "bkt", "k")
	require.NoError(t, err)
	bl := ki.Blocks[0]
	cid := bl.BlockId.ContainerId
	bad := bl.Pipeline.Members[2].Id
	flipByte(t, f.blockFile(bad, bl), 777)

	resp, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ScanContainerResponse, error) {
		return cc.ScanContainer(ctx, &stratov1.ScanContainerRequest{ContainerId: cid})
	})
	require.NoError(t, err)
	require.Len(t, resp.DatanodeIds, 3)
	require.Contains(t, resp.DatanodeIds, bad)
	start := clock.Now()
	require.Eventually(t, func() bool {
		f.advance()
		return f.replicas(cid).Replicas[bad].GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY
	}, 10*time.Second, 10*time.Millisecond)
	require.Less(t, clock.Since(start), time.Minute)
	require.Equal(t, int64(1), f.c.Datanode(f.index(bad)).ScanMetrics().Corruptions)
	f.requireContent("/vol/bkt/k", want)

	_, err = client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ScanContainerResponse, error) {
		return cc.ScanContainer(ctx, &stratov1.ScanContainerRequest{ContainerId: 9999})
	})
	require.Error(t, err)
}

// TestRotOnThreeDatanodes: with three datanodes every one holds the
// container, so a good copy has nowhere to go while the bad replica is
// there. Meta deletes the bad replica first, then copies a good one back
// to the same datanode.
func TestRotOnThreeDatanodes(t *testing.T) {
	clock := fakeClock()
	f := startFaultCluster(t, minicluster.Options{Datanodes: 3, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 30 * time.Minute, Clock: clock,
		Scan: scanner.Options{MetaInterval: time.Minute}},
		stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	want := fastRandom(2<<20+5, 78)
	require.NoError(t, f.write(ctx, "/vol/bkt/k", want, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	ki, err := f.cl.LookupKey(ctx, "vol", "bkt", "k")
	require.NoError(t, err)
	bl := ki.Blocks[0]
	cid := bl.BlockId.ContainerId
	bad := bl.Pipeline.Members[2].Id
	require.NoError(t, os.Remove(f.blockFile(bad, bl)))

	var found bool
	require.Eventually(t, func() bool {
		clock.Advance(2 * time.Second)
		reps := f.replicas(cid).Replicas
		if reps[bad].GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY || reps[bad] == nil {
			found = true
		}
		n := 0
		for _, r := range reps {
			if r.GetState() == stratov1.ContainerState_CONTAINER_CLOSED {
				n++
			}
		}
		return found && n == 3
	}, 20*time.Second, 10*time.Millisecond)
	f.requireBlockFile(bad, bl, want[:bl.Length])
	f.requireContent("/vol/bkt/k", want)
	require.Equal(t, int64(1), f.c.Datanode(f.index(bad)).ScanMetrics().Corruptions)
}
