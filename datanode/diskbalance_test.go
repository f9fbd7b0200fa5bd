package datanode

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
)

// fillContainer writes blocks 1..n of size bytes each (a pattern of id and
// the block) into container id and closes it unless open.
func fillContainer(t *testing.T, s *Store, id uint64, n, size int, open bool) {
	t.Helper()
	c, err := s.openForWrite(id)
	require.NoError(t, err)
	for b := 1; b <= n; b++ {
		data := pattern(int64(id*100)+int64(b), 0, size)
		require.NoError(t, c.WriteChunk(uint64(b), 0, data, checksum.Compute(checksum.CRC32C, 1024, data), container.WriteOptions{}))
		_, err = c.PutBlock(uint64(b), int64(size), container.PutOptions{})
		require.NoError(t, err)
	}
	if !open {
		require.NoError(t, s.CloseContainer(id))
	}
}

// checkContainer reads every block of container id back through the
// store and compares it with what fillContainer wrote.
func checkContainer(s *Store, id uint64, n, size int) error {
	for b := 1; b <= n; b++ {
		c, err := s.Container(id)
		if err != nil {
			return err
		}
		r, err := c.ReadChunk(uint64(b), 0, int64(size))
		if err != nil {
			return fmt.Errorf("container %d block %d: %w", id, b, err)
		}
		if err := r.Verify(); err != nil {
			return err
		}
		if !bytes.Equal(r.Data, pattern(int64(id*100)+int64(b), 0, size)) {
			return fmt.Errorf("container %d block %d: wrong bytes", id, b)
		}
	}
	return nil
}

// copiesOf counts the volumes whose containers list id.
func copiesOf(s *Store, id uint64) int {
	n := 0
	for _, v := range s.vols {
		for _, in := range v.List() {
			if in.ID == id {
				n++
			}
		}
	}
	return n
}

