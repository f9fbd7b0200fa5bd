package datanode

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

func startPipeline(t *testing.T, cfg nodeConfig) []*node {
	return []*node{startNode(t, cfg), startNode(t, cfg), startNode(t, cfg)}
}

func followersOf(nodes []*node) []string {
	var out []string
	for _, n := range nodes[1:] {
		out = append(out, n.addr)
	}
	return out
}

// TestPipeline writes blocks through a leader with two followers and reads
// every replica back.
func TestPipeline(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	const blocks = 6
	data := make([][]byte, blocks)
	var wg sync.WaitGroup
	for i := range blocks {
		data[i] = pattern(int64(100+i), 0, 3<<20+12345)
		wg.Add(1)
		go func() {
			defer wg.Done()
			writeBlock(t, leader, bid(uint64(1+i%2), uint64(i)), data[i], 1<<20, followersOf(nodes), i%2 == 0)
		}()
	}
	wg.Wait()

	for _, n := range nodes {
		c := n.dial(t)
		for i := range blocks {
			b := bid(uint64(1+i%2), uint64(i))
			gb, err := c.GetBlock(context.Background(), &wire.GetBlockRequest{Block: b})
			require.NoError(t, err)
			require.Equal(t, int64(len(data[i])), gb.Length)
			require.Len(t, gb.Chunks, 4)
			require.Equal(t, data[i], readRange(t, c, b, 0, len(data[i])), "block %v on %s", b, n.addr)
			require.Equal(t, data[i][12345:12345+777], readRange(t, c, b, 12345, 777))
		}
		require.Len(t, n.store.Containers(), 2, "containers created on first write on %s", n.addr)
	}
	m := nodes[0].srv.Metrics()
	require.Equal(t, int64(2*blocks*5), m.Forwarded, "4 chunks and a PutBlock per block to each follower")
	require.Zero(t, m.ForwardErrors)
	require.Zero(t, nodes[1].srv.Metrics().Forwarded, "followers do not forward")
}

// TestPipelineTLSPassRecords: under TLS, a leader sends each chunk of at
// least wire.PassMin to its followers as the pass records the client sealed
// (decision 0112), and every replica holds the client's bytes.
func TestPipelineTLSPassRecords(t *testing.T) {
	server, client := testTLS(t)
	cfg := nodeConfig{tls: server}
	cfg.server.Forward.Conn.TLS = client
	nodes := startPipeline(t, cfg)
	c, err := wire.Dial(context.Background(), nodes[0].addr, wire.ConnOptions{ClientID: t.Name(), TLS: client})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.True(t, c.PassRecords())

	b := bid(1, 1)
	data := pattern(5, 0, 3<<20+12345) // three chunks of 1 MiB and one of 12,345 bytes
	writeBlock(t, c, b, data, 1<<20, followersOf(nodes), true)
	for _, n := range nodes {
		nc, err := wire.Dial(context.Background(), n.addr, wire.ConnOptions{ClientID: t.Name(), TLS: client})
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		require.Equal(t, data, readRange(t, nc, b, 0, len(data)), "on %s", n.addr)
	}
	m := nodes[0].srv.Metrics()
	require.Equal(t, int64(2*3<<20), m.ForwardedSealed, "the three 1 MiB chunks to each follower; the last one resealed")
	require.Zero(t, m.ForwardErrors)
}

