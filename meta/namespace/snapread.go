package namespace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Reads of snapshots: every read of a path under .snapshot/NAME/ of a bucket
// sees the bucket as it was when snapshot NAME was taken (snapshot.go). The
// caller needs the right on the bucket itself (its ACL now).

// snapshotPath splits p (a path or key) into a snapshot's name and the path
// in it; ok is false when p is not under .snapshot. name is "" for
// .snapshot itself.
func snapshotPath(p string) (name, rest string, ok bool) {
	p = strings.TrimPrefix(p, "/")
	if p != SnapshotDir && !strings.HasPrefix(p, SnapshotDir+"/") {
		return "", "", false
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, SnapshotDir), "/")
	name, rest, _ = strings.Cut(p, "/")
	return name, rest, true
}

// snapView reads a bucket as snapshot id saw it.
type snapView struct {
	r    pebble.Reader
	bk   *stratov1.BucketRecord
	id   uint64
	name string
	// created is the snapshot's time: its root's times.
	created int64
	dirs    map[uint64]dirPlace // dirByID's answers
	hist    *pebble.Iterator    // over the bucket's history, once opened
	hbuf    []byte
	// liveIt is over the namespace's live records, once opened.
	liveIt *pebble.Iterator
}

// snapshotView opens snapshot name of bk.
func (rd *Reader) snapshotView(bk *stratov1.BucketRecord, name string) (*snapView, error) {
	rec := &stratov1.SnapshotRecord{}
	if found, err := get(rd.r, snapshotKey(nil, bk.Id, name), rec); err != nil {
		return nil, err
	} else if !found {
		return nil, fmt.Errorf("%w: %s/%s@%s", ErrSnapshotNotFound, bk.Volume, bk.Name, name)
	}
	return &snapView{r: rd.r, bk: bk, id: rec.Id, name: name, created: rec.CreatedUnixMs}, nil
}

// prefix is what paths in the snapshot are shown under.
func (v *snapView) prefix() string { return SnapshotDir + "/" + v.name }

func (v *snapView) show(p string) string { return joinPath(v.prefix(), p) }

// version reads the version of the record at key (d, f or k) snapshot v
// sees into m. live is the record's value now, if the caller has it.
func (v *snapView) version(key []byte, m interface {
	proto.Message
	GetSnapshotGen() uint64
}) (bool, error) {
	found, err := v.live(key, m)
	if err != nil {
		return false, err
	}
	if found && m.GetSnapshotGen() < v.id {
		return true, nil
	}
	val, found, err := v.history(key)
	if err != nil || !found {
		return false, err
	}
	proto.Reset(m)
	if err := proto.Unmarshal(val, m); err != nil {
		return false, fmt.Errorf("%w: history of %q: %w", ErrCorrupt, key, err)
	}
	return true, nil
}

// history is the kept version of key snapshot v sees, if any: the first
// one that died at or after v, if it was born before. One iterator over
// the bucket's history serves every lookup of the view (close).
func (v *snapView) history(key []byte) ([]byte, bool, error) {
	if v.hist == nil {
		hp := idKey(nil, tagHistory, v.bk.Id)
		it, err := v.r.NewIter(&pebble.IterOptions{LowerBound: hp, UpperBound: prefixEnd(hp)})
		if err != nil {
			return nil, false, err
		}
		v.hist = it
	}
	p := historyPrefix(v.hbuf[:0], v.bk.Id, key)
	v.hbuf = p
	it := v.hist
	if !it.SeekGE(binary.BigEndian.AppendUint64(slices.Clip(p), v.id)) || !bytes.HasPrefix(it.Key(), p) {
		return nil, false, it.Error()
	}
	val := it.Value()
	switch {
	case len(val) < 8:
		return nil, false, fmt.Errorf("%w: history entry %q", ErrCorrupt, it.Key())
	case binary.BigEndian.Uint64(val) >= v.id:
		return nil, false, nil
	}
	return slices.Clone(val[8:]), true, nil
}

