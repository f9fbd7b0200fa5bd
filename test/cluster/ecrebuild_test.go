package cluster

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// rebuildCluster is an erasure coded cluster whose datanodes are declared
// dead within seconds, with keys of every shape written and their
// containers closed.
type rebuildCluster struct {
	t    *testing.T
	c    *minicluster.Cluster
	cl   *client.Client
	ids  []string // datanode IDs by index
	data map[string][]byte
}

func startRebuildCluster(t *testing.T, n int, repl string, sizes map[string]int) *rebuildCluster {
	return startRebuildClusterTLS(t, n, repl, sizes, false, true)
}

// startRebuildClusterTLS: with closeAll, every container is closed before
// the test goes on; otherwise they stay open (meta closes those of a
// datanode that dies).
func startRebuildClusterTLS(t *testing.T, n int, repl string, sizes map[string]int, tls, closeAll bool) *rebuildCluster {
	return startRebuildClusterWith(t, n, repl, sizes, minicluster.Options{TLS: tls}, closeAll)
}

// startRebuildClusterWith is startRebuildClusterTLS with TLS and Auth
// taken from o.
func startRebuildClusterWith(t *testing.T, n int, repl string, sizes map[string]int, o minicluster.Options, closeAll bool) *rebuildCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: n, BlockSize: 4 << 20, ContainerSize: 256 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, TLS: o.TLS, Auth: o.Auth, Clock: fakeClock()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, e, err := client.ParseReplication(repl)
	require.NoError(t, err)
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "ecdata", ErasureCoding: e})
	require.NoError(t, err)
	r := &rebuildCluster{t: t, c: c, cl: cl, data: map[string][]byte{}}
	for i := range n {
		r.ids = append(r.ids, c.Datanode(i).ID())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for k, size := range sizes {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		r.data[k] = b
		require.NoError(t, putKey(ctx, cl, k, b, 5), k)
	}
	if closeAll {
		r.closeAll()
	}
	return r
}

// ecContainers lists the erasure coded containers.
func (r *rebuildCluster) ecContainers() []*stratov1.ContainerInfo {
	resp, err := client.Cluster(r.t.Context(), r.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
		return cc.ListContainers(ctx, &stratov1.ListContainersRequest{})
	})
	require.NoError(r.t, err)
	var out []*stratov1.ContainerInfo
	for _, c := range resp.Containers {
		if c.ErasureCoding != nil {
			out = append(out, c)
		}
	}
	return out
}

func (r *rebuildCluster) replicas(id uint64) map[string]*stratov1.ContainerReplica {
	resp, err := client.Cluster(r.t.Context(), r.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
		return cc.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: id})
	})
	require.NoError(r.t, err)
	return resp.Replicas
}

// closeAll closes every open EC container and waits until all are CLOSED.
func (r *rebuildCluster) closeAll() {
	for _, c := range r.ecContainers() {
		if c.State == stratov1.ContainerState_CONTAINER_OPEN {
			require.NoError(r.t, r.cl.CloseContainer(r.t.Context(), c.Id, "", "test"))
		}
	}
	require.Eventually(r.t, func() bool {
		advance(r.c)
		for _, c := range r.ecContainers() {
			if c.State != stratov1.ContainerState_CONTAINER_CLOSED {
				return false
			}
		}
		return true
	}, 20*time.Second, 50*time.Millisecond)
}

