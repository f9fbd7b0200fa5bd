package datanode

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/wire"
)

var tokenKey = func() []byte {
	k := make([]byte, wire.TokenKeyLen)
	for i := range k {
		k[i] = byte(7 * i)
	}
	return k
}()

func tokenKeys() map[uint32][]byte { return map[uint32][]byte{3: tokenKey} }

// sign makes a token of key 3 (or key with ID keyID and secret key).
func sign(b wire.BlockID, ops wire.Ops, ttl time.Duration) []byte {
	t := wire.BlockToken{KeyID: 3, ExpiresUnixMs: time.Now().Add(ttl).UnixMilli(), Block: b, Ops: ops, User: "alice"}
	return t.Sign(tokenKey)
}

// TestBlockTokensRequired runs each request with and without the token it
// needs on a datanode that requires them (docs/wire.md §5.9).
func TestBlockTokensRequired(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(time.Now())
	n := startNode(t, nodeConfig{server: ServerOptions{Clock: clock}})
	n.srv.SetBlockTokens(true, tokenKeys())
	b, other := bid(12, 34), bid(12, 35)
	data := pattern(1, 0, 100<<10)

	// No token: refused, and the message names the op and the block.
	c := n.dial(t)
	err := c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Checksums: sums(data)}, data)
	e := requireCode(t, err, wire.CodeAccessDenied)
	require.Contains(t, e.Message, "no token for WRITE of block 12/34 on this connection")
	_, _, err = c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Length: 1}, nil)
	e = requireCode(t, err, wire.CodeAccessDenied)
	require.Contains(t, e.Message, "no token for READ of block 12/34 on this connection")

	// Bad tokens: refused with the reason, granting nothing.
	forged := sign(b, wire.OpRead|wire.OpWrite, time.Hour)
	forged[len(forged)-1] ^= 1
	unknown := (&wire.BlockToken{KeyID: 4, ExpiresUnixMs: time.Now().Add(time.Hour).UnixMilli(), Block: b, Ops: wire.OpWrite}).Sign(tokenKey)
	for name, tc := range map[string]struct {
		tok  []byte
		says string
	}{
		"forged mac":  {forged, "signature does not verify"},
		"unknown key": {unknown, "unknown key"},
		"expired":     {sign(b, wire.OpRead|wire.OpWrite, -time.Second), "expired"},
		"malformed":   {[]byte{9, 9, 9}, "malformed"},
	} {
		err := c.Authorize(ctx, tc.tok)
		e := requireCode(t, err, wire.CodeAccessDenied)
		require.Contains(t, e.Message, tc.says, name)
		err = c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Checksums: sums(data)}, data)
		requireCode(t, err, wire.CodeAccessDenied)
	}

	// A READ token does not write; a token for another block does not
	// serve this one.
	require.NoError(t, c.Authorize(ctx, sign(b, wire.OpRead, time.Hour)))
	err = c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Checksums: sums(data)}, data)
	requireCode(t, err, wire.CodeAccessDenied)
	require.NoError(t, c.Authorize(ctx, sign(other, wire.OpWrite, time.Hour)))
	err = c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Checksums: sums(data)}, data)
	requireCode(t, err, wire.CodeAccessDenied)
	_, err = c.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 13})
	requireCode(t, err, wire.CodeAccessDenied)

	// The right token: write, commit, read, get.
	require.NoError(t, c.Authorize(ctx, sign(b, wire.OpRead|wire.OpWrite, time.Hour)))
	writeBlock(t, c, b, data, 64<<10, nil, false)
	require.Equal(t, data, readRange(t, c, b, 0, len(data)))
	_, err = c.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
	require.NoError(t, err)

	// Grants belong to the connection.
	c2 := n.dial(t)
	_, err = c2.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
	requireCode(t, err, wire.CodeAccessDenied)
	// A READ-only token reads, and cannot commit.
	require.NoError(t, c2.Authorize(ctx, sign(b, wire.OpRead, time.Hour)))
	require.Equal(t, data, readRange(t, c2, b, 0, len(data)))
	_, err = c2.PutBlock(ctx, &wire.PutBlockRequest{Block: b, Length: int64(len(data))})
	requireCode(t, err, wire.CodeAccessDenied)
	_, err = c2.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 12, Limit: 10})
	requireCode(t, err, wire.CodeAccessDenied)

	// A container token covers every block of its container, and the
	// container-wide requests; not other containers.
	c3 := n.dial(t)
	require.NoError(t, c3.Authorize(ctx, sign(bid(12, 0), wire.OpRead, time.Hour)))
	require.Equal(t, data, readRange(t, c3, b, 0, len(data)))
	lb, err := c3.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 12, Limit: 10})
	require.NoError(t, err)
	require.Len(t, lb.Blocks, 1)
	_, err = c3.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 13, Limit: 10})
	requireCode(t, err, wire.CodeAccessDenied)
	_, err = c3.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 12})
	requireCode(t, err, wire.CodeAccessDenied) // READ does not close
	require.NoError(t, c3.Authorize(ctx, sign(other, wire.OpWrite, time.Hour)))
	_, err = c3.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 12})
	require.NoError(t, err) // WRITE on a block of the container closes it

	// A token that expires stops granting (on the datanode's clock).
	c4 := n.dial(t)
	require.NoError(t, c4.Authorize(ctx, sign(b, wire.OpRead, time.Minute)))
	require.Equal(t, data[:10], readRange(t, c4, b, 0, 10))
	clock.Advance(time.Minute + time.Second)
	_, _, err = c4.ReadChunk(ctx, &wire.ReadChunkRequest{Block: b, Length: 1}, nil)
	requireCode(t, err, wire.CodeAccessDenied)

	// A connection that chose version 1 cannot present tokens: its data
	// requests are refused.
	v1 := v1Conn(t, n)
	_, _, err = v1.Do(ctx, &wire.TokenRequest{}, sign(b, wire.OpRead, time.Hour), nil)
	requireCode(t, err, wire.CodeUnsupportedType)
	_, err = v1.GetBlock(ctx, &wire.GetBlockRequest{Block: b})
	requireCode(t, err, wire.CodeAccessDenied)

	m := n.srv.Metrics()
	require.Positive(t, m.Tokens)
	require.Positive(t, m.TokensRefused)
}

