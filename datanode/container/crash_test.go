package container

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// crashModel records what the store promised: for each block, the bytes
// written (a block's bytes never change) and the length that a PutBlock with
// Sync, or a Sync after a PutBlock, made durable.
type crashModel struct {
	mu      sync.Mutex
	data    map[blockRef][]byte
	durable map[blockRef]int64
	// returned is the length of each block's last PutBlock that returned,
	// synced or not: what a crash of the process alone (the kernel keeps
	// every write) must keep.
	returned map[blockRef]int64
	deleted  map[blockRef]bool // durably deleted
	created  []uint64          // containers whose Create returned
	// gen counts the deletes started on each block and its re-creations: a
	// block whose gen moved after a snapshot may have been deleted or
	// written again before the crash image.
	gen map[blockRef]int

	// Per container, what its worker committed and the chunk cuts of each
	// block (kept across calls so that rewrites are identical retries).
	committed map[uint64]map[uint64]int64
	cuts      map[uint64]map[uint64][]int
}

func (m *crashModel) worker(cid uint64) (map[uint64]int64, map[uint64][]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.committed[cid] == nil {
		m.committed[cid], m.cuts[cid] = map[uint64]int64{}, map[uint64][]int{}
	}
	return m.committed[cid], m.cuts[cid]
}

type blockRef struct{ cid, id uint64 }

func newCrashModel() *crashModel {
	return &crashModel{data: map[blockRef][]byte{}, durable: map[blockRef]int64{}, returned: map[blockRef]int64{}, deleted: map[blockRef]bool{},
		committed: map[uint64]map[uint64]int64{}, cuts: map[uint64]map[uint64][]int{}, gen: map[blockRef]int{}}
}

// snapshot returns what a crash image taken now must hold. A process crash
// (the image keeps every write the kernel has) must keep every PutBlock that
// returned; a power loss only what was synced.
func (m *crashModel) snapshot(processCrash bool) (map[blockRef]int64, map[blockRef]bool, []uint64, crashSnap) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := maps.Clone(m.durable)
	if processCrash {
		for k, v := range m.returned {
			d[k] = max(d[k], v)
		}
	}
	del := make(map[blockRef]bool, len(m.deleted))
	for k, v := range m.deleted {
		del[k] = v
	}
	snap := crashSnap{data: make(map[blockRef][]byte, len(m.data)), gen: make(map[blockRef]int, len(m.gen))}
	for k, v := range m.data {
		snap.data[k] = v // never modified in place
	}
	for k, v := range m.gen {
		snap.gen[k] = v
	}
	return d, del, append([]uint64(nil), m.created...), snap
}

// crashSnap is what the model knew when a crash image was taken: the data
// of every block and its delete generation.
type crashSnap struct {
	data  map[blockRef][]byte
	gen   map[blockRef]int
	after map[blockRef]int // gen right after the crash image was taken
}

// taken records the generations once the crash image exists.
func (s *crashSnap) taken(m *crashModel) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.after = make(map[blockRef]int, len(m.gen))
	for k, v := range m.gen {
		s.after[k] = v
	}
}

// changedSince reports whether ref was deleted or created again between the
// snapshot and the crash image (its state in the image is then unknown).
func (s crashSnap) changedSince(ref blockRef) bool { return s.after[ref] != s.gen[ref] }