// datanode returns a datanode's state by ID.
func (r *rebuildCluster) datanode(id string) *stratov1.DatanodeInfo {
	dns, err := client.Cluster(r.t.Context(), r.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	require.NoError(r.t, err)
	for _, d := range dns.Datanodes {
		if d.Details.Id == id {
			return d
		}
	}
	r.t.Fatalf("no datanode %s", id)
	return nil
}

func (r *rebuildCluster) stop(ids ...string) {
	for _, id := range ids {
		require.NoError(r.t, r.c.StopDatanode(slices.Index(r.ids, id)))
	}
}

func (r *rebuildCluster) waitDead(ids ...string) {
	for _, id := range ids {
		require.Eventually(r.t, func() bool { advance(r.c); return r.datanode(id).Health == stratov1.NodeHealth_NODE_DEAD },
			20*time.Second, 10*time.Millisecond, "%s dead", id)
	}
}

// groupMembers lists the members of key's first block group.
func (r *rebuildCluster) groupMembers(key string) []string {
	ki, err := r.cl.LookupKey(r.t.Context(), "vol", "ecdata", key)
	require.NoError(r.t, err)
	require.NotEmpty(r.t, ki.Blocks)
	var out []string
	for _, m := range ki.Blocks[0].Pipeline.Members {
		out = append(out, m.Id)
	}
	return out
}

// waitHealthy waits until every EC container that gone held has each of
// gone's indexes on another datanode, CLOSED, and no index is missing,
// and returns the datanodes that took the indexes (by container and
// index).
func (r *rebuildCluster) waitHealthy(timeout time.Duration, gone ...string) map[[2]uint64]string {
	r.t.Helper()
	// The indexes gone held: their places in the containers' pipelines
	// (a member that died before it reported its index reported none).
	pipes, err := client.Cluster(r.t.Context(), r.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListPipelinesResponse, error) {
		return cc.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
	})
	require.NoError(r.t, err)
	members := map[uint64][]string{}
	for _, p := range pipes.Pipelines {
		members[p.Id] = p.Members
	}
	held := map[[2]uint64]bool{}
	for _, c := range r.ecContainers() {
		for i, dn := range members[c.PipelineId] {
			if slices.Contains(gone, dn) {
				held[[2]uint64{c.Id, uint64(i + 1)}] = true
			}
		}
	}
	require.NotEmpty(r.t, held)
	deadline := time.Now().Add(min(timeout, 20*time.Second))
	for {
		taken := map[[2]uint64]string{}
		short := 0
		for _, c := range r.ecContainers() {
			if len(c.MissingIndexes) > 0 {
				short++
				continue
			}
			for dn, rep := range r.replicas(c.Id) {
				k := [2]uint64{c.Id, uint64(rep.ReplicaIndex)}
				if held[k] && !slices.Contains(gone, dn) && rep.State == stratov1.ContainerState_CONTAINER_CLOSED {
					taken[k] = dn
				}
			}
		}
		if short == 0 && len(taken) == len(held) {
			return taken
		}
		if time.Now().After(deadline) {
			for k := range held {
				if _, ok := taken[k]; !ok {
					for _, c := range r.ecContainers() {
						if c.Id == k[0] {
							r.t.Logf("index %d of container %v not placed; replicas %v", k[1], c, r.replicas(c.Id))
						}
					}
				}
			}
			r.t.Fatalf("%d containers with missing indexes, %d of %d lost indexes placed", short, len(taken), len(held))
		}
		time.Sleep(advance(r.c))
	}
}

// check reads every key back whole.
func (r *rebuildCluster) check(what string) {
	r.t.Helper()
	for k, want := range r.data {
		got, err := getKey(r.t.Context(), r.cl, k)
		require.NoError(r.t, err, "%s: %s", what, k)
		require.True(r.t, bytes.Equal(want, got), "%s: %s differs", what, k)
	}
}

// stopAllBut stops datanodes (not in keep, not already gone) until only
// want of the key groups' original members remain.
func (r *rebuildCluster) stopOthers(keep []string, gone []string, n int) []string {
	var stopped []string
	for _, id := range r.ids {
		if len(stopped) == n {
			break
		}
		if slices.Contains(keep, id) || slices.Contains(gone, id) {
			continue
		}
		stopped = append(stopped, id)
	}
	require.Len(r.t, stopped, n)
	r.stop(stopped...)
	return stopped
}

var rebuildSizes = map[string]int{"empty": 0, "small": 100, "stripe+1": 3<<20 + 1, "groups": 30<<20 + 12345}

