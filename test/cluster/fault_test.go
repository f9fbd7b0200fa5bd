package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// The fault tests of the write and read paths: datanodes killed in the
// middle of a write, meta restarted under writers, bytes flipped on disk,
// not enough datanodes left, and bad input. Each runs on a cluster of its
// own with small blocks, so that a few MiB cross several blocks.

// fastRandom returns n reproducible pseudo-random bytes, generated a block
// at a time (tens of MiB stay cheap under the race detector).
func fastRandom(n int, seed uint64) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

// faultCluster is a running cluster with a client, a volume "vol" and a
// bucket "bkt" of the given replication and block size.
type faultCluster struct {
	t  *testing.T
	c  *minicluster.Cluster
	cl *client.Client
}

// advance moves the cluster's fake clock on (see advance).
func (f *faultCluster) advance() time.Duration { return advance(f.c) }

func startFaultCluster(t *testing.T, o minicluster.Options, repl stratov1.ReplicationFactor, chunkSize int) *faultCluster {
	t.Helper()
	return startFaultClusterReads(t, o, repl, chunkSize, false)
}

// startFaultClusterReads is startFaultCluster with a client that reads
// every replica over TCP when tcpReads is set (client.Options.DisableLocalReads).
func startFaultClusterReads(t *testing.T, o minicluster.Options, repl stratov1.ReplicationFactor, chunkSize int, tcpReads bool) *faultCluster {
	t.Helper()
	ctx := t.Context()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	c, err := minicluster.Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	tok, err := c.AdminToken()
	require.NoError(t, err)
	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), ChunkSize: chunkSize, TLS: c.ClientTLS(), Logger: c.Options().Logger,
		Token: tok, NoToken: tok == "", DisableLocalReads: tcpReads})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt",
		Replication: repl, BlockSize: o.BlockSize})
	require.NoError(t, err)
	return &faultCluster{t: t, c: c, cl: cl}
}

// write writes data to path in pieces of piece bytes, calling at (if not
// nil) with the writer and how much it was given, once that is at least
// atByte bytes.
func (f *faultCluster) write(ctx context.Context, path string, data []byte, piece, atByte int, at func(*client.Writer, int)) error {
	w, err := f.cl.Create(ctx, path, client.CreateOptions{Recursive: true})
	if err != nil {
		return err
	}
	for off := 0; off < len(data); off += piece {
		if at != nil && off >= atByte {
			at(w, off)
			at = nil
		}
		if _, err := w.Write(data[off:min(off+piece, len(data))]); err != nil {
			_ = w.Close()
			return err
		}
	}
	return w.Close()
}

// read reads the whole file at path.
func (f *faultCluster) read(ctx context.Context, path string) ([]byte, error) {
	r, err := f.cl.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// copy reads the key at path as the S3 gateway's GET does: copied to a
// writer (Reader.WriteTo), returning what was copied.
func (f *faultCluster) copy(ctx context.Context, path string) ([]byte, error) {
	r, err := f.cl.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	var b bytes.Buffer
	_, err = r.WriteTo(&b)
	return b.Bytes(), err
}

func (f *faultCluster) requireContent(path string, want []byte) {
	f.t.Helper()
	got, err := f.read(f.t.Context(), path)
	require.NoError(f.t, err, "read %s", path)
	require.Equal(f.t, len(want), len(got), "length of %s", path)
	require.True(f.t, bytes.Equal(want, got), "content of %s", path)
}

// index maps a datanode ID to its index in the cluster.
func (f *faultCluster) index(id string) int {
	f.t.Helper()
	return datanodeIndex(f.t, f.c, id)
}

func (f *faultCluster) containers() []*stratov1.ContainerInfo {
	f.t.Helper()
	resp, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListContainersResponse, error) {
		return cc.ListContainers(ctx, &stratov1.ListContainersRequest{})
	})
	require.NoError(f.t, err)
	return resp.Containers
}

