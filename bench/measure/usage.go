package measure

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPUSeconds is the process's CPU time so far, user and system.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// Disk is the block device holding a directory, read through
// /sys/dev/block (Linux).
type Disk struct{ stat string }

// DiskOf finds the block device of dir.
func DiskOf(dir string) (Disk, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return Disk{}, err
	}
	p := fmt.Sprintf("/sys/dev/block/%d:%d/stat", (st.Dev>>8)&0xfff|(st.Dev>>32)&^0xfff, st.Dev&0xff|(st.Dev>>12)&^0xff)
	if _, err := os.Stat(p); err != nil {
		return Disk{}, fmt.Errorf("measure: no block device statistics for %s: %w", dir, err)
	}
	return Disk{stat: p}, nil
}

// DiskStats is what a device has done since it came up: bytes read and
// written, and the time it had requests in flight.
type DiskStats struct {
	Read, Written int64
	Busy          time.Duration
}

// Sub is what the device did between o and s.
func (s DiskStats) Sub(o DiskStats) DiskStats {
	return DiskStats{Read: s.Read - o.Read, Written: s.Written - o.Written, Busy: s.Busy - o.Busy}
}

// Stats reads the device's counters (zero when d was not found).
func (d Disk) Stats() (DiskStats, error) {
	if d.stat == "" {
		return DiskStats{}, nil
	}
	b, err := os.ReadFile(d.stat)
	if err != nil {
		return DiskStats{}, err
	}
	f := strings.Fields(string(b))
	if len(f) < 10 {
		return DiskStats{}, fmt.Errorf("measure: %s: %d fields", d.stat, len(f))
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	// Sectors of 512 bytes read (field 3) and written (7); io_ticks (10) in ms.
	return DiskStats{Read: n(2) * 512, Written: n(6) * 512, Busy: time.Duration(n(9)) * time.Millisecond}, nil
}
