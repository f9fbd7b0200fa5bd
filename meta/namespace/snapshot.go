package namespace

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Bucket snapshots (decision 0075). A snapshot is a generation number: the
// bucket's SnapshotState holds the newest snapshot's ID (gen) and the live
// snapshots' IDs. Every record of the bucket's tables (d, i, f, k) is
// written at the current gen, which it carries (snapshot_gen; for "i"
// entries, their directory's). A version written at born and replaced or
// deleted at died is seen by snapshot s when born < s <= died: the live
// version (died = infinity) when born < s.
//
// Taking a snapshot is O(1): gen+1 and a record. A change that replaces or
// deletes a version some live snapshot sees first copies it to the history
// table, under its key and died, so that the snapshot reads it there; the
// change is also noted in the bucket's journal at gen, which snapdiff reads
// instead of the bucket. A file version kept in the history holds its
// blocks: a rename or a change of attributes keeps a second record of the
// same object, counted in the shared-object table, and the blocks are freed
// (and their bytes released from the quota) when the last record goes.
// Deleting a snapshot queues its bucket for PurgeSnapshots commands, which
// drop the history versions no live snapshot sees any more, in bounded
// steps.
//
// Key layout (keys.go has the rest):
//
//	N S <bucketID>                     → SnapshotState
//	N P <bucketID> <name>              → SnapshotRecord
//	N h <bucketID> <key[1:]> 0 <died>  → <born> and the record as it was
//	N J <bucketID> <gen> <key[1:]>     → empty: key changed at gen
//	N R <objectID>                     → SharedObject
//	N Q <bucketID>                     → the purge's cursor in the history
const (
	tagSnapState = 'S'
	tagSnapshot  = 'P'
	tagHistory   = 'h'
	tagJournal   = 'J'
	tagShared    = 'R'
	tagSnapPurge = 'Q'
)

// SnapshotDir is the reserved first path component under which a bucket's
// snapshots are read (".snapshot/NAME/..."); nothing can be written there.
const SnapshotDir = ".snapshot"

// MaxSnapshots is the most live snapshots a bucket may have.
const MaxSnapshots = 1024

// snapState is a bucket's SnapshotState.
type snapState struct {
	gen      uint64
	ids      []uint64 // ascending
	volumeID uint64
	// The bucket's S3 versioning (versions.go), kept here for the commit.
	versioning stratov1.BucketVersioning
	// Its S3 object lock (objectlock.go), for the commit's default
	// retention (nil: none).
	lock *stratov1.BucketObjectLockRecord
}

// sees reports whether a live snapshot sees a version written at born and
// replaced at died.
func (s snapState) sees(born, died uint64) bool {
	i := sort.Search(len(s.ids), func(i int) bool { return s.ids[i] > born })
	return i < len(s.ids) && s.ids[i] <= died
}

// journaled reports whether a change at gen g must be journaled: some live
// snapshot was taken before it.
func (s snapState) journaled(g uint64) bool { return len(s.ids) > 0 && s.ids[0] <= g }

func snapStateKey(buf []byte, bucketID uint64) []byte { return idKey(buf, tagSnapState, bucketID) }

func snapshotKey(buf []byte, bucketID uint64, name string) []byte {
	return childKey(buf, tagSnapshot, bucketID, name)
}

// historyPrefix is where the versions of the record at key (a d, i, f or k
// key) are kept.
func historyPrefix(buf []byte, bucketID uint64, key []byte) []byte {
	return append(append(idKey(buf, tagHistory, bucketID), key[1:]...), 0)
}

func historyKey(buf []byte, bucketID uint64, key []byte, died uint64) []byte {
	return binary.BigEndian.AppendUint64(historyPrefix(buf, bucketID, key), died)
}

func journalKey(buf []byte, bucketID, gen uint64, key []byte) []byte {
	return append(binary.BigEndian.AppendUint64(idKey(buf, tagJournal, bucketID), gen), key[1:]...)
}

