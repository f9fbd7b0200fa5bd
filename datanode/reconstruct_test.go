package datanode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// TestListBlocks pages through a container's blocks over the data
// protocol, and checks LIST_BLOCKS's errors.
func TestListBlocks(t *testing.T) {
	n := startNode(t, nodeConfig{})
	c := n.dial(t)
	var ids []uint64
	for i := range 7 {
		id := uint64(100 + 3*i)
		writeBlock(t, c, bid(5, id), pattern(int64(i), 0, 1000*i), 4096, nil, false)
		ids = append(ids, id)
	}
	require.NoError(t, n.store.PlaceReplica(5, 4, 3))
	ctx := context.Background()
	var got []uint64
	for after := uint64(0); ; {
		resp, err := c.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 5, AfterLocalID: after, Limit: 3})
		require.NoError(t, err)
		require.Equal(t, uint8(4), resp.ReplicaIndex)
		require.Equal(t, uint8(container.FilePerBlock), resp.Layout)
		require.LessOrEqual(t, len(resp.Blocks), 3)
		for _, b := range resp.Blocks {
			got = append(got, b.LocalID)
			require.Equal(t, int64(1000*((b.LocalID-100)/3)), b.Length)
			after = b.LocalID
		}
		if !resp.More {
			break
		}
		require.Len(t, resp.Blocks, 3)
	}
	require.Equal(t, ids, got)

	_, err := c.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 6, Limit: 3})
	requireCode(t, err, wire.CodeContainerNotFound)
	_, err = c.ListBlocks(ctx, &wire.ListBlocksRequest{ContainerID: 5, Limit: 0})
	requireCode(t, err, wire.CodeInvalidArgument)
	// IMPORT_INDEX outside an import.
	_, _, err = c.Do(ctx, &wire.ImportIndexRequest{ContainerID: 5, ReplicaIndex: 1}, nil, nil)
	requireCode(t, err, wire.CodeBadState)
}

