package namespace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// applyCache spares Apply the point lookups it repeats most: the directories
// on the path of every create (parent ID, name → directory ID) and the
// liveness of the directory a file is committed into. It is private to the
// apply goroutine (no locks) and mirrors the applied state exactly:
//
//   - it is filled only from what Apply reads from its batch, which holds
//     every command applied so far (each batch is committed before the next
//     one is created), and Apply reads before it writes;
//   - Apply drops an entry whenever it removes or moves that directory
//     entry or deletes that directory;
//   - entries are never updated in place, only dropped, so a hit is what the
//     batch would have returned, and Apply stays deterministic.
//
// A batch that is not committed (the server stops) or a database replaced
// under the namespace (snapshot) requires ResetCache.
type applyCache struct {
	// Each map has a share of the cache's bound in bytes (newApplyCache):
	// a fill past its share empties that map first. The costs are about
	// what an entry takes in memory (key, value and map overhead).
	dirsB, aliveB, bucketsB, kidsB, crowdedB, reclaimedB, valsB share
	dirs                                                        map[dirKey]uint64
	alive                                                       map[uint64]struct{}
	// buckets: bucket records by their key (volume, name); a hit is
	// cloned, since callers change the record they load.
	buckets map[string]*stratov1.BucketRecord
	// kids holds the directories whose every entry Apply knows: those it
	// created since the cache was last emptied (a new directory has no
	// entries), and small ones whose entries it read (knowKids), each with
	// the names in its directory table (kidDir) and file table (kidFile). A
	// name missing there is missing from the tables, which spares each
	// create, rename or delete its lookups of names that do not exist.
	// trackedBatch keeps it in step with every write; kidNames counts the
	// names it holds.
	kids     map[uint64]map[string]uint8
	kidNames int // the names kids holds
	// crowded holds directories knowKids found with more than kidsFillMax
	// entries in a table: it does not read them again.
	crowded map[uint64]struct{}
	// ddFloor, when set, is a key of the deleted-directories table with no
	// live key below it, and reclaimed[id] the last entry reclaim removed
	// from deleted directory id (a deleted directory gets no new entries):
	// reclaim's scans start there rather than at the first of the
	// tombstones that its own deletes leave behind.
	ddFloor   []byte
	reclaimed map[uint64][]byte
	// vals holds records Apply reads for most mutations, by key: usage
	// records, the ID counter, directory records and their ID index
	// (applier.getCached). It is written through: trackedBatch replaces a
	// cached value on each Set of its key and drops it on a delete, so a hit
	// is what the batch holds even for the records rewritten by every create.
	vals map[string][]byte
	// snaps holds buckets' snapshot states (snapshot.go), the zero state
	// for a bucket without one: every change of a bucket reads it. A write
	// of a state drops its entry.
	snaps map[uint64]snapState
	// snapBytes is what snaps holds, about; snapMax its bound
	// (Options.SnapshotCacheBytes).
	snapBytes, snapMax int64
	// verify makes every hit also read the batch and panic on a mismatch
	// (tests).
	verify bool
}

// newApplyCache makes an apply cache of at most about maxBytes: the
// record of complete directories gets 3/8 of it, the directory entries
// and the values 1/4 each, the rest 1/32 each.
func newApplyCache(maxBytes int64) *applyCache {
	return &applyCache{
		kidsB: share{max: maxBytes * 3 / 8}, dirsB: share{max: maxBytes / 4}, valsB: share{max: maxBytes / 4},
		aliveB: share{max: maxBytes / 32}, bucketsB: share{max: maxBytes / 32}, crowdedB: share{max: maxBytes / 32},
		reclaimedB: share{max: maxBytes / 32},
		dirs:       make(map[dirKey]uint64), alive: make(map[uint64]struct{}),
		buckets: make(map[string]*stratov1.BucketRecord), kids: make(map[uint64]map[string]uint8), crowded: make(map[uint64]struct{}),
		reclaimed: make(map[uint64][]byte), vals: make(map[string][]byte)}
}

// share is one map's part of the apply cache's bound: about the bytes it
// holds, and how many it may.
type share struct{ bytes, max int64 }

// room reports whether cost more bytes fit; if not, the caller empties
// the map (and the share: reset).
func (s *share) room(cost int64) bool { return s.bytes+cost <= s.max }

