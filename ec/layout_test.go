package ec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genConfig draws a valid config with small cells (the geometry and the
// code do not depend on the cell's size, tests run faster with small ones).
func genConfig(t *rapid.T) Config {
	if rapid.Bool().Draw(t, "standard") {
		c := rapid.SampledFrom(Standard()).Draw(t, "config")
		c.CellSize = rapid.SampledFrom([]int{4 << 10, 8 << 10}).Draw(t, "cell")
		return c
	}
	c := Config{Codec: RS, Data: rapid.IntRange(2, 12).Draw(t, "data"), Parity: rapid.IntRange(1, 5).Draw(t, "parity"),
		CellSize: CellAlign * rapid.IntRange(1, 3).Draw(t, "cells")}
	if rapid.Bool().Draw(t, "xor") {
		c.Codec, c.Parity = XOR, 1
	}
	return c
}

// deal is the layout's oracle: a group's bytes dealt cell by cell,
// round-robin, to the data members.
func deal(c Config, group []byte) [][]byte {
	members := make([][]byte, c.Data)
	for k := 0; k*c.CellSize < len(group); k++ {
		cell := group[k*c.CellSize : min((k+1)*c.CellSize, len(group))]
		members[k%c.Data] = append(members[k%c.Data], cell...)
	}
	return members
}

func TestLayoutAgainstDealing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genConfig(t)
		n := rapid.Int64Range(0, 4*c.StripeSize()+1).Draw(t, "n")
		group := make([]byte, n)
		for i := range group {
			group[i] = byte(i*7 + i>>12)
		}
		members := deal(c, group)
		lens := make([]int64, c.Members())
		for m := range c.Members() {
			lens[m] = c.MemberLen(n, m)
			if m < c.Data {
				require.Equal(t, int64(len(members[m])), lens[m], "member %d", m)
			} else {
				require.Equal(t, lens[0], lens[m], "parity member %d", m)
			}
		}
		require.Equal(t, n, c.GroupLen(lens))
		require.Equal(t, (n+c.StripeSize()-1)/c.StripeSize(), c.Stripes(n))
		if n > 0 {
			off := rapid.Int64Range(0, n-1).Draw(t, "off")
			p := c.Locate(off)
			require.Equal(t, group[off], members[p.Member][p.MemberOff])
			require.Equal(t, off/c.StripeSize(), p.Stripe)
			require.Equal(t, off, c.GroupOffset(p.Member, p.MemberOff))
		}
		cellLens := make([]int, c.Members())
		for s := range c.Stripes(n) {
			l := c.CellLens(n, s, cellLens)
			require.Equal(t, cellLens[0], l)
			var sum int64
			for i := range c.Data {
				require.LessOrEqual(t, cellLens[i], l)
				sum += int64(cellLens[i])
			}
			require.Equal(t, min(c.StripeSize(), n-s*c.StripeSize()), sum, "stripe %d", s)
		}
		require.Zero(t, c.CellLens(n, c.Stripes(n), cellLens))
	})
}

func TestReplicaIndex(t *testing.T) {
	for m := range 14 {
		require.Equal(t, m, MemberOf(ReplicaIndex(m)))
	}
	require.Equal(t, 1, ReplicaIndex(0))
}