func loadSnapState(r pebble.Reader, bucketID uint64) (snapState, error) {
	st := &stratov1.SnapshotState{}
	if _, err := get(r, snapStateKey(nil, bucketID), st); err != nil {
		return snapState{}, err
	}
	return snapState{gen: st.Gen, ids: st.Ids, volumeID: st.VolumeId, versioning: st.Versioning, lock: st.ObjectLock}, nil
}

// snaps is the snapshot state of a bucket, read once per command.
func (a *applier) snaps(bucketID uint64) (snapState, error) {
	if a.snapLoaded && a.snapBucket == bucketID {
		return a.snap, nil
	}
	c := a.ns.acache
	if c != nil {
		if st, ok := c.snaps[bucketID]; ok {
			if c.verify {
				if got, err := loadSnapState(a.b, bucketID); err != nil || got.gen != st.gen || !slices.Equal(got.ids, st.ids) {
					panic(fmt.Sprintf("namespace: apply cache has bucket %d's snapshots %+v, batch says %+v %v", bucketID, st, got, err))
				}
			}
			a.snap, a.snapBucket, a.snapLoaded = st, bucketID, true
			return st, nil
		}
	}
	st, err := loadSnapState(a.b, bucketID)
	if err != nil {
		return snapState{}, err
	}
	if c != nil {
		c.keepSnaps(bucketID, st)
	}
	a.snap, a.snapBucket, a.snapLoaded = st, bucketID, true
	return st, nil
}

// retire keeps the version v (written at born) of the record at key for
// the snapshots that see it, before it is replaced or deleted at died, and
// journals the change. kept reports whether a snapshot holds it.
func (a *applier) retire(bucketID uint64, st snapState, key, v []byte, born, died uint64, journal bool) (kept bool, err error) {
	if st.sees(born, died) {
		val := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(v)), born)
		if err := a.b.Set(historyKey(nil, bucketID, key, died), append(val, v...), nil); err != nil {
			return false, err
		}
		kept = true
	}
	if journal {
		err = a.journal(bucketID, st, died, key)
	}
	return kept, err
}

// journal notes that the record at key changed at gen, for snapdiff.
func (a *applier) journal(bucketID uint64, st snapState, gen uint64, key []byte) error {
	if !st.journaled(gen) {
		return nil
	}
	return a.b.Set(journalKey(nil, bucketID, gen, key), nil, nil)
}

// retireRecord is retire for a record the caller has decoded (m, at key).
func (a *applier) retireRecord(bucketID uint64, st snapState, key []byte, m proto.Message, born uint64) (bool, error) {
	if !st.sees(born, st.gen) {
		return false, a.journal(bucketID, st, st.gen, key)
	}
	v, err := marshalOpts.Marshal(m)
	if err != nil {
		return false, err
	}
	return a.retire(bucketID, st, key, v, born, st.gen, true)
}

// retireDir retires directory id, (parent, name) with record d, and its
// by-ID entry, at died.
func (a *applier) retireDir(bucketID uint64, st snapState, parent uint64, name string, d *stratov1.DirectoryInfo, died uint64, journal bool) error {
	if !st.journaled(died) {
		return nil
	}
	v, err := marshalOpts.Marshal(d)
	if err != nil {
		return err
	}
	if _, err := a.retire(bucketID, st, childKey(nil, tagDir, parent, name), v, d.SnapshotGen, died, journal); err != nil {
		return err
	}
	_, err = a.retire(bucketID, st, idKey(nil, tagDirByID, d.ObjectId), dirByIDValue(parent, name), d.PlacedGen, died, journal)
	return err
}

// releaseOf is what dropping file version rec releases from its bucket's
// bytes: nothing while a snapshot keeps it or another record holds its
// object, else its size (or the shared object's).
func (a *applier) releaseOf(st snapState, rec *stratov1.KeyRecord, kept bool) (int64, error) {
	if kept {
		return 0, nil
	}
	if st.gen == 0 {
		return rec.Size, nil // no snapshot ever: no record shares an object
	}
	_, so, found, err := a.sharedObject(rec.ObjectId)
	switch {
	case err != nil:
		return 0, err
	case !found:
		return rec.Size, nil
	case so.Count <= 1:
		return so.Size, nil
	}
	return 0, nil
}

