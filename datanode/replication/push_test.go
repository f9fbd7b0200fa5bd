package replication_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/internal/pagecache"
	"github.com/strato-io/strato/wire"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// node is a datanode's store and data server on a loopback port.
type node struct {
	dir     string
	store   *datanode.Store
	srv     *datanode.Server
	addr    string
	metrics *replication.Metrics
	fg      *replication.Foreground // its clients, short waits for the tests
	created chan uint64
}

func startNode(t testing.TB) *node {
	t.Helper()
	n := &node{dir: t.TempDir(), metrics: &replication.Metrics{}, created: make(chan uint64, 100),
		fg: replication.NewForeground(100*time.Millisecond, 300*time.Millisecond, nil)}
	st, err := datanode.OpenStore(datanode.StoreOptions{Dirs: []string{n.dir}, Logger: quiet(),
		Created: func(id uint64) { n.created <- id }})
	require.NoError(t, err)
	n.store = st
	n.srv = datanode.NewServer(st, datanode.ServerOptions{ID: "dn", Logger: quiet(), Replication: n.metrics, Foreground: n.fg})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n.addr = l.Addr().String()
	done := make(chan error, 1)
	go func() { done <- n.srv.Serve(l) }()
	t.Cleanup(func() {
		require.NoError(t, n.srv.Close())
		<-done
		require.NoError(t, st.Close())
	})
	return n
}

// tmpEntries lists what imports left in the volume's tmp directory.
func (n *node) tmpEntries(t testing.TB) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(n.dir, "tmp"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// fill writes blocks of the given sizes into c in chunks of chunk bytes
// (CRC32C over 16 KiB windows) and returns their bytes by local ID.
func fill(t testing.TB, c *container.Container, sizes []int, chunk int, seed uint64) map[uint64][]byte {
	t.Helper()
	rng := rand.New(rand.NewChaCha8([32]byte{byte(seed)}))
	out := map[uint64][]byte{}
	for i, size := range sizes {
		id := uint64(100 + i)
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		for off := 0; off < size; off += chunk {
			p := data[off:min(off+chunk, size)]
			require.NoError(t, c.WriteChunk(id, int64(off), p, checksum.Compute(checksum.CRC32C, 16<<10, p), container.WriteOptions{}))
		}
		_, err := c.PutBlock(id, int64(size), container.PutOptions{Final: true})
		require.NoError(t, err)
		out[id] = data
	}
	return out
}

// closedContainer creates container id on n, fills it and closes it.
func closedContainer(t testing.TB, n *node, id uint64, sizes []int, chunk int) map[uint64][]byte {
	t.Helper()
	c, err := n.store.CreateContainer(id)
	require.NoError(t, err)
	data := fill(t, c, sizes, chunk, id)
	require.NoError(t, c.Close())
	<-n.created
	return data
}

// checkCopy reads every block of container id back from the target,
// verifies its checksums and compares it with data.
func checkCopy(t testing.TB, n *node, id uint64, data map[uint64][]byte) {
	t.Helper()
	c, err := n.store.Container(id)
	require.NoError(t, err)
	require.Equal(t, container.Closed, c.State())
	info := c.Info()
	require.Equal(t, int64(len(data)), info.BlockCount)
	var used int64
	for localID, want := range data {
		used += int64(len(want))
		if len(want) == 0 {
			continue
		}
		r, err := c.ReadChunk(localID, 0, int64(len(want)))
		require.NoError(t, err)
		require.NoError(t, r.Verify())
		require.Equal(t, want, r.Bytes(0, int64(len(want))), "block %d", localID)
	}
	require.Equal(t, used, info.UsedBytes)
	rep, err := c.Scan(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Bad)
	require.Empty(t, rep.Orphans)
}

// evictBlockFiles drops container id's block files on n from the page
// cache and returns their paths; it skips the test where the volume has no
// direct I/O (a push then reads through the page cache).
func evictBlockFiles(t *testing.T, n *node, id uint64) []string {
	t.Helper()
	c, err := n.store.Container(id)
	require.NoError(t, err)
	if !c.DirectIO() {
		t.Skip("the volume's filesystem has no direct I/O")
	}
	blocks, err := replication.AllBlocks(c)
	require.NoError(t, err)
	var files []string
	for _, b := range blocks {
		ranges, err := replication.FileRanges(c, b)
		require.NoError(t, err)
		for _, r := range ranges {
			require.NoError(t, pagecache.Evict(r.Path))
			files = append(files, r.Path)
		}
	}
	require.NotEmpty(t, files)
	return files
}

func TestPushFilePerBlock(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	data := closedContainer(t, src, 7, []int{5 << 20, 1, 100 << 10, 3<<20 + 17, 0}, 1<<20)
	files := evictBlockFiles(t, src, 7)
	m := &replication.Metrics{}
	st, err := replication.Push(context.Background(), src.store, 7, dst.addr, replication.Options{Metrics: m, FrameSize: 2 << 20, Logger: quiet()})
	require.NoError(t, err)
	for _, f := range files {
		k, err := pagecache.Resident(f)
		require.NoError(t, err)
		require.Zero(t, k, "%s: the push's reads filled the page cache", f)
	}
	require.Equal(t, int64(5), st.Blocks)
	want := int64(5<<20 + 1 + 100<<10 + 3<<20 + 17)
	require.Equal(t, want, st.Bytes)
	srcInfo, _ := src.store.Container(7)
	require.Equal(t, srcInfo.Info().BCSID, st.BCSID)
	checkCopy(t, dst, 7, data)
	dc, _ := dst.store.Container(7)
	require.Equal(t, srcInfo.Info().BCSID, dc.Info().BCSID)
	require.Equal(t, uint64(7), <-dst.created, "the target's Created hook reports the new replica")
	require.Empty(t, dst.tmpEntries(t))

	ms := m.Snapshot()
	require.Equal(t, replication.MetricsSnapshot{BytesOut: want, PushesCompleted: 1}, ms)
	require.Eventually(t, func() bool {
		return dst.metrics.Snapshot() == replication.MetricsSnapshot{BytesIn: want, ImportsCompleted: 1}
	}, 5*time.Second, 10*time.Millisecond)

	// Again: the target refuses, with a code of its own.
	_, err = replication.Push(context.Background(), src.store, 7, dst.addr, replication.Options{Metrics: m, Logger: quiet()})
	require.ErrorIs(t, err, wire.CodeContainerExists)
	require.Equal(t, int64(1), m.Snapshot().PushesFailed)
	checkCopy(t, dst, 7, data)

	// The imported container survives a restart of the target's volume.
	require.Empty(t, dst.tmpEntries(t))
}

func TestPushFilePerChunk(t *testing.T) {
	dst := startNode(t)
	v, err := container.OpenVolume(t.TempDir(), container.Options{DefaultLayout: container.FilePerChunk, Logger: quiet()})
	require.NoError(t, err)
	defer v.Close()
	c, err := v.Create(9, container.FilePerChunk)
	require.NoError(t, err)
	data := fill(t, c, []int{3<<20 + 5, 64 << 10, 1}, 1<<20, 9)
	require.NoError(t, c.Close())
	st, err := replication.Push(context.Background(), v, 9, dst.addr, replication.Options{Logger: quiet()})
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Blocks)
	checkCopy(t, dst, 9, data)
	dc, _ := dst.store.Container(9)
	require.Equal(t, container.FilePerChunk, dc.Layout())
}