// TestErasureCodedRebuild: RS-3-2 on six datanodes; a member of the keys'
// groups dies; meta has each index it held rebuilt on the datanode that
// holds no index of the container, and every container is healthy again.
// Then two more original members stop: the groups the dead one held are
// readable only with the rebuilt indexes (3 of 5), and read back
// byte-identical.
func TestErasureCodedRebuild(t *testing.T) { testErasureCodedRebuild(t, false) }

// TestTLSErasureCodedRebuild: the same, the rebuilding datanode reading
// its sources over TLS.
func TestTLSErasureCodedRebuild(t *testing.T) { testErasureCodedRebuild(t, true) }

func testErasureCodedRebuild(t *testing.T, tls bool) {
	testErasureCodedRebuildWith(t, minicluster.Options{TLS: tls})
}

func testErasureCodedRebuildWith(t *testing.T, o minicluster.Options) {
	r := startRebuildClusterWith(t, 6, "rs-3-2-1024k", rebuildSizes, o, true)
	r.check("healthy")
	original := r.groupMembers("groups")
	victim := original[1]
	r.stop(victim)
	r.waitDead(victim)
	taken := r.waitHealthy(60*time.Second, victim)
	var targets []string
	for _, dn := range taken {
		require.NotEqual(t, victim, dn)
		if !slices.Contains(targets, dn) {
			targets = append(targets, dn)
		}
	}
	r.check("rebuilt")
	stopped := r.stopOthers(targets, []string{victim}, 2)
	r.requireDependsOnRebuilt(original, append(stopped, victim))
	r.check("rebuilt, two more stopped")
}

// requireDependsOnRebuilt checks that the first group of the key "groups"
// (of the original members given) has lost three of them (more than its
// parity): it reads back only through a rebuilt or copied index.
func (r *rebuildCluster) requireDependsOnRebuilt(original, down []string) {
	r.t.Helper()
	lost := 0
	for _, m := range original {
		if slices.Contains(down, m) {
			lost++
		}
	}
	require.Equal(r.t, 3, lost, "original members of the first group down")
}

// TestErasureCodedRebuildTwo: RS-3-2 on seven datanodes, the containers left
// open; two members of the keys' groups die at once; meta closes their
// containers, and both indexes of every container they held are
// rebuilt, on two datanodes holding none; with one more member stopped,
// the groups read back through the rebuilt indexes.
func TestErasureCodedRebuildTwo(t *testing.T) {
	r := startRebuildClusterTLS(t, 7, "rs-3-2-1024k", rebuildSizes, false, false)
	original := r.groupMembers("groups")
	ki, err := r.cl.LookupKey(t.Context(), "vol", "ecdata", "groups")
	require.NoError(t, err)
	cid := ki.Blocks[0].BlockId.ContainerId
	open := false
	for _, c := range r.ecContainers() {
		open = open || c.Id == cid && c.State == stratov1.ContainerState_CONTAINER_OPEN
	}
	require.True(t, open, "the first group's container is open")
	gone := []string{original[0], original[4]}
	r.stop(gone...)
	r.waitDead(gone...)
	taken := r.waitHealthy(60*time.Second, gone...)
	var targets []string
	for _, dn := range taken {
		if !slices.Contains(targets, dn) {
			targets = append(targets, dn)
		}
	}
	r.check("rebuilt")
	// The first group's two rebuilt indexes went to its two non-members.
	var placed []string
	for k, dn := range taken {
		if k[0] == cid {
			placed = append(placed, dn)
		}
	}
	require.Len(t, placed, 2)
	require.NotEqual(t, placed[0], placed[1])
	stopped := r.stopOthers(targets, gone, 1)
	r.requireDependsOnRebuilt(original, append(stopped, gone...))
	r.check("rebuilt, one more stopped")
}