// unref drops file version rec's hold on its blocks (not kept by a
// snapshot): they are freed when no other record holds them.
func (a *applier) unref(st snapState, rec *stratov1.KeyRecord, reason string) error {
	if st.gen == 0 {
		return a.freeBlocks(rec.ObjectId, rec.Blocks, reason) // no record shares it
	}
	key, so, found, err := a.sharedObject(rec.ObjectId)
	if err != nil {
		return err
	}
	if !found {
		return a.freeBlocks(rec.ObjectId, rec.Blocks, reason)
	}
	if so.Count--; so.Count > 0 {
		return put(a.b, key, so)
	}
	if err := a.b.Delete(key, nil); err != nil {
		return err
	}
	return a.freeBlocks(rec.ObjectId, so.Blocks, reason)
}

// ref records that one more record holds file version rec's object (a
// snapshot keeps the version while the file lives on, renamed or changed).
func (a *applier) ref(rec *stratov1.KeyRecord) error { return a.hold(rec, 1, true, 0) }

// grow follows a file rewritten as the same object (an hsync's or an
// append's commit, a concat) in its shared-object record, if it has one:
// its blocks, and charged, the bytes the rewrite charged to the bucket
// (what the record's size then releases when its last holder goes: a
// file truncated while shared keeps its cut bytes charged until then).
func (a *applier) grow(rec *stratov1.KeyRecord, charged int64) error {
	return a.hold(rec, 0, false, charged)
}

// hold adds holders to rec's shared-object record (made, for an object
// one record held, when create) and adds rec's blocks to it; its size is
// rec's when made, and grows by charged.
func (a *applier) hold(rec *stratov1.KeyRecord, holders uint64, create bool, charged int64) error {
	key, so, found, err := a.sharedObject(rec.ObjectId)
	if err != nil || (!found && !create) {
		return err
	}
	if !found {
		so.Count = 1
	}
	so.Count += holders
	if found && holders == 0 {
		so.Size += charged
	} else {
		so.Size = max(so.Size, rec.Size)
	}
	have := make(map[[2]uint64]bool, len(so.Blocks))
	for _, bl := range so.Blocks {
		have[blockKey(bl.BlockId)] = true
	}
	for _, bl := range rec.Blocks {
		if !have[blockKey(bl.BlockId)] {
			so.Blocks = append(so.Blocks, &stratov1.BlockRecord{BlockId: bl.BlockId, Length: bl.Length, Pipeline: bl.Pipeline})
		}
	}
	return put(a.b, key, so)
}

// sharedObject reads object id's shared-object record and returns its key.
func (a *applier) sharedObject(id uint64) (key []byte, so *stratov1.SharedObject, found bool, err error) {
	key, so = idKey(nil, tagShared, id), &stratov1.SharedObject{}
	found, err = get(a.b, key, so)
	return key, so, found, err
}

// takeComposeSource refuses a compose source a snapshot holds (its blocks
// would then belong to two objects) and journals that it goes.
func (a *applier) takeComposeSource(bucketID uint64, key []byte, kr *stratov1.KeyRecord, label string) error {
	if err := a.checkDestroy(kr, false, label); err != nil {
		return err
	}
	st, err := a.snaps(bucketID)
	if err != nil {
		return err
	}
	held := st.sees(kr.SnapshotGen, st.gen)
	if !held && st.gen > 0 {
		if _, _, held, err = a.sharedObject(kr.ObjectId); err != nil {
			return err
		}
	}
	if held {
		return fmt.Errorf("%w: source %s is held by a snapshot of its bucket", ErrHasSnapshots, label)
	}
	return a.journal(bucketID, st, st.gen, key)
}

// keepFile retires file version old at key before it is rewritten in place
// or moved (the object lives on): a kept version is a second holder.
func (a *applier) keepFile(bucketID uint64, st snapState, key []byte, old *stratov1.KeyRecord) error {
	kept, err := a.retireRecord(bucketID, st, key, old, old.SnapshotGen)
	if err != nil || !kept {
		return err
	}
	return a.ref(old)
}

