package namespace

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// S3 versioning of OBS buckets (decision 0086). The latest version of a key,
// when it is an object, stays the key's record in the key table (N k), where
// GET, HEAD and ListObjects read it as in a bucket never versioned. Every
// other version, and every delete marker, is a record of the version table:
//
//	N V <bucketID> <key> 0x00 <^version seq> → KeyRecord
//
// newest first within a key (key names hold no NUL, so a key's versions sort
// before those of every longer key). A version's sequence number is taken
// from the ID counter when it is written; 0 is the null version written
// before the bucket was ever versioned, which sorts as the oldest. The
// invariant: a key has a record in N k exactly when its latest version is an
// object; otherwise its newest N V record (a delete marker) is the latest.
//
// A bucket's versioning lives in its BucketRecord and, for the commit path
// (which reads it already), in its SnapshotState: an unversioned bucket's
// commit reads nothing more than before. Versioning applies to OBS buckets
// only, and not with snapshots (a versioned bucket's versions are its
// history).
const tagVersion = 'V'

// NullVersionID is the version ID of the null version.
const NullVersionID = "null"

const (
	versioningOff       = stratov1.BucketVersioning_VERSIONING_UNSPECIFIED
	versioningEnabled   = stratov1.BucketVersioning_VERSIONING_ENABLED
	versioningSuspended = stratov1.BucketVersioning_VERSIONING_SUSPENDED
)

func versionPrefix(buf []byte, bucketID uint64, name string) []byte {
	return append(childKey(buf, tagVersion, bucketID, name), 0)
}

func versionKey(buf []byte, bucketID uint64, name string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(versionPrefix(buf, bucketID, name), ^seq)
}

func isNullVersion(r *stratov1.KeyRecord) bool { return r.GetNullVersion() || r.GetVersionSeq() == 0 }

// VersionID is the S3 version ID of a version: "null", or 16 hex digits
// that sort a key's versions newest first.
func VersionID(r *stratov1.KeyRecord) string {
	if isNullVersion(r) {
		return NullVersionID
	}
	return fmt.Sprintf("%016x", ^r.GetVersionSeq())
}

// parseVersionID is the sequence number a version ID names (null: the null
// version, whose number is not in its ID).
func parseVersionID(id string) (seq uint64, null bool, err error) {
	if id == NullVersionID {
		return 0, true, nil
	}
	v, perr := strconv.ParseUint(id, 16, 64)
	if perr != nil || len(id) != 16 || v == ^uint64(0) || fmt.Sprintf("%016x", v) != id {
		return 0, false, fmt.Errorf("%w: invalid version id %q", ErrInvalid, id)
	}
	return ^v, false, nil
}

// checkVersioning checks a versioning change of bucket bk with snapshot
// state st (apply; prepare checks the value).
func checkVersioning(bk *stratov1.BucketRecord, st snapState, v stratov1.BucketVersioning) error {
	switch {
	case v != versioningEnabled && v != versioningSuspended:
		return fmt.Errorf("%w: versioning %v must be ENABLED or SUSPENDED", ErrInvalid, v)
	case isFSO(bk):
		return fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: S3 versioning applies to object-store (OBS) buckets only",
			ErrWrongLayout, bk.Volume, bk.Name)
	case bk.GetObjectLock().GetEnabled() && v != versioningEnabled:
		return fmt.Errorf("%w: %s/%s has object lock: its versioning stays ENABLED", ErrFailedPrecondition, bk.Volume, bk.Name)
	case len(st.ids) > 0:
		return fmt.Errorf("%w: %s/%s has %d; a versioned bucket keeps its history as versions, not snapshots (delete them first)",
			ErrHasSnapshots, bk.Volume, bk.Name, len(st.ids))
	}
	return nil
}

// setVersioning records bucket bk's new versioning (bk is written by the
// caller) in its snapshot state too.
func (a *applier) setVersioning(bk *stratov1.BucketRecord, v stratov1.BucketVersioning) error {
	st, err := a.snaps(bk.Id)
	if err != nil {
		return err
	}
	if err := checkVersioning(bk, st, v); err != nil {
		return err
	}
	bk.Versioning = v
	st.versioning, st.volumeID = v, bk.VolumeId
	return a.putSnapState(bk.Id, st)
}

// versionWrite is what a commit to a versioned bucket does besides writing
// the key: the new version's number, whether it is the null version, and
// the version it replaces in the key table, which becomes noncurrent
// (moved) or, a null version replaced by another, goes.
type versionWrite struct {
	seq   uint64
	null  bool
	moved *stratov1.KeyRecord
}

// id is the new version's ID ("" in a bucket never versioned).
func (vw versionWrite) id(st snapState) string {
	if st.versioning == versioningOff {
		return ""
	}
	return VersionID(&stratov1.KeyRecord{VersionSeq: vw.seq, NullVersion: vw.null})
}