// TestReconstruct rebuilds lost indexes of an RS-3-2 container held by
// five real datanode servers onto a sixth, for groups of several
// lengths: the rebuilt replica holds the index, CLOSED, with each block's
// bytes the original member's (followed by zeros where the length is
// ambiguous). A source with a block of a wrong length fails the rebuild
// and leaves nothing.
func TestReconstruct(t *testing.T) {
	cfg := ec.Config{Codec: ec.RS, Data: 3, Parity: 2, CellSize: 4096}
	coder, err := ec.NewCoder(cfg)
	require.NoError(t, err)
	nodes := make([]*node, cfg.Members())
	conns := make([]*wire.Conn, cfg.Members())
	for m := range nodes {
		nodes[m] = startNode(t, nodeConfig{})
		conns[m] = nodes[m].dial(t)
	}
	const id = 9
	groups := map[uint64][][]byte{}
	for i, n := range []int{1, 4096 + 1, 3*4096 + 1, 5*3*4096 + 7, 0} {
		lid := uint64(10 + i)
		members, err := coder.EncodeGroup(pattern(int64(n), 0, n))
		require.NoError(t, err)
		groups[lid] = members
		for m, b := range members {
			if len(b) > 0 {
				writeBlock(t, conns[m], bid(id, lid), b, 8192, nil, false)
			}
		}
	}
	for m, n := range nodes {
		require.NoError(t, n.store.PlaceReplica(id, ec.ReplicaIndex(m), cfg.Data))
		require.NoError(t, n.store.CloseContainer(id))
	}
	sources := func(except ...int) []*stratov1.ECSource {
		var out []*stratov1.ECSource
		for m, n := range nodes {
			skip := false
			for _, e := range except {
				skip = skip || e == m
			}
			if !skip {
				out = append(out, &stratov1.ECSource{ReplicaIndex: int32(ec.ReplicaIndex(m)), Datanode: &stratov1.DatanodeDetails{Id: fmt.Sprint(m), DataAddr: n.addr}})
			}
		}
		return out
	}
	opts := func(n *node) replication.ReconstructOptions {
		return replication.ReconstructOptions{Store: n.store, ClientID: "datanode test", Logger: quietLogger()}
	}
	for _, lost := range [][]int{{1}, {4}, {0, 3}} {
		for _, target := range lost {
			dst := startNode(t, nodeConfig{})
			cmd := &stratov1.ReconstructECContainerCommand{ContainerId: id, ReplicaIndex: int32(ec.ReplicaIndex(target)),
				ErasureCoding: client.ErasureCoding(cfg), Sources: sources(lost...)}
			st, err := replication.Reconstruct(context.Background(), cmd, opts(dst))
			require.NoError(t, err, "lost %v", lost)
			ct, err := dst.store.Container(id)
			require.NoError(t, err)
			require.Equal(t, container.Closed, ct.State())
			require.Equal(t, ec.ReplicaIndex(target), ct.ReplicaIndex())
			c := dst.dial(t)
			blocks := 0
			for lid, members := range groups {
				want := members[target]
				b, err := ct.GetBlock(lid)
				if len(want) == 0 && err != nil {
					continue
				}
				require.NoError(t, err, "block %d", lid)
				blocks++
				got := readRange(t, c, bid(id, lid), 0, int(b.Length))
				require.Equal(t, want, got[:len(want)], "block %d of index %d", lid, target+1)
				require.True(t, bytes.Equal(make([]byte, len(got)-len(want)), got[len(want):]), "block %d: then zeros", lid)
			}
			require.Equal(t, blocks, st.Blocks)
		}
	}

	// A source whose replica is damaged on disk: its read fails the
	// checksum as it arrives, and the batch is read from another.
	const damaged = 13 // 5*3*4096+7 bytes
	src, err := nodes[0].store.Container(id)
	require.NoError(t, err)
	ext, err := src.Extents(damaged, 0, int64(len(groups[damaged][0])))
	require.NoError(t, err)
	f, err := os.OpenFile(ext[0].Path, os.O_RDWR, 0)
	require.NoError(t, err)
	b := []byte{0}
	_, err = f.ReadAt(b, ext[0].FileOffset+100)
	require.NoError(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, ext[0].FileOffset+100)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	dst := startNode(t, nodeConfig{})
	cmd := &stratov1.ReconstructECContainerCommand{ContainerId: id, ReplicaIndex: int32(ec.ReplicaIndex(4)),
		ErasureCoding: client.ErasureCoding(cfg), Sources: sources(4)}
	_, err = replication.Reconstruct(context.Background(), cmd, opts(dst))
	require.NoError(t, err, "a damaged source and three good ones")
	ct, err := dst.store.Container(id)
	require.NoError(t, err)
	blk, err := ct.GetBlock(damaged)
	require.NoError(t, err)
	require.Equal(t, groups[damaged][4], readRange(t, dst.dial(t), bid(id, damaged), 0, int(blk.Length))[:len(groups[damaged][4])])

	// Too few sources.
	dst = startNode(t, nodeConfig{})
	cmd = &stratov1.ReconstructECContainerCommand{ContainerId: id, ReplicaIndex: 1, ErasureCoding: client.ErasureCoding(cfg), Sources: sources(0, 1, 2)}
	_, err = replication.Reconstruct(context.Background(), cmd, opts(dst))
	require.ErrorIs(t, err, replication.ErrTooFewSources)

	// A member whose block is not what the writer left: refused, nothing kept.
	writeBlock(t, conns[2], bid(id+1, 1), make([]byte, 4096), 4096, nil, false)
	writeBlock(t, conns[3], bid(id+1, 1), make([]byte, 100), 4096, nil, false)
	writeBlock(t, conns[4], bid(id+1, 1), make([]byte, 4096), 4096, nil, false)
	for m := 2; m < 5; m++ {
		require.NoError(t, nodes[m].store.PlaceReplica(id+1, m+1, cfg.Data))
	}
	cmd = &stratov1.ReconstructECContainerCommand{ContainerId: id + 1, ReplicaIndex: 1, ErasureCoding: client.ErasureCoding(cfg), Sources: sources(0, 1)}
	_, err = replication.Reconstruct(context.Background(), cmd, opts(dst))
	require.ErrorIs(t, err, replication.ErrInconsistentGroup)
	_, err = dst.store.Container(id + 1)
	require.ErrorIs(t, err, container.ErrNotFound)
}
