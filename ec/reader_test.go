package ec

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var errDead = errors.New("test: member dead")

// TestGroupReaderDegraded: a group's members in memory, some dead (their
// reads fail) and some of those known lost up front; any range reads back
// byte for byte with up to p dead, and with more it is either right (the
// range needed none of them) or ErrTooManyLost, never other bytes.
func TestGroupReaderDegraded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		coder, group, members := genGroup(t, 1)
		c, n := coder.Config(), int64(len(group))
		dead := map[int]bool{}
		for _, m := range rapid.SliceOfNDistinct(rapid.IntRange(0, c.Members()-1), 0, c.Parity+1, rapid.ID).Draw(t, "dead") {
			dead[m] = true
		}
		var reads atomic.Int64
		g := NewGroupReader(coder, n, func(m int, off int64, dst []byte) error {
			reads.Add(1)
			if dead[m] {
				return errDead
			}
			require.LessOrEqual(t, off+int64(len(dst)), int64(len(members[m])), "member %d read past its block", m)
			copy(dst, members[m][off:])
			return nil
		})
		for m := range dead {
			if rapid.Bool().Draw(t, "known") {
				g.MarkLost(m, errDead)
			}
		}
		for range 3 {
			off := rapid.Int64Range(0, n-1).Draw(t, "off")
			size := rapid.Int64Range(1, n-off).Draw(t, "size")
			dst := make([]byte, size)
			err := g.ReadAt(dst, off)
			if err != nil {
				require.ErrorIs(t, err, ErrTooManyLost)
				require.Greater(t, len(dead), c.Parity)
				continue
			}
			require.Equal(t, group[off:off+size], dst, "dead %v", dead)
		}
	})
}

// TestGroupReaderHealthyReadsDataOnly: with every member up, only the data
// members holding the range are read, once per cell piece.
func TestGroupReaderHealthyReadsDataOnly(t *testing.T) {
	c := RS63
	c.CellSize = CellAlign
	coder, err := NewCoder(c)
	require.NoError(t, err)
	n := 2*c.StripeSize() + 5
	group := make([]byte, n)
	for i := range group {
		group[i] = byte(i * 31)
	}
	members := encodeGroup(t, coder, group)
	var pieces atomic.Int64
	g := NewGroupReader(coder, n, func(m int, off int64, dst []byte) error {
		require.Less(t, m, c.Data, "a parity member was read")
		pieces.Add(1)
		copy(dst, members[m][off:])
		return nil
	})
	dst := make([]byte, n)
	require.NoError(t, g.ReadAt(dst, 0))
	require.Equal(t, group, dst)
	require.Equal(t, 2*int64(c.Data)+1, pieces.Load())
	require.Empty(t, g.Lost())
	require.Error(t, g.ReadAt(make([]byte, 2), n-1))
}
