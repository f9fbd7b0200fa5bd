package namespace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Snapdiff (HDFS's SnapshotDiffReport): what changed in a bucket between
// two snapshots, or a snapshot and now. It reads the bucket's journal of
// changed records for the generations between them, so its cost follows
// what changed, not the bucket's size. Each changed object (a file, key or
// directory, by object ID) is compared as the two sides see it:
//
//   - on both sides, under another parent or name: RENAME (path, target);
//   - on both sides, in place, its record changed: MODIFY;
//   - only in from: DELETE, unless its parent is gone too (the ancestor's
//     DELETE says it);
//   - only in to: CREATE, unless its parent is new too (the ancestor's CREATE
//     says it).
//
// Changes of access times alone are not changes. Unlike HDFS, a directory
// is not reported MODIFY because its children changed.

// maxDiffPage is the most entries one SnapshotDiff page returns.
const maxDiffPage = 10000

// now is a view that sees every live record and no kept one.
func nowView(r pebble.Reader, bk *stratov1.BucketRecord) *snapView {
	return &snapView{r: r, bk: bk, id: math.MaxUint64}
}

// ListSnapshots lists a bucket's snapshots by name.
func (rd *Reader) ListSnapshots(req *stratov1.ListSnapshotsRequest) (*stratov1.ListSnapshotsResponse, error) {
	bk, _, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), "", RightList)
	if err != nil {
		return nil, err
	}
	recs, truncated, err := rd.snapshots(bk, req.GetStartAfter(), rd.limit(req.GetMaxResults()))
	if err != nil {
		return nil, err
	}
	res := &stratov1.ListSnapshotsResponse{Truncated: truncated}
	for _, r := range recs {
		res.Snapshots = append(res.Snapshots, snapshotInfo(r))
	}
	return res, nil
}

// GetSnapshot describes one snapshot.
func (rd *Reader) GetSnapshot(req *stratov1.GetSnapshotRequest) (*stratov1.SnapshotInfo, error) {
	bk, _, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), "", RightRead)
	if err != nil {
		return nil, err
	}
	rec := &stratov1.SnapshotRecord{}
	if found, err := get(rd.r, snapshotKey(nil, bk.Id, req.GetName()), rec); err != nil {
		return nil, err
	} else if !found {
		return nil, fmt.Errorf("%w: %s/%s@%s", ErrSnapshotNotFound, bk.Volume, bk.Name, req.GetName())
	}
	return snapshotInfo(rec), nil
}

// SnapshotDiff lists what changed from snapshot from to snapshot to (""
// : now), sorted by path, a page at a time.
func (rd *Reader) SnapshotDiff(req *stratov1.SnapshotDiffRequest) (*stratov1.SnapshotDiffResponse, error) {
	bk, from, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), req.GetFrom(), RightRead)
	if err != nil {
		return nil, err
	}
	if from == nil {
		return nil, fmt.Errorf("%w: SnapshotDiff needs the snapshot to compare from", ErrInvalid)
	}
	defer func() { _ = from.close() }() // a read's iterator: nothing to lose
	to := nowView(rd.r, bk)
	if req.GetTo() != "" {
		if to, err = rd.snapshotView(bk, req.GetTo()); err != nil {
			return nil, err
		}
	}
	defer func() { _ = to.close() }()
	if to.id < from.id {
		return nil, fmt.Errorf("%w: snapshot %s was taken before %s: compare the older with the newer", ErrInvalid, req.GetTo(), req.GetFrom())
	}
	start := 0
	if t := req.GetToken(); t != "" {
		if start, err = strconv.Atoi(t); err != nil || start < 0 {
			return nil, fmt.Errorf("%w: page token %q", ErrInvalid, t)
		}
	}
	entries, err := diff(rd.r, bk, from, to)
	if err != nil {
		return nil, err
	}
	limit := int(req.GetMaxResults())
	if limit <= 0 || limit > maxDiffPage {
		limit = maxDiffPage
	}
	res := &stratov1.SnapshotDiffResponse{}
	if start >= len(entries) {
		return res, nil
	}
	end := min(start+limit, len(entries))
	res.Entries = entries[start:end]
	if end < len(entries) {
		res.NextToken = strconv.Itoa(end)
	}
	return res, nil
}