func TestPushOpenContainerRefused(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	c, err := src.store.CreateContainer(3)
	require.NoError(t, err)
	fill(t, c, []int{1000}, 1000, 3)
	_, err = replication.Push(context.Background(), src.store, 3, dst.addr, replication.Options{Logger: quiet()})
	require.ErrorIs(t, err, replication.ErrNotClosed)
	_, err = replication.Push(context.Background(), src.store, 4, dst.addr, replication.Options{Logger: quiet()})
	require.ErrorIs(t, err, container.ErrNotFound)
	_, err = dst.store.Container(3)
	require.ErrorIs(t, err, container.ErrNotFound)
}

func TestPushCorruptBlockLeavesNothing(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	closedContainer(t, src, 5, []int{2 << 20, 300 << 10}, 1<<20)
	// Flip a byte of the second block's file on the source.
	p := filepath.Join(src.dir, "containers", "5", "chunks", "101.block")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[1234] ^= 0x40
	require.NoError(t, os.WriteFile(p, b, 0o644))

	_, err = replication.Push(context.Background(), src.store, 5, dst.addr, replication.Options{Logger: quiet()})
	require.ErrorIs(t, err, wire.CodeChecksumMismatch)
	_, err = dst.store.Container(5)
	require.ErrorIs(t, err, container.ErrNotFound)
	require.Eventually(t, func() bool { return len(dst.tmpEntries(t)) == 0 }, 5*time.Second, 10*time.Millisecond)
	require.Empty(t, dst.store.Containers())
	require.Equal(t, int64(1), dst.metrics.Snapshot().ImportsFailed)
}

// cutter forwards one connection to the target and cuts it after limit
// bytes from the source.
func cutter(t *testing.T, target string, limit int64) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		in, err := l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			in.Close()
			return
		}
		go func() { _, _ = io.Copy(in, out) }()
		_, _ = io.CopyN(out, in, limit)
		in.Close()
		out.Close()
	}()
	return l.Addr().String()
}

func TestPushConnectionCutLeavesNothing(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	closedContainer(t, src, 6, []int{4 << 20, 4 << 20}, 1<<20)
	addr := cutter(t, dst.addr, 5<<20)
	_, err := replication.Push(context.Background(), src.store, 6, addr, replication.Options{Logger: quiet(), FrameSize: 1 << 20})
	require.Error(t, err)
	require.Eventually(t, func() bool {
		return dst.metrics.Snapshot().ImportsFailed == 1 && len(dst.tmpEntries(t)) == 0
	}, 5*time.Second, 10*time.Millisecond)
	_, err = dst.store.Container(6)
	require.ErrorIs(t, err, container.ErrNotFound)

	// The ID is free again: a second push goes through.
	_, err = replication.Push(context.Background(), src.store, 6, dst.addr, replication.Options{Logger: quiet()})
	require.NoError(t, err)
}

