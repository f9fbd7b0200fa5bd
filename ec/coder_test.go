package ec

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/reedsolomon"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// gfMul and gfInv are GF(2^8) with the polynomial 0x11d, bit by bit: the
// oracle of the codec's matrix.
func gfMul(a, b byte) byte {
	var p byte
	for b > 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1d
		}
		b >>= 1
	}
	return p
}

func gfInv(a byte) byte {
	for b := 1; b < 256; b++ {
		if gfMul(a, byte(b)) == 1 {
			return byte(b)
		}
	}
	panic("no inverse of 0")
}

// naiveParity is the parity of ISA-L's gf_gen_cauchy1_matrix (Hadoop's
// RSUtil.genCauchyMatrix): parity row i of d+p is 1/((d+i) XOR j), and
// XOR's is the XOR of the data.
func naiveParity(c Config, data [][]byte) [][]byte {
	parity := make([][]byte, c.Parity)
	for i := range parity {
		parity[i] = make([]byte, len(data[0]))
		for j, d := range data {
			coef := byte(1)
			if c.Codec == RS {
				coef = gfInv(byte((c.Data + i) ^ j))
			}
			for k, b := range d {
				parity[i][k] ^= gfMul(coef, b)
			}
		}
	}
	return parity
}

func randomCells(rng *rand.Rand, d, n int) [][]byte {
	cells := make([][]byte, d)
	for i := range cells {
		cells[i] = make([]byte, n)
		for k := range cells[i] {
			cells[i][k] = byte(rng.Uint32())
		}
	}
	return cells
}

// TestCauchyMatrixIsFrozen: the parity is the Cauchy matrix's (HDFS's and
// Ozone's), computed by hand. It is on disk: it never changes.
func TestCauchyMatrixIsFrozen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range append(Standard(), Config{Codec: RS, Data: 12, Parity: 16, CellSize: CellAlign}) {
		cfg.CellSize = CellAlign
		coder, err := NewCoder(cfg)
		require.NoError(t, err)
		data := randomCells(rng, cfg.Data, 1000)
		_, err = coder.NewStripeCoder().Encode(data, make([][]byte, cfg.Parity))
		require.Error(t, err, "parity buffers without capacity")
		parity := make([][]byte, cfg.Parity)
		for i := range parity {
			parity[i] = make([]byte, 0, cfg.CellSize)
		}
		got, err := coder.NewStripeCoder().Encode(data, parity)
		require.NoError(t, err)
		require.Equal(t, naiveParity(cfg, data), got, cfg.String())
	}
	// One vector written down: RS-3-2 of the bytes 1..3, 4..6, 7..9. By
	// hand, the first parity row is 1/3, 1/2, 1/1 = f4, 8e, 01, and its
	// first byte f4·1 + 8e·4 + 7 = f4 ^ 02 ^ 07 = f1.
	coder, err := NewCoder(Config{Codec: RS, Data: 3, Parity: 2, CellSize: CellAlign})
	require.NoError(t, err)
	shards := [][]byte{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, make([]byte, 3), make([]byte, 3)}
	require.NoError(t, coder.Encode(shards))
	require.Equal(t, naiveParity(coder.Config(), shards[:3]), shards[3:])
	require.Equal(t, [][]byte{{0xf1, 0x71, 0x0b}, {0x9a, 0x78, 0xb1}}, shards[3:])
}

// encodeGroup is coder.EncodeGroup, which must not fail.
func encodeGroup(t require.TestingT, coder *Coder, group []byte) [][]byte {
	members, err := coder.EncodeGroup(group)
	require.NoError(t, err)
	return members
}

// genGroup draws a config and a group of at least minLen random bytes
// (up to three stripes and two), encoded into member blocks.
func genGroup(t *rapid.T, minLen int64) (*Coder, []byte, [][]byte) {
	coder, err := NewCoder(genConfig(t))
	require.NoError(t, err)
	n := rapid.Int64Range(minLen, 3*coder.Config().StripeSize()+2).Draw(t, "n")
	group := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for i := range group {
		group[i] = byte(rng.Uint32())
	}
	return coder, group, encodeGroup(t, coder, group)
}

// stripeCells cuts stripe s out of member blocks.
func stripeCells(c Config, members [][]byte, n, s int64) ([][]byte, []int) {
	lens := make([]int, c.Members())
	c.CellLens(n, s, lens)
	cells := make([][]byte, c.Members())
	for i := range cells {
		off := s * int64(c.CellSize)
		cells[i] = members[i][off : off+int64(lens[i])]
	}
	return cells, lens
}