// dropFile retires file version old at key before it is deleted or
// replaced by another object: kept, it holds its blocks; otherwise they
// go unless another record holds them.
func (a *applier) dropFile(bucketID uint64, st snapState, key []byte, old *stratov1.KeyRecord, kept bool, reason string) error {
	if kept {
		_, err := a.retireRecord(bucketID, st, key, old, old.SnapshotGen)
		return err
	}
	if err := a.journal(bucketID, st, st.gen, key); err != nil {
		return err
	}
	return a.unref(st, old, reason)
}

// ---- snapshot commands --------------------------------------------------------

// ValidateSnapshotName checks a snapshot's name: a path component, not
// starting with a period.
func ValidateSnapshotName(name string) error {
	switch {
	case name == "":
		return invalidName("snapshot", name, "must not be empty")
	case len(name) > MaxComponentLength:
		return invalidName("snapshot", name[:32]+"...", fmt.Sprintf("must be at most %d bytes", MaxComponentLength))
	case strings.ContainsAny(name, "/\x00"):
		return invalidName("snapshot", name, `must not contain "/" or NUL`)
	case strings.HasPrefix(name, "."):
		return invalidName("snapshot", name, `must not start with "."`)
	}
	return nil
}

// defaultSnapshotName is HDFS's name for a snapshot taken without one.
func defaultSnapshotName(now time.Time) string {
	return now.UTC().Format("s20060102-150405.000")
}

func prepareSnapshot(req proto.Message, now time.Time) (*stratov1.SnapshotCommand, error) {
	c := &stratov1.SnapshotCommand{}
	switch r := req.(type) {
	case *stratov1.CreateSnapshotRequest:
		c.Volume, c.Bucket, c.Name = r.GetVolume(), r.GetBucket(), r.GetName()
		if c.Name == "" {
			c.Name = defaultSnapshotName(now)
		}
	case *stratov1.DeleteSnapshotRequest:
		c.Volume, c.Bucket, c.Name, c.Delete = r.GetVolume(), r.GetBucket(), r.GetName(), true
	case *stratov1.RenameSnapshotRequest:
		c.Volume, c.Bucket, c.Name, c.NewName = r.GetVolume(), r.GetBucket(), r.GetName(), r.GetNewName()
		if err := ValidateSnapshotName(c.NewName); err != nil {
			return nil, err
		}
	}
	return c, ValidateSnapshotName(c.Name)
}

func (a *applier) snapshot(c *stratov1.SnapshotCommand) (proto.Message, error) {
	if err := ValidateSnapshotName(c.GetName()); err != nil {
		return nil, err
	}
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	rec := &stratov1.SnapshotRecord{}
	key := snapshotKey(nil, bk.Id, c.GetName())
	found, err := get(a.b, key, rec)
	if err != nil {
		return nil, err
	}
	label := bk.Volume + "/" + bk.Name + "@" + c.GetName()
	switch {
	case c.GetDelete():
		if !found {
			return nil, fmt.Errorf("%w: %s", ErrSnapshotNotFound, label)
		}
		st.ids = slices.DeleteFunc(slices.Clone(st.ids), func(id uint64) bool { return id == rec.Id })
		if err := a.putSnapState(bk.Id, st); err != nil {
			return nil, err
		}
		if err := a.b.Delete(key, nil); err != nil {
			return nil, err
		}
		// Queue the purge, from the start: what a purge under way has
		// passed may now be free too.
		return &stratov1.DeleteSnapshotResponse{}, a.b.Set(idKey(nil, tagSnapPurge, bk.Id), nil, nil)
	case c.GetNewName() != "":
		if !found {
			return nil, fmt.Errorf("%w: %s", ErrSnapshotNotFound, label)
		}
		if err := ValidateSnapshotName(c.GetNewName()); err != nil {
			return nil, err
		}
		nk := snapshotKey(nil, bk.Id, c.GetNewName())
		if c.GetNewName() == c.GetName() {
			return &stratov1.RenameSnapshotResponse{Snapshot: snapshotInfo(rec)}, nil
		}
		if ok, err := exists(a.b, nk); err != nil {
			return nil, err
		} else if ok {
			return nil, fmt.Errorf("%w: %s/%s@%s", ErrSnapshotExists, bk.Volume, bk.Name, c.GetNewName())
		}
		rec.Name = c.GetNewName()
		if err := a.b.Delete(key, nil); err != nil {
			return nil, err
		}
		return &stratov1.RenameSnapshotResponse{Snapshot: snapshotInfo(rec)}, put(a.b, nk, rec)
	}
	if found {
		return nil, fmt.Errorf("%w: %s", ErrSnapshotExists, label)
	}
	if st.versioning != versioningOff {
		return nil, fmt.Errorf("%w: %s/%s is versioned (S3): its versions are its history; it takes no snapshots", ErrFailedPrecondition, bk.Volume, bk.Name)
	}
	if len(st.ids) >= MaxSnapshots {
		return nil, fmt.Errorf("%w: %s/%s has %d snapshots, the most a bucket may have", ErrFailedPrecondition, bk.Volume, bk.Name, len(st.ids))
	}
	st.gen++
	st.ids = append(slices.Clone(st.ids), st.gen)
	st.volumeID = bk.VolumeId
	rec = &stratov1.SnapshotRecord{Id: st.gen, Name: c.GetName(), BucketId: bk.Id, CreatedUnixMs: a.now, Volume: bk.Volume, Bucket: bk.Name}
	if err := a.putSnapState(bk.Id, st); err != nil {
		return nil, err
	}
	return &stratov1.CreateSnapshotResponse{Snapshot: snapshotInfo(rec)}, put(a.b, key, rec)
}