// v1Conn is a connection to n whose PING chose version 1.
func v1Conn(t *testing.T, n *node) *wire.Conn {
	nc, err := net.Dial("tcp", n.addr)
	require.NoError(t, err)
	c := wire.NewConn(nc, wire.ConnOptions{})
	t.Cleanup(func() { _ = c.Close() })
	m, _, err := c.Do(context.Background(), &wire.PingRequest{MinVersion: 1, MaxVersion: 1, ClientID: "old"}, nil, nil)
	require.NoError(t, err)
	require.Equal(t, uint8(1), m.(*wire.PingResponse).Version)
	return c
}

// TestBlockTokensNoKeysYet: a datanode told to require tokens before it
// has keys refuses with "no keys yet".
func TestBlockTokensNoKeysYet(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, nodeConfig{})
	n.srv.requireBlockTokensUntilHeard()
	c := n.dial(t)
	err := c.Authorize(ctx, sign(bid(1, 1), wire.OpRead, time.Hour))
	e := requireCode(t, err, wire.CodeAccessDenied)
	require.Contains(t, e.Message, "no keys yet")
	_, err = c.GetBlock(ctx, &wire.GetBlockRequest{Block: bid(1, 1)})
	e = requireCode(t, err, wire.CodeAccessDenied)
	require.Contains(t, e.Message, "no keys yet")
	// Meta says tokens are not required: everything is served.
	n.srv.SetBlockTokens(false, nil)
	_, err = c.GetBlock(ctx, &wire.GetBlockRequest{Block: bid(1, 1)})
	requireCode(t, err, wire.CodeContainerNotFound)
}

// TestBlockTokensNotRequired: the default serves everything, and accepts
// (and ignores) TOKEN frames, valid or not.
func TestBlockTokensNotRequired(t *testing.T) {
	ctx := context.Background()
	n := startNode(t, nodeConfig{})
	c := n.dial(t)
	require.NoError(t, c.Authorize(ctx, []byte{1, 2, 3}))
	data := pattern(2, 0, 10<<10)
	writeBlock(t, c, bid(5, 6), data, 4<<10, nil, false)
	require.Equal(t, data, readRange(t, c, bid(5, 6), 0, len(data)))
	_, err := c.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 5, Limit: 10})
	require.NoError(t, err)
	_, err = c.CloseContainer(ctx, &wire.CloseContainerRequest{ContainerID: 5})
	require.NoError(t, err)
}

// TestBlockTokensPipeline: the leader presents the client's token to its
// followers, which require tokens too; without a token the leader refuses
// before forwarding anything.
func TestBlockTokensPipeline(t *testing.T) {
	ctx := context.Background()
	nodes := startPipeline(t, nodeConfig{})
	for _, n := range nodes {
		n.srv.SetBlockTokens(true, tokenKeys())
	}
	b := bid(21, 1)
	data := pattern(3, 0, 300<<10)
	c := nodes[0].dial(t)
	err := c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: b, Checksums: sums(data), Followers: followersOf(nodes)}, data)
	requireCode(t, err, wire.CodeAccessDenied)
	require.NoError(t, c.Authorize(ctx, sign(b, wire.OpWrite, time.Hour)))
	writeBlock(t, c, b, data, 100<<10, followersOf(nodes), true)
	for _, n := range nodes {
		rc := n.dial(t)
		require.NoError(t, rc.Authorize(ctx, sign(b, wire.OpRead, time.Hour)))
		require.Equal(t, data, readRange(t, rc, b, 0, len(data)), n.addr)
	}
	// Followers saw one TOKEN per pooled connection, not one per request.
	for _, n := range nodes[1:] {
		m := n.srv.Metrics()
		require.LessOrEqual(t, m.Tokens, int64(wire.DefaultConnsPerAddr+1), n.addr)
		require.Positive(t, m.Tokens)
	}
}
