package replication

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/ec"
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

// groupData is n reproducible pseudo-random bytes of a block group.
func groupData(n int64) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// encodeGroup lays data out as a block group: each member's block
// (Coder.EncodeGroup), of the lengths MemberLen says.
func encodeGroup(t testing.TB, coder *ec.Coder, data []byte) [][]byte {
	members, err := coder.EncodeGroup(data)
	require.NoError(t, err)
	for m := range members {
		require.Equal(t, coder.Config().MemberLen(int64(len(data)), m), int64(len(members[m])))
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
		data := groupData(n)
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

// TestRebuildMemberSourceFails: a source that fails mid-rebuild is
// dropped and its batch read again from another member; with fewer than d
// left the rebuild fails with ErrTooFewSources.
func TestRebuildMemberSourceFails(t *testing.T) {
	cfg := ec.Config{Codec: ec.RS, Data: 3, Parity: 2, CellSize: 4096}
	coder, err := ec.NewCoder(cfg)
	require.NoError(t, err)
	n := int64(9*3*cfg.CellSize + 77)
	data := groupData(n)
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
