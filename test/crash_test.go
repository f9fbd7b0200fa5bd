package test

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The crash tests of real processes: writers put keys through the Go
// client while every process holding their data is killed with SIGKILL at a
// seeded moment; after a restart on the same directories every key whose
// Close returned must read back identical, and every prefix an Hsync
// acknowledged must be there. TestCrashDatanodes kills the three datanode
// processes of a cluster at once (meta stays up); TestCrashDev kills
// `strato dev`, meta and datanodes in one process. Each round is one
// schedule; $STRATO_CRASH_ROUNDS sets how many (make soak runs 50), and
// $STRATO_CRASH_SEED the first seed.

const (
	crashVolume    = "crashv"
	crashBucket    = "crashb"
	crashChunk     = 256 << 10
	crashBlockSize = 1 << 20
)

// crashContent is the content of key name: n reproducible bytes.
func crashContent(name string, n int) []byte {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	var key [32]byte
	for i, x := 0, h.Sum64(); i < 8; i, x = i+1, x>>8 {
		key[i] = byte(x)
	}
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

// acks is what the writers were told: the keys whose Close returned, with
// their size, and the longest prefix an Hsync acknowledged of the others.
type acks struct {
	mu      sync.Mutex
	closed  map[string]int
	hsynced map[string]int
	n       atomic.Int64 // acknowledgements so far
}

func newAcks() *acks { return &acks{closed: map[string]int{}, hsynced: map[string]int{}} }

func (a *acks) close(name string, n int) {
	a.mu.Lock()
	a.closed[name] = n
	delete(a.hsynced, name)
	a.mu.Unlock()
	a.n.Add(1)
}

func (a *acks) hsync(name string, n int) {
	a.mu.Lock()
	a.hsynced[name] = n
	a.mu.Unlock()
	a.n.Add(1)
}

// crashKinds are the shapes of key the writers put.
var crashKinds = []string{"one-chunk", "chunks", "blocks", "hsync-close", "hsync-open"}

// crashWriter puts keys until ctx ends or a write fails for good (the
// datanodes are gone); only what returned success is recorded.
func crashWriter(ctx context.Context, cl *client.Client, rng *rand.Rand, kinds []string, prefix string, a *acks) {
	for i := 0; ctx.Err() == nil; i++ {
		kind := kinds[rng.IntN(len(kinds))]
		name := fmt.Sprintf("%s/k%d-%s", prefix, i, kind)
		var size int
		switch kind {
		case "one-chunk":
			size = 1 + rng.IntN(crashChunk)
		case "chunks":
			size = crashChunk + 1 + rng.IntN(crashBlockSize-crashChunk)
		default:
			size = crashBlockSize + rng.IntN(5*crashBlockSize/2)
		}
		data := crashContent(name, size)
		var syncs []int // where the hsyncs go
		if strings.HasPrefix(kind, "hsync") {
			for range 1 + rng.IntN(3) {
				syncs = append(syncs, 1+rng.IntN(size-1))
			}
			slices.Sort(syncs)
		}
		w, err := cl.CreateKey(ctx, crashVolume, crashBucket, name, client.WriteOptions{})
		if err != nil {
			return
		}
		for off := 0; off < size; {
			n := min(size-off, 1+rng.IntN(96<<10))
			if len(syncs) > 0 && off+n >= syncs[0] {
				n = syncs[0] - off
			}
			if n > 0 {
				if _, err := w.Write(data[off : off+n]); err != nil {
					_ = w.Close()
					return
				}
				off += n
			}
			if len(syncs) > 0 && off == syncs[0] {
				syncs = syncs[1:]
				if err := w.Hsync(); err != nil {
					_ = w.Close()
					return
				}
				a.hsync(name, off)
			}
		}
		if kind == "hsync-open" {
			continue // left open: only its hsynced prefix was promised
		}
		if err := w.Close(); err != nil {
			return
		}
		a.close(name, size)
	}
}

// runCrashRounds runs rounds of writers, a SIGKILL of procs at a seeded
// moment, their restart and the check, on the cluster of the meta at
// metaAddr.
func runCrashRounds(t *testing.T, metaAddr string, procs ...*proc) {
	rounds := 3
	if s := os.Getenv("STRATO_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "STRATO_CRASH_ROUNDS")
		rounds = n
	}
	seed := uint64(time.Now().UnixNano() % 100000)
	if s := os.Getenv("STRATO_CRASH_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "STRATO_CRASH_SEED")
		seed = n
	}
	waitReady(t, metaAddr, procs...)
	cl, err := client.New(client.Options{Meta: []string{metaAddr}, ChunkSize: crashChunk, AttemptTimeout: 5 * time.Second,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer cl.Close()
	ctx := t.Context()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: crashVolume})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: crashVolume, Name: crashBucket,
		Layout: stratov1.BucketLayout_LAYOUT_OBS, BlockSize: crashBlockSize})
	require.NoError(t, err)

	var total, totalHsync int
	for r := range rounds {
		s := seed + uint64(r)
		rng := rand.New(rand.NewPCG(s, 13))
		writers := 2 + rng.IntN(3)
		// Every other schedule has no hsync at all: an hsync fsyncs what
		// came before it, which would hide a commit left in memory.
		kinds := crashKinds
		if rng.IntN(2) == 0 {
			kinds = crashKinds[:3]
		}
		killAfter := int64(2 + rng.IntN(30)) // acknowledgements before the kill
		delay := time.Duration(rng.IntN(300)) * time.Millisecond
		a := newAcks()
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for w := range writers {
			wrng := rand.New(rand.NewPCG(s, uint64(w)))
			wg.Add(1)
			go func() {
				defer wg.Done()
				crashWriter(wctx, cl, wrng, kinds, fmt.Sprintf("s%d/w%d", s, w), a)
			}()
		}
		deadline := time.Now().Add(60 * time.Second)
		for a.n.Load() < killAfter && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		require.GreaterOrEqual(t, a.n.Load(), killAfter, "seed %d: the writers made no progress", s)
		time.Sleep(delay)
		killAll(procs...)
		// The writers run into the dead processes; what they still
		// complete (a CommitKey whose blocks were all committed) counts.
		time.Sleep(time.Second)
		cancel()
		wg.Wait()
		for _, p := range procs {
			p.start()
		}
		waitReady(t, metaAddr, procs...)
		checkAcks(t, cl, s, a)
		a.mu.Lock()
		total += len(a.closed)
		totalHsync += len(a.hsynced)
		t.Logf("seed %d: %d writers of %d kinds, killed after %d acknowledgements + %v: %d closed keys and %d hsynced prefixes read back",
			s, writers, len(kinds), killAfter, delay, len(a.closed), len(a.hsynced))
		// Keep the disk bounded over many rounds: this round's keys go.
		for name := range a.closed {
			require.NoError(t, cl.DeleteKey(ctx, crashVolume, crashBucket, name), "seed %d: delete %s", s, name)
		}
		a.mu.Unlock()
	}
	t.Logf("%d rounds from seed %d: %d closed keys and %d hsynced prefixes, all read back", rounds, seed, total, totalHsync)
}