// TestPipelineFollowerDown: with a follower down, the leader fails the
// request naming it (UNAVAILABLE), having written locally and to the other
// follower; nothing is committed anywhere.
func TestPipelineFollowerDown(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	ctx := context.Background()
	b := bid(5, 1)
	data := pattern(9, 0, 64<<10)
	writeBlock(t, leader, b, data, 32<<10, followersOf(nodes), false)

	nodes[2].stop()
	next := pattern(10, 0, 1000)
	err := leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(5, 2), Checksums: sums(next), Followers: followersOf(nodes)}, next)
	e := requireCode(t, err, wire.CodeFollowerFailed)
	require.Equal(t, []wire.FailedNode{{Addr: nodes[2].addr, Code: wire.CodeUnavailable}}, e.Failed)
	require.Contains(t, e.Message, nodes[2].addr)

	_, err = leader.PutBlock(ctx, &wire.PutBlockRequest{Block: bid(5, 2), Length: 1000, Followers: followersOf(nodes)})
	e = requireCode(t, err, wire.CodeFollowerFailed)
	require.Equal(t, nodes[2].addr, e.Failed[0].Addr)

	// The client excludes the dead follower: the pipeline of two works.
	_, err = leader.PutBlock(ctx, &wire.PutBlockRequest{Block: bid(5, 2), Length: 1000, Followers: []string{nodes[1].addr}})
	require.NoError(t, err)
	for _, n := range nodes[:2] {
		require.Equal(t, next, readRange(t, n.dial(t), bid(5, 2), 0, 1000))
	}
	// Earlier data is intact.
	require.Equal(t, data, readRange(t, nodes[1].dial(t), b, 0, len(data)))
}

// TestPipelineFollowerRefuses: a follower that answers an error is listed
// with its own code.
func TestPipelineFollowerRefuses(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	ctx := context.Background()
	data := pattern(11, 0, 4096)
	writeBlock(t, leader, bid(6, 1), data, 4096, followersOf(nodes), false)
	require.NoError(t, nodes[1].store.CloseContainer(6))

	err := leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(6, 2), Checksums: sums(data), Followers: followersOf(nodes)}, data)
	e := requireCode(t, err, wire.CodeFollowerFailed)
	require.Equal(t, []wire.FailedNode{{Addr: nodes[1].addr, Code: wire.CodeContainerNotOpen}}, e.Failed)

	// The leader failing too: its own code comes first.
	require.NoError(t, nodes[0].store.CloseContainer(6))
	err = leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(6, 3), Checksums: sums(data), Followers: followersOf(nodes)}, data)
	e = requireCode(t, err, wire.CodeContainerNotOpen)
	require.Equal(t, []wire.FailedNode{{Addr: nodes[1].addr, Code: wire.CodeContainerNotOpen}}, e.Failed)
}

// TestPipelineChecksumMismatch: a damaged chunk fails at the leader before
// any follower sees it, and at a follower written directly.
func TestPipelineChecksumMismatch(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	ctx := context.Background()
	data := pattern(12, 0, 100<<10)
	s := sums(data)
	data[70000] ^= 1
	err := leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(8, 1), Checksums: s, Followers: followersOf(nodes)}, data)
	e := requireCode(t, err, wire.CodeChecksumMismatch)
	require.Empty(t, e.Failed)
	for _, n := range nodes {
		_, err := n.store.Container(8)
		require.ErrorIs(t, err, container.ErrNotFound, "nothing written on %s", n.addr)
	}
	require.Zero(t, nodes[0].srv.Metrics().Forwarded)

	err = nodes[1].dial(t).WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(8, 1), Checksums: s}, data)
	requireCode(t, err, wire.CodeChecksumMismatch)
}

// TestPipelineFollowerRestart: a follower that restarts behind a pooled
// connection is reached again (the leader retries once on a new
// connection).
func TestPipelineFollowerRestart(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	data := pattern(13, 0, 4096)
	writeBlock(t, leader, bid(9, 1), data, 4096, followersOf(nodes), false)

	// Restart follower 2's server on the same port, over the same store.
	f := nodes[2]
	f.stop()
	l, err := net.Listen("tcp", f.addr)
	require.NoError(t, err)
	f.srv = NewServer(f.store, ServerOptions{Logger: quietLogger()})
	f.done = make(chan error, 1)
	go func() { f.done <- f.srv.Serve(l) }()

	writeBlock(t, leader, bid(9, 2), data, 4096, followersOf(nodes), false)
	require.Equal(t, data, readRange(t, f.dial(t), bid(9, 2), 0, len(data)))
}