// crashWorker writes blocks of one container: chunks in random order, a
// PutBlock per block (sometimes with Sync, sometimes after a partial
// length), container-wide Syncs, and deletes.
func crashWorker(t *testing.T, rng *rand.Rand, m *crashModel, c *Container, ids []uint64, ops int) {
	committed, cutsOf := m.worker(c.ID())
	for range ops {
		id := ids[rng.IntN(len(ids))]
		ref := blockRef{c.ID(), id}
		m.mu.Lock()
		data, ok := m.data[ref]
		if !ok {
			// Written again from here on: no longer known to be deleted.
			m.gen[ref]++
			delete(m.deleted, ref)
			data = pattern(id*1000+c.ID(), 512+rng.IntN(12000))
			m.data[ref] = data
		}
		m.mu.Unlock()
		switch op := rng.IntN(10); {
		case op < 6: // write the rest of the block in random chunks, then PutBlock
			cuts, ok := cutsOf[id]
			if !ok {
				for at := 0; at < len(data); at += 1 + rng.IntN(3000) {
					cuts = append(cuts, at)
				}
				cuts = append(cuts, len(data))
				cutsOf[id] = cuts
			}
			first := 0
			for cuts[first] < int(committed[id]) {
				first++
			}
			if first == len(cuts)-1 {
				continue
			}
			// Chunks already written and not committed are retried with
			// the same bytes, which the store accepts.
			for _, i := range rng.Perm(len(cuts) - 1 - first) {
				i += first
				p := data[cuts[i]:cuts[i+1]]
				err := c.WriteChunk(id, int64(cuts[i]), p, checksum.Compute(checksum.CRC32C, 256, p), WriteOptions{})
				require.NoError(t, err)
			}
			length := int64(len(data))
			if rng.IntN(3) == 0 {
				length = int64(cuts[first+1+rng.IntN(len(cuts)-1-first)]) // the rest stays pending
			}
			sync := rng.IntN(2) == 0
			_, err := c.PutBlock(id, length, PutOptions{Sync: sync, Final: rng.IntN(2) == 0})
			require.NoError(t, err)
			committed[id] = length
			m.mu.Lock()
			delete(m.deleted, ref) // a new row, durable or not, may be present
			m.returned[ref] = length
			if sync {
				m.durable[ref] = length
			}
			m.mu.Unlock()
		case op < 8:
			// Everything committed so far becomes durable.
			snap := map[uint64]int64{}
			for k, v := range committed {
				snap[k] = v
			}
			require.NoError(t, c.Sync())
			m.mu.Lock()
			for k, v := range snap {
				if v > 0 || m.durable[blockRef{c.ID(), k}] == 0 {
					m.durable[blockRef{c.ID(), k}] = v
					delete(m.deleted, blockRef{c.ID(), k})
				}
			}
			m.mu.Unlock()
		default:
			if _, ok := committed[id]; !ok {
				continue
			}
			// From here the block may be gone from a crash image.
			m.mu.Lock()
			m.gen[ref]++
			delete(m.durable, ref)
			delete(m.returned, ref)
			m.mu.Unlock()
			require.NoError(t, c.DeleteBlock(id))
			delete(committed, id)
			delete(cutsOf, id)
			m.mu.Lock()
			delete(m.durable, ref)
			delete(m.data, ref)
			m.deleted[ref] = true
			m.mu.Unlock()
		}
	}
}