// TestDiskBalancer: one full volume and two empty ones added; the
// balancer evens them out while a reader reads every block without an
// error, moves no OPEN container, deletes the old copies after their
// grace, and everything reads back identical, after a restart too.
func TestDiskBalancer(t *testing.T) {
	fs := vfs.NewMem()
	const containers, blocks, size = 12, 3, 64 << 10
	s := openMemStore(t, fs, "/a")
	for id := uint64(1); id <= containers; id++ {
		fillContainer(t, s, id, blocks, size, id == containers)
	}
	require.NoError(t, s.Close())
	s = openMemStore(t, fs, "/a", "/b", "/c")

	var (
		stop   atomic.Bool
		reads  atomic.Int64
		errs   []error
		mu     sync.Mutex
		reader sync.WaitGroup
	)
	reader.Add(1)
	go func() {
		defer reader.Done()
		for !stop.Load() {
			for id := uint64(1); id <= containers; id++ {
				if err := checkContainer(s, id, blocks, size); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
				reads.Add(1)
			}
		}
	}()

	clock := clockwork.NewFakeClock()
	b := newDiskBalancer(s, clock, quietLogger(), 100*time.Millisecond)
	defer b.close()
	require.Error(t, b.start(1.5, 0), "a threshold past 1")
	require.NoError(t, b.start(0.01, -1))
	require.Eventually(t, func() bool { return !b.stats().GetRunning() }, 30*time.Second, 10*time.Millisecond)
	st := b.stats()
	require.Contains(t, []string{diskBalanced, diskNoMove}, st.GetResult())
	require.Zero(t, st.GetMovesFailed(), st.GetLastError())
	require.Positive(t, st.GetContainersMoved())
	require.Equal(t, st.GetContainersMoved()*blocks*size, st.GetBytesMoved())
	require.Less(t, st.GetSpreadNow(), st.GetSpreadStart())
	t.Logf("moved %d containers (%d bytes); spread %.3f -> %.3f; %s", st.GetContainersMoved(), st.GetBytesMoved(), st.GetSpreadStart(), st.GetSpreadNow(), st.GetResult())

	// Every volume within one container of the mean (11 closed containers
	// of 192 KiB and an open one on /a: 4, 4 and 3 closed, or near).
	uses, mean := b.uses()
	for _, u := range uses {
		require.InDelta(t, mean*u.weight, float64(u.used), float64(blocks*size)*1.01, "%s", u.v.Dir())
	}
	require.Equal(t, "/a", volumeOf(t, s, containers), "the open container stays")

	// The old copies go after their grace (the run waits it out on its
	// clock); the reader saw no error.
	require.NoError(t, clock.BlockUntilContext(t.Context(), 1))
	clock.Advance(100 * time.Millisecond)
	require.Eventually(t, func() bool {
		for id := uint64(1); id <= containers; id++ {
			if copiesOf(s, id) != 1 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond)
	stop.Store(true)
	reader.Wait()
	require.Positive(t, reads.Load())
	require.Empty(t, errs)
	require.Len(t, s.Containers(), containers)

	require.NoError(t, s.Close())
	s = openMemStore(t, fs, "/a", "/b", "/c")
	defer s.Close()
	for id := uint64(1); id <= containers; id++ {
		require.NoError(t, checkContainer(s, id, blocks, size))
	}
}

// TestDiskMoveCutShort: a move whose old copy was never deleted (the
// datanode stopped within the grace) leaves the container on two volumes;
// the next start keeps one and deletes the other. A move of an OPEN
// container is refused, and one whose container is deleted meanwhile
// leaves nothing.
func TestDiskMoveCutShort(t *testing.T) {
	fs := vfs.NewMem()
	s := openMemStore(t, fs, "/a", "/b")
	fillContainer(t, s, 1, 2, 4096, false)
	fillContainer(t, s, 2, 1, 4096, true)
	src := s.where[1]
	dst := s.vols[0]
	if dst == src {
		dst = s.vols[1]
	}
	_, _, err := s.moveContainer(t.Context(), 2, otherVolume(s, 2), nil)
	require.ErrorContains(t, err, "OPEN")

	old, n, err := s.moveContainer(t.Context(), 1, dst, nil)
	require.NoError(t, err)
	require.Equal(t, src, old)
	require.Equal(t, int64(2*4096), n)
	require.Equal(t, dst.Dir(), volumeOf(t, s, 1))
	require.Equal(t, 2, copiesOf(s, 1))
	require.Len(t, s.Containers(), 2, "the old copy is not reported")
	require.NoError(t, checkContainer(s, 1, 2, 4096))

	require.NoError(t, s.Close())
	s = openMemStore(t, fs, "/a", "/b")
	require.Equal(t, 1, copiesOf(s, 1))
	require.NoError(t, checkContainer(s, 1, 2, 4096))

	// Deleted while it moves (slowly, under a cap): nothing is left.
	fillContainer(t, s, 3, 8, 128<<10, false)
	clock := clockwork.NewFakeClock()
	lim, err := replication.NewLimits(1, 256<<10, clock)
	require.NoError(t, err)
	moved := make(chan error, 1)
	go func() {
		_, _, err := s.moveContainer(t.Context(), 3, otherVolume(s, 3), lim)
		moved <- err
	}()
	// The copy waits for its bandwidth on the clock: the deletion comes
	// mid-move, then the copy goes on.
	require.NoError(t, clock.BlockUntilContext(t.Context(), 1))
	require.NoError(t, s.DeleteContainer(3, false))
	clock.Advance(time.Hour)
	require.Error(t, <-moved)
	require.Zero(t, copiesOf(s, 3))
	_, err = s.Container(3)
	require.ErrorIs(t, err, container.ErrNotFound)
	require.NoError(t, s.Close())
}

// otherVolume returns a volume of s that does not serve container id.
func otherVolume(s *Store, id uint64) *container.Volume {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.vols {
		if s.where[id] != v {
			return v
		}
	}
	return nil
}