// live reads the live record at key into m, through one iterator over
// the namespace for the view's life (a diff reads its keys in order, so
// each seek lands near the last).
func (v *snapView) live(key []byte, m proto.Message) (bool, error) {
	if v.liveIt == nil {
		lo := []byte{prefix}
		it, err := v.r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(lo)})
		if err != nil {
			return false, err
		}
		v.liveIt = it
	}
	it := v.liveIt
	if !it.SeekGE(key) || !bytes.Equal(it.Key(), key) {
		return false, it.Error()
	}
	if err := proto.Unmarshal(it.Value(), m); err != nil {
		return false, fmt.Errorf("%w: %q: %w", ErrCorrupt, key, err)
	}
	return true, nil
}

// close releases the view's iterators.
func (v *snapView) close() error {
	if v == nil {
		return nil
	}
	var err error
	for _, it := range []*pebble.Iterator{v.hist, v.liveIt} {
		if it != nil {
			if cerr := it.Close(); err == nil {
				err = cerr
			}
		}
	}
	v.hist, v.liveIt = nil, nil
	return err
}

// dir resolves clean path p to a directory ID in the snapshot.
func (v *snapView) dir(p string) (uint64, error) {
	id := v.bk.Id
	if p == "" {
		return id, nil
	}
	for i, name := range strings.Split(p, "/") {
		d := &stratov1.DirectoryInfo{}
		found, err := v.version(childKey(nil, tagDir, id, name), d)
		if err != nil {
			return 0, err
		}
		if !found {
			parts := strings.Split(p, "/")[:i+1]
			return 0, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, v.bk.Volume, v.bk.Name, v.show(strings.Join(parts, "/")))
		}
		id = d.ObjectId
	}
	return id, nil
}

// stat is the status of clean path p in the snapshot: a file (ki) or a
// directory (d, nil for the root).
func (v *snapView) stat(p string) (ki *stratov1.KeyRecord, d *stratov1.DirectoryInfo, err error) {
	if !isFSO(v.bk) {
		ki = &stratov1.KeyRecord{}
		if found, err := v.version(childKey(nil, tagKey, v.bk.Id, p), ki); err != nil || found {
			return ki, nil, err
		}
		return nil, nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, v.bk.Volume, v.bk.Name, v.show(p))
	}
	if p == "" {
		return nil, nil, nil
	}
	parent, name := splitLast(p)
	pid, err := v.dir(parent)
	if err != nil {
		return nil, nil, err
	}
	ki = &stratov1.KeyRecord{}
	if found, err := v.version(childKey(nil, tagFile, pid, name), ki); err != nil || found {
		return ki, nil, err
	}
	d = &stratov1.DirectoryInfo{}
	if found, err := v.version(childKey(nil, tagDir, pid, name), d); err != nil || found {
		return nil, d, err
	}
	return nil, nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, v.bk.Volume, v.bk.Name, v.show(p))
}

// snapEntry is a child in a snapshot's listing.
type snapEntry struct {
	name string
	key  []byte // the live key of its record
	val  []byte
	dir  bool
}

// children lists the records under prefix p (a d, f or k prefix) that
// snapshot v sees, with names after after and starting with namePrefix,
// in name order, up to limit (0: all).
func (v *snapView) children(p []byte, namePrefix, after string, limit int) ([]snapEntry, error) {
	var out []snapEntry
	lower := append(slices.Clone(p), namePrefix...)
	if after != "" && after >= namePrefix {
		lower = append(append(slices.Clone(p), after...), 0)
	}
	upper := prefixEnd(append(slices.Clone(p), namePrefix...))
	// Live records seen.
	it, err := v.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		born, err := recordGen(it.Value(), p[1])
		if err != nil {
			_ = it.Close()
			return nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, it.Key(), err)
		}
		if born < v.id {
			out = append(out, snapEntry{name: string(it.Key()[len(p):]), key: slices.Clone(it.Key()), val: slices.Clone(it.Value()), dir: p[1] == tagDir})
		}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	// Kept versions seen: per name, the first that died at or after v.
	hp := append(idKey(nil, tagHistory, v.bk.Id), p[1:]...)
	hl := append(slices.Clone(hp), lower[len(p):]...)
	it, err = v.r.NewIter(&pebble.IterOptions{LowerBound: hl, UpperBound: prefixEnd(append(slices.Clone(hp), namePrefix...))})
	if err != nil {
		return nil, err
	}
	last := ""
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) < len(hp)+9 {
			continue
		}
		name := string(k[len(hp) : len(k)-9])
		if name == last || (after != "" && name <= after) {
			continue
		}
		died := binary.BigEndian.Uint64(k[len(k)-8:])
		val := it.Value()
		if died < v.id || len(val) < 8 {
			continue
		}
		last = name // the first that died at or after v decides
		if binary.BigEndian.Uint64(val) < v.id {
			out = append(out, snapEntry{name: name, key: append(slices.Clone(p), name...), val: slices.Clone(val[8:]), dir: p[1] == tagDir})
		}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// recordGen reads snapshot_gen of an encoded DirectoryInfo (field 11, in
