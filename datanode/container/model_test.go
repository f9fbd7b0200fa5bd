package container

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/strato-io/strato/checksum"
)

// modelBlock is the oracle's view of a block: fixed bytes cut into fixed
// chunks, which of them are written (pending or committed), and the
// committed length.
type modelBlock struct {
	data      []byte
	cuts      []int
	written   map[int]bool // chunk index
	committed int64
	hasRow    bool
}

func (b *modelBlock) exists() bool { return b.hasRow || len(b.written) > 0 }

// TestAgainstModel runs random operation sequences against a container on
// disk and a simple in-memory model, comparing every result.
func TestAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		layout := rapid.SampledFrom(layouts).Draw(rt, "layout")
		v := openTestVolume(t, vfs.Default, dir)
		defer func() { v.Close() }()
		c, err := v.Create(5, layout)
		require.NoError(rt, err)
		blocks := map[uint64]*modelBlock{}
		var bcsID uint64
		closed := false

		block := func(rt *rapid.T) (uint64, *modelBlock) { return drawBlock(rt, blocks) }

		actions := map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				id, b := block(rt)
				i := rapid.IntRange(0, len(b.cuts)-2).Draw(rt, "chunk")
				if rapid.Bool().Draw(rt, "next") { // the first chunk not written yet
					for i = 0; i < len(b.cuts)-2 && b.written[i]; i++ {
					}
				}
				p := b.data[b.cuts[i]:b.cuts[i+1]]
				err := c.WriteChunk(id, int64(b.cuts[i]), p, checksum.Compute(checksum.CRC32C, 100, p), WriteOptions{})
				if closed {
					require.ErrorIs(rt, err, ErrNotOpen)
					return
				}
				require.NoError(rt, err)
				b.written[i] = true
			},
			"conflicting write": func(rt *rapid.T) {
				id, b := block(rt)
				i := rapid.IntRange(0, len(b.cuts)-2).Draw(rt, "chunk")
				if !b.written[i] {
					return
				}
				p := append([]byte(nil), b.data[b.cuts[i]:b.cuts[i+1]]...)
				p[rapid.IntRange(0, len(p)-1).Draw(rt, "flip")] ^= 0xff
				err := c.WriteChunk(id, int64(b.cuts[i]), p, checksum.Compute(checksum.CRC32C, 100, p), WriteOptions{})
				if closed {
					require.ErrorIs(rt, err, ErrNotOpen)
				} else {
					require.ErrorIs(rt, err, ErrOverwrite)
				}
			},
			"put": func(rt *rapid.T) {
				id, b := block(rt)
				k := rapid.IntRange(0, len(b.cuts)-1).Draw(rt, "upto")
				if rapid.Bool().Draw(rt, "longest") { // all that is written
					for k = 0; k < len(b.cuts)-1 && b.written[k]; k++ {
					}
				}
				length := int64(b.cuts[k])
				sync := rapid.Bool().Draw(rt, "sync")
				_, err := c.PutBlock(id, length, PutOptions{Sync: sync})
				complete := true
				for j := 0; j < k; j++ {
					complete = complete && b.written[j]
				}
				switch {
				case closed && sync && b.hasRow && length <= b.committed:
					require.NoError(rt, err, "a synced commit of what a closed container holds")
				case closed:
					require.ErrorIs(rt, err, ErrNotOpen)
				case length < b.committed && sync && b.hasRow:
					// An appender's hsync of a block the file was cut inside:
					// the block is fsynced as committed, nothing changes.
					require.NoError(rt, err, "a synced commit shorter than the committed length")
				case length < b.committed:
					require.ErrorIs(rt, err, ErrInvalid)
				case !complete:
					require.ErrorIs(rt, err, ErrIncomplete)
				default:
					require.NoError(rt, err)
					b.committed, b.hasRow = length, true
					bcsID++
				}
			},
			"delete": func(rt *rapid.T) {
				id, b := block(rt)
				err := c.DeleteBlock(id)
				if !b.exists() {
					require.ErrorIs(rt, err, ErrBlockNotFound)
					return
				}
				require.NoError(rt, err)
				delete(blocks, id)
			},
			"read": func(rt *rapid.T) {
				id, b := block(rt)
				off := rapid.Int64Range(0, int64(len(b.data))).Draw(rt, "off")
				n := rapid.Int64Range(1, int64(len(b.data))).Draw(rt, "n")
				r, err := c.ReadChunk(id, off, n)
				switch {
				case !b.hasRow:
					require.ErrorIs(rt, err, ErrBlockNotFound)
				case off+n > b.committed:
					require.ErrorIs(rt, err, ErrInvalid)
				default:
					require.NoError(rt, err)
					require.NoError(rt, r.Verify())
					require.Equal(rt, b.data[off:off+n], r.Bytes(off, n))
				}
			},
			"sync": func(rt *rapid.T) {
				require.NoError(rt, c.Sync())
			},
			"close container": func(rt *rapid.T) {
				require.NoError(rt, c.Close())
				closed = true
				forgetPending(blocks)
			},
			"restart": func(rt *rapid.T) {
				require.NoError(rt, v.Close())
				v = openTestVolume(t, vfs.Default, dir)
				c, err = v.Container(5)
				require.NoError(rt, err)
				forgetPending(blocks)
			},
			"": func(rt *rapid.T) { checkInfo(rt, c, blocks, bcsID, closed) },
		}
		names := slices.Sorted(maps.Keys(actions))
		names = slices.DeleteFunc(names, func(s string) bool { return s == "" })
		// Writes are drawn more often so that blocks fill up and commit.
		names = append(names, "write", "write", "write", "put")
		for range rapid.IntRange(10, 60).Draw(rt, "steps") {
			actions[rapid.SampledFrom(names).Draw(rt, "action")](rt)
			actions[""](rt)
		}
	})
}

