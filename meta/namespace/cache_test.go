package namespace

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func (c *dirCache) len() (n int) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// checkBytes checks that each shard's and the buckets' counts of bytes
// are what their entries cost, within the bounds.
func (c *dirCache) checkBytes(t *testing.T) {
	t.Helper()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n := int64(0)
		for k := range s.m {
			n += dirEntryCost(k.name)
		}
		require.Equal(t, n, s.bytes, "shard %d", i)
		require.LessOrEqual(t, s.bytes, c.perShard)
		s.mu.Unlock()
	}
	c.bmu.Lock()
	n := int64(0)
	for k, bk := range c.buckets {
		n += bucketCost(k, bk)
	}
	require.Equal(t, n, c.bucketBytes)
	c.bmu.Unlock()
}

// checkBytes checks that each map's count of bytes is what its entries
// cost, within its share.
func (c *applyCache) checkBytes(t *testing.T) {
	t.Helper()
	var dirs, alive, buckets, kids, crowded, reclaimed, vals int64
	for k := range c.dirs {
		dirs += dirEntryCost(k.name)
	}
	alive = int64(len(c.alive)) * mapEntryCost
	for k, bk := range c.buckets {
		buckets += bucketCost(k, bk)
	}
	names := 0
	for _, m := range c.kids {
		kids += mapEntryCost
		for name := range m {
			kids += kidNameCost + int64(len(name))
		}
		names += len(m)
	}
	crowded = int64(len(c.crowded)) * mapEntryCost
	for _, k := range c.reclaimed {
		reclaimed += mapEntryCost + int64(len(k))
	}
	for k, v := range c.vals {
		vals += valCost(k, v)
	}
	for _, x := range []struct {
		name string
		got  int64
		s    share
	}{{"dirs", dirs, c.dirsB}, {"alive", alive, c.aliveB}, {"buckets", buckets, c.bucketsB}, {"kids", kids, c.kidsB},
		{"crowded", crowded, c.crowdedB}, {"reclaimed", reclaimed, c.reclaimedB}, {"vals", vals, c.valsB}} {
		require.Equal(t, x.got, x.s.bytes, x.name)
		require.LessOrEqual(t, x.s.bytes, x.s.max, x.name)
	}
	require.Equal(t, names, c.kidNames)
}

func TestDirCacheRenameAndDelete(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.createFile("fsb", "a/b/f", 1)
	_, err := h.stat("fsb", "a/b/f")
	require.NoError(t, err)
	require.Equal(t, 2, h.ns.cache.len(), "a and a/b cached")

	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a", Dst: "z"})
	_, err = h.stat("fsb", "a/b/f")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = h.stat("fsb", "z/b/f")
	require.NoError(t, err)

	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "z/b", Recursive: true})
	_, err = h.stat("fsb", "z/b/f")
	require.ErrorIs(t, err, ErrNotFound)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "z/b"})
	_, err = h.stat("fsb", "z/b/f")
	require.ErrorIs(t, err, ErrNotFound, "a new z/b is a new directory")
}

// A reader that runs between Apply and the batch's commit reads the old
// state; it must not leave that state in the cache.
func TestDirCacheReaderBetweenApplyAndCommit(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.createFile("fsb", "a/b/f", 1)

	cmd, err := h.prepare(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a", Dst: "z"})
	require.NoError(t, err)
	b := h.db.NewIndexedBatch()
	_, err = h.ns.Apply(cmd, b)
	require.NoError(t, err)

	_, err = h.stat("fsb", "a/b/f") // the DB still has a/
	require.NoError(t, err)
	require.NoError(t, b.Commit(pebble.NoSync))
	_, err = h.stat("fsb", "a/b/f") // before Committed: must not fill or hit
	require.ErrorIs(t, err, ErrNotFound)
	require.Zero(t, h.ns.cache.len())
	h.ns.Committed()
	_, err = h.stat("fsb", "a/b/f")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = h.stat("fsb", "z/b/f")
	require.NoError(t, err)
	require.Equal(t, 2, h.ns.cache.len(), "filling resumes after Committed")
}

func TestDirCacheBounded(t *testing.T) {
	db := openDB(t)
	h := newHarnessOn(t, db)
	var err error
	h.ns, err = New(Options{DirCacheBytes: 8 << 10})
	require.NoError(t, err)
	h.volBucket("fsb", fso)
	for i := range 300 {
		h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("d%d/e", i)})
		_, err := h.stat("fsb", fmt.Sprintf("d%d/e", i))
		require.NoError(t, err)
		h.ns.cache.checkBytes(t)
	}
	require.LessOrEqual(t, h.ns.cache.bytes(), int64(8<<10))
	require.Greater(t, h.ns.cache.len(), 30, "the cache holds what fits")
	for i := range 300 {
		_, err := h.stat("fsb", fmt.Sprintf("d%d/e", i))
		require.NoError(t, err)
	}
}

