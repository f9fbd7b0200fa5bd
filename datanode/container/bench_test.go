package container

import (
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkWriteChunk1KiB measures the FILE_PER_BLOCK write path with 1 KiB
// chunks, each goroutine writing blocks of its own (the chunk-write
// benchmark's 1 KiB case without the harness).
func BenchmarkWriteChunk1KiB(b *testing.B) {
	dir := b.TempDir()
	opts := testOptions(vfs.Default)
	opts.MaxBlockSize = 256 << 20
	v, err := OpenVolume(dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	c, err := v.Create(1, FilePerBlock)
	if err != nil {
		b.Fatal(err)
	}
	data := pattern(1, 1024)
	s := sums(data)
	var nextBlock atomic.Uint64
	b.SetBytes(1024)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := nextBlock.Add(1)
		var off int64
		for pb.Next() {
			if err := c.WriteChunk(id, off, data, s, WriteOptions{}); err != nil {
				b.Fatal(err)
			}
			if off += 1024; off == 1<<20 {
				if _, err := c.PutBlock(id, off, PutOptions{Final: true}); err != nil {
					b.Fatal(err)
				}
				id, off = nextBlock.Add(1), 0
			}
		}
	})
}
