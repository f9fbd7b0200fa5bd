package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// ecCluster starts n datanodes with small blocks (a group of rs-3-2 with
// 1 MiB cells then holds 4 stripes, 12 MiB) and an erasure coded bucket.
func ecCluster(t *testing.T, n int, repl string) (*minicluster.Cluster, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: n, BlockSize: 4 << 20, ContainerSize: 256 << 20,
		HeartbeatInterval: 3 * time.Second, Clock: fakeClock()})
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
	return c, cl
}

func putKey(ctx context.Context, cl *client.Client, key string, data []byte, writes int) error {
	w, err := cl.CreateKey(ctx, "vol", "ecdata", key, client.WriteOptions{})
	if err != nil {
		return err
	}
	step := max(len(data)/max(writes, 1), 1)
	for off := 0; off < len(data); off += step {
		if _, err := w.Write(data[off:min(off+step, len(data))]); err != nil {
			return err
		}
	}
	return w.Close()
}

func getKey(ctx context.Context, cl *client.Client, key string) ([]byte, error) {
	r, err := cl.OpenKey(ctx, "vol", "ecdata", key)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// Keys of every shape through rs-3-2: empty, shorter than a cell, a cell
// and a byte, a stripe and a byte, several groups; read back whole and in
// ranges across cells, stripes and groups; then again with two members of
// every group stopped (degraded reads), and a clear error, never wrong
// bytes, with three.
func TestErasureCodedReadWrite(t *testing.T) {
	t.Run("rs-3-2", func(t *testing.T) { testECReadWrite(t, 5, "rs-3-2-1024k", 3, 2) })
	// Nine datanodes, as the issue asks: RS-6-3 loses three.
	t.Run("rs-6-3", func(t *testing.T) { testECReadWrite(t, 9, "rs-6-3-1024k", 6, 3) })
}

// testECReadWrite runs the test on n datanodes (every group's members)
// with config repl of d data and p parity members, 1 MiB cells and 4 MiB
// blocks: a group is 4 stripes of d MiB.
func testECReadWrite(t *testing.T, n int, repl string, d, p int) {
	c, cl := ecCluster(t, n, repl)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	const mib = 1 << 20
	stripe, group := d*mib, 4*d*mib
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := map[string]int{"empty": 0, "small": 100, "cell+1": mib + 1, "stripe+1": stripe + 1, "groups": 5*group/2 + 12345}
	data := map[string][]byte{}
	for k, n := range sizes {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		data[k] = b
		require.NoError(t, putKey(ctx, cl, k, b, 7), k)
	}
	ki, err := cl.LookupKey(ctx, "vol", "ecdata", "groups")
	require.NoError(t, err)
	require.NotNil(t, ki.ErasureCoding)
	require.Len(t, ki.Blocks, 3, "two and a half groups")
	for _, bl := range ki.Blocks {
		ids := map[string]bool{}
		for _, m := range bl.GetPipeline().GetMembers() {
			ids[m.Id] = true
		}
		require.Len(t, ids, d+p, "a group's members are distinct datanodes")
	}

	size := sizes["groups"]
	check := func(what string) {
		t.Helper()
		for k, want := range data {
			got, err := getKey(ctx, cl, k)
			require.NoError(t, err, "%s: %s", what, k)
			require.True(t, bytes.Equal(want, got), "%s: %s differs", what, k)
		}
		r, err := cl.OpenKey(ctx, "vol", "ecdata", "groups")
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		for _, rg := range [][2]int{{0, 10}, {mib - 5, 10}, {stripe - 1, 2}, {group - 7, 20}, {5*mib + 3, 3 * stripe}, {size - 345, 345}} {
			buf := make([]byte, rg[1])
			_, err := r.ReadAt(buf, int64(rg[0]))
			require.NoError(t, err, "%s: range %v", what, rg)
			require.True(t, bytes.Equal(data["groups"][rg[0]:rg[0]+rg[1]], buf), "%s: range %v differs", what, rg)
		}
	}
	check("healthy")

	// Stop p datanodes: every group (d+p members on d+p datanodes) loses p.
	for i := range p {
		require.NoError(t, c.StopDatanode(i*2))
	}
	check(fmt.Sprintf("%d members down", p))

	require.NoError(t, c.StopDatanode(1))
	_, err = getKey(ctx, cl, "groups")
	require.Error(t, err, "p+1 members down")
	require.True(t, errors.Is(err, client.ErrCorruptRead), "%v", err)
}

// A member's datanode stopped while a key is being written: the batch that
// fails goes to a new group on the datanodes left; the key reads back whole
// (around the stopped member in the group written before).
func TestErasureCodedWriteSurvivesAMember(t *testing.T) {
	t.Run("rs-3-2", func(t *testing.T) { testECWriteSurvivesAMember(t, 6, "rs-3-2-1024k", 3) })
	t.Run("rs-6-3", func(t *testing.T) { testECWriteSurvivesAMember(t, 10, "rs-6-3-1024k", 6) })
}

// testECWriteSurvivesAMember runs the test on n datanodes with config repl
// of d data members (1 MiB cells, 4 MiB blocks: a group is 4 stripes).
func testECWriteSurvivesAMember(t *testing.T, n int, repl string, d int) {
	c, _ := ecCluster(t, n, repl)
	group := 4 * d << 20
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// A client whose warnings the test reads: the recovery says so.
	var logs lockedBuffer
	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	data := make([]byte, group+8<<20+777)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	w, err := cl.CreateKey(ctx, "vol", "ecdata", "k", client.WriteOptions{})
	require.NoError(t, err)
	// A group and 1 MiB: the first group (4 stripes: 4 MiB blocks) is
	// written and committed, 1 MiB waits in the next batch.
	_, err = w.Write(data[:group+1<<20])
	require.NoError(t, err)
	// Stop a member of the group being written: a datanode in every open
	// erasure coded pipeline (d+p of the n datanodes each).
	var pipes *stratov1.ListPipelinesResponse
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
		pipes, err = s.ListPipelines(ctx, &stratov1.ListPipelinesRequest{})
		return err
	}))
	in := map[string]int{}
	open := 0
	for _, p := range pipes.GetPipelines() {
		if p.GetErasureCoding() != nil && p.GetState() == stratov1.PipelineState_PIPELINE_OPEN {
			open++
			for _, m := range p.GetMembers() {
				in[m]++
			}
		}
	}
	require.Positive(t, open)
	victim, victimID := -1, ""
	for i := range n {
		if id := c.Datanode(i).ID(); in[id] == open {
			victim, victimID = i, id
		}
	}
	require.GreaterOrEqual(t, victim, 0, "no datanode in all %d erasure coded pipelines", open)
	require.NoError(t, c.StopDatanode(victim))
	_, err = w.Write(data[group+1<<20:])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Contains(t, logs.String(), "block group failed, moving to a new group")

	got, err := getKey(ctx, cl, "k")
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	ki, err := cl.LookupKey(ctx, "vol", "ecdata", "k")
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), ki.Size)
	// The first group keeps the stopped member (read around it above);
	// the group after it, on the same pipeline, failed with nothing
	// committed and was dropped; every later group is on the datanodes left.
	require.GreaterOrEqual(t, len(ki.Blocks), 2)
	require.Equal(t, int64(group), ki.Blocks[0].Length)
	for _, bl := range ki.Blocks[1:] {
		for _, m := range bl.GetPipeline().GetMembers() {
			require.NotEqual(t, victimID, m.Id, "a later group on the stopped datanode")
		}
	}
}