func (s *share) reset() { s.bytes = 0 }

// take makes room for an entry of cost: emptyFirst says the caller must
// empty the map first (the share is reset), ok that the entry goes in (the
// share counts it); an entry larger than the whole share never does.
func (s *share) take(cost int64) (emptyFirst, ok bool) {
	if emptyFirst = !s.room(cost); emptyFirst {
		s.reset()
	}
	if cost > s.max {
		return emptyFirst, false
	}
	s.bytes += cost
	return emptyFirst, true
}

// Entry costs, about: a map entry's overhead plus its key and value.
const (
	mapEntryCost = 48
	kidNameCost  = 24 // a name of a directory in kids, plus its length
)

func dirEntryCost(name string) int64 { return mapEntryCost + int64(len(name)) }
func valCost(key string, v []byte) int64 {
	return mapEntryCost + int64(len(key)) + int64(len(v))
}

// Bytes is about what the cache holds, in all.
func (c *applyCache) Bytes() int64 {
	return c.dirsB.bytes + c.aliveB.bytes + c.bucketsB.bytes + c.kidsB.bytes + c.crowdedB.bytes + c.reclaimedB.bytes +
		c.valsB.bytes + c.snapBytes
}

// Bits of applyCache.kids: which tables hold a name.
const (
	kidDir  uint8 = 1
	kidFile uint8 = 2
)

func kidBit(tag byte) uint8 {
	switch tag {
	case tagDir:
		return kidDir
	case tagFile:
		return kidFile
	}
	return 0
}

// markEmpty records that directory id, just created, has no entries.
func (c *applyCache) markEmpty(id uint64) {
	c.dropDirKids(id)
	empty, ok := c.kidsB.take(mapEntryCost)
	if empty {
		clear(c.kids) // the share is reset already
		c.kidNames = 0
	}
	if ok {
		c.kids[id] = make(map[string]uint8)
	}
}

func (c *applyCache) dropKids() {
	clear(c.kids)
	c.kidNames = 0
	c.kidsB.reset()
}

// kidsCost is about what directory names of kids takes.
func kidsCost(names map[string]uint8) int64 {
	cost := int64(mapEntryCost)
	for name := range names {
		cost += kidNameCost + int64(len(name))
	}
	return cost
}

// dropDirKids forgets directory parent's names.
func (c *applyCache) dropDirKids(parent uint64) {
	names, ok := c.kids[parent]
	if !ok {
		return
	}
	c.kidNames -= len(names)
	c.kidsB.bytes -= kidsCost(names)
	delete(c.kids, parent)
}

// kidsFillMax bounds the entries of each table that knowKids reads to learn
// a directory's names; a directory with more stays unknown.
const kidsFillMax = 32

// knowKids makes sure the cache knows every name of directory parent
// (applyCache.kids), reading its entries if it does not and they are few:
// the renames, deletes and creates in a directory this process did not
// make then look up the names that do not exist there (an src that is not
// a directory, a free target) in memory, at the cost of one short scan per
// directory instead of a point lookup per name. It reports whether the
// names are known.
func (rs *resolver) knowKids(c *applyCache, parent uint64) (bool, error) {
	if _, ok := c.kids[parent]; ok {
		return true, nil
	}
	if _, ok := c.crowded[parent]; ok {
		return false, nil
	}
	names := map[string]uint8{}
	for _, tag := range [...]byte{tagDir, tagFile} {
		lo := idKey(nil, tag, parent)
		it, err := rs.r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
		if err != nil {
			return false, err
		}
		n := 0
		for ok := it.First(); ok && n <= kidsFillMax; ok = it.Next() {
			n++
			name := string(it.Key()[len(lo):])
			names[name] |= kidBit(tag)
			if tag == tagDir {
				if id, err := dirObjectID(it.Value()); err == nil {
					c.fillDir(parent, name, id)
				}
			}
		}
		if err := it.Close(); err != nil {
			return false, err
		}
		if n > kidsFillMax {
			empty, ok := c.crowdedB.take(mapEntryCost)
			if empty {
				clear(c.crowded)
			}
			if ok {
				c.crowded[parent] = struct{}{}
			}
			return false, nil
		}
	}
	empty, ok := c.kidsB.take(kidsCost(names))
	if empty {
		clear(c.kids) // the share is reset already
		c.kidNames = 0
	}
	if !ok {
		return false, nil
	}
	c.kids[parent] = names
	c.kidNames += len(names)
	return true, nil
}