// table tagDir) or KeyRecord (field 20) without decoding the rest; 0 when
// unset.
func recordGen(v []byte, tag byte) (uint64, error) {
	field := protowire.Number(20)
	if tag == tagDir {
		field = 11
	}
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		v = v[n:]
		if num == field && typ == protowire.VarintType {
			g, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return 0, protowire.ParseError(n)
			}
			return g, nil
		}
		if n = protowire.ConsumeFieldValue(num, typ, v); n < 0 {
			return 0, protowire.ParseError(n)
		}
		v = v[n:]
	}
	return 0, nil
}

// list is the entries of directory id in the snapshot (FSO), in name order.
func (v *snapView) list(id uint64, after string, limit int) ([]snapEntry, error) {
	ds, err := v.children(idKey(nil, tagDir, id), "", after, limit)
	if err != nil {
		return nil, err
	}
	fs, err := v.children(idKey(nil, tagFile, id), "", after, limit)
	if err != nil {
		return nil, err
	}
	all := append(ds, fs...)
	sort.Slice(all, func(i, j int) bool { return all[i].name < all[j].name })
	if limit > 0 && len(all) > limit {
		all = all[:limit]
	}
	return all, nil
}

func (v *snapView) status(p string, e snapEntry) (*stratov1.FileStatus, error) {
	if e.dir {
		d := &stratov1.DirectoryInfo{}
		if err := proto.Unmarshal(e.val, d); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, p, err)
		}
		return dirStatus(v.show(p), d), nil
	}
	ki := &stratov1.KeyRecord{}
	if err := proto.Unmarshal(e.val, ki); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, p, err)
	}
	return fileStatus(v.bk, v.show(p), ki), nil
}

// ---- the Reader's entry points -------------------------------------------------

// snapshotRoot is .snapshot of a bucket: a directory whose children are its
// snapshots.
func snapshotRoot(bk *stratov1.BucketRecord) *stratov1.FileStatus {
	st := rootStatus(bk)
	st.Path, st.Permission = SnapshotDir, proto.Uint32(0o555)
	return st
}

// openSnapshot checks the caller's right on the bucket and opens the
// snapshot a path names; v is nil for .snapshot itself.
func (rd *Reader) openSnapshot(volume, bucket, name string, right uint32) (*stratov1.BucketRecord, *snapView, error) {
	if err := rd.authorized(rd.caller, bucketKind, volume, bucket, "", right); err != nil {
		return nil, nil, err
	}
	bk, err := rd.bucket(volume, bucket)
	if err != nil || name == "" {
		return bk, nil, err
	}
	v, err := rd.snapshotView(bk, name)
	return bk, v, err
}

func (rd *Reader) snapLookupKey(req *stratov1.LookupKeyRequest, name, rest string) (*stratov1.LookupKeyResponse, error) {
	bk, v, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), name, RightRead)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.close() }() // a read's iterator: nothing to lose
	if v == nil {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrIsADirectory, bk.Volume, bk.Name, SnapshotDir)
	}
	if isFSO(bk) {
		if rest, err = CleanPath(rest); err != nil {
			return nil, err
		}
	}
	ki, d, err := v.stat(rest)
	if err != nil {
		return nil, err
	}
	if ki == nil {
		_ = d
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrIsADirectory, bk.Volume, bk.Name, v.show(rest))
	}
	ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, v.show(rest)
	return &stratov1.LookupKeyResponse{Key: KeyInfo(ki)}, nil
}

