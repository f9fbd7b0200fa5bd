// Apply's background cleanup: expiring open keys, reclaiming the subtrees
// of deleted directories, purging deleted-block entries the datanodes are
// done with.

package namespace

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func (a *applier) expireOpenKeys(c *stratov1.ExpireOpenKeysCommand) (proto.Message, error) {
	res := &stratov1.ExpireOpenKeysResult{}
	for _, id := range c.GetOpenIds() {
		rec := &stratov1.OpenKeyInfo{}
		ok, err := get(a.b, idKey(a.kb, tagOpen, id), rec)
		if err != nil {
			return nil, err
		}
		if !ok || rec.ExpiresAtUnixMs > a.now {
			continue // committed, already expired, or not yet due
		}
		blocks, err := a.unpublished(rec)
		if err != nil {
			return nil, err
		}
		if err := a.freeBlocks(rec.Id, blocks, "expired"); err != nil {
			return nil, err
		}
		if err := a.deleteOpenKey(rec); err != nil {
			return nil, err
		}
		res.Expired = append(res.Expired, id)
	}
	return res, nil
}

// discardBlocks frees the blocks of deferred writes never committed (the
// leader's sweep; meta/deferredwrite.go): it proposes only blocks whose
// token nobody took, so no key holds them.
func (a *applier) discardBlocks(c *stratov1.DiscardBlocksCommand) (proto.Message, error) {
	if err := checkAllocated(c.GetBlocks()); err != nil {
		return nil, err
	}
	if err := a.freeBlocks(0, c.GetBlocks(), "abandoned write"); err != nil {
		return nil, err
	}
	return &stratov1.DiscardBlocksResult{Discarded: int32(len(c.GetBlocks()))}, nil
}

// PrepareDiscard returns a command freeing blocks of abandoned deferred
// writes.
func (ns *Namespace) PrepareDiscard(now time.Time, blocks []*stratov1.BlockRecord) *stratov1.NamespaceCommand {
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.NamespaceCommand_DiscardBlocks{
		DiscardBlocks: &stratov1.DiscardBlocksCommand{Blocks: blocks}}}
}

// unpublished returns the blocks of an open key that no committed key
// references: all of them, unless an hsync published some under the open
// key's ID and that key is still there.
func (a *applier) unpublished(rec *stratov1.OpenKeyInfo) ([]*stratov1.BlockRecord, error) {
	if !rec.Hsynced {
		return rec.Blocks, nil
	}
	tag := byte(tagKey)
	if rec.Layout == stratov1.BucketLayout_LAYOUT_FSO {
		tag = tagFile
	}
	ki := &stratov1.KeyRecord{}
	ok, err := get(a.b, childKey(a.kb2, tag, rec.ParentId, rec.FileName), ki)
	if err != nil {
		return nil, err
	}
	if (!ok || ki.ObjectId != objectOf(rec)) && tag == tagKey {
		// Replaced on a versioned bucket: the published version may be
		// a noncurrent one, which holds its blocks.
		ok = false
		err = eachVersion(a.b, rec.BucketId, rec.FileName, func(_ []byte, r *stratov1.KeyRecord) bool {
			if r.ObjectId == objectOf(rec) && !r.DeleteMarker {
				ki, ok = r, true
			}
			return !ok
		})
	}
	if err != nil || !ok || ki.ObjectId != objectOf(rec) {
		return rec.Blocks, err
	}
	published := make(map[[2]uint64]bool, len(ki.Blocks))
	for _, bl := range ki.Blocks {
		published[blockKey(bl.BlockId)] = true
	}
	out := make([]*stratov1.BlockRecord, 0, len(rec.Blocks))
	for _, bl := range rec.Blocks {
		if !published[blockKey(bl.BlockId)] {
			out = append(out, bl)
		}
	}
	return out, nil
}

func (a *applier) reclaim(c *stratov1.ReclaimCommand) (proto.Message, error) {
	if c.GetLimit() <= 0 {
		return nil, fmt.Errorf("%w: reclaim limit %d must be positive", ErrInvalid, c.GetLimit())
	}
	res := &stratov1.ReclaimResult{}
	budget := int(c.GetLimit())
	for budget > 0 {
		dd := &stratov1.DeletedDirectory{}
		found, err := a.firstDeletedDir(dd)
		if err != nil || !found {
			if err != nil {
				return nil, err
			}
			break
		}
		children, err := a.reclaimChildren(dd.ObjectId, budget)
		if err != nil {
			return nil, err
		}
		if len(children) == 0 {
			if err := a.b.Delete(idKey(a.kb, tagDeletedDir, dd.ObjectId), nil); err != nil {
				return nil, err
			}
			budget--
			continue
		}
		st, err := a.snaps(dd.BucketId)
		if err != nil {
			return nil, err
		}
		for _, ch := range children {
			name := string(ch.key[10:])
			if err := a.b.Delete(ch.key, nil); err != nil {
				return nil, err
			}
			if ch.dir {
				cid, err := dirObjectID(ch.value)
				if err != nil {
					return nil, err
				}
				if st.journaled(dd.SnapshotGen) {
					d := &stratov1.DirectoryInfo{}
					if err := proto.Unmarshal(ch.value, d); err != nil {
						return nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, ch.key, err)
					}
					if err := a.retireDir(dd.BucketId, st, dd.ObjectId, name, d, dd.SnapshotGen, false); err != nil {
						return nil, err
					}
				}
				if err := a.b.Delete(idKey(a.kb, tagDirByID, cid), nil); err != nil {
					return nil, err
				}
				a.forgetDir(dd.ObjectId, name, cid)
				sub := &stratov1.DeletedDirectory{ObjectId: cid, BucketId: dd.BucketId, VolumeId: dd.VolumeId,
					DeletedAtUnixMs: a.now, Path: dd.Path + "/" + name, SnapshotGen: dd.SnapshotGen}
				if err := put(a.b, idKey(a.kb, tagDeletedDir, cid), sub); err != nil {
					return nil, err
				}
				if err := a.release(dd.BucketId, dd.VolumeId, 0, 1); err != nil {
					return nil, err
				}
				res.Directories++
			} else {
				ki := &stratov1.KeyRecord{}
				if err := proto.Unmarshal(ch.value, ki); err != nil {
					return nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, ch.key, err)
				}
				kept, err := a.retire(dd.BucketId, st, ch.key, ch.value, ki.SnapshotGen, dd.SnapshotGen, false)
				if err != nil {
					return nil, err
				}
				freed, err := a.releaseOf(st, ki, kept)
				if err != nil {
					return nil, err
				}
				if !kept {
					if err := a.unref(st, ki, "reclaim"); err != nil {
						return nil, err
					}
				}
				if err := a.release(dd.BucketId, dd.VolumeId, freed, 1); err != nil {
					return nil, err
				}
				res.Files++
			}
			budget--
		}
		if c := a.ns.acache; c != nil {
			c.noteReclaimed(dd.ObjectId, children[len(children)-1].key)
		}
	}
	more, err := a.firstDeletedDir(nil)
	if err != nil {
		return nil, err
	}
	res.More = more
	return res, nil
}

