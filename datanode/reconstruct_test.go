package datanode

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// lossSets lists every set of one or two members of n.
func lossSets(n int) [][]int {
	var out [][]int
	for a := range n {
		out = append(out, []int{a})
		for b := a + 1; b < n; b++ {
			out = append(out, []int{a, b})
		}
	}
	return out
}

// TestGroupLen: for every group length up to four stripes (and a bit) of
// RS-3-2 with small cells and every loss of one or two members, the
// length found gives every surviving member its true length, is the true
// one when no data member is lost, and is never shorter.
func TestGroupLen(t *testing.T) {
	cfg := ec.Config{Codec: ec.RS, Data: 3, Parity: 2, CellSize: 16}
	lens := make([]int64, cfg.Members())
	for n := int64(0); n <= 4*cfg.StripeSize()+20; n++ {
		for _, lost := range lossSets(cfg.Members()) {
			dataLost := false
			for m := range lens {
				lens[m] = cfg.MemberLen(n, m)
			}
			for _, m := range lost {
				lens[m] = -1
				dataLost = dataLost || m < cfg.Data
			}
			got, err := groupLen(cfg, lens)
			require.NoError(t, err, "n %d lost %v", n, lost)
			require.GreaterOrEqual(t, got, n, "n %d lost %v", n, lost)
			for m, l := range lens {
				if l >= 0 {
					require.Equal(t, l, cfg.MemberLen(got, m), "n %d lost %v member %d", n, lost, m)
				} else {
					require.GreaterOrEqual(t, cfg.MemberLen(got, m), cfg.MemberLen(n, m))
				}
			}
			if !dataLost {
				require.Equal(t, n, got, "lost %v", lost)
			}
		}
	}
	// Lengths no group has: refused.
	_, err := groupLen(cfg, []int64{16, 0, 16, -1, -1})
	require.ErrorIs(t, err, ErrInconsistentGroup)
	_, err = groupLen(cfg, []int64{32, 16, 0, 32, -1})
	require.ErrorIs(t, err, ErrInconsistentGroup)
	_, err = groupLen(cfg, []int64{-1, -1, -1, -1, -1})
	require.ErrorIs(t, err, ErrInconsistentGroup)
}

// encodeGroup lays data out as a block group: each member's block.
func encodeGroup(t testing.TB, coder *ec.Coder, data []byte) [][]byte {
	cfg := coder.Config()
	sc := coder.NewStripeCoder()
	members := make([][]byte, cfg.Members())
	parity := make([][]byte, cfg.Parity)
	for i := range parity {
		parity[i] = make([]byte, cfg.CellSize)
	}
	var cells [][]byte
	for off := 0; off < len(data); off += int(cfg.StripeSize()) {
		cells = cfg.SplitStripe(data[off:min(len(data), off+int(cfg.StripeSize()))], cells)
		for m, c := range cells {
			members[m] = append(members[m], c...)
		}
		ps, err := sc.Encode(cells, parity)
		require.NoError(t, err)
		for i, p := range ps {
			members[cfg.Data+i] = append(members[cfg.Data+i], p...)
		}
	}
	for m := range members {
		require.Equal(t, cfg.MemberLen(int64(len(data)), m), int64(len(members[m])))
	}
	return members
}

