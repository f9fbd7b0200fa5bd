package rereplicate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/strato-io/strato/bench/measure"
)

// Bound is the hardware's limit for re-replication in this run.
type Bound struct {
	// DiskReadMBps and DiskWriteMBps are the disk's sequential direct-I/O
	// rates, each measured alone; LoopbackMBps a TCP stream's.
	DiskReadMBps, DiskWriteMBps, LoopbackMBps float64
	// DiskCopyMBps is the rate of a sequential direct-I/O read and write
	// run at once on the same disk (the slower of the two): what a copy
	// whose source and target share the disk can reach.
	DiskCopyMBps float64
}

// MBps is the smallest of the disk's read and write rates and the
// loopback rate: the bound when sources and targets have disks of their
// own.
func (b Bound) MBps() float64 {
	return min(b.DiskReadMBps, b.DiskWriteMBps, b.LoopbackMBps)
}

// SharedMBps is the bound when every datanode shares one disk, as in a
// one-machine cluster: the disk's copy rate, or the loopback rate.
func (b Bound) SharedMBps() float64 {
	if b.DiskCopyMBps == 0 {
		return b.MBps()
	}
	return min(b.DiskCopyMBps, b.LoopbackMBps)
}

// measureBound measures the disk's sequential direct-I/O read and write
// rates in dir and the TCP rate on loopback.
func measureBound(ctx context.Context, dir string) (Bound, error) {
	var b Bound
	if dir == "" {
		dir = os.TempDir()
	}
	w, err := measure.DD(ctx, dir, 512)
	if err != nil {
		return b, err
	}
	b.DiskWriteMBps = w.MBPerSec()
	// Read back a file written for the purpose (RunDD removes its own).
	f := filepath.Join(dir, "bound.read")
	if out, err := exec.CommandContext(ctx, "dd", "if=/dev/zero", "of="+f, "bs=4M", "count=512", "oflag=direct").CombinedOutput(); err != nil {
		return b, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	defer func() { _ = os.Remove(f) }()
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "dd", "if="+f, "of=/dev/null", "bs=4M", "iflag=direct").CombinedOutput(); err != nil {
		return b, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	b.DiskReadMBps = float64(512*4<<20) / 1e6 / time.Since(t0).Seconds()
	// A copy between two datanodes on this one disk reads and writes it at
	// once: dd does the same, and the slower of the two is the copy rate.
	g := filepath.Join(dir, "bound.write")
	defer func() { _ = os.Remove(g) }()
	_ = dropCaches() // the read must come from the disk
	var rd, wr float64
	var rerr, werr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rd, rerr = timedDD(ctx, "if="+f, "of=/dev/null", "bs=4M", "iflag=direct")
	}()
	go func() {
		defer wg.Done()
		wr, werr = timedDD(ctx, "if=/dev/zero", "of="+g, "bs=4M", "count=512", "oflag=direct")
	}()
	wg.Wait()
	if err := errors.Join(rerr, werr); err != nil {
		return b, err
	}
	b.DiskCopyMBps = min(rd, wr)
	if b.LoopbackMBps, err = loopbackMBps(2 << 30); err != nil {
		return b, err
	}
	return b, nil
}

// timedDD runs dd with args, which move 512 pieces of 4 MiB, and returns
// its rate in MB/s.
func timedDD(ctx context.Context, args ...string) (float64, error) {
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, "dd", args...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("bench: dd: %w: %s", err, out)
	}
	return float64(512*4<<20) / 1e6 / time.Since(t0).Seconds(), nil
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
		k, _ := io.Copy(io.Discard, c)
		got.Store(k)
		_ = c.Close()
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return 0, err
	}
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