func TestBucketCache(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", fso)
	h.createFile("bkt", "f", 1)
	_, err := h.stat("bkt", "f")
	require.NoError(t, err)
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: "f"})
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "bkt"})
	_, err = h.stat("bkt", "f")
	require.ErrorIs(t, err, ErrBucketNotFound)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_OBS)
	h.putKey("bkt", "k", 3)
	lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k"})
	require.NoError(t, err)
	require.Equal(t, int64(3), lk.Key.Size)
	h.must(&stratov1.SetQuotaRequest{Volume: "vol", Bucket: "bkt", QuotaBytes: 99})
	bk, err := h.rd().Bucket("vol", "bkt")
	require.NoError(t, err)
	require.Equal(t, int64(99), bk.QuotaBytes)
	require.Equal(t, int64(3), bk.UsedBytes)
}

// Readers racing with renames of a directory never leave a stale entry: once
// the writer stops, every reader sees exactly the database's state.
func TestDirCacheConcurrentReaders(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.createFile("fsb", "top/a/f", 1)
	stop := make(chan struct{})
	done := make(chan error, 4)
	for range 4 {
		go func() {
			rd := h.rd()
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				for _, p := range []string{"top/a/f", "top/b/f"} {
					_, err := rd.GetFileStatus(&stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "fsb", Path: p})
					if err != nil && !errors.Is(err, ErrNotFound) {
						done <- err
						return
					}
				}
			}
		}()
	}
	names := []string{"top/a", "top/b"}
	for i := range 400 {
		h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: names[i%2], Dst: names[(i+1)%2]})
	}
	close(stop)
	for range 4 {
		require.NoError(t, <-done)
	}
	// 400 renames: back at top/a.
	_, err := h.stat("fsb", "top/a/f")
	require.NoError(t, err)
	_, err = h.stat("fsb", "top/b/f")
	require.ErrorIs(t, err, ErrNotFound)
}

// kidsOf returns what the apply cache knows of directory path's entries
// (name → kidDir|kidFile), and whether it knows them all.
func (h *harness) kidsOf(bucket, path string) (map[string]uint8, bool) {
	h.t.Helper()
	st, err := h.stat(bucket, path)
	require.NoError(h.t, err)
	names, ok := h.ns.acache.kids[st.ObjectId]
	return names, ok
}

// TestApplyCacheKnowsNewDirectories: Apply knows every entry of the
// directories it created, whatever the operation that changes them, and
// forgets a directory once it is deleted. verify mode (on in every harness)
// checks each answer it gives against the batch.
func TestApplyCacheKnowsNewDirectories(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/b"})
	kids, ok := h.kidsOf("fsb", "a")
	require.True(t, ok, "a new directory's entries are known")
	require.Equal(t, map[string]uint8{"b": kidDir}, kids)
	kids, ok = h.kidsOf("fsb", "a/b")
	require.True(t, ok)
	require.Empty(t, kids)

	h.createFile("fsb", "a/f", 1)
	h.createFile("fsb", "a/b/g", 1)
	h.fails(ErrFileExists, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/f"})
	h.fails(ErrNotADirectory, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/f/x"})
	kids, _ = h.kidsOf("fsb", "a")
	require.Equal(t, map[string]uint8{"b": kidDir, "f": kidFile}, kids)

	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/f", Dst: "a/b/f2"})
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b", Dst: "c"})
	kids, _ = h.kidsOf("fsb", "a")
	require.Empty(t, kids)
	kids, ok = h.kidsOf("fsb", "c")
	require.True(t, ok, "a moved directory keeps its entries")
	require.Equal(t, map[string]uint8{"g": kidFile, "f2": kidFile}, kids)

	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "c/g"})
	kids, _ = h.kidsOf("fsb", "c")
	require.Equal(t, map[string]uint8{"f2": kidFile}, kids)
	c, err := h.stat("fsb", "c")
	require.NoError(t, err)
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "c", Recursive: true})
	h.reclaimAll(10)
	_, ok = h.ns.acache.kids[c.ObjectId]
	require.False(t, ok, "a deleted directory is forgotten")

	// Names that exist are found again after all this; names that do not
	// are created once.
	h.createFile("fsb", "a/b", 1)
	h.fails(ErrFileExists, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/b"})
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "c/g"})
	require.ElementsMatch(t, []string{"a/", "c/"}, h.list("fsb", ""))
	n := 0
	for _, names := range h.ns.acache.kids {
		n += len(names)
	}
	require.Equal(t, n, h.ns.acache.kidNames)
}