// planVersion decides a commit's versionWrite without writing: old is the
// key's record (replaced: it exists and is another object than the one
// committed).
func (a *applier) planVersion(st snapState, old *stratov1.KeyRecord, replaced bool) (versionWrite, error) {
	if st.versioning == versioningOff {
		return versionWrite{}, nil
	}
	seq, err := a.nextID()
	if err != nil {
		return versionWrite{}, err
	}
	vw := versionWrite{seq: seq, null: st.versioning == versioningSuspended}
	if replaced && (!vw.null || !isNullVersion(old)) {
		vw.moved = old
	}
	return vw, nil
}

// writeVersion does what vw planned, after the commit charged its usage.
func (a *applier) writeVersion(bucketID, volumeID uint64, name string, st snapState, vw versionWrite) error {
	if vw.moved != nil {
		if err := put(a.b, versionKey(nil, bucketID, name, vw.moved.VersionSeq), vw.moved); err != nil {
			return err
		}
	}
	if vw.null {
		return a.dropNullVersion(bucketID, volumeID, name, st)
	}
	return nil
}

// findVersion reads version (seq, or the null version) of key name from the
// version table.
func (a *applier) findVersion(bucketID uint64, name string, seq uint64, null bool) (key []byte, rec *stratov1.KeyRecord, err error) {
	if !null {
		key = versionKey(nil, bucketID, name, seq)
		rec = &stratov1.KeyRecord{}
		if ok, err := get(a.b, key, rec); err != nil || !ok {
			return nil, nil, err
		}
		return key, rec, nil
	}
	err = eachVersion(a.b, bucketID, name, func(k []byte, r *stratov1.KeyRecord) bool {
		if isNullVersion(r) {
			key, rec = k, r
			return false
		}
		return true
	})
	return key, rec, err
}

// eachVersion visits the records of key name in the version table, newest
// first, until visit returns false.
func eachVersion(r pebble.Reader, bucketID uint64, name string, visit func(key []byte, rec *stratov1.KeyRecord) bool) error {
	p := versionPrefix(nil, bucketID, name)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		rec := &stratov1.KeyRecord{}
		if err := proto.Unmarshal(it.Value(), rec); err != nil {
			_ = it.Close()
			return fmt.Errorf("%w: version of %q: %w", ErrCorrupt, name, err)
		}
		if !visit(append([]byte(nil), it.Key()...), rec) {
			break
		}
	}
	return it.Close()
}

// dropNullVersion deletes the noncurrent null version of key name, if it
// has one: a null version written replaces it.
func (a *applier) dropNullVersion(bucketID, volumeID uint64, name string, st snapState) error {
	key, rec, err := a.findVersion(bucketID, name, 0, true)
	if err != nil || rec == nil {
		return err
	}
	return a.dropVersion(bucketID, volumeID, key, rec, st, "overwrite")
}

// dropVersion deletes version rec at key of the version table for good:
// its bytes and name leave the usage, its blocks are freed.
func (a *applier) dropVersion(bucketID, volumeID uint64, key []byte, rec *stratov1.KeyRecord, st snapState, reason string) error {
	if err := a.b.Delete(key, nil); err != nil {
		return err
	}
	if rec.DeleteMarker {
		return a.release(bucketID, volumeID, 0, 1)
	}
	bytes, err := a.releaseOf(st, rec, false)
	if err != nil {
		return err
	}
	if err := a.release(bucketID, volumeID, bytes, 1); err != nil {
		return err
	}
	return a.unref(st, rec, reason)
}

// promote makes the newest noncurrent version of key name the key's
// record when it is an object (the latest version was deleted).
func (a *applier) promote(bucketID uint64, name string) error {
	var key []byte
	var rec *stratov1.KeyRecord
	if err := eachVersion(a.b, bucketID, name, func(k []byte, r *stratov1.KeyRecord) bool {
		key, rec = k, r
		return false
	}); err != nil || rec == nil || rec.DeleteMarker {
		return err
	}
	if err := a.b.Delete(key, nil); err != nil {
		return err
	}
	return put(a.b, childKey(nil, tagKey, bucketID, name), rec)
}

