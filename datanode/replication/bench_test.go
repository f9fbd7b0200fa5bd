package replication_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/datanode/replication"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPush pushes a closed 256 MiB container (one 256 MiB block of
// 4 MiB chunks) over loopback to a fresh target per iteration. Source and
// target share the process, so cpu-s/GB is both sides together (the
// target's checksum verification included), an upper bound of the
// source's.
func BenchmarkPush(b *testing.B) {
	const size = 256 << 20
	src := startNode(b)
	closedContainer(b, src, 1, []int{size}, 4<<20)
	b.SetBytes(size)
	var cpu, wall time.Duration
	for b.Loop() {
		b.StopTimer()
		dst := startNode(b)
		b.StartTimer()
		c0, t0 := cpuTime(), time.Now()
		_, err := replication.Push(context.Background(), src.store, 1, dst.addr, replication.Options{Logger: quiet()})
		require.NoError(b, err)
		cpu += cpuTime() - c0
		wall += time.Since(t0)
	}
	gb := float64(b.N) * size / 1e9
	b.ReportMetric(gb*1e3/wall.Seconds(), "MB/s")
	b.ReportMetric(cpu.Seconds()/gb, "cpu-s/GB")
}