func (f *faultCluster) pipelines() map[uint64]*stratov1.PipelineInfo {
	f.t.Helper()
	resp, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListPipelinesResponse, error) {
		return cc.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
	})
	require.NoError(f.t, err)
	out := map[uint64]*stratov1.PipelineInfo{}
	for _, p := range resp.Pipelines {
		out[p.Id] = p
	}
	return out
}

func (f *faultCluster) replicas(cid uint64) *stratov1.ContainerReplicasResponse {
	f.t.Helper()
	resp, err := client.Cluster(f.t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ContainerReplicasResponse, error) {
		return cc.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: cid})
	})
	require.NoError(f.t, err)
	return resp
}

// newestOpenContainer is the OPEN container created last: on a fresh
// cluster with one writer, the container of the block being written, as
// long as every allocation so far created a container (fewer than
// OpenContainersPerPipeline blocks per pipeline).
func (f *faultCluster) newestOpenContainer() *stratov1.ContainerInfo {
	f.t.Helper()
	var newest *stratov1.ContainerInfo
	for _, ci := range f.containers() {
		if ci.State == stratov1.ContainerState_CONTAINER_OPEN && (newest == nil || ci.Id > newest.Id) {
			newest = ci
		}
	}
	require.NotNil(f.t, newest, "no open container")
	return newest
}

func members(bl *stratov1.BlockLocation) []string {
	var ids []string
	for _, m := range bl.GetPipeline().GetMembers() {
		ids = append(ids, m.Id)
	}
	return ids
}

