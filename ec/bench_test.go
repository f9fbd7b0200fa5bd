package ec

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchStripes is how many stripes a benchmark cycles through: 64 MiB of
// data or more, so that the cells come from memory, not the CPU's caches,
// as they do in a writer.
func benchStripes(c Config) int { return int(max(1, (64<<20)/c.StripeSize()+1)) }

// benchSetup returns c's coder and stripes of random cells, encoded.
func benchSetup(b *testing.B, c Config) (*Coder, *StripeCoder, [][][]byte) {
	coder, err := NewCoder(c)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	stripes := make([][][]byte, benchStripes(c))
	for i := range stripes {
		stripes[i] = randomCells(rng, c.Members(), c.CellSize)
		if err := coder.Encode(stripes[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(c.StripeSize())
	return coder, coder.NewStripeCoder(), stripes
}

// BenchmarkEncode: parity of full stripes of 1 MiB cells; the rate is
// data bytes encoded. Per core: go test -run '^$' -bench . -cpu 1 ./ec.
func BenchmarkEncode(b *testing.B) {
	for _, c := range Standard() {
		b.Run(c.String(), func(b *testing.B) {
			_, sc, stripes := benchSetup(b, c)
			parity := make([][]byte, c.Parity)
			i := 0
			for b.Loop() {
				s := stripes[i%len(stripes)]
				copy(parity, s[c.Data:])
				if _, err := sc.Encode(s[:c.Data], parity); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkReconstruct: the data cells of stripes with 1 and with p data
// members lost (a degraded read); the rate is the stripe's data bytes.
func BenchmarkReconstruct(b *testing.B) {
	for _, c := range Standard() {
		losses := []int{1}
		if c.Parity > 1 {
			losses = append(losses, c.Parity)
		}
		for _, lost := range losses {
			b.Run(fmt.Sprintf("%s/lost-%d", c, lost), func(b *testing.B) {
				_, sc, stripes := benchSetup(b, c)
				lens := make([]int, c.Members())
				for i := range lens {
					lens[i] = c.CellSize
				}
				cells := make([][]byte, c.Members())
				i := 0
				for b.Loop() {
					s := stripes[i%len(stripes)]
					copy(cells, s)
					for m := range lost {
						cells[m] = s[m][:0] // rebuilt in place
					}
					if err := sc.Reconstruct(cells, lens, true); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}