// absent reports whether the cache knows that directory parent has no
// entry name in the table of tag (tagDir or tagFile). False means unknown.
func (c *applyCache) absent(tag byte, parent uint64, name string) bool {
	names, ok := c.kids[parent]
	return ok && names[name]&kidBit(tag) == 0
}

// noteWrite follows one write to the batch (a set, or a delete) into kids.
func (c *applyCache) noteWrite(key []byte, set bool) {
	if len(key) < 10 || key[0] != prefix {
		return
	}
	parent := binary.BigEndian.Uint64(key[2:10])
	if key[1] == tagSnapState {
		c.forgetSnaps(parent) // read again next time
		return
	}
	if key[1] == tagDeletedDir {
		if set && c.ddFloor != nil && bytes.Compare(key, c.ddFloor) < 0 {
			c.ddFloor = append(c.ddFloor[:0], key...)
		}
		if !set {
			c.forgetReclaimed(parent)
		}
		return
	}
	if set && (key[1] == tagDir || key[1] == tagFile) {
		if after, ok := c.reclaimed[parent]; ok && bytes.Compare(key, after) <= 0 {
			c.forgetReclaimed(parent)
		}
	}
	if key[1] == tagDirByID && !set {
		// A deleted directory: its entries no longer matter.
		c.dropDirKids(parent)
		return
	}
	bit := kidBit(key[1])
	if bit == 0 {
		return
	}
	names, ok := c.kids[parent]
	if !ok {
		return
	}
	old := names[string(key[10:])]
	cost := kidNameCost + int64(len(key)-10)
	switch {
	case set && old&bit == 0:
		if old == 0 {
			if !c.kidsB.room(cost) {
				c.dropKids()
				return
			}
			c.kidNames++
			c.kidsB.bytes += cost
		}
		names[string(key[10:])] = old | bit
	case !set && old == bit:
		delete(names, string(key[10:]))
		c.kidNames--
		c.kidsB.bytes -= cost
	case !set && old&bit != 0:
		names[string(key[10:])] = old &^ bit
	}
}

// trackedBatch is the batch Apply writes through: each write also goes to
// the apply cache's record of complete directories (applyCache.kids), so
// that no operation has to remember to keep it up to date. Writes it
// cannot follow (a range delete, a merge, a whole batch) empty the cache.
type trackedBatch struct {
	*pebble.Batch
	c *applyCache
}

// note follows one write to the batch (a set of value, or a delete) into
// the cache: the record of complete directories, and the cached values.
func (t trackedBatch) note(key, value []byte, set bool) {
	if t.c == nil {
		return
	}
	t.c.noteWrite(key, set)
	old, ok := t.c.vals[string(key)]
	if !ok {
		return
	}
	t.c.valsB.bytes -= valCost(string(key), old)
	if !set {
		delete(t.c.vals, string(key))
		return
	}
	if !t.c.valsB.room(valCost(string(key), value)) {
		delete(t.c.vals, string(key)) // too much for the share now: read again next time
		return
	}
	t.c.vals[string(key)] = bytes.Clone(value)
	t.c.valsB.bytes += valCost(string(key), value)
}

// untracked empties the cache before a write it cannot follow.
func (t trackedBatch) untracked() {
	if t.c != nil {
		t.c.reset()
	}
}

func (t trackedBatch) Set(key, value []byte, o *pebble.WriteOptions) error {
	t.note(key, value, true)
	return t.Batch.Set(key, value, o)
}

func (t trackedBatch) Delete(key []byte, o *pebble.WriteOptions) error {
	t.note(key, nil, false)
	return t.Batch.Delete(key, o)
}

func (t trackedBatch) DeleteSized(key []byte, size uint32, o *pebble.WriteOptions) error {
	t.note(key, nil, false)
	return t.Batch.DeleteSized(key, size, o)
}

func (t trackedBatch) SingleDelete(key []byte, o *pebble.WriteOptions) error {
	t.note(key, nil, false)
	return t.Batch.SingleDelete(key, o)
}

func (t trackedBatch) DeleteRange(start, end []byte, o *pebble.WriteOptions) error {
	t.untracked()
	return t.Batch.DeleteRange(start, end, o)
}