// TestKillDatanodeMidWrite kills a member of the pipeline a large write is
// using, a follower or the leader, with chunks in flight or just after an
// hsync: the write completes (the block is sealed on the survivors at the
// acknowledged length and the rest goes to new blocks that avoid the dead
// node), the key reads back identical with the node still down, and meta
// has closed the container and its pipeline.
func TestKillDatanodeMidWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		member int  // index in the pipeline of the node killed: 0 is the leader
		hsync  bool // first make every replica hold what was written
		stale  bool // wait for meta to see the node stale
	}{{"follower", 1, false, false}, {"leader", 0, false, true}, {"follower after hsync", 2, true, false}, {"leader after hsync", 0, true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			const (
				blockSize = 4 << 20
				chunkSize = 1 << 20
				size      = 48 << 20
				killAt    = size/3 + 2*chunkSize + 4321 // a chunk into the fifth block
			)
			f := startFaultCluster(t, minicluster.Options{Datanodes: 4, BlockSize: blockSize, ContainerSize: 64 << 20,
				HeartbeatInterval: 200 * time.Millisecond, DeadAfter: 4 * time.Second},
				stratov1.ReplicationFactor_REPLICATION_THREE, chunkSize)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			data := fastRandom(size, 7)

			var (
				victim    string
				killedAt  int64 // bytes given to the writer when the node was stopped
				container *stratov1.ContainerInfo
				pipeline  *stratov1.PipelineInfo
			)
			start := time.Now()
			err := f.write(ctx, "/vol/bkt/big", data, 256<<10, killAt, func(w *client.Writer, given int) {
				killedAt = int64(given)
				if tc.hsync {
					require.NoError(t, w.Hsync())
				}
				container = f.newestOpenContainer()
				pipeline = f.pipelines()[container.PipelineId]
				require.Len(t, pipeline.Members, 3)
				victim = pipeline.Members[tc.member]
				require.NoError(t, f.c.StopDatanode(f.index(victim)))
			})
			require.NoError(t, err, "the write survives the loss of one replica")
			t.Logf("wrote %d MiB in %v, killing %s (pipeline %d member %d) after %d bytes",
				size>>20, time.Since(start).Round(time.Millisecond), victim, pipeline.Id, tc.member, killedAt)

			// Read back with the node still down: the blocks written before
			// the kill fail over to their surviving replicas.
			f.requireContent("/vol/bkt/big", data)

			ki, err := f.cl.LookupKey(ctx, "vol", "bkt", "big")
			require.NoError(t, err)
			require.Equal(t, int64(size), ki.Size)
			// Every block on the dead node holds only bytes every replica
			// acknowledged before the kill: all that follows is on pipelines
			// without it.
			var total int64
			for _, bl := range ki.Blocks {
				total += bl.Length
				require.LessOrEqual(t, bl.Length, int64(blockSize))
				if slices.Contains(members(bl), victim) {
					require.LessOrEqual(t, bl.Offset+bl.Length, killedAt, "block %v at %d+%d is on %s", bl.BlockId, bl.Offset, bl.Length, victim)
				}
			}
			require.Equal(t, int64(size), total)
			if tc.hsync {
				// The block being written was sealed on the two survivors at
				// the length hsync made every replica hold, and they closed
				// the container at meta's command.
				i := slices.IndexFunc(ki.Blocks, func(bl *stratov1.BlockLocation) bool { return bl.BlockId.ContainerId == container.Id })
				require.GreaterOrEqual(t, i, 0, "block in container %d", container.Id)
				bl := ki.Blocks[i]
				require.Equal(t, killedAt, bl.Offset+bl.Length)
				require.Less(t, bl.Length, int64(blockSize))
				for _, m := range bl.Pipeline.Members {
					if m.Id != victim {
						f.requireBlockFile(m.Id, bl, data[bl.Offset:bl.Offset+bl.Length])
					}
				}
				require.Eventually(t, func() bool {
					reps := f.replicas(container.Id).Replicas
					for _, m := range bl.Pipeline.Members {
						if m.Id != victim && reps[m.Id].GetState() != stratov1.ContainerState_CONTAINER_CLOSED {
							return false
						}
					}
					return true
				}, 5*time.Second, 20*time.Millisecond, "the survivors report container %d CLOSED", container.Id)
			}

			// Meta closed the container the write failed on and its pipeline.
			rep := f.replicas(container.Id)
			require.Contains(t, []stratov1.ContainerState{stratov1.ContainerState_CONTAINER_CLOSING, stratov1.ContainerState_CONTAINER_CLOSED},
				rep.Container.State, "container %d", container.Id)
			require.Equal(t, stratov1.PipelineState_PIPELINE_CLOSED, f.pipelines()[pipeline.Id].State)
			if !tc.stale {
				return
			}
			// The node's other pipelines close once meta sees it stale
			// (DeadAfter/2 without a heartbeat).
			require.Eventually(t, func() bool {
				for _, p := range f.pipelines() {
					if p.State == stratov1.PipelineState_PIPELINE_OPEN && slices.Contains(p.Members, victim) {
						return false
					}
				}
				return true
			}, 10*time.Second, 50*time.Millisecond, "pipelines of %s closed", victim)
		})
	}
}

// TestSmallKeysWithADeadDatanode: a key of one chunk is written and its
// block committed by one WRITE_COMMIT. With a datanode stopped that meta
// still counts healthy, the keys whose pipeline holds it fail there and go
// again to a new block avoiding it; every key reads back, none has a block
// on the dead node, and meta closed the containers the writes failed on.
func TestSmallKeysWithADeadDatanode(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{Datanodes: 4, HeartbeatInterval: 200 * time.Millisecond, DeadAfter: time.Minute},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	require.NoError(t, f.write(ctx, "/vol/bkt/first", []byte("warm"), 4, 0, nil))
	victim := f.c.Datanode(1).ID()
	require.NoError(t, f.c.StopDatanode(1))

	const keys = 12
	data := make([][]byte, keys)
	for i := range keys {
		data[i] = fastRandom(1000+i, uint64(i))
		require.NoError(t, f.write(ctx, fmt.Sprintf("/vol/bkt/k%d", i), data[i], len(data[i]), 0, nil), "key %d", i)
	}
	for i := range keys {
		path := fmt.Sprintf("/vol/bkt/k%d", i)
		f.requireContent(path, data[i])
		ki, err := f.cl.LookupKey(ctx, "vol", "bkt", fmt.Sprintf("k%d", i))
		require.NoError(t, err)
		require.Len(t, ki.Blocks, 1, path)
		require.NotContains(t, members(ki.Blocks[0]), victim, "%s has a block on the stopped datanode", path)
	}
	closed := 0
	pipes := f.pipelines()
	for _, ci := range f.containers() {
		if slices.Contains(pipes[ci.PipelineId].GetMembers(), victim) && ci.State != stratov1.ContainerState_CONTAINER_OPEN {
			closed++
		}
	}
	require.Positive(t, closed, "no write failed on %s: the test did not test", victim)
}