// TestRebuildMember: RS-3-2 with 4 KiB cells, groups of lengths around
// every cell and stripe boundary up to three stripes and more, every loss
// of one or two members: each lost member is rebuilt from the others to
// its original bytes followed by zeros (the encoder's padding), as long as
// the group length found says.
func TestRebuildMember(t *testing.T) {
	cfg := ec.Config{Codec: ec.RS, Data: 3, Parity: 2, CellSize: 4096}
	coder, err := ec.NewCoder(cfg)
	require.NoError(t, err)
	c := int64(cfg.CellSize)
	var sizes []int64
	for k := int64(0); k <= 3*3+2; k++ {
		for _, d := range []int64{-1, 0, 1, 100} {
			if n := k*c + d; n >= 0 {
				sizes = append(sizes, n)
			}
		}
	}
	// More than one batch of stripes.
	sizes = append(sizes, 13*3*c+5)
	// Shared by every rebuild, as by the blocks of a container.
	sc, bufs := coder.NewStripeCoder(), &rebuildBufs{}
	for _, n := range sizes {
		data := pattern(n, 0, int(n))
		members := encodeGroup(t, coder, data)
		for _, lost := range lossSets(cfg.Members()) {
			lens := make([]int64, cfg.Members())
			for m := range lens {
				lens[m] = int64(len(members[m]))
			}
			for _, m := range lost {
				lens[m] = -1
			}
			got, err := groupLen(cfg, lens)
			require.NoError(t, err)
			for _, target := range lost {
				read := func(m int, off int64, dst []byte) error {
					for _, l := range lost {
						if l == m {
							return fmt.Errorf("member %d read while lost", m)
						}
					}
					if off+int64(len(dst)) > int64(len(members[m])) {
						return fmt.Errorf("member %d: read [%d, %d) of %d bytes", m, off, off+int64(len(dst)), len(members[m]))
					}
					copy(dst, members[m][off:])
					return nil
				}
				var have []int
				for m := range cfg.Members() {
					if !slices.Contains(lost, m) {
						have = append(have, m)
					}
				}
				var reads atomic.Int64 // rebuildMember reads the members in parallel
				counting := func(m int, off int64, dst []byte) error {
					reads.Add(int64(len(dst)))
					return read(m, off, dst)
				}
				var out []byte
				err := rebuildMember(coder, sc, bufs, got, target, have, counting, func(off int64, p []byte) error {
					require.Equal(t, int64(len(out)), off)
					out = append(out, p...)
					return nil
				})
				require.NoError(t, err, "n %d lost %v", n, lost)
				want := members[target]
				require.Equal(t, cfg.MemberLen(got, target), int64(len(out)), "n %d lost %v target %d", n, lost, target)
				require.True(t, bytes.Equal(want, out[:len(want)]), "n %d lost %v target %d: the original bytes", n, lost, target)
				require.True(t, bytes.Equal(make([]byte, len(out)-len(want)), out[len(want):]), "n %d lost %v target %d: then zeros", n, lost, target)
				// d members read, each at most its share: never more than
				// d cells per cell rebuilt.
				require.LessOrEqual(t, reads.Load(), int64(cfg.Data)*cfg.MemberLen(got, 0), "n %d lost %v target %d", n, lost, target)
			}
		}
	}
}

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
		members := encodeGroup(t, coder, pattern(int64(n), 0, n))
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
	opts := func(n *node) rebuildOptions {
		return rebuildOptions{Store: n.store, ClientID: "datanode test", Logger: quietLogger()}
	}
	for _, lost := range [][]int{{1}, {4}, {0, 3}} {
		for _, target := range lost {
			dst := startNode(t, nodeConfig{})
			cmd := &stratov1.ReconstructECContainerCommand{ContainerId: id, ReplicaIndex: int32(ec.ReplicaIndex(target)),
				ErasureCoding: client.ErasureCoding(cfg), Sources: sources(lost...)}
			st, err := reconstruct(context.Background(), cmd, opts(dst))
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

	// Too few sources.
	dst := startNode(t, nodeConfig{})
	cmd := &stratov1.ReconstructECContainerCommand{ContainerId: id, ReplicaIndex: 1, ErasureCoding: client.ErasureCoding(cfg), Sources: sources(0, 1, 2)}
	_, err = reconstruct(context.Background(), cmd, opts(dst))
	require.ErrorIs(t, err, ErrTooFewSources)

	// A member whose block is not what the writer left: refused, nothing kept.
	writeBlock(t, conns[2], bid(id+1, 1), make([]byte, 4096), 4096, nil, false)
	writeBlock(t, conns[3], bid(id+1, 1), make([]byte, 100), 4096, nil, false)
	writeBlock(t, conns[4], bid(id+1, 1), make([]byte, 4096), 4096, nil, false)
	for m := 2; m < 5; m++ {
		require.NoError(t, nodes[m].store.PlaceReplica(id+1, m+1, cfg.Data))
	}
	cmd = &stratov1.ReconstructECContainerCommand{ContainerId: id + 1, ReplicaIndex: 1, ErasureCoding: client.ErasureCoding(cfg), Sources: sources(0, 1)}
	_, err = reconstruct(context.Background(), cmd, opts(dst))
	require.ErrorIs(t, err, ErrInconsistentGroup)
	_, err = dst.store.Container(id + 1)
	require.ErrorIs(t, err, container.ErrNotFound)
}

// TestRebuildMemberSourceFails: a source that fails mid-rebuild is
// dropped and its batch read again from another member; with fewer than d
// left the rebuild fails with ErrTooFewSources.
func TestRebuildMemberSourceFails(t *testing.T) {
	cfg := ec.Config{Codec: ec.RS, Data: 3, Parity: 2, CellSize: 4096}
	coder, err := ec.NewCoder(cfg)
	require.NoError(t, err)
	n := int64(9*3*cfg.CellSize + 77)
	data := pattern(n, 0, int(n))
	members := encodeGroup(t, coder, data)
	target := 1
	// Member 1 is lost: three left are all it takes, so one more failing
	// is one too many.
	for _, bad := range [][]int{{0}, {4}, {0, 3}} {
		read := func(m int, off int64, dst []byte) error {
			if slices.Contains(bad, m) && off > 0 {
				return fmt.Errorf("member %d: disk error", m)
			}
			copy(dst, members[m][off:])
			return nil
		}
		var out []byte
		err := rebuildMember(coder, coder.NewStripeCoder(), &rebuildBufs{}, n, target, []int{0, 2, 3, 4}, read,
			func(off int64, p []byte) error {
				out = append(out, p...)
				return nil
			})
		if len(bad) == 2 {
			require.ErrorIs(t, err, ErrTooFewSources)
			continue
		}
		require.NoError(t, err, "bad %v", bad)
		require.True(t, bytes.Equal(members[target], out[:len(members[target])]), "bad %v", bad)
	}
}