func (rd *Reader) snapFileStatus(req *stratov1.GetFileStatusRequest, name, rest string) (*stratov1.GetFileStatusResponse, error) {
	bk, v, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), name, RightRead)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.close() }() // a read's iterator: nothing to lose
	if v == nil {
		return &stratov1.GetFileStatusResponse{Status: snapshotRoot(bk)}, nil
	}
	if isFSO(bk) {
		if rest, err = CleanPath(rest); err != nil {
			return nil, err
		}
	}
	if rest == "" {
		st := rootStatus(bk)
		st.Path, st.ModificationTimeUnixMs, st.CreationTimeUnixMs = v.prefix(), v.created, v.created
		return &stratov1.GetFileStatusResponse{Status: st}, nil
	}
	ki, d, err := v.stat(rest)
	if err != nil {
		if !isFSO(bk) && errors.Is(err, ErrKeyNotFound) {
			return rd.snapOBSDir(v, rest)
		}
		return nil, err
	}
	if d != nil {
		return &stratov1.GetFileStatusResponse{Status: dirStatus(v.show(rest), d)}, nil
	}
	return &stratov1.GetFileStatusResponse{Status: fileStatusWithKey(bk, v.show(rest), ki, req.GetWithBlocks())}, nil
}

// snapOBSDir is an OBS prefix as a directory, when the snapshot has a key
// under it.
func (rd *Reader) snapOBSDir(v *snapView, p string) (*stratov1.GetFileStatusResponse, error) {
	dir := strings.TrimSuffix(p, "/") + "/"
	es, err := v.children(idKey(nil, tagKey, v.bk.Id), dir, "", 1)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, v.bk.Volume, v.bk.Name, v.show(p))
	}
	return &stratov1.GetFileStatusResponse{Status: &stratov1.FileStatus{Path: v.show(strings.TrimSuffix(p, "/")), IsDirectory: true}}, nil
}

func (rd *Reader) snapListStatus(req *stratov1.ListStatusRequest, name, rest string) (*stratov1.ListStatusResponse, error) {
	bk, v, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), name, RightList)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.close() }() // a read's iterator: nothing to lose
	limit := rd.limit(req.GetLimit())
	if v == nil {
		return rd.listSnapshotDirs(bk, req.GetStartAfter(), limit)
	}
	if !isFSO(bk) {
		return rd.snapOBSListStatus(req, name, rest, limit)
	}
	if rest, err = CleanPath(rest); err != nil {
		return nil, err
	}
	id := bk.Id
	if rest != "" {
		ki, d, err := v.stat(rest)
		if err != nil {
			return nil, err
		}
		if ki != nil {
			if req.GetStartAfter() != "" {
				return &stratov1.ListStatusResponse{}, nil
			}
			return &stratov1.ListStatusResponse{Statuses: []*stratov1.FileStatus{fileStatus(bk, v.show(rest), ki)}}, nil
		}
		id = d.ObjectId
	}
	es, err := v.list(id, req.GetStartAfter(), limit+1)
	if err != nil {
		return nil, err
	}
	res := &stratov1.ListStatusResponse{}
	if len(es) > limit {
		es, res.Truncated = es[:limit], true
	}
	for _, e := range es {
		st, err := v.status(joinPath(rest, e.name), e)
		if err != nil {
			return nil, err
		}
		res.Statuses = append(res.Statuses, st)
	}
	return res, nil
}

// snapOBSListStatus is obsListStatus in a snapshot: keys and "/"
// prefixes as files and directories.
func (rd *Reader) snapOBSListStatus(req *stratov1.ListStatusRequest, name, rest string, limit int) (*stratov1.ListStatusResponse, error) {
	root := SnapshotDir + "/" + name + "/"
	p := strings.Trim(rest, "/")
	prefix := ""
	if p != "" {
		prefix = p + "/"
	}
	lr := &stratov1.ListKeysRequest{Volume: req.GetVolume(), Bucket: req.GetBucket(), Prefix: root + prefix, Delimiter: "/", Limit: int32(limit)}
	if req.GetStartAfter() != "" {
		lr.StartAfter = root + prefix + req.GetStartAfter()
	}
	lk, err := rd.snapListKeys(lr, name, prefix)
	if err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	res := keysAsStatuses(bk, lk)
	if len(res.Statuses) == 0 && p != "" && req.GetStartAfter() == "" {
		// Not a directory: a key, or nothing.
		st, err := rd.snapFileStatus(&stratov1.GetFileStatusRequest{Volume: req.GetVolume(), Bucket: req.GetBucket(), Path: root + p}, name, p)
		if err != nil {
			return nil, err
		}
		if !st.Status.IsDirectory {
			res.Statuses = append(res.Statuses, st.Status)
		}
	}
	return res, nil
}