// TestApplyCacheKidsBounded: every map of the apply cache stays within its
// share of ApplyCacheBytes, its count of bytes exact; past its share a map
// starts over, and Apply reads the tables again (verify mode checks every
// answer it gives against the batch).
func TestApplyCacheKidsBounded(t *testing.T) {
	h := newHarness(t)
	var err error
	h.ns, err = New(Options{ApplyCacheBytes: 4 << 10})
	require.NoError(t, err)
	h.ns.acache.verify = true
	h.volBucket("fsb", fso)
	for i := range 200 {
		h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("d%d/e", i%50)})
		h.createFile("fsb", fmt.Sprintf("d%d/f%d", i%50, i), 1)
		h.ns.acache.checkBytes(t)
		require.LessOrEqual(t, h.ns.acache.Bytes(), int64(4<<10)+h.ns.opts.SnapshotCacheBytes)
	}
	for i := range 50 {
		h.fails(ErrFileExists, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: fmt.Sprintf("d%d/f%d", i, i)})
	}
}

// TestApplyCacheLearnsSmallDirectories: after the cache is emptied (a
// restart), Apply learns every name of a small directory it touches from
// one scan of its entries, so that renames, deletes and creates there
// answer names that do not exist from memory; a directory with more than
// kidsFillMax entries in a table is not learnt, and is not scanned again.
// verify mode checks every answer against the batch.
func TestApplyCacheLearnsSmallDirectories(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/s"})
	for i := range 4 {
		h.createFile("fsb", fmt.Sprintf("d/f%d", i), 1)
	}
	for i := range kidsFillMax + 1 {
		h.createFile("fsb", fmt.Sprintf("big/f%d", i), 1)
	}
	h.ns.ResetCache()
	_, ok := h.kidsOf("fsb", "d")
	require.False(t, ok)

	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d/f0", Dst: "d/f0.r"})
	kids, ok := h.kidsOf("fsb", "d")
	require.True(t, ok, "a small directory's names are learnt")
	require.Equal(t, map[string]uint8{"s": kidDir, "f0.r": kidFile, "f1": kidFile, "f2": kidFile, "f3": kidFile}, kids)
	h.fails(ErrFileExists, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d/f1", Dst: "d/f2"})
	h.fails(ErrFileExists, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/f3"})
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d/f1", Dst: "d/s"}) // into d/s
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/f2"})
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/f2/x"})
	kids, _ = h.kidsOf("fsb", "d")
	require.Equal(t, map[string]uint8{"s": kidDir, "f0.r": kidFile, "f2": kidDir, "f3": kidFile}, kids)
	require.ElementsMatch(t, []string{"d/f0.r", "d/f2/", "d/f3", "d/s/"}, h.list("fsb", "d"))
	require.ElementsMatch(t, []string{"d/s/f1"}, h.list("fsb", "d/s"))

	// A crowded directory is left to point lookups.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "big/f0", Dst: "big/f0.r"})
	h.fails(ErrFileExists, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "big/f1", Dst: "big/f2"})
	_, ok = h.kidsOf("fsb", "big")
	require.False(t, ok)
	st, err := h.stat("fsb", "big")
	require.NoError(t, err)
	require.Contains(t, h.ns.acache.crowded, st.ObjectId)
	n := 0
	for _, names := range h.ns.acache.kids {
		n += len(names)
	}
	require.Equal(t, n, h.ns.acache.kidNames)
}
