package container

import (
	"sync"
	"sync/atomic"
)

// The write cache's bound. A FILE_PER_BLOCK chunk written through the page
// cache (a pipeline leader's copy, a ONE block's: WriteOptions.Cache) stays
// there for the readers that come soon after its write, until the kernel
// needs the memory. With Options.WriteCacheBytes set, a volume remembers
// the ranges it wrote so, oldest first, and once they add up to more than
// the bound it asks the kernel to drop the oldest bytes from the page cache
// (POSIX_FADV_DONTNEED): what was written last stays cached, and the pages
// of older writes are freed for the next ones instead of the page cache
// growing into memory the host may have taken back (docs/benchmarks.md,
// "Where the performance targets stand"). Written back pages are dropped;
// pages still dirty are only started on their way to the disk, and stay.

// dropAlign is the largest folio the page cache keeps a file's pages in
// (a PMD's 2 MiB on x86-64 and arm64 with 4 KiB pages).
const dropAlign = 2 << 20

// cachedRange is a range of a block file written through the page cache.
type cachedRange struct {
	path   string
	off, n int64
}

// writeCache is a volume's account of its cached writes (nil: unbounded).
type writeCache struct {
	max int64

	mu     sync.Mutex
	ranges []cachedRange // oldest first, from head
	head   int
	held   int64

	dropped atomic.Int64 // bytes asked out of the page cache, in all
}

func newWriteCache(max int64) *writeCache {
	if max <= 0 {
		return nil
	}
	return &writeCache{max: max}
}

// wrote records that [off, off+n) of path went through the page cache and
// drops from it the oldest bytes beyond the bound.
func (w *writeCache) wrote(path string, off, n int64) {
	if w == nil || n <= 0 {
		return
	}
	w.mu.Lock()
	if k := len(w.ranges); k > w.head && w.ranges[k-1].path == path && w.ranges[k-1].off+w.ranges[k-1].n == off {
		w.ranges[k-1].n += n
	} else {
		w.ranges = append(w.ranges, cachedRange{path: path, off: off, n: n})
	}
	w.held += n
	var drop []cachedRange
	for w.held > w.max && w.head < len(w.ranges) {
		r := &w.ranges[w.head]
		// Drop whole pages: round the excess up to a multiple of 4 KiB.
		k := min(r.n, (w.held-w.max+directIOAlign-1)/directIOAlign*directIOAlign)
		drop = append(drop, cachedRange{path: r.path, off: r.off, n: k})
		r.off, r.n, w.held = r.off+k, r.n-k, w.held-k
		if r.n == 0 {
			*r = cachedRange{}
			w.head++
		}
	}
	if w.head > 64 && w.head*2 > len(w.ranges) {
		w.ranges = append(w.ranges[:0], w.ranges[w.head:]...)
		w.head = 0
	}
	w.mu.Unlock()
	for _, r := range drop {
		// The page cache drops only whole folios, of up to 2 MiB: a range
		// that starts inside one would leave it, and the next range of the
		// file would too. Start at the folio's boundary: what lies before
		// the range in the file was written before it, and is due to go
		// first. (A file's last folio stays until the file is written past
		// it or removed.)
		start := r.off &^ (dropAlign - 1)
		dropCached(r.path, start, r.off+r.n-start)
		w.dropped.Add(r.n)
	}
}

// stats returns the bytes held in the account, its bound and the bytes
// dropped so far.
func (w *writeCache) stats() (held, max, dropped int64) {
	if w == nil {
		return 0, 0, 0
	}
	w.mu.Lock()
	held = w.held
	w.mu.Unlock()
	return held, w.max, w.dropped.Load()
}
