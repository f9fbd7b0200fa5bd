package rereplicate

import (
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/strato-io/strato/ec"
)

// CodecRate is the erasure code's speed on one core in GB/s of data
// (a stripe's d data cells): encoding a stripe's parity, and decoding one
// lost data cell from d others.
type CodecRate struct {
	EncodeGBps, DecodeGBps float64
}

// measureCodec times cfg's coder on one core (GOMAXPROCS 1 while it runs,
// as go test -cpu 1 does: klauspost/reedsolomon may split a large shard
// across goroutines) for about d each way: full stripes of cell-sized
// shards, cycling through 64 MiB or more so that they come from memory
// and not the CPU's caches, as ec's BenchmarkEncode and
// BenchmarkReconstruct do. Run it while nothing else in the process works.
func measureCodec(cfg ec.Config, d time.Duration) (CodecRate, error) {
	var r CodecRate
	coder, err := ec.NewCoder(cfg)
	if err != nil {
		return r, err
	}
	rng := rand.New(rand.NewPCG(1, 1))
	stripes := make([][][]byte, max(1, (64<<20)/cfg.StripeSize()+1))
	for i := range stripes {
		cells := make([][]byte, cfg.Members())
		for m := range cells {
			cells[m] = make([]byte, cfg.CellSize)
			if m < cfg.Data {
				for j := range cells[m] {
					cells[m][j] = byte(rng.Uint32())
				}
			}
		}
		if err := coder.Encode(cells); err != nil {
			return r, err
		}
		stripes[i] = cells
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	sc := coder.NewStripeCoder()
	rate := func(step func(s [][]byte) error) (float64, error) {
		var n int64
		t0 := time.Now()
		for i := 0; n == 0 || time.Since(t0) < d; i++ {
			if err := step(stripes[i%len(stripes)]); err != nil {
				return 0, err
			}
			n += cfg.StripeSize()
		}
		return float64(n) / 1e9 / time.Since(t0).Seconds(), nil
	}
	parity := make([][]byte, cfg.Parity)
	if r.EncodeGBps, err = rate(func(s [][]byte) error {
		copy(parity, s[cfg.Data:])
		_, err := sc.Encode(s[:cfg.Data], parity)
		return err
	}); err != nil {
		return r, err
	}
	lens := make([]int, cfg.Members())
	for i := range lens {
		lens[i] = cfg.CellSize
	}
	cells := make([][]byte, cfg.Members())
	r.DecodeGBps, err = rate(func(s [][]byte) error {
		copy(cells, s)
		cells[0] = s[0][:0] // rebuilt in place
		return sc.Reconstruct(cells, lens, true)
	})
	return r, err
}