func TestPushCanceled(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	closedContainer(t, src, 8, []int{4 << 20}, 1<<20)
	lim, err := replication.NewLimits(1, 1<<20, nil) // 4 s for the block
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = replication.Push(ctx, src.store, 8, dst.addr, replication.Options{Limits: lim, Logger: quiet()})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Eventually(t, func() bool {
		return dst.metrics.Snapshot().ImportsFailed == 1 && len(dst.tmpEntries(t)) == 0
	}, 5*time.Second, 10*time.Millisecond)
}

func TestPushBandwidthCap(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	const rate = 8 << 20
	closedContainer(t, src, 11, []int{2 << 20}, 1<<20)
	closedContainer(t, src, 12, []int{2 << 20}, 1<<20)
	lim, err := replication.NewLimits(10, rate, nil)
	require.NoError(t, err)
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range []uint64{11, 12} {
		wg.Go(func() {
			_, err := replication.Push(context.Background(), src.store, id, dst.addr, replication.Options{Limits: lim, Logger: quiet()})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	el := time.Since(start)
	got := float64(4<<20) / el.Seconds()
	t.Logf("4 MiB in %v: %.1f MiB/s with a cap of %d MiB/s", el, got/(1<<20), rate>>20)
	// 4 MiB at 8 MiB/s is 0.5 s (less the 100 ms burst): never much faster.
	require.Less(t, got, 1.5*rate)
}

// TestPushPaced: a pace shared by two pushes (a balancer's moves) caps
// their rate together, on top of the datanode's own limits.
func TestPushPaced(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	const rate = 8 << 20
	closedContainer(t, src, 21, []int{2 << 20}, 1<<20)
	closedContainer(t, src, 22, []int{2 << 20}, 1<<20)
	lim, err := replication.NewLimits(10, 0, nil)
	require.NoError(t, err)
	pace, err := replication.NewLimits(1, rate, nil)
	require.NoError(t, err)
	start := time.Now()
	var wg sync.WaitGroup
	for _, id := range []uint64{21, 22} {
		wg.Go(func() {
			_, err := replication.Push(context.Background(), src.store, id, dst.addr, replication.Options{Limits: lim, Pace: pace, Logger: quiet()})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	el := time.Since(start)
	got := float64(4<<20) / el.Seconds()
	t.Logf("4 MiB in %v: %.1f MiB/s paced at %d MiB/s", el, got/(1<<20), rate>>20)
	require.Less(t, got, 1.5*rate)
}

func TestPushConcurrent(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	datas := map[uint64]map[uint64][]byte{}
	for id := uint64(20); id < 26; id++ {
		datas[id] = closedContainer(t, src, id, []int{600 << 10, 300 << 10}, 256<<10)
	}
	lim, err := replication.NewLimits(2, 0, nil)
	require.NoError(t, err)
	m := &replication.Metrics{}
	var wg sync.WaitGroup
	for id := range datas {
		wg.Go(func() {
			_, err := replication.Push(context.Background(), src.store, id, dst.addr, replication.Options{Limits: lim, Metrics: m, Logger: quiet()})
			require.NoError(t, err)
		})
	}
	wg.Wait()
	for id, d := range datas {
		checkCopy(t, dst, id, d)
	}
	require.Equal(t, int64(6), m.Snapshot().PushesCompleted)
	require.Equal(t, int64(0), m.Snapshot().PushesInFlight)
}

func TestLimitsValidate(t *testing.T) {
	_, err := replication.NewLimits(-1, 0, nil)
	require.Error(t, err)
	_, err = replication.NewLimits(1, -1, nil)
	require.Error(t, err)
}

// TestPushKeepsReplicaIndex: a copy of an erasure coded container's replica
// holds the same replica index (IMPORT_INDEX after IMPORT_BEGIN).
func TestPushKeepsReplicaIndex(t *testing.T) {
	src, dst := startNode(t), startNode(t)
	c, err := src.store.CreateContainer(12)
	require.NoError(t, err)
	<-src.created
	require.NoError(t, c.SetReplicaIndex(4))
	data := fill(t, c, []int{70 << 10, 1}, 32<<10, 12)
	require.NoError(t, c.Close())
	_, err = replication.Push(context.Background(), src.store, 12, dst.addr, replication.Options{Logger: quiet()})
	require.NoError(t, err)
	checkCopy(t, dst, 12, data)
	dc, err := dst.store.Container(12)
	require.NoError(t, err)
	require.Equal(t, 4, dc.ReplicaIndex())
	require.Equal(t, 4, dc.Info().ReplicaIndex)
}