// firstDeletedDir reads the first entry of the deleted-directories table
// into dd (if not nil), from the apply cache's floor when it has one.
func (a *applier) firstDeletedDir(dd *stratov1.DeletedDirectory) (bool, error) {
	prefix := tableKey(nil, tagDeletedDir)
	c := a.ns.acache
	var floor []byte
	if c != nil {
		floor = c.ddFloor
	}
	var m proto.Message
	if dd != nil {
		m = dd
	}
	found, key, err := firstEntry(a.b, prefix, floor, m)
	if err != nil || c == nil {
		return found, err
	}
	if floor != nil && c.verify {
		all, allKey, err := firstEntry(a.b, prefix, nil, nil)
		if err != nil || all != found || !bytes.Equal(allKey, key) {
			panic(fmt.Sprintf("namespace: apply cache's deleted-directory floor %q gives %v %q, the table %v %q %v", floor, found, key, all, allKey, err))
		}
	}
	if !found {
		key = prefixEnd(prefix)
	}
	c.ddFloor = append(c.ddFloor[:0], key...)
	return found, nil
}

// reclaimChildren is collectChildren for reclaim: it starts after the last
// entry reclaim removed from deleted directory id, when the apply cache
// knows it, rather than at the tombstones of those already removed.
func (a *applier) reclaimChildren(id uint64, limit int) ([]entry, error) {
	c := a.ns.acache
	var after []byte
	if c != nil {
		after = c.reclaimed[id]
	}
	out, err := collectChildren(a.b, id, limit, after)
	if err == nil && after != nil && c.verify {
		all, err := collectChildren(a.b, id, limit, nil)
		if err != nil || len(all) != len(out) || (len(all) > 0 && !bytes.Equal(all[0].key, out[0].key)) {
			panic(fmt.Sprintf("namespace: apply cache's reclaim cursor %q for directory %d disagrees with the table (%d against %d entries, %v)", after, id, len(out), len(all), err))
		}
	}
	return out, err
}

type entry struct {
	key, value []byte
	dir        bool
}

// collectChildren copies up to limit entries of directory id, in key
// order: directories first, then files; only those after key after, if it
// is not nil.
func collectChildren(r pebble.Reader, id uint64, limit int, after []byte) ([]entry, error) {
	var out []entry
	for _, tag := range []byte{tagDir, tagFile} {
		p := idKey(nil, tag, id)
		lower, upper := p, prefixEnd(p)
		if after != nil && bytes.Compare(after, lower) >= 0 {
			if bytes.Compare(after, upper) >= 0 {
				continue
			}
			lower = append(slices.Clip(after), 0)
		}
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
		if err != nil {
			return nil, err
		}
		for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
			out = append(out, entry{key: append([]byte(nil), it.Key()...), value: append([]byte(nil), it.Value()...), dir: tag == tagDir})
		}
		if err := it.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// firstValue decodes the first record under prefix into m (if m is not nil).
func firstValue(r pebble.Reader, prefix []byte, m proto.Message) (bool, error) {
	found, _, err := firstEntry(r, prefix, nil, m)
	return found, err
}

// firstEntry returns the first key under prefix, at or after from if from
// is not nil, and decodes its record into m (if m is not nil).
func firstEntry(r pebble.Reader, prefix, from []byte, m proto.Message) (bool, []byte, error) {
	lower := prefix
	if from != nil && bytes.Compare(from, prefix) > 0 {
		lower = from
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return false, nil, err
	}
	found := it.First()
	var key []byte
	if found {
		key = slices.Clone(it.Key())
		if m != nil {
			if err := proto.Unmarshal(it.Value(), m); err != nil {
				_ = it.Close()
				return false, nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, it.Key(), err)
			}
		}
	}
	return found, key, it.Close()
}

func (a *applier) purgeDeletedBlocks(c *stratov1.PurgeDeletedBlocksCommand) (proto.Message, error) {
	res := &stratov1.PurgeDeletedBlocksResult{}
	for _, seq := range c.GetSeqs() {
		key := idKey(a.kb, tagDeleted, seq)
		ok, err := exists(a.b, key)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := a.b.Delete(key, nil); err != nil {
				return nil, err
			}
			res.Purged++
		}
	}
	return res, nil
}
