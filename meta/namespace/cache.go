package namespace

import (
	"sync"
	"sync/atomic"

	"github.com/strato-io/strato/proto/strato/v1"
)

// dirCache maps (parent ID, name) to a directory's object ID for Reader's
// path resolution, and bucket names to bucket records. It is bounded, and it cannot serve a stale entry:
//
//   - Only readers fill it, from the database, and only when no directory
//     entry has been removed since the last committed batch: Apply bumps gen
//     (and drops the entry) whenever it removes or moves a directory entry,
//     Committed publishes gen once the batch is in the database, and a reader
//     inserts what it read only if gen equalled the published value before
//     its read and has not moved since. A server that never calls Committed
//     after a removal just stops filling the cache.
//   - Entries are never updated in place: a directory entry's (parent, name)
//     names one object until Apply removes it.
type dirCache struct {
	gen       atomic.Uint64 // bumped by every removal
	committed atomic.Uint64 // gen when the last batch was committed
	shards    [dirCacheShards]dirShard
	perShard  int64 // each shard's bound, about, in bytes

	// Buckets by "volume\x00bucket", same rules; read-only records,
	// bucketBytes of them about, at most maxBucketBytes.
	bmu                         sync.Mutex
	buckets                     map[string]*stratov1.BucketRecord
	bucketBytes, maxBucketBytes int64
}

const dirCacheShards = 32

type dirKey struct {
	parent uint64
	name   string
}

type dirShard struct {
	mu    sync.Mutex
	m     map[dirKey]uint64
	bytes int64 // about what m holds
}

// newDirCache makes a readers' cache of at most about maxBytes: 1/8 for
// bucket records, the rest for directory entries over the shards.
func newDirCache(maxBytes int64) *dirCache {
	c := &dirCache{perShard: max(maxBytes*7/8/dirCacheShards, 1), maxBucketBytes: maxBytes / 8,
		buckets: make(map[string]*stratov1.BucketRecord)}
	for i := range c.shards {
		c.shards[i].m = make(map[dirKey]uint64)
	}
	return c
}

func (c *dirCache) shard(parent uint64, name string) *dirShard {
	h := parent * 0x9e3779b97f4a7c15
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 0x100000001b3
	}
	return &c.shards[h%dirCacheShards]
}

func (c *dirCache) get(parent uint64, name string) (uint64, bool) {
	s := c.shard(parent, name)
	s.mu.Lock()
	id, ok := s.m[dirKey{parent, name}]
	s.mu.Unlock()
	return id, ok
}

// token is taken before a database read; fill inserts only if it is still
// valid afterwards.
func (c *dirCache) token() (gen uint64, ok bool) {
	g := c.gen.Load()
	return g, g == c.committed.Load()
}

func (c *dirCache) fill(parent uint64, name string, id uint64, gen uint64) {
	s := c.shard(parent, name)
	s.mu.Lock()
	if c.gen.Load() == gen {
		if _, ok := s.m[dirKey{parent, name}]; !ok {
			cost := dirEntryCost(name)
			for k := range s.m { // map order is random: evict at random until it fits
				if s.bytes+cost <= c.perShard {
					break
				}
				delete(s.m, k)
				s.bytes -= dirEntryCost(k.name)
			}
			if s.bytes+cost <= c.perShard {
				s.m[dirKey{parent, string([]byte(name))}] = id
				s.bytes += cost
			}
		}
	}
	s.mu.Unlock()
}

// remove is called by Apply for every directory entry it deletes or moves.
func (c *dirCache) remove(parent uint64, name string) {
	s := c.shard(parent, name)
	s.mu.Lock()
	c.gen.Add(1)
	if _, ok := s.m[dirKey{parent, name}]; ok {
		delete(s.m, dirKey{parent, name})
		s.bytes -= dirEntryCost(name)
	}
	s.mu.Unlock()
}

func bucketCacheKey(volume, bucket string) string { return volume + "\x00" + bucket }

func (c *dirCache) getBucket(volume, bucket string) *stratov1.BucketRecord {
	c.bmu.Lock()
	bk := c.buckets[volume+"\x00"+bucket]
	c.bmu.Unlock()
	return bk
}

func (c *dirCache) fillBucket(bk *stratov1.BucketRecord, gen uint64) {
	c.bmu.Lock()
	if c.gen.Load() == gen {
		key := bucketCacheKey(bk.Volume, bk.Name)
		c.dropBucketLocked(key)
		cost := bucketCost(key, bk)
		if c.bucketBytes+cost > c.maxBucketBytes {
			clear(c.buckets)
			c.bucketBytes = 0
		}
		c.buckets[key] = bk
		c.bucketBytes += cost
	}
	c.bmu.Unlock()
}

// removeBucket is called by Apply for every bucket it changes or deletes.
func (c *dirCache) removeBucket(volume, bucket string) {
	c.bmu.Lock()
	c.gen.Add(1)
	c.dropBucketLocked(bucketCacheKey(volume, bucket))
	c.bmu.Unlock()
}

func (c *dirCache) dropBucketLocked(key string) {
	if bk, ok := c.buckets[key]; ok {
		c.bucketBytes -= bucketCost(key, bk)
		delete(c.buckets, key)
	}
}

// bytes is about what the cache holds.
func (c *dirCache) bytes() int64 {
	c.bmu.Lock()
	n := c.bucketBytes
	c.bmu.Unlock()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		n += s.bytes
		s.mu.Unlock()
	}
	return n
}

func (c *dirCache) publish() { c.committed.Store(c.gen.Load()) }

func (c *dirCache) reset() {
	c.bmu.Lock()
	c.gen.Add(1)
	clear(c.buckets)
	c.bucketBytes = 0
	c.bmu.Unlock()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		c.gen.Add(1)
		clear(s.m)
		s.bytes = 0
		s.mu.Unlock()
	}
}

// Committed tells the namespace that every batch Apply has written so far is
// committed to the database. Call it after each batch commit, before the
// next Apply; it lets readers cache directory entries again after a rename
// or delete of a directory.
func (ns *Namespace) Committed() {
	if ns.cache != nil {
		ns.cache.publish()
	}
	if ns.acache != nil {
		ns.applyBytes.Store(ns.acache.Bytes())
	}
}

// ResetCache drops every cached entry; call it when the database is replaced
// under the namespace (a snapshot installed) or when a batch Apply wrote to
// is dropped instead of committed. Readers fill their cache again after the
// next Committed. It must not run concurrently with Apply.
func (ns *Namespace) ResetCache() {
	if ns.cache != nil {
		ns.cache.reset()
	}
	if ns.acache != nil {
		ns.acache.reset()
	}
}