func (a *applier) putSnapState(bucketID uint64, st snapState) error {
	a.snap, a.snapBucket, a.snapLoaded = st, bucketID, true
	return put(a.b, snapStateKey(nil, bucketID), &stratov1.SnapshotState{Gen: st.gen, Ids: st.ids, VolumeId: st.volumeID, Versioning: st.versioning,
		ObjectLock: st.lock})
}

func snapshotInfo(rec *stratov1.SnapshotRecord) *stratov1.SnapshotInfo {
	return &stratov1.SnapshotInfo{Volume: rec.Volume, Bucket: rec.Bucket, Name: rec.Name, Id: rec.Id, CreatedUnixMs: rec.CreatedUnixMs}
}

// checkWritable refuses a path or key under the reserved .snapshot.
func checkWritable(p string) error {
	p = strings.TrimPrefix(p, "/")
	if p == SnapshotDir || strings.HasPrefix(p, SnapshotDir+"/") {
		return fmt.Errorf("%w: %s is read-only (a bucket's snapshots)", ErrInvalidName, p)
	}
	return nil
}

// ---- purge ----------------------------------------------------------------------

// PreparePurgeSnapshots returns a command freeing what deleted snapshots
// alone held, or nil when no purge is queued.
func (ns *Namespace) PreparePurgeSnapshots(view pebble.Reader, now time.Time, limit int) (*stratov1.NamespaceCommand, error) {
	found, err := firstValue(view, tableKey(nil, tagSnapPurge), nil)
	if err != nil || !found {
		return nil, err
	}
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.NamespaceCommand_PurgeSnapshots{
		PurgeSnapshots: &stratov1.PurgeSnapshotsCommand{Limit: int32(limit)}}}, nil
}

// purgeSnapshots examines up to limit history versions and journal entries
// of the first bucket queued, from its cursor, and drops those no live
// snapshot needs.
func (a *applier) purgeSnapshots(c *stratov1.PurgeSnapshotsCommand) (proto.Message, error) {
	if c.GetLimit() <= 0 {
		return nil, fmt.Errorf("%w: purge limit %d must be positive", ErrInvalid, c.GetLimit())
	}
	res := &stratov1.PurgeSnapshotsResult{}
	qp := tableKey(nil, tagSnapPurge)
	it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: qp, UpperBound: prefixEnd(qp)})
	if err != nil {
		return nil, err
	}
	var qk, cursor []byte
	if it.First() {
		qk, cursor = slices.Clone(it.Key()), slices.Clone(it.Value())
	}
	if err := it.Close(); err != nil || qk == nil {
		return res, err
	}
	bucketID := binary.BigEndian.Uint64(qk[2:])
	st, err := loadSnapState(a.b, bucketID)
	if err != nil {
		return nil, err
	}
	next, n, err := a.purgeBucket(bucketID, st, cursor, int(c.GetLimit()))
	if err != nil {
		return nil, err
	}
	res.Versions = int32(n)
	if next == nil {
		if err := a.b.Delete(qk, nil); err != nil {
			return nil, err
		}
	} else if err := a.b.Set(qk, next, nil); err != nil {
		return nil, err
	}
	more, err := firstValue(a.b, qp, nil)
	res.More = more
	return res, err
}

