package rereplicate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/wire"
)

// Bound is the hardware's limit for re-replication in this run: the disk
// doing the copy's work, the way the copy does it, and loopback TCP.
//
// A copy reads each byte once and writes it once. A rebuild of an erasure
// coded index reads d bytes (one from each of d surviving members) for
// each byte it writes, and receives those d bytes over the network: Reads
// is d, each stream reads Reads source files and writes one, CopyMBps
// counts the bytes written, and the loopback rate is divided by Reads.
type Bound struct {
	// CopyMBps is the rate of Streams concurrent file copies of Bytes in
	// all on the datanodes' disk, each stream reading and writing at once:
	// what the copy asks of the disk, where every datanode shares it; for
	// a rebuild (Reads > 1) each stream reads Reads files of its size for
	// the one it writes, and the rate is of the bytes written. The copies
	// run twice, from an empty page cache each time: with direct I/O on
	// both sides (DirectCopyMBps), and reading through the page cache, as
	// the sources' sendfile does, writing with direct I/O, as the imports
	// do (CachedReadMBps). The disk's readahead makes the second faster on
	// some disks, the first on others; CopyMBps is the faster, so that no
	// copy beats its bound by reading the way the bound did not.
	// WriteMBps is the rate at which the same streams wrote the files read
	// (alone).
	CopyMBps, WriteMBps            float64
	DirectCopyMBps, CachedReadMBps float64
	Streams                        int
	Bytes                          int64
	// Reads is the bytes read (from disk and over the network) per byte
	// written: 1 for a copy, d for a rebuild. 0 reads as 1.
	Reads int
	// LoopbackMBps is a TCP stream's rate on 127.0.0.1.
	LoopbackMBps float64
}

// reads is Reads, at least 1.
func (b Bound) reads() int { return max(b.Reads, 1) }

// MBps is the bound in bytes written per second: the disk's copy (or
// rebuild) rate or the loopback rate over the bytes received per byte
// written.
func (b Bound) MBps() float64 {
	net := b.LoopbackMBps / float64(b.reads())
	if b.CopyMBps == 0 {
		return net
	}
	return min(b.CopyMBps, net)
}

// boundPiece is what each stream of the bound moves per read and write:
// the datanodes' import writes pieces of this size.
const boundPiece = 4 << 20

// MeasureBound measures the copy bound in dir (streams concurrent copies
// of bytes in all, each reading reads files for the one it writes) and the
// loopback rate.
func MeasureBound(ctx context.Context, dir string, streams int, bytes int64, reads int) (Bound, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	streams, reads = max(streams, 1), max(reads, 1)
	per := max(bytes/int64(streams)/boundPiece, 1) * boundPiece
	b := Bound{Streams: streams, Bytes: per * int64(streams), Reads: reads}
	tmp, err := os.MkdirTemp(dir, "bound-")
	if err != nil {
		return b, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	src := func(i, j int) string { return filepath.Join(tmp, fmt.Sprintf("src-%d-%d", i, j)) }
	dst := func(i int) string { return filepath.Join(tmp, fmt.Sprintf("dst-%d", i)) }
	if b.WriteMBps, err = concurrently(ctx, streams, b.Bytes*int64(reads), func(i int) error {
		for j := range reads {
			if err := directWrite(ctx, src(i, j), per); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return b, err
	}
	copies := func(cachedRead bool) (float64, error) {
		_ = dropCaches()
		return concurrently(ctx, streams, b.Bytes, func(i int) error {
			srcs := make([]string, reads)
			for j := range srcs {
				srcs[j] = src(i, j)
			}
			return copyPieces(ctx, srcs, dst(i), per, cachedRead)
		})
	}
	if b.DirectCopyMBps, err = copies(false); err != nil {
		return b, err
	}
	if b.CachedReadMBps, err = copies(true); err != nil {
		return b, err
	}
	b.CopyMBps = max(b.DirectCopyMBps, b.CachedReadMBps)
	if b.LoopbackMBps, err = loopbackMBps(2 << 30); err != nil {
		return b, err
	}
	return b, nil
}

// concurrently runs fn for 0..n-1 at once and returns bytes/elapsed in
// MB/s.
func concurrently(ctx context.Context, n int, bytes int64, fn func(i int) error) (float64, error) {
	errs := make([]error, n)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return 0, err
	}
	return float64(bytes) / 1e6 / time.Since(t0).Seconds(), nil
}

// directWrite writes n bytes of non-zero data to path with O_DIRECT.
func directWrite(ctx context.Context, path string, n int64) error {
	f, err := openDirect(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	buf := measure.AlignedBuffer(boundPiece)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	for off := int64(0); off < n && ctx.Err() == nil; off += boundPiece {
		if _, err := f.WriteAt(buf, off); err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}

// copyPieces writes n bytes to dst with O_DIRECT, reading a piece of every
// file of srcs for each piece it writes: a copy (one source) reads each
// byte once, a rebuild reads a cell of each of d members for each cell it
// writes (the bytes written are not computed from them: the codec's cost
// is measured apart). A reader and a writer run at once, two pieces in
// flight, as a push and its import overlap. The sources are read with
// O_DIRECT, or through the page cache when cachedRead.
func copyPieces(ctx context.Context, srcs []string, dst string, n int64, cachedRead bool) error {
	ins := make([]*os.File, 0, len(srcs))
	defer func() {
		for _, f := range ins {
			_ = f.Close()
		}
	}()
	open := openDirect
	if cachedRead {
		open = func(path string, flag int) (*os.File, error) { return os.OpenFile(path, flag, 0) }
	}
	for _, s := range srcs {
		f, err := open(s, os.O_RDONLY)
		if err != nil {
			return err
		}
		ins = append(ins, f)
	}
	out, err := openDirect(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	free, full := make(chan [][]byte, 2), make(chan [][]byte, 2)
	for range 2 {
		bufs := make([][]byte, len(srcs))
		for j := range bufs {
			bufs[j] = measure.AlignedBuffer(boundPiece)
		}
		free <- bufs
	}
	rerr := make(chan error, 1)
	go func() {
		defer close(full)
		for off := int64(0); off < n; off += boundPiece {
			bufs := <-free
			for j, f := range ins {
				if _, err := f.ReadAt(bufs[j], off); err != nil || ctx.Err() != nil {
					rerr <- errors.Join(err, ctx.Err())
					return
				}
			}
			full <- bufs
		}
		rerr <- nil
	}()
	var werr error
	off := int64(0)
	for bufs := range full {
		if werr == nil {
			_, werr = out.WriteAt(bufs[0], off)
		}
		off += boundPiece
		free <- bufs
	}
	return errors.Join(<-rerr, werr, out.Close())
}

// loopbackMBps sends n bytes over a TCP connection on 127.0.0.1.
func loopbackMBps(n int64) (float64, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	var got atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := l.Accept()
		if err != nil {
			return
		}
		wire.TuneSocket(c)
		k, _ := io.Copy(io.Discard, c)
		got.Store(k)
		_ = c.Close()
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return 0, err
	}
	wire.TuneSocket(c) // as the datanodes' connections are
	buf := make([]byte, 4<<20)
	t0 := time.Now()
	for sent := int64(0); sent < n; sent += int64(len(buf)) {
		if _, err := c.Write(buf); err != nil {
			return 0, err
		}
	}
	_ = c.Close()
	wg.Wait()
	if got.Load() < n {
		return 0, errors.New("bench: loopback transfer cut short")
	}
	return float64(n) / 1e6 / time.Since(t0).Seconds(), nil
}

// dropCaches writes dirty pages back and empties the page cache (Linux,
// root).
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200)
}