// TestPutBlockSync: a PutBlock through the pipeline survives a crash of
// the processes on every replica (the kernel keeps what was written to it),
// synced or not; a synced one also survives a power loss (everything
// unsynced dropped), while an unsynced one then reads as missing or bad,
// never as wrong data that verifies.
func TestPutBlockSync(t *testing.T) {
	var fss []*vfs.MemFS
	var nodes []*node
	for range 3 {
		fs := vfs.NewCrashableMem()
		fss = append(fss, fs)
		nodes = append(nodes, startNode(t, nodeConfig{fs: fs}))
	}
	leader := nodes[0].dial(t)
	synced, unsynced := pattern(14, 0, 50000), pattern(15, 0, 30000)
	writeBlock(t, leader, bid(4, 1), synced, 20000, followersOf(nodes), true)
	writeBlock(t, leader, bid(4, 2), unsynced, 20000, followersOf(nodes), false)

	open := func(fs vfs.FS) (*Store, *container.Container) {
		store, err := OpenStore(StoreOptions{Dirs: []string{"/vol0"}, Volume: container.Options{FS: fs}, Logger: quietLogger()})
		require.NoError(t, err)
		c, err := store.Container(4)
		require.NoError(t, err)
		return store, c
	}
	read := func(c *container.Container, id uint64, n int) ([]byte, error) {
		rr, err := c.ReadChunk(id, 0, int64(n))
		if err != nil {
			return nil, err
		}
		if err := rr.Verify(); err != nil {
			return nil, err
		}
		return rr.Data, nil
	}
	rng := rand.New(rand.NewPCG(4, 2))
	for i, fs := range fss {
		// A crash of the process: both blocks are there.
		store, c := open(fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 100, RNG: rng}))
		for id, want := range map[uint64][]byte{1: synced, 2: unsynced} {
			got, err := read(c, id, len(want))
			require.NoError(t, err, "replica %d block %d", i, id)
			require.Equal(t, want, got, "replica %d block %d", i, id)
		}
		require.NoError(t, store.Close())

		// A power loss: the synced block is there; the other is not, or
		// fails its checksums.
		store, c = open(fs.CrashClone(vfs.CrashCloneCfg{}))
		got, err := read(c, 1, len(synced))
		require.NoError(t, err, "replica %d", i)
		require.Equal(t, synced, got)
		if _, err := c.GetBlock(2); !errors.Is(err, container.ErrBlockNotFound) {
			require.NoError(t, err)
			_, err = read(c, 2, len(unsynced))
			require.Error(t, err, "replica %d: the unsynced block's bytes did not survive", i)
		}
		require.NoError(t, store.Close())
	}
}

// TestPipelineSmallBudget: with payload memory for one request at a time,
// concurrent large writes through two pipelines whose leaders are each
// other's followers all complete: leaders' and followers' payloads draw on
// separate budgets, so leaders waiting on each other cannot deadlock.
func TestPipelineSmallBudget(t *testing.T) {
	cfg := nodeConfig{server: ServerOptions{MaxBufferedBytes: wire.MaxRequestPayload}}
	a, b := startNode(t, cfg), startNode(t, cfg)
	ca, cb := a.dial(t), b.dial(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := pattern(int64(i), 0, 12<<20)
			c, follower := ca, b.addr
			if i%2 == 1 {
				c, follower = cb, a.addr
			}
			errs <- c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(1, uint64(i)), Checksums: sums(data), Followers: []string{follower}}, data)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestBudget(t *testing.T) {
	b := newBudget(100)
	ctx, cancel := context.WithCancel(context.Background())
	ok, waited := b.acquire(ctx, 60)
	require.True(t, ok)
	require.False(t, waited)
	got := make(chan [2]bool)
	go func() {
		ok, waited := b.acquire(ctx, 60)
		got <- [2]bool{ok, waited}
	}()
	waiting := func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.waiters == 1 }
	require.Eventually(t, waiting, time.Second, time.Millisecond)
	b.release(60)
	require.Equal(t, [2]bool{true, true}, <-got)
	// More than the whole budget takes the whole budget.
	go func() {
		ok, waited := b.acquire(ctx, 1000)
		got <- [2]bool{ok, waited}
	}()
	require.Eventually(t, waiting, time.Second, time.Millisecond)
	cancel()
	b.wake()
	require.Equal(t, [2]bool{false, true}, <-got)
}