// purgeBucket walks the bucket's history and then its journal from cursor,
// up to limit entries, and returns where to go on (nil: done) and how many
// versions it dropped.
func (a *applier) purgeBucket(bucketID uint64, st snapState, cursor []byte, limit int) (next []byte, dropped int, err error) {
	hp := idKey(nil, tagHistory, bucketID)
	jp := idKey(nil, tagJournal, bucketID)
	lower := jp
	if len(cursor) > 0 {
		lower = append(cursor, 0)
	}
	// The journal sorts before the history ('J' < 'h').
	for _, p := range [][]byte{jp, hp} {
		upper := prefixEnd(p)
		if string(lower) >= string(upper) {
			continue
		}
		lo := lower
		if string(lo) < string(p) {
			lo = p
		}
		it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: upper})
		if err != nil {
			return nil, 0, err
		}
		type victim struct{ key, value []byte }
		var victims []victim
		var last []byte
		for ok := it.First(); ok && limit > 0; ok = it.Next() {
			limit--
			k := it.Key()
			last = slices.Clone(k)
			if p[1] == tagJournal {
				if !st.journaled(binary.BigEndian.Uint64(k[10:18])) {
					victims = append(victims, victim{key: last})
				}
				continue
			}
			v := it.Value()
			died := binary.BigEndian.Uint64(k[len(k)-8:])
			if len(v) < 8 {
				_ = it.Close()
				return nil, 0, fmt.Errorf("%w: history entry %q", ErrCorrupt, k)
			}
			if !st.sees(binary.BigEndian.Uint64(v), died) {
				victims = append(victims, victim{key: last, value: slices.Clone(v[8:])})
			}
		}
		exhausted := limit > 0
		if err := it.Close(); err != nil {
			return nil, 0, err
		}
		for _, v := range victims {
			if err := a.b.Delete(v.key, nil); err != nil {
				return nil, 0, err
			}
			if p[1] == tagHistory {
				dropped++
				if err := a.dropHistoryFile(bucketID, st, v.key, v.value); err != nil {
					return nil, 0, err
				}
			}
		}
		if !exhausted {
			return last, dropped, nil
		}
		lower = upper
	}
	return nil, dropped, nil
}

// dropHistoryFile releases what a dropped history version of a file held.
func (a *applier) dropHistoryFile(bucketID uint64, st snapState, hkey, v []byte) error {
	tag := hkey[10]
	if tag != tagFile && tag != tagKey {
		return nil
	}
	rec := &stratov1.KeyRecord{}
	if err := proto.Unmarshal(v, rec); err != nil {
		return fmt.Errorf("%w: %q: %w", ErrCorrupt, hkey, err)
	}
	bytes, err := a.releaseOf(st, rec, false)
	if err != nil {
		return err
	}
	if err := a.unref(st, rec, "snapshot"); err != nil {
		return err
	}
	if bytes == 0 {
		return nil
	}
	return a.release(bucketID, st.volumeID, bytes, 0)
}

// beforeRewrite keeps the directory d or file ki at key for the snapshots
// that see it, before the caller changes it in place, and marks it written
// now.
func (a *applier) beforeRewrite(bucketID uint64, key []byte, d *stratov1.DirectoryInfo, ki *stratov1.KeyRecord) error {
	st, err := a.snaps(bucketID)
	if err != nil {
		return err
	}
	if d != nil {
		_, err = a.retireRecord(bucketID, st, key, d, d.SnapshotGen)
		d.SnapshotGen = st.gen
		return err
	}
	err = a.keepFile(bucketID, st, key, ki)
	ki.SnapshotGen = st.gen
	return err
}