// drawBlock draws one of blocks 1 to 4, made with a random size and chunk
// cuts the first time it is drawn.
func drawBlock(rt *rapid.T, blocks map[uint64]*modelBlock) (uint64, *modelBlock) {
	id := rapid.Uint64Range(1, 4).Draw(rt, "block")
	b := blocks[id]
	if b == nil {
		n := rapid.IntRange(1, 3000).Draw(rt, "size")
		b = &modelBlock{data: pattern(id*7919+uint64(n), n), written: map[int]bool{}}
		for at := 0; at < n; at += rapid.IntRange(300, 1500).Draw(rt, "cut") {
			b.cuts = append(b.cuts, at)
		}
		b.cuts = append(b.cuts, n)
		blocks[id] = b
	}
	return id, b
}

// checkInfo compares the container's info and block list with the model,
// after every step.
func checkInfo(rt *rapid.T, c *Container, blocks map[uint64]*modelBlock, bcsID uint64, closed bool) {
	info := c.Info()
	var used, count int64
	var ids []uint64
	for id := uint64(1); id <= 4; id++ {
		if b := blocks[id]; b != nil && b.hasRow {
			used += b.committed
			count++
			ids = append(ids, id)
		}
	}
	require.Equal(rt, bcsID, info.BCSID)
	require.Equal(rt, used, info.UsedBytes)
	require.Equal(rt, count, info.BlockCount)
	require.Equal(rt, closed, info.State == Closed)
	got, err := c.ListBlocks(0, 10)
	require.NoError(rt, err)
	var gotIDs []uint64
	for _, g := range got {
		gotIDs = append(gotIDs, g.LocalID)
		require.Equal(rt, blocks[g.LocalID].committed, g.Length, fmt.Sprint("block ", g.LocalID))
	}
	require.Equal(rt, ids, gotIDs)
}

// forgetPending drops the chunks above each block's committed length, as a
// close or a restart does.
func forgetPending(blocks map[uint64]*modelBlock) {
	for id, b := range blocks {
		for i := range b.written {
			if int64(b.cuts[i]) >= b.committed {
				delete(b.written, i)
			}
		}
		if !b.exists() {
			delete(blocks, id)
		}
	}
}