func (t trackedBatch) Merge(key, value []byte, o *pebble.WriteOptions) error {
	t.untracked()
	return t.Batch.Merge(key, value, o)
}

func (t trackedBatch) Apply(b *pebble.Batch, o *pebble.WriteOptions) error {
	t.untracked()
	return t.Batch.Apply(b, o)
}

func bucketCost(key string, bk *stratov1.BucketRecord) int64 {
	return mapEntryCost + int64(len(key)) + 2*int64(proto.Size(bk))
}

func (c *applyCache) fillBucket(key []byte, bk *stratov1.BucketRecord) {
	c.dropBucket(string(key))
	empty, ok := c.bucketsB.take(bucketCost(string(key), bk))
	if empty {
		clear(c.buckets)
	}
	if ok {
		c.buckets[string(key)] = proto.Clone(bk).(*stratov1.BucketRecord)
	}
}

// dropBucket forgets the bucket record of key.
func (c *applyCache) dropBucket(key string) {
	if bk, ok := c.buckets[key]; ok {
		c.bucketsB.bytes -= bucketCost(key, bk)
		delete(c.buckets, key)
	}
}

func (c *applyCache) fillDir(parent uint64, name string, id uint64) {
	c.dropDir(parent, name)
	empty, ok := c.dirsB.take(dirEntryCost(name))
	if empty {
		clear(c.dirs)
	}
	if ok {
		c.dirs[dirKey{parent, name}] = id
	}
}

// dropDir forgets directory entry (parent, name).
func (c *applyCache) dropDir(parent uint64, name string) {
	if _, ok := c.dirs[dirKey{parent, name}]; ok {
		c.dirsB.bytes -= dirEntryCost(name)
		delete(c.dirs, dirKey{parent, name})
	}
}

func (c *applyCache) fillAlive(id uint64) {
	if _, ok := c.alive[id]; ok {
		return
	}
	empty, ok := c.aliveB.take(mapEntryCost)
	if empty {
		clear(c.alive)
	}
	if ok {
		c.alive[id] = struct{}{}
	}
}

// dropAlive forgets that directory id is alive.
func (c *applyCache) dropAlive(id uint64) {
	if _, ok := c.alive[id]; ok {
		c.aliveB.bytes -= mapEntryCost
		delete(c.alive, id)
	}
}

func (c *applyCache) reset() {
	clear(c.dirs)
	clear(c.alive)
	clear(c.buckets)
	c.dropKids()
	clear(c.crowded)
	c.ddFloor = nil
	clear(c.reclaimed)
	clear(c.vals)
	clear(c.snaps)
	c.snapBytes = 0
	for _, s := range []*share{&c.dirsB, &c.aliveB, &c.bucketsB, &c.crowdedB, &c.reclaimedB, &c.valsB} {
		s.reset()
	}
}

// snapCost is about what a snapshot state takes in the cache.
func snapCost(st snapState) int64 { return 48 + 8*int64(len(st.ids)) }

// keepSnaps caches bucket id's snapshot state, emptying the cache first
// when it would pass its bound.
func (c *applyCache) keepSnaps(id uint64, st snapState) {
	cost := snapCost(st)
	if cost > c.snapMax {
		return
	}
	if c.snaps == nil || c.snapBytes+cost > c.snapMax {
		c.snaps, c.snapBytes = make(map[uint64]snapState), 0
	}
	c.snaps[id] = st
	c.snapBytes += cost
}

func (c *applyCache) forgetSnaps(id uint64) {
	if st, ok := c.snaps[id]; ok {
		c.snapBytes -= snapCost(st)
		delete(c.snaps, id)
	}
}

// getCached reads key through the apply cache's values (applyCache.vals):
// its value, or found false when the key does not exist. The value is
// the cache's: the caller must not change or keep it.
func (a *applier) getCached(key []byte) (v []byte, found bool, err error) {
	c := a.ns.acache
	if c != nil {
		if v, ok := c.vals[string(key)]; ok {
			if c.verify {
				got, closer, err := a.b.Get(key)
				if err != nil || !bytes.Equal(got, v) {
					panic(fmt.Sprintf("namespace: apply cache has %q = %x, batch says %x %v", key, v, got, err))
				}
				closer.Close()
			}
			return v, true, nil
		}
	}
	got, closer, err := a.b.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	v = bytes.Clone(got)
	closer.Close()
	if c != nil {
		empty, ok := c.valsB.take(valCost(string(key), v))
		if empty {
			clear(c.vals)
		}
		if ok {
			c.vals[string(key)] = v
		}
	}
	return v, true, nil
}