// checkAcks reads back every acknowledged key and prefix.
func checkAcks(t *testing.T, cl *client.Client, seed uint64, a *acks) {
	ctx := t.Context()
	a.mu.Lock()
	defer a.mu.Unlock()
	read := func(name string) ([]byte, error) {
		r, err := cl.OpenKey(ctx, crashVolume, crashBucket, name)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return io.ReadAll(r)
	}
	for name, n := range a.closed {
		got, err := read(name)
		require.NoError(t, err, "seed %d: key %s (%d bytes) was closed", seed, name, n)
		require.Equal(t, n, len(got), "seed %d: key %s", seed, name)
		require.True(t, slices.Equal(crashContent(name, n), got), "seed %d: key %s reads back different bytes", seed, name)
	}
	for name, n := range a.hsynced {
		got, err := read(name)
		require.NoError(t, err, "seed %d: key %s was hsynced at %d", seed, name, n)
		require.GreaterOrEqual(t, len(got), n, "seed %d: key %s was hsynced at %d", seed, name, n)
		require.True(t, slices.Equal(crashContent(name, len(got)), got), "seed %d: key %s reads back different bytes", seed, name)
	}
}

// TestCrashDatanodes kills meta's three datanode processes at once.
func TestCrashDatanodes(t *testing.T) {
	root := t.TempDir()
	metaAddr := freeAddr(t)
	startMeta(t, filepath.Join(root, "meta"), metaAddr)
	runCrashRounds(t, metaAddr, startDatanodes(t, root, metaAddr, 3)...)
}

// TestCrashDev kills `strato dev` (meta and three datanodes in one process).
func TestCrashDev(t *testing.T) {
	metaAddr := freeAddr(t)
	runCrashRounds(t, metaAddr, startDev(t, filepath.Join(t.TempDir(), "dev"), metaAddr))
}
