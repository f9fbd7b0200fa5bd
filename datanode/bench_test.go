package datanode

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/wire"
)

// reportCPU starts counting the process's CPU; the function it returns
// reports it as cpu-s/GB of b.N operations of perOp bytes each.
func reportCPU(b *testing.B, perOp int) func() {
	cpu0 := measure.CPUSeconds()
	return func() {
		b.ReportMetric((measure.CPUSeconds()-cpu0)/(float64(b.N)*float64(perOp)/1e9), "cpu-s/GB")
	}
}

// BenchmarkPipelineWriteChunk4MiB writes 4 MiB chunks through a leader and
// two followers on loopback (each datanode on its own temporary volume of
// the same disk, so the disk takes every byte three times). Blocks are
// 64 chunks, committed with a Final PutBlock. streams is how many writers
// share the client's connection.
func BenchmarkPipelineWriteChunk4MiB(b *testing.B) {
	for _, streams := range []int{1, 4} {
		b.Run("streams="+string(rune('0'+streams)), func(b *testing.B) {
			cfg := nodeConfig{}
			nodes := []*node{startNode(b, cfg), startNode(b, cfg), startNode(b, cfg)}
			c := nodes[0].dial(b)
			followers := []string{nodes[1].addr, nodes[2].addr}
			const chunk, perBlock = 4 << 20, 64
			data := pattern(1, 0, chunk)
			s := sums(data)
			ctx := context.Background()
			var nextBlock atomic.Uint64
			b.SetBytes(chunk)
			b.SetParallelism((streams + 1) / 2) // GOMAXPROCS × this goroutines
			b.ResetTimer()
			defer reportCPU(b, chunk)()
			b.RunParallel(func(pb *testing.PB) {
				blk, i := bid(1, nextBlock.Add(1)), 0
				for pb.Next() {
					err := c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: blk, Offset: int64(i * chunk), Checksums: s, Followers: followers}, data)
					if err != nil {
						b.Error(err)
						return
					}
					if i++; i == perBlock {
						if _, err := c.PutBlock(ctx, &wire.PutBlockRequest{Block: blk, Length: perBlock * chunk, Final: true, Followers: followers}); err != nil {
							b.Error(err)
							return
						}
						blk, i = bid(1, nextBlock.Add(1)), 0
					}
				}
			})
		})
	}
}

// BenchmarkReadChunk4MiB reads 4 MiB ranges of a 64 MiB block from one
// datanode on loopback (page cache warm): with sendfile, through memory,
// with sendfile plus the client's checksum verification after the whole
// payload arrived, and with it verified as it arrives (ReadChunkVerified).
func BenchmarkReadChunk4MiB(b *testing.B) {
	for _, mode := range []string{"sendfile", "copy", "sendfile+verify", "sendfile+verified"} {
		b.Run(mode, func(b *testing.B) {
			n := startNode(b, nodeConfig{server: ServerOptions{DisableSendfile: mode == "copy"}})
			c := n.dial(b)
			const chunk, size = 4 << 20, 64 << 20
			blk := bid(1, 1)
			writeBlock(b, c, blk, pattern(2, 0, size), chunk, nil, false)
			ctx := context.Background()
			verify := mode == "sendfile+verify"
			b.SetBytes(chunk)
			b.ResetTimer()
			defer reportCPU(b, chunk)()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, chunk)
				i := 0
				for pb.Next() {
					off := int64(i%(size/chunk)) * chunk
					i++
					req := &wire.ReadChunkRequest{Block: blk, Offset: off, Length: chunk}
					read := c.ReadChunk
					if mode == "sendfile+verified" {
						read = c.ReadChunkVerified
					}
					resp, p, err := read(ctx, req, buf)
					if err == nil && verify {
						err = resp.Verify(p)
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