// noteReclaimed records that reclaim removed deleted directory id's entries
// up to key.
func (c *applyCache) noteReclaimed(id uint64, key []byte) {
	c.forgetReclaimed(id)
	empty, ok := c.reclaimedB.take(mapEntryCost + int64(len(key)))
	if empty {
		clear(c.reclaimed)
	}
	if ok {
		c.reclaimed[id] = bytes.Clone(key)
	}
}

// forgetReclaimed drops what noteReclaimed recorded of directory id.
func (c *applyCache) forgetReclaimed(id uint64) {
	if k, ok := c.reclaimed[id]; ok {
		c.reclaimedB.bytes -= mapEntryCost + int64(len(k))
		delete(c.reclaimed, id)
	}
}

// dirAlive reports whether directory id exists (its N i entry).
func (a *applier) dirAlive(id uint64) (bool, error) {
	c := a.ns.acache
	if c != nil {
		if _, ok := c.alive[id]; ok {
			if c.verify {
				if ok, err := exists(a.b, idKey(a.kb, tagDirByID, id)); err != nil || !ok {
					panic(fmt.Sprintf("namespace: apply cache says directory %d is alive, batch says %v %v", id, ok, err))
				}
			}
			return true, nil
		}
	}
	ok, err := exists(a.b, idKey(a.kb, tagDirByID, id))
	if ok && c != nil {
		c.fillAlive(id)
	}
	return ok, err
}

// forgetDir drops what Apply's and the readers' caches know of directory
// entry (parent, name) of directory id.
func (a *applier) forgetDir(parent uint64, name string, id uint64) {
	if c := a.ns.acache; c != nil {
		c.dropDir(parent, name)
		c.dropAlive(id)
	}
	if a.ns.cache != nil {
		a.ns.cache.remove(parent, name)
	}
}

// lookupDirApply is lookupDir for Apply, through the apply cache.
func (rs *resolver) lookupDirApply(c *applyCache, parent uint64, name string) (uint64, bool, error) {
	if id, ok := c.dirs[dirKey{parent, name}]; ok {
		if c.verify {
			rs.buf = childKey(rs.buf, tagDir, parent, name)
			v, closer, err := rs.r.Get(rs.buf)
			if err != nil {
				panic(fmt.Sprintf("namespace: apply cache has directory %d/%s, batch says %v", parent, name, err))
			}
			got, err := dirObjectID(v)
			closer.Close()
			if err != nil || got != id {
				panic(fmt.Sprintf("namespace: apply cache has directory %d/%s = %d, batch says %d %v", parent, name, id, got, err))
			}
		}
		return id, true, nil
	}
	if c.absent(tagDir, parent, name) {
		if c.verify {
			rs.verifyAbsent(tagDir, parent, name)
		}
		return 0, false, nil
	}
	if known, err := rs.knowKids(c, parent); err != nil {
		return 0, false, err
	} else if known {
		if _, ok := c.dirs[dirKey{parent, name}]; ok || c.absent(tagDir, parent, name) {
			return rs.lookupDirApply(c, parent, name) // answered from the cache now
		}
	}
	rs.buf = childKey(rs.buf, tagDir, parent, name)
	v, closer, err := rs.r.Get(rs.buf)
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return 0, false, nil
		}
		return 0, false, err
	}
	id, err := dirObjectID(v)
	closer.Close()
	if err != nil {
		return 0, false, err
	}
	c.fillDir(parent, strings.Clone(name), id)
	return id, true, nil
}

// verifyAbsent panics unless the batch agrees that (parent, name) is not in
// the table of tag (verify mode).
func (rs *resolver) verifyAbsent(tag byte, parent uint64, name string) {
	ok, err := exists(rs.r, childKey(nil, tag, parent, name))
	if err != nil || ok {
		panic(fmt.Sprintf("namespace: apply cache says %d/%s is not in table %c, batch says %v %v", parent, name, tag, ok, err))
	}
}
