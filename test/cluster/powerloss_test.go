package cluster

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestPowerLossKeepsHsyncedBytes cuts the power of every datanode at once
// while writers run: each datanode restarts on a crash image of its disk
// that holds only what was fsynced. Every byte an Hsync acknowledged must
// read back; bytes written after the last Hsync (even of a closed key) may
// be gone, and then reading them fails, never returns wrong data.
func TestPowerLossKeepsHsyncedBytes(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { powerLoss(t, seed) })
	}
}

// crashable is a cluster of n datanodes whose disks are crashable
// in-memory file systems: images takes a crash image of every disk at
// once (only what was fsynced), and restart restarts every datanode on
// the images.
type crashable struct {
	t   *testing.T
	f   *faultCluster
	mu  sync.Mutex
	fss []*vfs.MemFS
}

func startCrashable(t *testing.T, n int) *crashable {
	c := &crashable{t: t, fss: make([]*vfs.MemFS, n)}
	dir := t.TempDir()
	for i := range c.fss {
		// The datanode's directory exists, durably, before it starts, as
		// on a real disk.
		c.fss[i] = vfs.NewCrashableMem()
		d := filepath.Join(dir, fmt.Sprintf("dn%d", i+1))
		require.NoError(t, c.fss[i].MkdirAll(d, 0o755))
		for ; d != filepath.Dir(d); d = filepath.Dir(d) {
			dh, err := c.fss[i].OpenDir(filepath.Dir(d))
			require.NoError(t, err)
			require.NoError(t, dh.Sync())
			require.NoError(t, dh.Close())
		}
	}
	c.f = startFaultCluster(t, minicluster.Options{Dir: dir, Datanodes: n, BlockSize: 1 << 20, ContainerSize: 16 << 20,
		DatanodeFS: func(i int) vfs.FS {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.fss[i]
		}}, stratov1.ReplicationFactor_REPLICATION_THREE, 128<<10)
	return c
}

// images takes a crash image of every datanode's disk at the same moment.
func (c *crashable) images() []*vfs.MemFS {
	c.mu.Lock()
	defer c.mu.Unlock()
	images := make([]*vfs.MemFS, len(c.fss))
	for i := range c.fss {
		images[i] = c.fss[i].CrashClone(vfs.CrashCloneCfg{})
	}
	return images
}

// restart stops every datanode and starts it again on its image.
func (c *crashable) restart(images []*vfs.MemFS) {
	for i := range images {
		require.NoError(c.t, c.f.c.StopDatanode(i))
	}
	c.mu.Lock()
	copy(c.fss, images)
	c.mu.Unlock()
	for i := range images {
		require.NoError(c.t, c.f.c.StartDatanode(i))
	}
	require.NoError(c.t, c.f.c.WaitReady(c.t.Context()))
}

func powerLoss(t *testing.T, seed uint64) {
	const n = 3
	cr := startCrashable(t, n)
	f := cr.f
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	// hsynced is what the writers were told: the longest prefix an Hsync
	// acknowledged per key; closed the keys whose Close returned.
	var amu sync.Mutex
	hsynced, closed := map[string]int{}, map[string]int{}
	acked := make(chan struct{}, 1024)
	var wg sync.WaitGroup
	for w := range 3 {
		rng := rand.New(rand.NewPCG(seed, uint64(w)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				path := fmt.Sprintf("/vol/bkt/w%d/k%d", w, k)
				data := fastRandom(1+rng.IntN(3<<20), seed<<32|uint64(w)<<16|uint64(k))
				wr, err := f.cl.Create(ctx, path, client.CreateOptions{Recursive: true})
				if err != nil {
					return
				}
				for off := 0; off < len(data); {
					m := min(len(data)-off, 1+rng.IntN(200<<10))
					if _, err := wr.Write(data[off : off+m]); err != nil {
						return
					}
					off += m
					if rng.IntN(4) == 0 {
						if err := wr.Hsync(); err != nil {
							return
						}
						amu.Lock()
						hsynced[path] = off
						amu.Unlock()
						acked <- struct{}{}
					}
				}
				if rng.IntN(3) == 0 {
					continue // left open
				}
				if err := wr.Close(); err != nil {
					return
				}
				amu.Lock()
				closed[path] = len(data)
				amu.Unlock()
			}
		}()
	}

	// Cut the power after a seeded number of hsyncs: every datanode's disk
	// image is taken at the same moment, what the writers were told before
	// it recorded first.
	rng := rand.New(rand.NewPCG(seed, 99))
	for range 5 + rng.IntN(20) {
		select {
		case <-acked:
		case <-time.After(60 * time.Second):
			t.Fatal("the writers made no progress")
		}
	}
	time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
	amu.Lock()
	wantSynced := make(map[string]int, len(hsynced))
	for k, v := range hsynced {
		wantSynced[k] = v
	}
	wantClosed := make(map[string]int, len(closed))
	for k, v := range closed {
		wantClosed[k] = v
	}
	images := cr.images()
	amu.Unlock()
	cancel()
	wg.Wait()
	cr.restart(images)

	for path, m := range wantSynced {
		want := fastRandom(m, seedOf(t, path, seed))
		r, err := f.cl.Open(t.Context(), path)
		require.NoError(t, err, "%s was hsynced at %d", path, m)
		got := make([]byte, m)
		k, err := r.ReadAt(got, 0)
		require.NoError(t, err, "%s was hsynced at %d", path, m)
		require.Equal(t, m, k)
		require.True(t, bytes.Equal(want, got), "%s: the hsynced prefix of %d bytes differs", path, m)
		_ = r.Close()
	}
	// A closed key past its last hsync: all of it or an error.
	for path, m := range wantClosed {
		got, err := f.read(t.Context(), path)
		if err != nil {
			continue
		}
		require.True(t, bytes.Equal(fastRandom(m, seedOf(t, path, seed)), got), "%s reads back wrong data", path)
	}
	t.Logf("seed %d: %d hsynced prefixes read back; %d closed keys", seed, len(wantSynced), len(wantClosed))
}

// seedOf is the content seed of a writer's key path.
func seedOf(t *testing.T, path string, seed uint64) uint64 {
	var w, k uint64
	_, err := fmt.Sscanf(path, "/vol/bkt/w%d/k%d", &w, &k)
	require.NoError(t, err)
	return seed<<32 | w<<16 | k
}

// TestPowerLossAfterAppendHsync: a file closed without an hsync, then
// appended to and hsynced, survives a power cut of every datanode whole:
// the appender's hsync promises every byte before it, the file's earlier
// blocks (written by another writer, never fsynced) included.
func TestPowerLossAfterAppendHsync(t *testing.T) {
	cr := startCrashable(t, 3)
	f, ctx := cr.f, t.Context()
	a, b := fastRandom(1<<20+300<<10, 11), fastRandom(200<<10, 12)
	w, err := f.cl.Create(ctx, "/vol/bkt/f", client.CreateOptions{Recursive: true})
	require.NoError(t, err)
	_, err = w.Write(a)
	require.NoError(t, err)
	require.NoError(t, w.Close()) // no hsync: nothing fsynced yet
	w, err = f.cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{})
	require.NoError(t, err)
	_, err = w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Hsync())
	cr.restart(cr.images())
	f.requireContent("/vol/bkt/f", append(bytes.Clone(a), b...))
}