// checkCrashed opens the crashed filesystem and checks the promises.
func checkCrashed(t *testing.T, fs vfs.FS, snap crashSnap, durable map[blockRef]int64, deleted map[blockRef]bool, created []uint64) {
	v, err := OpenVolume("/vol", testOptions(fs))
	require.NoError(t, err)
	defer v.Close()
	for _, cid := range created {
		c, err := v.Container(cid)
		require.NoError(t, err, "container %d was created durably", cid)
		rep, err := c.Scan(context.Background())
		require.NoError(t, err)
		bad := map[uint64]error{}
		for _, b := range rep.Bad {
			bad[b.LocalID] = b.Err
		}
		blocks, err := c.ListBlocks(0, 1<<20)
		require.NoError(t, err)
		present := map[uint64]Block{}
		for _, b := range blocks {
			present[b.LocalID] = b
		}
		for ref, n := range durable {
			if ref.cid != cid || snap.changedSince(ref) {
				continue
			}
			b, ok := present[ref.id]
			require.True(t, ok, "block %v durable at %d is missing", ref, n)
			require.GreaterOrEqual(t, b.Length, n)
			if n == 0 {
				continue
			}
			r, err := c.ReadChunk(ref.id, 0, n)
			require.NoError(t, err, "durable block %v", ref)
			require.NoError(t, r.Verify(), "durable block %v", ref)
			want := snap.data[ref][:n]
			require.Equal(t, want, r.Bytes(0, n), "durable block %v", ref)
			if b.Length == n {
				require.NotContains(t, bad, ref.id, "durable block %v", ref)
			}
		}
		for ref := range deleted {
			if ref.cid == cid && !snap.changedSince(ref) {
				require.NotContains(t, present, ref.id, "block %v was deleted durably", ref)
			}
		}
		// Whatever is there is either right or detected bad, never wrong
		// data that verifies.
		for id, b := range present {
			if b.Length == 0 {
				continue
			}
			r, err := c.ReadChunk(id, 0, b.Length)
			if err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
				require.Contains(t, bad, id)
				continue
			}
			if err := r.Verify(); err != nil {
				require.True(t, errors.Is(err, checksum.ErrMismatch))
				require.Contains(t, bad, id)
				continue
			}
			want, known := snap.data[blockRef{cid, id}]
			if known && !snap.changedSince(blockRef{cid, id}) {
				require.Equal(t, want[:b.Length], r.Bytes(0, b.Length), "block %d:%d verified but differs", cid, id)
			}
			require.NotContains(t, bad, id)
		}
		// The store is writable after the crash.
		if c.State() == Open {
			p := pattern(77, 100)
			require.NoError(t, c.WriteChunk(1<<40, 0, p, checksum.Compute(checksum.CRC32C, 256, p), WriteOptions{}))
			_, err = c.PutBlock(1<<40, 100, PutOptions{Sync: true})
			require.NoError(t, err)
		}
	}
}

// TestCrash crashes the store at random points of a random sequence and
// with random fractions of the unsynced data surviving.
func TestCrash(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 1))
			fs := vfs.NewCrashableMem()
			v, err := OpenVolume("/vol", testOptions(fs))
			require.NoError(t, err)
			defer v.Close()
			m := newCrashModel()
			var cs []*Container
			for cid := uint64(1); cid <= 2; cid++ {
				c, err := v.Create(cid, layouts[(int(cid)+seed)%2])
				require.NoError(t, err)
				cs = append(cs, c)
				m.created = append(m.created, cid)
			}
			for round := range 3 {
				for _, c := range cs {
					crashWorker(t, rng, m, c, []uint64{1, 2, 3, 4, 5}, 2+rng.IntN(8))
				}
				pct := []int{0, 20, 60, 100}[(seed+round)%4]
				durable, deleted, created, snap := m.snapshot(pct == 100)
				crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng})
				snap.taken(m)
				checkCrashed(t, crashed, snap, durable, deleted, created)
			}
		})
	}
}

// TestCrashDuringWrites takes crash images while writers are running, so
// the crash lands in the middle of writes, PutBlocks and fsyncs.
func TestCrashDuringWrites(t *testing.T) {
	fs := vfs.NewCrashableMem()
	v, err := OpenVolume("/vol", testOptions(fs))
	require.NoError(t, err)
	defer v.Close()
	m := newCrashModel()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		cid := uint64(w + 1)
		c, err := v.Create(cid, layouts[w%2])
		require.NoError(t, err)
		m.created = append(m.created, cid)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for {
				select {
				case <-stop:
					return
				default:
				}
				crashWorker(t, rng, m, c, []uint64{1, 2, 3, 4, 5, 6}, 3)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(99, 3))
	var images []*vfs.MemFS
	type taken struct {
		durable map[blockRef]int64
		deleted map[blockRef]bool
		created []uint64
		snap    crashSnap
	}
	var snaps []taken
	for i := range 9 {
		pct := []int{0, 50, 100}[i%3]
		durable, deleted, created, snap := m.snapshot(pct == 100)
		images = append(images, fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng}))
		snap.taken(m)
		snaps = append(snaps, taken{durable, deleted, created, snap})
	}
	close(stop)
	wg.Wait()
	for i, img := range images {
		s := snaps[i]
		checkCrashed(t, img, s.snap, s.durable, s.deleted, s.created)
	}
}

