package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// tokenCluster starts an authenticated cluster of n datanodes with buckets
// "three", "one" (replicated) and "ecb" (rs-3-2, with n ≥ 5), and the
// administrator's client.
func tokenCluster(t *testing.T, n int, configure func(i int, o *meta.Options)) (*minicluster.Cluster, *client.Client) {
	return tokenClusterWith(t, n, minicluster.Options{HeartbeatInterval: 3 * time.Second, Clock: fakeClock()}, configure)
}

// tokenClusterWith is tokenCluster with o's clock and intervals.
func tokenClusterWith(t *testing.T, n int, o minicluster.Options, configure func(i int, o *meta.Options)) (*minicluster.Cluster, *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	o.Dir, o.Datanodes, o.Auth, o.BlockSize, o.ContainerSize, o.ConfigureMeta = t.TempDir(), n, true, 4<<20, 256<<20, configure
	c, err := minicluster.Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	for name, f := range map[string]stratov1.ReplicationFactor{"three": stratov1.ReplicationFactor_REPLICATION_THREE, "one": stratov1.ReplicationFactor_REPLICATION_ONE} {
		_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: name, Replication: f})
		require.NoError(t, err)
	}
	if n >= 5 {
		_, e, err := client.ParseReplication("rs-3-2-1024k")
		require.NoError(t, err)
		_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "ecb", ErasureCoding: e})
		require.NoError(t, err)
	}
	return c, cl
}

func put(t *testing.T, cl *client.Client, bucket, key string, data []byte) {
	t.Helper()
	w, err := cl.CreateKey(t.Context(), "vol", bucket, key, client.WriteOptions{})
	require.NoError(t, err)
	for off := 0; off < len(data); off += 1 << 20 {
		_, err := w.Write(data[off:min(off+1<<20, len(data))])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
}

func get(t *testing.T, cl *client.Client, bucket, key string) []byte {
	t.Helper()
	r, err := cl.OpenKey(t.Context(), "vol", bucket, key)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

func tokenData(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// TestBlockTokensReadWrite: with authentication on, keys of every
// replication are written and read through tokens (a THREE key's pipeline
// leader presents the client's token to its followers), and every block
// location meta hands out carries one.
func TestBlockTokensReadWrite(t *testing.T) {
	c, cl := tokenCluster(t, 5, nil)
	for _, bucket := range []string{"three", "one", "ecb"} {
		data := tokenData(9<<20+123, byte(len(bucket)))
		put(t, cl, bucket, "k", data)
		require.True(t, bytes.Equal(data, get(t, cl, bucket, "k")), bucket)
		ki, err := cl.LookupKey(t.Context(), "vol", bucket, "k")
		require.NoError(t, err)
		require.NotEmpty(t, ki.Blocks)
		for _, bl := range ki.Blocks {
			tok, err := wire.ParseBlockToken(bl.GetToken())
			require.NoError(t, err, bucket)
			require.Equal(t, wire.OpRead, tok.Ops, "a lookup's tokens read")
			require.Equal(t, "admin", tok.User)
			require.Equal(t, bl.BlockId.GetContainerId(), tok.Block.ContainerID)
			require.Equal(t, bl.BlockId.GetLocalId(), tok.Block.LocalID)
		}
	}
	for i := range 5 {
		require.True(t, c.Datanode(i).ServerMetrics().Tokens > 0, "datanode %d verified tokens", i)
	}
}

// TestBlockTokensRawClient: knowing a datanode's address and a block ID is
// not enough: a raw wire client without a token is refused READ_CHUNK and
// WRITE_CHUNK; a token from LookupKey reads but does not write.
func TestBlockTokensRawClient(t *testing.T) {
	_, cl := tokenCluster(t, 3, nil)
	ctx := t.Context()
	data := tokenData(1<<20, 7)
	put(t, cl, "three", "k", data)
	ki, err := cl.LookupKey(ctx, "vol", "three", "k")
	require.NoError(t, err)
	bl := ki.Blocks[0]
	b := wire.BlockID{ContainerID: bl.BlockId.GetContainerId(), LocalID: bl.BlockId.GetLocalId()}
	addr := bl.Pipeline.Members[0].DataAddr

	conn, err := wire.Dial(ctx, addr, wire.ConnOptions{ClientID: "intruder"})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, _, err = conn.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Length: 100}, nil)
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	require.ErrorContains(t, err, fmt.Sprintf("no token for READ of block %v", b))
	evil := []byte("overwrite")
	wr := &wire.WriteChunkRequest{Block: wire.BlockID{ContainerID: b.ContainerID, LocalID: b.LocalID + 1000},
		Checksums: checksum.Compute(checksum.CRC32C, 16<<10, evil)}
	require.ErrorIs(t, conn.WriteChunk(ctx, wr, evil), wire.CodeAccessDenied)
	_, err = conn.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	_, err = conn.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Length: 100})
	require.ErrorIs(t, err, wire.CodeAccessDenied)

	// The lookup's token: READ.
	require.NoError(t, conn.Authorize(ctx, bl.Token))
	resp, p, err := conn.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Length: 100}, nil)
	require.NoError(t, err)
	require.NoError(t, resp.Verify(p))
	require.Equal(t, data[:100], resp.Range(p, 0, 100))
	paths, err := conn.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Length: 100})
	require.NoError(t, err)
	require.Len(t, paths.Files, 1)
	wr.Block = b
	wr.Offset = int64(len(data))
	require.ErrorIs(t, conn.WriteChunk(ctx, wr, evil), wire.CodeAccessDenied)
	_, err = conn.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: 1})
	require.ErrorIs(t, err, wire.CodeAccessDenied)

	// A forged token (a READ token with WRITE set) fails its signature.
	forged := bytes.Clone(bl.Token)
	forged[29] |= byte(wire.OpWrite)
	require.ErrorIs(t, conn.Authorize(ctx, forged), wire.CodeAccessDenied)
	require.ErrorIs(t, conn.WriteChunk(ctx, wr, evil), wire.CodeAccessDenied)

	// The datanode's local socket asks the same: no block's files without
	// a READ token for it.
	lc, err := wire.DialLocal(ctx, addr, wire.ConnOptions{ClientID: "intruder"})
	require.NoError(t, err)
	defer func() { _ = lc.Close() }()
	_, err = lc.ReadLocal(ctx, &wire.ReadLocalRequest{Block: b, Length: 100})
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	require.ErrorContains(t, err, fmt.Sprintf("no token for READ of block %v", b))
	require.NoError(t, lc.Authorize(ctx, bl.Token))
	other := wire.BlockID{ContainerID: b.ContainerID, LocalID: b.LocalID + 1}
	_, err = lc.ReadLocal(ctx, &wire.ReadLocalRequest{Block: other, Length: 100})
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	lr, err := lc.ReadLocal(ctx, &wire.ReadLocalRequest{Block: b, Length: 100})
	require.NoError(t, err)
	require.Len(t, lr.Files, 1)
	lr.Close()

	// The client maps the refusal to ErrAccessDenied.
	require.True(t, bytes.Equal(data, get(t, cl, "three", "k")))
}