// diffObject is one object's place and record on each side.
type diffObject struct {
	fromKey, toKey []byte
	fromRec, toRec proto.Message
	dir            bool
}

// diff computes the whole report, sorted by path.
func diff(r pebble.Reader, bk *stratov1.BucketRecord, from, to *snapView) ([]*stratov1.SnapshotDiffEntry, error) {
	keys, err := changedKeys(r, bk.Id, from.id, to.id)
	if err != nil {
		return nil, err
	}
	// In key order: each view's iterators move forward.
	slices.SortFunc(keys, bytes.Compare)
	objs := map[uint64]*diffObject{}
	obj := func(id uint64, dir bool) *diffObject {
		o := objs[id]
		if o == nil {
			o = &diffObject{dir: dir}
			objs[id] = o
		}
		return o
	}
	for _, key := range keys {
		if key[1] == tagDirByID {
			continue
		}
		dir := key[1] == tagDir
		for side, v := range []*snapView{from, to} {
			var m interface {
				proto.Message
				GetSnapshotGen() uint64
			}
			if dir {
				m = &stratov1.DirectoryInfo{}
			} else {
				m = &stratov1.KeyRecord{}
			}
			found, err := v.version(key, m)
			if err != nil {
				return nil, err
			}
			if !found {
				continue
			}
			// A record under a deleted directory not yet reclaimed is
			// not in the view.
			if ok, err := v.hasDir(parentOfKey(key)); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			o := obj(objectIDOf(m), dir)
			if side == 0 {
				o.fromKey, o.fromRec = key, m
			} else {
				o.toKey, o.toRec = key, m
			}
		}
	}
	var out []*stratov1.SnapshotDiffEntry
	for _, o := range objs {
		e, err := o.entry(from, to)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return diffRank[out[i].Type] < diffRank[out[j].Type]
	})
	return out, nil
}

// diffRank orders the entries of one path: what went before what came.
var diffRank = map[stratov1.SnapshotDiffType]int{
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_DELETE: 0,
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_RENAME: 1,
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_CREATE: 2,
	stratov1.SnapshotDiffType_SNAPSHOT_DIFF_MODIFY: 3,
}

// entry is the report's line for o, or nil.
func (o *diffObject) entry(from, to *snapView) (*stratov1.SnapshotDiffEntry, error) {
	e := &stratov1.SnapshotDiffEntry{Directory: o.dir}
	var err error
	switch {
	case o.fromKey != nil && o.toKey != nil:
		if string(o.fromKey) != string(o.toKey) {
			e.Type = stratov1.SnapshotDiffType_SNAPSHOT_DIFF_RENAME
			if e.Path, err = from.pathOf(o.fromKey); err != nil {
				return nil, err
			}
			e.Target, err = to.pathOf(o.toKey)
			return e, err
		}
		if sameVersion(o.fromRec, o.toRec) {
			return nil, nil
		}
		e.Type = stratov1.SnapshotDiffType_SNAPSHOT_DIFF_MODIFY
		e.Path, err = to.pathOf(o.toKey)
		return e, err
	case o.fromKey != nil:
		if ok, err := to.hasDir(parentOfKey(o.fromKey)); err != nil || !ok {
			return nil, err
		}
		e.Type = stratov1.SnapshotDiffType_SNAPSHOT_DIFF_DELETE
		e.Path, err = from.pathOf(o.fromKey)
		return e, err
	default:
		if ok, err := from.hasDir(parentOfKey(o.toKey)); err != nil || !ok {
			return nil, err
		}
		e.Type = stratov1.SnapshotDiffType_SNAPSHOT_DIFF_CREATE
		e.Path, err = to.pathOf(o.toKey)
		return e, err
	}
}

// sameVersion reports whether two versions of a record differ in nothing
// but the generations they were written and placed at and their access
// time.
func sameVersion(a, b proto.Message) bool {
	a, b = proto.Clone(a), proto.Clone(b)
	for _, m := range []proto.Message{a, b} {
		switch r := m.(type) {
		case *stratov1.KeyRecord:
			r.SnapshotGen, r.AccessTimeUnixMs = 0, 0
		case *stratov1.DirectoryInfo:
			r.SnapshotGen, r.PlacedGen, r.AccessTimeUnixMs = 0, 0, 0
		}
	}
	return proto.Equal(a, b)
}