// TestKillDatanodeMidRead kills the first replica of the blocks ahead in
// the middle of a streaming read (with read-ahead in flight): the reader
// fails over to the other replicas and returns the key intact.
func TestKillDatanodeMidRead(t *testing.T) {
	const blockSize = 4 << 20
	f := startFaultCluster(t, minicluster.Options{BlockSize: blockSize, ContainerSize: 64 << 20},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	data := fastRandom(6*blockSize+777, 11)
	require.NoError(t, f.write(ctx, "/vol/bkt/k", data, 1<<20, 0, nil))

	r, err := f.cl.Open(ctx, "/vol/bkt/k")
	require.NoError(t, err)
	defer func() { require.NoError(t, r.Close()) }()
	got := make([]byte, 0, len(data))
	buf := make([]byte, 300_000)
	killed := ""
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if killed == "" && len(got) >= 2*blockSize+5 {
			// The replica a reader tries first for the next block.
			bl := r.Info().Blocks[3]
			killed = bl.Pipeline.Members[0].Id
			require.NoError(t, f.c.StopDatanode(f.index(killed)))
		}
	}
	require.NotEmpty(t, killed)
	require.True(t, bytes.Equal(data, got), "read %d bytes of %d", len(got), len(data))
}

// TestRestartMetaMidWrite restarts a single-voter meta under several
// writers: the writers wait meta out (OpenKey, AllocateBlock, CommitKey and
// CloseContainer are retried while it is unavailable), and afterwards the
// keys listed are exactly those whose Close succeeded, each with its data.
func TestRestartMetaMidWrite(t *testing.T) {
	const (
		writers   = 4
		blockSize = 1 << 20
		chunkSize = 256 << 10
	)
	f := startFaultCluster(t, minicluster.Options{BlockSize: blockSize, ContainerSize: 16 << 20, HeartbeatInterval: 200 * time.Millisecond},
		stratov1.ReplicationFactor_REPLICATION_THREE, chunkSize)
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	keySize := func(seed uint64) int { // 0.5 to 3.5 blocks: some keys end inside their first block
		return blockSize/2 + int(seed%7)*blockSize/2 + int(seed%13)*1000
	}

	var (
		mu      sync.Mutex
		acked   = map[string]uint64{} // key → seed of its data
		failed  = map[string]error{}
		commits atomic.Int64
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w%d/k%03d", g, i)
				seed := uint64(g*1000 + i)
				err := f.write(ctx, "/vol/bkt/"+key, fastRandom(keySize(seed), seed), 100_000, 0, nil)
				mu.Lock()
				if err == nil {
					acked[key] = seed
					commits.Add(1)
				} else {
					failed[key] = err
				}
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	defer func() { // on a failure too: no writer outlives the test
		stop.Store(true)
		wg.Wait()
	}()
	waitCommits := func(n int64) {
		require.Eventually(t, func() bool { return commits.Load() >= n }, 20*time.Second, 5*time.Millisecond)
	}
	const restarts = 5
	for range restarts {
		waitCommits(commits.Load() + writers/2)
		start := time.Now()
		require.NoError(t, f.c.RestartMeta())
		t.Logf("meta restarted in %v with %d keys committed", time.Since(start).Round(time.Millisecond), commits.Load())
	}
	waitCommits(commits.Load() + 2*writers) // writes go on after the restarts
	stop.Store(true)
	wg.Wait()

	for key, err := range failed {
		t.Errorf("%s: %v", key, err)
	}
	// The listing is exactly the keys acknowledged.
	var listed []string
	after := ""
	for {
		resp, err := f.cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol", Bucket: "bkt", StartAfter: after})
		require.NoError(t, err)
		for _, k := range resp.Keys {
			listed = append(listed, k.Name)
		}
		if !resp.Truncated {
			break
		}
		after = resp.NextStartAfter
	}
	var want []string
	for k := range acked {
		want = append(want, k)
	}
	slices.Sort(want)
	slices.Sort(listed)
	require.Equal(t, want, listed, "keys listed after %d restarts of meta", restarts)
	for key, seed := range acked {
		f.requireContent("/vol/bkt/"+key, fastRandom(keySize(seed), seed))
	}
	t.Logf("%d keys committed by %d writers across %d restarts of meta", len(acked), writers, restarts)
}

// blockFile is the path of a replica's block file (FILE_PER_BLOCK layout,
// datanode/container).
func (f *faultCluster) blockFile(dn string, bl *stratov1.BlockLocation) string {
	return filepath.Join(f.c.DatanodeDir(f.index(dn)), "containers", strconv.FormatUint(bl.BlockId.ContainerId, 10),
		"chunks", strconv.FormatUint(bl.BlockId.LocalId, 10)+".block")
}

// requireBlockFile checks a replica's block file holds want.
func (f *faultCluster) requireBlockFile(dn string, bl *stratov1.BlockLocation, want []byte) {
	f.t.Helper()
	got, err := os.ReadFile(f.blockFile(dn, bl))
	require.NoError(f.t, err)
	require.True(f.t, bytes.Equal(want, got[:min(len(got), len(want))]) && len(got) >= len(want),
		"block %v on %s: %d bytes", bl.BlockId, dn, len(got))
}

// flipByte inverts one byte of a file in place.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, fh.Close()) }()
	b := make([]byte, 1)
	_, err = fh.ReadAt(b, off)
	require.NoError(t, err)
	b[0] ^= 0xff
	_, err = fh.WriteAt(b, off)
	require.NoError(t, err)
}

