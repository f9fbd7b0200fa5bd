package scanner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
)

// testStore is one volume's closed containers.
type testStore struct {
	v   *container.Volume
	dir string
}

func (s testStore) ClosedContainers() [][]uint64 {
	var ids []uint64
	for _, in := range s.v.List() {
		if in.State == container.Closed {
			ids = append(ids, in.ID)
		}
	}
	return [][]uint64{ids}
}

func (s testStore) Container(id uint64) (*container.Container, error) { return s.v.Container(id) }

func (s testStore) blockFile(id uint64) string {
	return filepath.Join(s.dir, "containers", fmt.Sprint(id), "chunks", "1.block")
}

// newStore makes containers 1..n, CLOSED, each with block 1 of size bytes.
func newStore(t *testing.T, n, size int) testStore {
	dir := t.TempDir()
	v, err := container.OpenVolume(dir, container.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), PebbleCacheSize: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for id := uint64(1); id <= uint64(n); id++ {
		c, err := v.Create(id, container.FilePerBlock)
		require.NoError(t, err)
		for off := 0; off < size; off += 1000 {
			p := data[off:min(off+1000, size)]
			require.NoError(t, c.WriteChunk(1, int64(off), p, checksum.Compute(checksum.CRC32C, 512, p), container.WriteOptions{}))
		}
		_, err = c.PutBlock(1, int64(size), container.PutOptions{Final: true})
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	return testStore{v: v, dir: dir}
}

type recorder struct {
	mu  sync.Mutex
	ids []uint64
}

func (r *recorder) add(id uint64) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

func (r *recorder) get() []uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.ids))
}

// settle waits until the volume's goroutine waits on the fake clock.
func settle(t *testing.T, clock *clockwork.FakeClock) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
}

func start(t *testing.T, st testStore, o Options) (*Scanner, *clockwork.FakeClock, *recorder) {
	clock := clockwork.NewFakeClock()
	rec := &recorder{}
	o.Clock, o.Unhealthy = clock, rec.add
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(o, st)
	require.NoError(t, err)
	s.Start()
	t.Cleanup(s.Stop)
	settle(t, clock)
	return s, clock, rec
}

// TestScannerPeriods checks that a truncated block file is found by the
// first metadata pass and a flipped byte only by the first data pass, each
// at its period, and that the damaged containers are marked UNHEALTHY and
// reported, the good ones left alone.
func TestScannerPeriods(t *testing.T) {
	st := newStore(t, 4, 5000)
	s, clock, rec := start(t, st, Options{MetaInterval: time.Hour, DataInterval: 10 * time.Hour, Bandwidth: -1})
	require.NoError(t, os.Truncate(st.blockFile(2), 100))
	p, err := os.ReadFile(st.blockFile(3))
	require.NoError(t, err)
	p[4321] ^= 0x40
	require.NoError(t, os.WriteFile(st.blockFile(3), p, 0o600))

	clock.Advance(59 * time.Minute)
	settle(t, clock)
	require.Empty(t, rec.get())
	clock.Advance(time.Minute)
	settle(t, clock)
	require.Equal(t, []uint64{2}, rec.get(), "the metadata pass finds the short file, not the flipped byte")
	m := s.Metrics()
	require.Equal(t, int64(4), m.MetaScans)
	require.Equal(t, int64(0), m.DataScans)
	require.Equal(t, clock.Now(), m.LastMetaPass)
	require.True(t, m.LastDataPass.IsZero())

	for range 9 {
		clock.Advance(time.Hour)
		settle(t, clock)
	}
	require.Equal(t, []uint64{2, 3}, rec.get())
	m = s.Metrics()
	require.Equal(t, int64(3), m.DataScans, "container 2, UNHEALTHY by then, is not scanned again")
	require.Equal(t, int64(3*5000), m.BytesScanned)
	require.Equal(t, int64(2), m.Corruptions)
	require.Equal(t, int64(0), m.InProgress)
	require.Equal(t, clock.Now(), m.LastDataPass)
	for id, want := range map[uint64]container.State{1: container.Closed, 2: container.Unhealthy, 3: container.Unhealthy, 4: container.Closed} {
		c, err := st.Container(id)
		require.NoError(t, err)
		require.Equal(t, want, c.State(), "container %d", id)
	}
}

// TestScannerBandwidth checks that a data scan reads no faster than the cap:
// 40 000 bytes at 4 000 bytes per second take about 10 s of the clock.
func TestScannerBandwidth(t *testing.T) {
	st := newStore(t, 2, 20000)
	s, clock, _ := start(t, st, Options{MetaInterval: -1, DataInterval: time.Hour, Bandwidth: 4000})
	clock.Advance(time.Hour)
	began := clock.Now()
	for s.Metrics().DataScans < 2 {
		settle(t, clock)
		if s.Metrics().DataScans == 2 {
			break
		}
		clock.Advance(100 * time.Millisecond)
		require.Less(t, clock.Since(began), time.Minute)
	}
	took := clock.Since(began)
	require.GreaterOrEqual(t, took, 9*time.Second)
	require.LessOrEqual(t, took, 11*time.Second)
	require.Equal(t, int64(40000), s.Metrics().BytesScanned)
}

// TestScannerRequest checks that a requested scan runs at once, ahead of
// the periods, and that containers not held CLOSED are refused.
func TestScannerRequest(t *testing.T) {
	st := newStore(t, 2, 3000)
	s, clock, rec := start(t, st, Options{Bandwidth: -1})
	p, err := os.ReadFile(st.blockFile(1))
	require.NoError(t, err)
	p[0] ^= 1
	require.NoError(t, os.WriteFile(st.blockFile(1), p, 0o600))
	require.False(t, s.Request(9, true), "not held")
	require.True(t, s.Request(2, true))
	require.True(t, s.Request(1, true))
	require.Eventually(t, func() bool { return len(rec.get()) == 1 }, 5*time.Second, time.Millisecond)
	settle(t, clock)
	require.Equal(t, []uint64{1}, rec.get())
	require.Equal(t, int64(2), s.Metrics().DataScans)
	require.False(t, s.Request(1, true), "UNHEALTHY now")
}

// TestScannerSkipsDeleted checks that a container deleted before its scan
// is skipped, not reported.
func TestScannerSkipsDeleted(t *testing.T) {
	st := newStore(t, 2, 3000)
	s, clock, rec := start(t, st, Options{MetaInterval: time.Hour, DataInterval: time.Hour, Bandwidth: -1})
	c, err := st.Container(1)
	require.NoError(t, err)
	require.NoError(t, st.v.Delete(1, false))
	s.scan(context.Background(), s.vols[0], 1, true) // a scan that had already listed it
	require.Equal(t, c.State(), container.Closed)
	clock.Advance(time.Hour)
	settle(t, clock)
	require.Empty(t, rec.get())
	require.Equal(t, int64(1), s.Metrics().DataScans)
}

// TestScannerDisabled checks that a disabled scanner starts nothing.
func TestScannerDisabled(t *testing.T) {
	st := newStore(t, 1, 1000)
	clock := clockwork.NewFakeClock()
	s, err := New(Options{Disable: true, Clock: clock}, st)
	require.NoError(t, err)
	s.Start()
	defer s.Stop()
	require.False(t, s.Request(1, true))
	require.True(t, s.Metrics().Disabled)
	clock.Advance(30 * 24 * time.Hour)
	require.Equal(t, Metrics{Disabled: true}, s.Metrics())
}
