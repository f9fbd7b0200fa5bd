package rereplicate

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMeasureBound: the copy bound is the faster of its two ways of
// reading, both measured, for a copy and for a rebuild of three reads,
// and it leaves nothing behind.
func TestMeasureBound(t *testing.T) {
	dir := t.TempDir()
	probe, err := openDirect(filepath.Join(dir, "probe"), os.O_WRONLY|os.O_CREATE)
	if err != nil {
		t.Skipf("no direct I/O in %s: %v", dir, err)
	}
	_ = probe.Close()
	_ = os.Remove(filepath.Join(dir, "probe"))
	for _, reads := range []int{1, 3} {
		b, err := MeasureBound(context.Background(), dir, 2, 3*boundPiece+1, reads)
		if err != nil {
			t.Fatalf("reads %d: %v", reads, err)
		}
		if b.Streams != 2 || b.Reads != reads || b.Bytes != 2*boundPiece {
			t.Errorf("reads %d: shape %+v, want 2 streams of one piece", reads, b)
		}
		if b.DirectCopyMBps <= 0 || b.CachedReadMBps <= 0 || b.WriteMBps <= 0 || b.LoopbackMBps <= 0 {
			t.Errorf("reads %d: a rate not measured: %+v", reads, b)
		}
		if b.CopyMBps != max(b.DirectCopyMBps, b.CachedReadMBps) {
			t.Errorf("reads %d: copy bound %.1f, want the faster of %.1f and %.1f", reads, b.CopyMBps, b.DirectCopyMBps, b.CachedReadMBps)
		}
		if b.MBps() > b.LoopbackMBps/float64(reads) || b.MBps() > b.CopyMBps {
			t.Errorf("reads %d: bound %.1f above one of its limits: %+v", reads, b.MBps(), b)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