// deleteVersioned deletes key name of OBS bucket bk (at key in the key
// table) when the bucket is or was versioned, or a version is named: with
// versionID, that version for good; without, on a versioned bucket, a
// delete marker becomes the latest version.
func (a *applier) deleteVersioned(bk *stratov1.BucketRecord, key []byte, name, versionID string, bypass bool) (proto.Message, error) {
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	cur := &stratov1.KeyRecord{}
	found, err := get(a.b, key, cur)
	if err != nil {
		return nil, err
	}
	if versionID == "" {
		return a.deleteMarker(bk, st, key, name, cur, found)
	}
	seq, null, err := parseVersionID(versionID)
	if err != nil {
		return nil, err
	}
	label := bk.Volume + "/" + bk.Name + "/" + name + " version " + versionID
	if found && VersionID(cur) == versionID {
		if err := a.checkDestroy(cur, bypass, label); err != nil {
			return nil, err
		}
		if err := a.removeFile(bk, st, key, cur); err != nil {
			return nil, err
		}
		return &stratov1.DeleteResponse{VersionId: versionID}, a.promote(bk.Id, name)
	}
	vkey, rec, err := a.findVersion(bk.Id, name, seq, null)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: %s/%s/%s has no version %s", ErrKeyNotFound, bk.Volume, bk.Name, name, versionID)
	}
	if err := a.checkDestroy(rec, bypass, label); err != nil {
		return nil, err
	}
	if err := a.dropVersion(bk.Id, bk.VolumeId, vkey, rec, st, "delete"); err != nil {
		return nil, err
	}
	if !found {
		// The version deleted may have been the latest (a delete marker).
		if err := a.promote(bk.Id, name); err != nil {
			return nil, err
		}
	}
	return &stratov1.DeleteResponse{VersionId: versionID, DeleteMarker: rec.DeleteMarker}, nil
}

// deleteMarker makes a delete marker the latest version of key name: the
// current version, if any, becomes noncurrent (or goes, a null version
// replaced by a null marker on a suspended bucket).
func (a *applier) deleteMarker(bk *stratov1.BucketRecord, st snapState, key []byte, name string, cur *stratov1.KeyRecord, found bool) (proto.Message, error) {
	seq, err := a.nextID()
	if err != nil {
		return nil, err
	}
	marker := &stratov1.KeyRecord{VersionSeq: seq, NullVersion: st.versioning == versioningSuspended, DeleteMarker: true,
		CreationTimeUnixMs: a.now, ModificationTimeUnixMs: a.now, SnapshotGen: st.gen}
	drop := found && marker.NullVersion && isNullVersion(cur)
	var release, names int64 = 0, 1
	if drop {
		// (Never locked: a bucket with object lock is never suspended.)
		if err := a.checkDestroy(cur, false, bk.Volume+"/"+bk.Name+"/"+name); err != nil {
			return nil, err
		}
		if release, err = a.releaseOf(st, cur, false); err != nil {
			return nil, err
		}
		names = 0
	}
	if err := a.charge(bk, -release, names); err != nil {
		return nil, err
	}
	if found {
		if err := a.b.Delete(key, nil); err != nil {
			return nil, err
		}
		if drop {
			err = a.dropFile(bk.Id, st, key, cur, false, "delete")
		} else {
			err = put(a.b, versionKey(nil, bk.Id, name, cur.VersionSeq), cur)
		}
		if err != nil {
			return nil, err
		}
	}
	if marker.NullVersion && !drop {
		if err := a.dropNullVersion(bk.Id, bk.VolumeId, name, st); err != nil {
			return nil, err
		}
	}
	if err := put(a.b, versionKey(nil, bk.Id, name, seq), marker); err != nil {
		return nil, err
	}
	return &stratov1.DeleteResponse{VersionId: VersionID(marker), DeleteMarker: true}, nil
}

// setVersionAttributes is SetAttributes of a noncurrent version.
func (a *applier) setVersionAttributes(bk *stratov1.BucketRecord, c *stratov1.SetAttributesCommand) (proto.Message, error) {
	label := bk.Volume + "/" + bk.Name + "/" + c.GetKey()
	if isFSO(bk) {
		return nil, fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: it keeps no versions", ErrWrongLayout, bk.Volume, bk.Name)
	}
	seq, null, err := parseVersionID(c.GetVersionId())
	if err != nil {
		return nil, err
	}
	key, rec, err := a.findVersion(bk.Id, c.GetKey(), seq, null)
	switch {
	case err != nil:
		return nil, err
	case rec == nil:
		return nil, fmt.Errorf("%w: %s has no version %s", ErrKeyNotFound, label, c.GetVersionId())
	case rec.DeleteMarker:
		return nil, fmt.Errorf("%w: version %s of %s is a delete marker", ErrFailedPrecondition, c.GetVersionId(), label)
	case c.GetObjectId() != 0 && rec.ObjectId != c.GetObjectId():
		return nil, fmt.Errorf("%w: %s is object %d, not %d", ErrKeyReplaced, label, rec.ObjectId, c.GetObjectId())
	}
	rec.Attributes = c.GetAttributes()
	return &stratov1.SetAttributesResponse{}, put(a.b, key, rec)
}