// TestCorruptReplica flips a byte in block files on disk: with one replica
// bad the reader returns the right data from another and meta marks the
// bad replica UNHEALTHY; with every replica bad at the same place the read
// fails with ErrCorruptRead, and the bytes it did return are right. The
// same holds for reads of the block files (local reads) and over TCP.
func TestCorruptReplica(t *testing.T) {
	for _, mode := range []string{"local", "tcp"} {
		t.Run(mode, func(t *testing.T) { testCorruptReplica(t, mode == "tcp") })
	}
}

func testCorruptReplica(t *testing.T, tcpReads bool) {
	const blockSize = 2 << 20
	f := startFaultClusterReads(t, minicluster.Options{BlockSize: blockSize, ContainerSize: 32 << 20, HeartbeatInterval: 200 * time.Millisecond},
		stratov1.ReplicationFactor_REPLICATION_THREE, 512<<10, tcpReads)
	t.Cleanup(func() { requireReadPath(t, f.c, tcpReads) })
	ctx := t.Context()
	data := fastRandom(5<<20+999, 3) // three blocks
	require.NoError(t, f.write(ctx, "/vol/bkt/k", data, 1<<20, 0, nil))
	ki, err := f.cl.LookupKey(ctx, "vol", "bkt", "k")
	require.NoError(t, err)
	require.Len(t, ki.Blocks, 3)
	// Meta counts replicas from the datanodes' reports: a new container is
	// reported in the next heartbeat (1s), long before the next full report.
	for _, bl := range ki.Blocks {
		require.Eventually(t, func() bool { return len(f.replicas(bl.BlockId.ContainerId).Replicas) == 3 },
			5*time.Second, 20*time.Millisecond, "replicas of container %d reported", bl.BlockId.ContainerId)
	}

	t.Run("one replica", func(t *testing.T) {
		// The second block's first replica: the one a reader tries first.
		bl := ki.Blocks[1]
		bad := bl.Pipeline.Members[0].Id
		const at = 1<<20 + 12345
		flipByte(t, f.blockFile(bad, bl), at)

		// Copied to a writer (WriteTo, as the S3 gateway's GET copies a
		// key), then read: both right.
		got, err := f.copy(ctx, "/vol/bkt/k")
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got), "copied")
		f.requireContent("/vol/bkt/k", data)
		rep := f.replicas(bl.BlockId.ContainerId)
		require.Equal(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, rep.Replicas[bad].GetState(),
			"replica of container %d on %s", bl.BlockId.ContainerId, bad)
		for _, m := range bl.Pipeline.Members[1:] {
			require.NotEqual(t, stratov1.ContainerState_CONTAINER_UNHEALTHY, rep.Replicas[m.Id].GetState(), "replica on %s", m.Id)
		}

		// A ranged read across the bad window is right too.
		r, err := f.cl.Open(ctx, "/vol/bkt/k")
		require.NoError(t, err)
		buf := make([]byte, 64<<10)
		off := bl.Offset + at - 30_000
		_, err = r.ReadAt(buf, off)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data[off:off+int64(len(buf))], buf))
		require.NoError(t, r.Close())
	})

	t.Run("every replica", func(t *testing.T) {
		bl := ki.Blocks[2]
		const at = 300_001
		for _, m := range bl.Pipeline.Members {
			flipByte(t, f.blockFile(m.Id, bl), at)
		}
		for _, read := range []func(context.Context, string) ([]byte, error){f.read, f.copy} {
			got, err := read(ctx, "/vol/bkt/k")
			require.ErrorIs(t, err, client.ErrCorruptRead)
			require.Less(t, int64(len(got)), bl.Offset+at, "nothing past the bad window is returned")
			require.True(t, bytes.Equal(data[:len(got)], got), "what was returned is right")
		}

		r, err := f.cl.Open(ctx, "/vol/bkt/k")
		require.NoError(t, err)
		defer func() { require.NoError(t, r.Close()) }()
		buf := make([]byte, 1000)
		n, err := r.ReadAt(buf, bl.Offset+at-500)
		require.ErrorIs(t, err, client.ErrCorruptRead)
		require.Zero(t, n)
		// Outside the bad checksum window the block still reads.
		_, err = r.ReadAt(buf, bl.Offset+at+100_000)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data[bl.Offset+at+100_000:][:len(buf)], buf))
	})
}