func objectIDOf(m proto.Message) uint64 {
	if d, ok := m.(*stratov1.DirectoryInfo); ok {
		return d.ObjectId
	}
	return m.(*stratov1.KeyRecord).ObjectId
}

// changedKeys reads the journal of generations [fromID, toID): the records
// that changed, each once.
func changedKeys(r pebble.Reader, bucketID, fromID, toID uint64) ([][]byte, error) {
	p := idKey(nil, tagJournal, bucketID)
	upper := prefixEnd(p)
	if toID != math.MaxUint64 {
		upper = binary.BigEndian.AppendUint64(append([]byte(nil), p...), toID)
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: binary.BigEndian.AppendUint64(append([]byte(nil), p...), fromID), UpperBound: upper})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var keys [][]byte
	for ok := it.First(); ok; ok = it.Next() {
		k := append([]byte{prefix}, it.Key()[len(p)+8:]...)
		if !seen[string(k)] {
			seen[string(k)] = true
			keys = append(keys, k)
		}
	}
	return keys, it.Close()
}

// parentOfKey is the parent directory ID of a d, f or k key.
func parentOfKey(key []byte) uint64 { return binary.BigEndian.Uint64(key[2:10]) }

// hasDir reports whether directory id is in the view's tree: it and every
// ancestor up to the root (a directory under a deleted one lives on until
// reclaimed, but is not in the tree).
func (v *snapView) hasDir(id uint64) (bool, error) {
	for depth := 0; id != v.bk.Id; depth++ {
		parent, _, found, err := v.dirByID(id)
		if err != nil || !found {
			return false, err
		}
		if depth > MaxPathLength {
			return false, fmt.Errorf("%w: directory %d is its own ancestor", ErrCorrupt, id)
		}
		id = parent
	}
	return true, nil
}

// dirPlace is where a directory is in a view.
type dirPlace struct {
	parent uint64
	name   string
	found  bool
}

// dirByID is where directory id is in the view (remembered for the view's
// life: a diff asks for the same parents again and again).
func (v *snapView) dirByID(id uint64) (parent uint64, name string, found bool, err error) {
	if p, ok := v.dirs[id]; ok {
		return p.parent, p.name, p.found, nil
	}
	parent, name, found, err = v.lookupDirByID(id)
	if err == nil {
		if v.dirs == nil {
			v.dirs = map[uint64]dirPlace{}
		}
		v.dirs[id] = dirPlace{parent, name, found}
	}
	return parent, name, found, err
}

func (v *snapView) lookupDirByID(id uint64) (parent uint64, name string, found bool, err error) {
	key := idKey(nil, tagDirByID, id)
	val, closer, err := v.r.Get(key)
	switch {
	case err == nil:
		parent, name = binary.BigEndian.Uint64(val), string(val[8:])
		closer.Close()
		d := &stratov1.DirectoryInfo{}
		if ok, err := get(v.r, childKey(nil, tagDir, parent, name), d); err != nil {
			return 0, "", false, err
		} else if ok && d.ObjectId == id && d.PlacedGen < v.id {
			return parent, name, true, nil
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return 0, "", false, err
	}
	hv, found, err := v.history(key)
	if err != nil || !found {
		return 0, "", false, err
	}
	if len(hv) < 8 {
		return 0, "", false, fmt.Errorf("%w: kept by-ID entry of directory %d", ErrCorrupt, id)
	}
	return binary.BigEndian.Uint64(hv), string(hv[8:]), true, nil
}

// pathOf is the path of the record at key (d, f or k) in the view.
func (v *snapView) pathOf(key []byte) (string, error) {
	name := string(key[10:])
	if key[1] == tagKey {
		return name, nil
	}
	parts := []string{name}
	for id, depth := parentOfKey(key), 0; id != v.bk.Id; depth++ {
		parent, n, found, err := v.dirByID(id)
		if err != nil {
			return "", err
		}
		if !found || depth > MaxPathLength {
			return "", fmt.Errorf("%w: directory %d has no path in the snapshot", ErrCorrupt, id)
		}
		parts = append(parts, n)
		id = parent
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/"), nil
}