// listSnapshotDirs lists .snapshot: each snapshot as a directory.
func (rd *Reader) listSnapshotDirs(bk *stratov1.BucketRecord, after string, limit int) (*stratov1.ListStatusResponse, error) {
	snaps, truncated, err := rd.snapshots(bk, after, limit)
	if err != nil {
		return nil, err
	}
	res := &stratov1.ListStatusResponse{Truncated: truncated}
	for _, s := range snaps {
		st := rootStatus(bk)
		st.Path, st.ModificationTimeUnixMs, st.CreationTimeUnixMs = SnapshotDir+"/"+s.Name, s.CreatedUnixMs, s.CreatedUnixMs
		res.Statuses = append(res.Statuses, st)
	}
	return res, nil
}

// snapshots lists a bucket's snapshots by name, after after, up to limit.
func (rd *Reader) snapshots(bk *stratov1.BucketRecord, after string, limit int) ([]*stratov1.SnapshotRecord, bool, error) {
	var out []*stratov1.SnapshotRecord
	truncated := false
	err := scan(rd.r, idKey(nil, tagSnapshot, bk.Id), "", after, func(_, value []byte) (bool, error) {
		if len(out) == limit {
			truncated = true
			return false, nil
		}
		rec := &stratov1.SnapshotRecord{}
		if err := proto.Unmarshal(value, rec); err != nil {
			return false, fmt.Errorf("%w: snapshot of %s/%s: %w", ErrCorrupt, bk.Volume, bk.Name, err)
		}
		out = append(out, rec)
		return true, nil
	})
	return out, truncated, err
}

// snapListKeys lists the keys of a snapshot in S3 order (OBS buckets;
// delimiter "/" or none), their names under .snapshot/NAME/.
func (rd *Reader) snapListKeys(req *stratov1.ListKeysRequest, name, rest string) (*stratov1.ListKeysResponse, error) {
	bk, v, err := rd.openSnapshot(req.GetVolume(), req.GetBucket(), name, RightList)
	if err != nil {
		return nil, err
	}
	defer func() { _ = v.close() }() // a read's iterator: nothing to lose
	if v == nil || isFSO(bk) {
		return nil, fmt.Errorf("%w: ListKeys in a snapshot of %s/%s: list an OBS bucket's snapshot under %s/NAME/, an FSO bucket's with ListStatus",
			ErrWrongLayout, bk.Volume, bk.Name, SnapshotDir)
	}
	limit := rd.limit(req.GetLimit())
	after := ""
	if sa := req.GetStartAfter(); sa != "" {
		after = strings.TrimPrefix(strings.TrimPrefix(sa, "/"), v.prefix()+"/")
	}
	es, err := v.children(idKey(nil, tagKey, bk.Id), rest, after, 0)
	if err != nil {
		return nil, err
	}
	res := &stratov1.ListKeysResponse{}
	delim := req.GetDelimiter()
	lastPrefix := ""
	for _, e := range es {
		if delim != "" {
			if i := strings.Index(e.name[len(rest):], delim); i >= 0 {
				cp := e.name[:len(rest)+i+len(delim)]
				if cp == lastPrefix {
					continue
				}
				if len(res.Keys)+len(res.CommonPrefixes) == limit {
					res.Truncated = true
					break
				}
				lastPrefix = cp
				res.CommonPrefixes = append(res.CommonPrefixes, v.show(cp))
				res.NextStartAfter = v.show(cp)
				continue
			}
		}
		if len(res.Keys)+len(res.CommonPrefixes) == limit {
			res.Truncated = true
			break
		}
		res.NextStartAfter = v.show(e.name)
		ki := &stratov1.KeyRecord{}
		if err := proto.Unmarshal(e.val, ki); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, e.name, err)
		}
		ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, v.show(e.name)
		info := KeyInfo(ki)
		info.Blocks = nil
		res.Keys = append(res.Keys, info)
	}
	return res, nil
}