// TestNoPipelineLeft kills one of three datanodes and writes with
// replication THREE: the write fails promptly with ResourceExhausted (no
// pipeline available), first through the data path (meta still believes
// the node healthy, the pipeline fails, the writer excludes the node and
// finds no other pipeline), then at once when meta has seen the node go
// stale. No key is left visible.
func TestNoPipelineLeft(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{BlockSize: 1 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 100 * time.Millisecond, DeadAfter: 2 * time.Second},
		stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	require.NoError(t, f.write(t.Context(), "/vol/bkt/before", fastRandom(3<<20, 1), 1<<20, 0, nil))
	require.NoError(t, f.c.StopDatanode(2))
	stopped := time.Now()

	check := func(path string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		err := f.write(ctx, path, fastRandom(3<<20, 2), 1<<20, 0, nil)
		require.Error(t, err)
		require.NoError(t, ctx.Err(), "the write failed rather than hanging: %v", err)
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
		require.ErrorContains(t, err, "no pipeline available")
		t.Logf("%s failed after %v: %v", path, time.Since(start).Round(time.Millisecond), err)
		_, err = f.cl.Stat(t.Context(), path)
		require.Equal(t, codes.NotFound, status.Code(err), "%s is not visible: %v", path, err)
	}
	check("/vol/bkt/during")
	if time.Since(stopped) < time.Second { // StaleAfter: meta cannot have noticed yet
		// The writer got a block on the pipeline through the dead node,
		// failed, and had meta close that pipeline before giving up.
		ki, err := f.cl.LookupKey(t.Context(), "vol", "bkt", "before")
		require.NoError(t, err)
		p := f.pipelines()[ki.Blocks[0].Pipeline.Id]
		require.Equal(t, stratov1.PipelineState_PIPELINE_CLOSED, p.State, "pipeline %d", p.Id)
	}

	// Once meta has marked the node stale, allocation fails at once.
	require.Eventually(t, func() bool {
		resp, err := client.Cluster(t.Context(), f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
			return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		})
		require.NoError(t, err)
		healthy := 0
		for _, d := range resp.Datanodes {
			if d.Health == stratov1.NodeHealth_NODE_HEALTHY {
				healthy++
			}
		}
		return healthy == 2
	}, 10*time.Second, 50*time.Millisecond)
	check("/vol/bkt/after")

	// What was written before the loss still reads, from the two left.
	f.requireContent("/vol/bkt/before", fastRandom(3<<20, 1))
}