// A block released by a Final PutBlock without sync keeps its unsynced
// files pending for a container Sync; a later PutBlock with sync of the same
// block must make them durable too (its earlier chunks live in other files
// under FILE_PER_CHUNK, and a re-commit with no new write has nothing of its
// own to sync).
func TestSyncedPutBlockCoversWritesBeforeRelease(t *testing.T) {
	for _, layout := range layouts {
		for _, extend := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/extend=%v", layout, extend), func(t *testing.T) {
				fs := vfs.NewCrashableMem()
				v, err := OpenVolume("/vol", testOptions(fs))
				require.NoError(t, err)
				defer v.Close()
				c, err := v.Create(1, layout)
				require.NoError(t, err)
				data := pattern(9, 2000)
				write := func(from, to int) {
					p := data[from:to]
					require.NoError(t, c.WriteChunk(4, int64(from), p, checksum.Compute(checksum.CRC32C, 256, p), WriteOptions{}))
				}
				write(0, 1199)
				_, err = c.PutBlock(4, 1199, PutOptions{Final: true})
				require.NoError(t, err)
				n := 1199
				if extend {
					write(1199, 2000)
					n = 2000
				}
				_, err = c.PutBlock(4, int64(n), PutOptions{Sync: true})
				require.NoError(t, err)

				crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
				v2, err := OpenVolume("/vol", testOptions(crashed))
				require.NoError(t, err)
				defer v2.Close()
				c2, err := v2.Container(1)
				require.NoError(t, err)
				r, err := c2.ReadChunk(4, 0, int64(n))
				require.NoError(t, err)
				require.NoError(t, r.Verify())
				require.Equal(t, data[:n], r.Bytes(0, int64(n)))
			})
		}
	}
}

// A synced PutBlock on a CLOSING container (meta began closing it while a
// writer was about to hsync) writes nothing but makes a block committed at
// that length durable; a shorter one is refused with ErrNotOpen. On a
// CLOSED container, whose close fsynced everything, it answers at once.
func TestSyncedPutBlockOnClosingContainer(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			fs := vfs.NewCrashableMem()
			v, err := OpenVolume("/vol", testOptions(fs))
			require.NoError(t, err)
			defer v.Close()
			c, err := v.Create(1, layout)
			require.NoError(t, err)
			data := pattern(11, 3000)
			require.NoError(t, c.WriteChunk(4, 0, data, checksum.Compute(checksum.CRC32C, 256, data), WriteOptions{}))
			_, err = c.PutBlock(4, 3000, PutOptions{})
			require.NoError(t, err)
			require.NoError(t, c.MarkClosing())

			_, err = c.PutBlock(4, 3001, PutOptions{Sync: true, Final: true})
			require.ErrorIs(t, err, ErrNotOpen, "more than the replica holds cannot be synced")
			_, err = c.PutBlock(4, 3000, PutOptions{Final: true})
			require.ErrorIs(t, err, ErrNotOpen, "a commit without sync is a write")
			bcs, err := c.PutBlock(4, 3000, PutOptions{Sync: true, Final: true})
			require.NoError(t, err)
			require.Equal(t, c.Info().BCSID, bcs)

			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			v2, err := OpenVolume("/vol", testOptions(crashed))
			require.NoError(t, err)
			defer v2.Close()
			c2, err := v2.Container(1)
			require.NoError(t, err)
			r, err := c2.ReadChunk(4, 0, 3000)
			require.NoError(t, err)
			require.NoError(t, r.Verify())
			require.Equal(t, data, r.Bytes(0, 3000))

			require.NoError(t, c.Close())
			_, err = c.PutBlock(4, 3000, PutOptions{Sync: true, Final: true})
			require.NoError(t, err)
			_, err = c.PutBlock(5, 1, PutOptions{Sync: true, Final: true})
			require.ErrorIs(t, err, ErrNotOpen)
		})
	}
}
