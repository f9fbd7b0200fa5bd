//go:build linux

package datanode

import (
	"context"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/strato-io/strato/wire"
)

// cachedPages counts the pages of path in the page cache (mincore).
func cachedPages(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer func() { _ = unix.Munmap(m) }()
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(len(m)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		require.NoError(t, e, "mincore")
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// evict writes path's pages back and drops them from the page cache.
func evict(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Sync())
	require.NoError(t, unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED))
	require.Zero(t, cachedPages(t, path), "pages left in the page cache after FADV_DONTNEED")
}

// TestPeerReadsDirect: a datanode's READ_CHUNK from another datanode (a
// rebuild's) reads the block file around the page cache, in pieces that
// start and end off the 4 KiB alignment direct I/O needs, and returns the
// same bytes a client's read does; a client's read goes through the page
// cache.
func TestPeerReadsDirect(t *testing.T) {
	n := startNode(t, nodeConfig{})
	c := n.dial(t)
	blk := bid(1, 1)
	const size = 6<<20 + 12345
	data := pattern(7, 0, size)
	writeBlock(t, c, blk, data, 30000, nil, true) // chunks end off the alignment
	ct, err := n.store.Container(1)
	require.NoError(t, err)
	if !ct.DirectIO() {
		t.Skip("the volume's filesystem has no direct I/O")
	}
	ext, err := ct.Extents(blk.LocalID, 0, size)
	require.NoError(t, err)
	path := ext[0].Path
	for _, e := range ext {
		require.Equal(t, path, e.Path, "one file per block")
	}
	evict(t, path)

	peer, err := wire.Dial(context.Background(), n.addr, wire.ConnOptions{ClientID: "datanode peer-of-" + t.Name()})
	require.NoError(t, err)
	defer peer.Close()
	for _, r := range []struct{ off, n int64 }{
		{0, size},                // every byte, more than a piece of copyDirect
		{5000, 100_000},          // starts and ends inside windows and chunks
		{size - 7000, 7000},      // the file's unaligned end
		{4 << 20, 2<<20 + 12345}, // from a piece boundary to the end
	} {
		got := readRange(t, peer, blk, r.off, int(r.n))
		require.Equal(t, data[r.off:r.off+r.n], got, "peer read [%d, +%d)", r.off, r.n)
	}
	require.Zero(t, cachedPages(t, path), "a peer's reads filled the page cache")

	require.Equal(t, data, readRange(t, c, blk, 0, size))
	require.NotZero(t, cachedPages(t, path), "a client's read did not go through the page cache")
}
