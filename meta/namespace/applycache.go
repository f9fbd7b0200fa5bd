package namespace

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/stratopb"
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
	max   int
	dirs  map[dirKey]uint64
	alive map[uint64]struct{}
	// buckets: bucket records by their key (volume, name); a hit is
	// cloned, since callers change the record they load.
	buckets map[string]*stratopb.BucketInfo
	// verify makes every hit also read the batch and panic on a mismatch
	// (tests).
	verify bool
}

func newApplyCache(entries int) *applyCache {
	return &applyCache{max: entries, dirs: make(map[dirKey]uint64), alive: make(map[uint64]struct{}),
		buckets: make(map[string]*stratopb.BucketInfo)}
}

func (c *applyCache) fillBucket(key []byte, bk *stratopb.BucketInfo) {
	if len(c.buckets) >= c.max {
		clear(c.buckets)
	}
	c.buckets[string(key)] = proto.Clone(bk).(*stratopb.BucketInfo)
}

func (c *applyCache) fillDir(parent uint64, name string, id uint64) {
	if len(c.dirs) >= c.max {
		clear(c.dirs)
	}
	c.dirs[dirKey{parent, name}] = id
}

func (c *applyCache) fillAlive(id uint64) {
	if len(c.alive) >= c.max {
		clear(c.alive)
	}
	c.alive[id] = struct{}{}
}

func (c *applyCache) reset() {
	clear(c.dirs)
	clear(c.alive)
	clear(c.buckets)
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
		delete(c.dirs, dirKey{parent, name})
		delete(c.alive, id)
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