// TestBlockTokensRotation, on a fake clock with the default key interval
// (10 hours) and tokens that live 20: a key rotates once the interval has
// passed and signs once the datanodes know it; a token signed by the
// previous key keeps working until it expires, then is refused; a
// restarted datanode learns the keys again.
func TestBlockTokensRotation(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c, cl := tokenClusterWith(t, 3, minicluster.Options{Clock: clock}, func(_ int, o *meta.Options) {
		o.BlockTokenLifetime = 2 * meta.DefaultBlockTokenKeyInterval
	})
	ctx := t.Context()
	data := tokenData(100<<10, 9)
	put(t, cl, "one", "k", data)
	lookup := func() (*stratov1.BlockLocation, wire.BlockToken) {
		ki, err := cl.LookupKey(ctx, "vol", "one", "k")
		require.NoError(t, err)
		tok, err := wire.ParseBlockToken(ki.Blocks[0].Token)
		require.NoError(t, err)
		return ki.Blocks[0], tok
	}
	bl, first := lookup()
	b := wire.BlockID{ContainerID: bl.BlockId.GetContainerId(), LocalID: bl.BlockId.GetLocalId()}
	addr := bl.Pipeline.Members[0].DataAddr
	readWith := func(token []byte) error {
		conn, err := wire.Dial(ctx, addr, wire.ConnOptions{})
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		if err := conn.Authorize(ctx, token); err != nil {
			return err
		}
		_, _, err = conn.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Length: 10}, nil)
		return err
	}
	// Nothing rotates before the interval has passed.
	clock.Advance(meta.DefaultBlockTokenKeyInterval / 2)
	require.Never(t, func() bool { _, tok := lookup(); return tok.KeyID != first.KeyID }, 300*time.Millisecond, 50*time.Millisecond)
	// Past it, a newer key signs (once the lead has passed and the
	// datanodes heartbeat): each poll moves the clock a heartbeat on.
	clock.Advance(meta.DefaultBlockTokenKeyInterval / 2)
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		_, tok := lookup()
		return tok.KeyID > first.KeyID
	}, 20*time.Second, 20*time.Millisecond)
	require.Less(t, clock.Now().UnixMilli(), first.ExpiresUnixMs)
	require.NoError(t, readWith(bl.Token), "a token of the previous key still works")
	// Past its expiry the first token is refused; a fresh one works.
	clock.Advance(time.UnixMilli(first.ExpiresUnixMs).Sub(clock.Now()) + time.Millisecond)
	err := readWith(bl.Token)
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	require.ErrorContains(t, err, "expired")
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		bl2, _ := lookup()
		return readWith(bl2.Token) == nil
	}, 20*time.Second, 20*time.Millisecond)

	// A restarted datanode learns the keys again (refusing, until it
	// has, with "no keys yet").
	var idx int
	for i := range 3 {
		if c.Datanode(i).Addr() == addr {
			idx = i
		}
	}
	require.NoError(t, c.StopDatanode(idx))
	require.NoError(t, c.StartDatanode(idx))
	addr = c.Datanode(idx).Addr()
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		bl, _ := lookup()
		return readWith(bl.Token) == nil
	}, 20*time.Second, 50*time.Millisecond)
	require.True(t, bytes.Equal(data, get(t, cl, "one", "k")))
}

// Datanode-to-datanode work with tokens on: re-replication after a
// datanode dies, decommission, EC reconstruction.
func TestBlockTokensReReplicated(t *testing.T) { testLostDatanodeReReplicated(t, true) }

func TestBlockTokensDecommission(t *testing.T) {
	testDecommissionWith(t, minicluster.Options{Auth: true})
}

func TestBlockTokensErasureCodedRebuild(t *testing.T) {
	testErasureCodedRebuildWith(t, minicluster.Options{Auth: true})
}