// TestWriteCommit: a WRITE_COMMIT writes the chunk and commits the block on
// every replica in one request (one forward per follower); repeating it
// succeeds; a chunk after a hole is written but not committed; a damaged
// chunk writes nothing anywhere.
func TestWriteCommit(t *testing.T) {
	nodes := startPipeline(t, nodeConfig{})
	leader := nodes[0].dial(t)
	require.GreaterOrEqual(t, leader.Version(), wire.VersionWriteCommit)
	ctx := context.Background()
	head, last := pattern(21, 0, 64<<10), pattern(22, 0, 1000)

	// A key of one chunk.
	b := bid(11, 1)
	req := &wire.WriteCommitRequest{Block: b, Checksums: sums(last), Final: true, Followers: followersOf(nodes)}
	resp, err := leader.WriteCommit(ctx, req, last)
	require.NoError(t, err)
	require.NotZero(t, resp.BCSID)
	require.Equal(t, int64(2), nodes[0].srv.Metrics().Forwarded, "one request to each follower")
	_, err = leader.WriteCommit(ctx, req, last)
	require.NoError(t, err, "a repeated WRITE_COMMIT succeeds")

	// The last chunk of a block whose earlier chunks are committed.
	b2 := bid(11, 2)
	require.NoError(t, leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b2, Checksums: sums(head), Followers: followersOf(nodes)}, head))
	_, err = leader.PutBlock(ctx, &wire.PutBlockRequest{Block: b2, Length: int64(len(head)), Followers: followersOf(nodes)})
	require.NoError(t, err)
	_, err = leader.WriteCommit(ctx, &wire.WriteCommitRequest{Block: b2, Offset: int64(len(head)), Checksums: sums(last),
		Final: true, Sync: true, Followers: followersOf(nodes)}, last)
	require.NoError(t, err)
	for _, n := range nodes {
		c := n.dial(t)
		gb, err := c.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
		require.NoError(t, err)
		require.Equal(t, int64(len(last)), gb.Length, "on %s", n.addr)
		require.Equal(t, last, readRange(t, c, b, 0, len(last)))
		require.Equal(t, append(append([]byte(nil), head...), last...), readRange(t, c, b2, 0, len(head)+len(last)))
	}

	// A chunk after a hole: written, not committed; filling the hole and
	// committing works.
	b3 := bid(11, 3)
	_, err = leader.WriteCommit(ctx, &wire.WriteCommitRequest{Block: b3, Offset: int64(len(head)), Checksums: sums(last),
		Final: true, Followers: followersOf(nodes)}, last)
	requireCode(t, err, wire.CodeIncomplete)
	_, err = nodes[1].dial(t).GetBlock(ctx, &wire.GetBlockRequest{Block: b3})
	requireCode(t, err, wire.CodeBlockNotFound)
	require.NoError(t, leader.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b3, Checksums: sums(head), Followers: followersOf(nodes)}, head))
	_, err = leader.PutBlock(ctx, &wire.PutBlockRequest{Block: b3, Length: int64(len(head) + len(last)), Final: true, Followers: followersOf(nodes)})
	require.NoError(t, err)

	// A damaged chunk: refused by the leader, nothing written.
	bad := append([]byte(nil), last...)
	s := sums(bad)
	bad[500] ^= 1
	_, err = leader.WriteCommit(ctx, &wire.WriteCommitRequest{Block: bid(12, 1), Checksums: s, Followers: followersOf(nodes)}, bad)
	requireCode(t, err, wire.CodeChecksumMismatch)
	for _, n := range nodes {
		_, err := n.store.Container(12)
		require.ErrorIs(t, err, container.ErrNotFound, "nothing written on %s", n.addr)
	}
}