// lockedBuffer is a bytes.Buffer for loggers of several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A corrupt cell on a data member: the reader finds the checksum mismatch,
// rebuilds the cell from the other members, returns the right bytes, and
// reports the bad replica to meta.
func TestErasureCodedCorruptCell(t *testing.T) {
	t.Run("rs-3-2", func(t *testing.T) { testECCorruptCell(t, 5, "rs-3-2-1024k") })
	t.Run("rs-6-3", func(t *testing.T) { testECCorruptCell(t, 9, "rs-6-3-1024k") })
}

// testECCorruptCell runs the test on n datanodes with config repl (1 MiB
// cells: member 1's second cell is bytes [1 MiB, 2 MiB) of its block).
func testECCorruptCell(t *testing.T, n int, repl string) {
	c, cl := ecCluster(t, n, repl)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data := make([]byte, 10<<20+5)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	require.NoError(t, putKey(ctx, cl, "k", data, 3))
	ki, err := cl.LookupKey(ctx, "vol", "ecdata", "k")
	require.NoError(t, err)
	bl := ki.Blocks[0]
	bad := bl.Pipeline.Members[1] // data member 1: the group's cells 1, 4, 7, ...
	idx := datanodeIndex(t, c, bad.Id)
	path := filepath.Join(c.DatanodeDir(idx), "containers", strconv.FormatUint(bl.BlockId.ContainerId, 10),
		"chunks", strconv.FormatUint(bl.BlockId.LocalId, 10)+".block")
	const at = 1<<20 + 4321 // member 1's second cell (the group's cell d+1)
	flipByte(t, path, at)

	got, err := getKey(ctx, cl, "k")
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "the corrupt cell was rebuilt")
	// The reader reported the replica: meta marks it UNHEALTHY.
	require.Eventually(t, func() bool {
		var rep *stratov1.ContainerReplicasResponse
		err := cl.Meta().Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, s client.ClusterStubs) error {
			var err error
			rep, err = s.ContainerReplicas(ctx, &stratov1.ContainerReplicasRequest{ContainerId: bl.BlockId.ContainerId})
			return err
		})
		return err == nil && rep.Replicas[bad.Id].GetState() == stratov1.ContainerState_CONTAINER_UNHEALTHY
	}, 10*time.Second, 50*time.Millisecond)
}