// TestEncodeVerifies: every stripe of a group, padded, passes
// reedsolomon's own Verify on a codec built without this package, and the
// members hold what the layout says.
func TestEncodeVerifies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		coder, group, members := genGroup(t, 0)
		c, n := coder.Config(), int64(len(group))
		require.Equal(t, deal(c, group), members[:c.Data])
		for m := range members {
			require.Equal(t, c.MemberLen(n, m), int64(len(members[m])), "member %d", m)
		}
		opt := reedsolomon.WithCauchyMatrix()
		if c.Codec == XOR {
			opt = reedsolomon.WithFastOneParityMatrix()
		}
		oracle, err := reedsolomon.New(c.Data, c.Parity, opt)
		require.NoError(t, err)
		for s := range c.Stripes(n) {
			cells, lens := stripeCells(c, members, n, s)
			shards := make([][]byte, c.Members())
			for i := range shards {
				shards[i] = make([]byte, lens[0])
				copy(shards[i], cells[i])
			}
			ok, err := oracle.Verify(shards)
			require.NoError(t, err)
			require.True(t, ok, "stripe %d", s)
			ok, err = coder.Verify(shards)
			require.NoError(t, err)
			require.True(t, ok, "stripe %d", s)
			shards[rapid.IntRange(0, c.Members()-1).Draw(t, "flip")][0] ^= 1
			ok, err = oracle.Verify(shards)
			require.NoError(t, err)
			require.False(t, ok, "a flipped bit passes")
		}
	})
}

// subsets calls f with every subset of {0..n-1} of size k.
func subsets(n, k int, f func([]int)) {
	set := make([]int, 0, k)
	var rec func(from int)
	rec = func(from int) {
		if len(set) == k {
			f(set)
			return
		}
		for i := from; i < n; i++ {
			set = append(set, i)
			rec(i + 1)
			set = set[:len(set)-1]
		}
	}
	rec(0)
}

// TestEveryLossRebuilds: for each standard config, in a group of full
// stripes and a short last one, every set of up to p lost members rebuilds
// every stripe byte for byte (all cells, and the data cells alone into
// buffers of the caller's); every set of p+1 gives ErrTooManyLost where the
// lost cells hold bytes, and leaves the cells as they were.
func TestEveryLossRebuilds(t *testing.T) {
	for _, c := range Standard() {
		t.Run(c.String(), func(t *testing.T) {
			c.CellSize = CellAlign
			coder, err := NewCoder(c)
			require.NoError(t, err)
			sc := coder.NewStripeCoder()
			rng := rand.New(rand.NewPCG(3, uint64(c.Data)))
			// Two full stripes, then one whose first cell is full, its
			// second short and the rest empty.
			n := 2*c.StripeSize() + int64(c.CellSize) + 100
			group := make([]byte, n)
			for i := range group {
				group[i] = byte(rng.Uint32())
			}
			members := encodeGroup(t, coder, group)
			for k := 0; k <= c.Parity+1; k++ {
				subsets(c.Members(), k, func(lost []int) {
					for s := range c.Stripes(n) {
						want, lens := stripeCells(c, members, n, s)
						holding := 0
						for _, m := range lost {
							if lens[m] > 0 {
								holding++
							}
						}
						for _, onlyData := range []bool{false, true} {
							cells := append([][]byte(nil), want...)
							for j, m := range lost {
								if j%2 == 0 {
									cells[m] = nil
								} else {
									cells[m] = make([]byte, 0, c.CellSize) // the caller's buffer
								}
							}
							before := append([][]byte(nil), cells...)
							err := sc.Reconstruct(cells, lens, onlyData)
							if holding > c.Parity {
								require.ErrorIs(t, err, ErrTooManyLost, "lost %v", lost)
								require.Equal(t, before, cells)
								continue
							}
							require.NoError(t, err, "lost %v stripe %d", lost, s)
							for i := range cells {
								if onlyData && i >= c.Data && len(before[i]) == 0 {
									require.Empty(t, cells[i])
									continue
								}
								if lens[i] == 0 {
									require.Empty(t, cells[i])
									continue
								}
								require.Equal(t, want[i], cells[i], "lost %v stripe %d cell %d", lost, s, i)
							}
						}
					}
				})
			}
		})
	}
}

func TestCoderRefuses(t *testing.T) {
	_, err := NewCoder(Config{Codec: RS, Data: 3, Parity: 0, CellSize: CellAlign})
	require.ErrorIs(t, err, ErrInvalidConfig)
	coder, err := NewCoder(RS32)
	require.NoError(t, err)
	sc := coder.NewStripeCoder()
	parity := [][]byte{make([]byte, 0, RS32.CellSize), make([]byte, 0, RS32.CellSize)}
	_, err = sc.Encode([][]byte{{1}, {1, 2}, nil}, parity)
	require.ErrorContains(t, err, "longer than the first")
	_, err = sc.Encode([][]byte{{1}, {1}}, parity)
	require.ErrorContains(t, err, "want 3 and 2")
	_, err = sc.Encode([][]byte{make([]byte, RS32.CellSize+1), nil, nil}, parity)
	require.ErrorContains(t, err, "over the cell size")
	err = sc.Reconstruct([][]byte{{1, 2}, nil, nil, nil, nil}, []int{1, 1, 0, 1, 1}, false)
	require.ErrorContains(t, err, "cell 0 holds 2 bytes, want 1")
	err = coder.Reconstruct([][]byte{{1}, nil, nil, nil, {1}})
	require.True(t, errors.Is(err, ErrTooManyLost))
	require.ErrorContains(t, err, "3 of 5 members lost, at most 2")
}
