package consensus

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// BenchmarkPropose measures durable proposals per second on a single voter
// on a real disk, with 16 concurrent proposers (the metadata benchmark's
// shape): every proposal is fsynced in the raft log before it is
// acknowledged, and group commit shares the fsyncs.
func BenchmarkPropose(b *testing.B) {
	const proposers = 16
	dir := b.TempDir()
	n, err := Open(Options{ID: 1, FS: vfs.Default, Dir: dir}, &kvSM{})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !n.IsLeader() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cmds := make([][][]byte, proposers)
	for w := range cmds {
		for i := range (b.N + proposers - 1) / proposers {
			cmds[w] = append(cmds[w], kvCmd(opPut, fmt.Sprintf("bench/%02d/%09d", w, i), "0123456789abcdef0123456789abcdef"))
		}
	}
	var next atomic.Int64
	before := n.Metrics()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range proposers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				if _, err := n.Propose(context.Background(), cmds[w][i%len(cmds[w])]); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	m := n.Metrics()
	fsyncsPerOp := float64(m.Fsyncs-before.Fsyncs) / float64(b.N)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(fsyncsPerOp, "fsyncs/op")
	// The disk's own pace, measured now: what one fsync costs here, and
	// the rate the fsyncs alone would allow at this group-commit factor.
	lat := fsyncLatency(b, dir)
	b.ReportMetric(float64(lat.Microseconds()), "disk-fsync-µs")
	b.ReportMetric(1/(fsyncsPerOp*lat.Seconds()), "fsync-bound-ops/s")
}

// fsyncLatency is the mean time of a 4 KiB append followed by fdatasync in
// dir.
func fsyncLatency(b *testing.B, dir string) time.Duration {
	f, err := vfs.Default.Create(filepath.Join(dir, "fsync-probe"), vfs.WriteCategoryUnspecified)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 4096)
	const rounds = 200
	start := time.Now()
	for range rounds {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.SyncData(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / rounds
}

// BenchmarkProposeThreeVoters is BenchmarkPropose against the leader of a
// three-voter group in this process (real disk, real gRPC on loopback): a
// proposal is acknowledged once a quorum has it durable.
func BenchmarkProposeThreeVoters(b *testing.B) {
	const proposers = 16
	dir := b.TempDir()
	c := newTestCluster(b, 3, func(o *Options) {
		o.FS, o.Dir = vfs.Default, filepath.Join(dir, fmt.Sprintf("n%d", o.ID))
		o.TickInterval = 50 * time.Millisecond
	})
	leader := c.waitLeader()
	var next atomic.Int64
	before := leader.Metrics()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range proposers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				cmd := kvCmd(opPut, fmt.Sprintf("bench/%02d/%09d", w, i), "0123456789abcdef0123456789abcdef")
				if _, err := leader.Propose(context.Background(), cmd); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	m := leader.Metrics()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(m.Fsyncs-before.Fsyncs)/float64(b.N), "leader-fsyncs/op")
}