// TestBadInput: client calls with bad arguments fail with clear errors.
func TestBadInput(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{BlockSize: 1 << 20, ContainerSize: 16 << 20},
		stratov1.ReplicationFactor_REPLICATION_THREE, 256<<10)
	ctx := t.Context()
	require.NoError(t, f.write(ctx, "/vol/bkt/exists", []byte("hello"), 5, 0, nil))

	for _, tc := range []struct {
		name string
		op   func() error
		code codes.Code
		msg  string
	}{
		{"create in a missing bucket", func() error {
			_, err := f.cl.Create(ctx, "/vol/nobkt/f", client.CreateOptions{Recursive: true})
			return err
		}, codes.NotFound, "bucket not found: vol/nobkt"},
		{"create key in a missing volume", func() error {
			_, err := f.cl.CreateKey(ctx, "novol", "bkt", "k", client.WriteOptions{})
			return err
		}, codes.NotFound, "bucket not found: novol/bkt"},
		{"open a missing key", func() error {
			_, err := f.cl.Open(ctx, "/vol/bkt/missing")
			return err
		}, codes.NotFound, "key not found: vol/bkt/missing"},
		{"open a key in a missing bucket", func() error {
			_, err := f.cl.OpenKey(ctx, "vol", "nobkt", "k")
			return err
		}, codes.NotFound, "bucket not found"},
		{"create over a file", func() error {
			_, err := f.cl.Create(ctx, "/vol/bkt/exists", client.CreateOptions{})
			return err
		}, codes.AlreadyExists, "file already exists: exists"},
		{"create under a file", func() error {
			_, err := f.cl.Create(ctx, "/vol/bkt/exists/child", client.CreateOptions{Recursive: true})
			return err
		}, codes.FailedPrecondition, "not a directory: exists"},
		{"path without a bucket", func() error {
			_, err := f.cl.Create(ctx, "/vol", client.CreateOptions{})
			return err
		}, codes.Unknown, "client: invalid path: \"/vol\" names no bucket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := tc.op()
			require.Error(t, err)
			require.Less(t, time.Since(start), 5*time.Second, "no retrying of a final answer")
			require.Equal(t, tc.code, status.Code(err), "%v", err)
			require.ErrorContains(t, err, tc.msg)
			if tc.code == codes.Unknown {
				require.ErrorIs(t, err, client.ErrInvalidPath)
			}
		})
	}

	// The file that was there is unchanged, and Overwrite replaces it.
	f.requireContent("/vol/bkt/exists", []byte("hello"))
	w, err := f.cl.Create(ctx, "/vol/bkt/exists", client.CreateOptions{Overwrite: true})
	require.NoError(t, err)
	_, err = w.Write([]byte("bye"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	f.requireContent("/vol/bkt/exists", []byte("bye"))

	// A closed writer refuses more.
	_, err = w.Write([]byte("x"))
	require.ErrorIs(t, err, client.ErrWriterClosed)
}