// TestErasureCodedDecommission: a datanode holding indexes of every
// container is decommissioned: each index is copied off it (the copies keep
// their indexes), it becomes DECOMMISSIONED, and with it stopped and dead
// and two more original members stopped, every key reads back.
func TestErasureCodedDecommission(t *testing.T) {
	r := startRebuildCluster(t, 6, "rs-3-2-1024k", rebuildSizes)
	original := r.groupMembers("groups")
	id := original[2]
	_, err := client.Cluster(t.Context(), r.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.DecommissionDatanodeResponse, error) {
		return cc.DecommissionDatanode(ctx, &stratov1.DecommissionDatanodeRequest{DatanodeId: id})
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool { advance(r.c); return r.datanode(id).OpState == stratov1.NodeOpState_NODE_DECOMMISSIONED },
		60*time.Second, 100*time.Millisecond)
	taken := r.waitHealthy(10*time.Second, id)
	var targets []string
	for _, dn := range taken {
		if !slices.Contains(targets, dn) {
			targets = append(targets, dn)
		}
	}
	r.stop(id)
	r.check("decommissioned, stopped")
	r.waitDead(id)
	stopped := r.stopOthers(targets, []string{id}, 2)
	r.requireDependsOnRebuilt(original, append(stopped, id))
	r.check("decommissioned, two more stopped")
}

// TestErasureCodedRebuildRS63: RS-6-3 on ten datanodes (on nine, every
// datanode holds an index of every container: a rebuilt index needs one
// holding none): a member dies, its indexes are rebuilt on the datanode
// holding none, and with three
// more original members stopped (four of nine lost, one more than the
// parity) every key reads back through the rebuilt index.
func TestErasureCodedRebuildRS63(t *testing.T) {
	r := startRebuildCluster(t, 10, "rs-6-3-1024k", map[string]int{"empty": 0, "small": 100, "stripe+1": 6<<20 + 1, "groups": 30<<20 + 12345})
	original := r.groupMembers("groups")
	require.Len(t, original, 9)
	victim := original[5]
	r.stop(victim)
	r.waitDead(victim)
	taken := r.waitHealthy(60*time.Second, victim)
	var targets []string
	for _, dn := range taken {
		if !slices.Contains(targets, dn) {
			targets = append(targets, dn)
		}
	}
	r.check("rebuilt")
	stopped := r.stopOthers(targets, []string{victim}, 3)
	lost := 0
	for _, m := range original {
		if slices.Contains(append(stopped, victim), m) {
			lost++
		}
	}
	require.Equal(t, 4, lost)
	r.check("rebuilt, three more stopped")
}

// TestErasureCodedTrim: RS-3-2 on six datanodes; a member of the keys'
// groups stops and dies, and each index it held is rebuilt elsewhere.
// Then it starts again with its data: every index it held has two good
// replicas, and meta deletes the rebuilt ones (the member is in the
// containers' recorded places), never the member's, and every container
// is healthy. With two other members stopped, every key reads back, the
// groups the member is in through its own replicas.
func TestErasureCodedTrim(t *testing.T) {
	r := startRebuildCluster(t, 6, "rs-3-2-1024k", rebuildSizes)
	original := r.groupMembers("groups")
	victim := original[1]
	r.stop(victim)
	r.waitDead(victim)
	taken := r.waitHealthy(60*time.Second, victim)
	require.NoError(t, r.c.StartDatanode(slices.Index(r.ids, victim)))
	require.Eventually(t, func() bool {
		advance(r.c)
		for k, target := range taken {
			reps := r.replicas(k[0])
			if _, ok := reps[target]; ok {
				return false // the rebuilt replica is still there
			}
			if rep := reps[victim]; rep == nil || uint64(rep.ReplicaIndex) != k[1] || rep.State != stratov1.ContainerState_CONTAINER_CLOSED {
				return false
			}
		}
		for _, c := range r.ecContainers() {
			if c.Problem != stratov1.ContainerProblem_CONTAINER_PROBLEM_UNSPECIFIED || len(c.MissingIndexes) > 0 {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond)
	for k := range taken {
		require.Len(t, r.replicas(k[0]), 5, "one replica per index of container %d", k[0])
	}
	var others []string
	for _, m := range original {
		if m != victim && len(others) < 2 {
			others = append(others, m)
		}
	}
	r.stop(others...)
	r.check("the extra replicas deleted, two other members stopped")
}
