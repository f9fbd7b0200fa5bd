// Apply's operations on the FSO directory tree and on names: creating
// directories, deleting and renaming files, directories and keys.

package namespace

import (
	"encoding/binary"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// planDirs resolves clean path p as far as it exists and returns the
// deepest existing directory and the names still to create under it
// (mkdir -p). A file in the way is ErrNotADirectory, or ErrFileExists when
// it is p itself and mkdir is set.
func (a *applier) planDirs(root uint64, p string, mkdir bool) (uint64, []string, error) {
	id := root
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p)
		} else {
			j += i
		}
		name := p[i:j]
		child, ok, err := a.rs.lookupDir(id, name)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			isFile, err := a.rs.fileExists(id, name)
			if err != nil {
				return 0, nil, err
			}
			if isFile {
				if mkdir && j == len(p) {
					return 0, nil, fmt.Errorf("%w: %s", ErrFileExists, p)
				}
				return 0, nil, fmt.Errorf("%w: %s", ErrNotADirectory, p[:j])
			}
			return id, strings.Split(p[i:], "/"), nil
		}
		id = child
		i = j + 1
	}
	return id, nil, nil
}

// dirAttrs is what makeDirs gives the directories it creates.
type dirAttrs struct {
	owner, group string
	// last is the permission of the last directory, parents that of the
	// others (nil: the default).
	last, parents *uint32
}

// makeDirs creates names as a chain under parent and returns the last ID.
// Each directory takes its parent's DEFAULT ACL entries (acl.go).
func (a *applier) makeDirs(bk *stratov1.BucketRecord, parent uint64, names []string, nd dirAttrs) (uint64, error) {
	pacls, err := a.dirAcls(bk, parent)
	if err != nil {
		return 0, err
	}
	acls := inherit(pacls, true)
	st, err := a.snaps(bk.Id)
	if err != nil {
		return 0, err
	}
	for i, name := range names {
		id, err := a.nextID()
		if err != nil {
			return 0, err
		}
		perm := nd.parents
		if i == len(names)-1 {
			perm = nd.last
		}
		d := &stratov1.DirectoryInfo{ObjectId: id, CreationTimeUnixMs: a.now, ModificationTimeUnixMs: a.now, Owner: nd.owner,
			Permission: permissionOr(perm, DefaultDirPermission), Group: nd.group, Acls: acls, SnapshotGen: st.gen, PlacedGen: st.gen}
		if err := put(a.b, childKey(a.kb, tagDir, parent, name), d); err != nil {
			return 0, err
		}
		if err := a.b.Set(idKey(a.kb, tagDirByID, id), dirByIDValue(parent, name), nil); err != nil {
			return 0, err
		}
		if err := a.journal(bk.Id, st, st.gen, childKey(a.kb, tagDir, parent, name)); err != nil {
			return 0, err
		}
		if c := a.ns.acache; c != nil {
			c.markEmpty(id)
		}
		parent = id
	}
	return parent, nil
}

func dirByIDValue(parent uint64, name string) []byte {
	return append(binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(name)), parent), name...)
}

func parentOf(p string) string {
	parent, _ := splitLast(p)
	if parent == "" {
		return "/"
	}
	return parent
}

func (a *applier) delete(d *stratov1.DeleteCommand) (proto.Message, error) {
	bk, err := a.loadBucket(d.GetVolume(), d.GetBucket())
	if err != nil {
		return nil, err
	}
	if err := checkWritable(d.GetPath()); err != nil {
		return nil, err
	}
	if !isFSO(bk) {
		if err := ValidateKeyName(d.GetPath()); err != nil {
			return nil, err
		}
		key := childKey(nil, tagKey, bk.Id, d.GetPath())
		if err := a.checkIfObjectID(bk, key, d); err != nil {
			return nil, err
		}
		if bk.Versioning != versioningOff || d.GetVersionId() != "" {
			return a.deleteVersioned(bk, key, d.GetPath(), d.GetVersionId(), d.GetBypassGovernance())
		}
		return a.deleteFile(bk, key, d.GetPath(), ErrKeyNotFound)
	}
	if d.GetVersionId() != "" && d.GetVersionId() != NullVersionID {
		return nil, fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: it keeps no versions", ErrWrongLayout, bk.Volume, bk.Name)
	}
	p, err := CleanPath(d.GetPath())
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, invalidName("path", d.GetPath(), "cannot delete the bucket's root")
	}
	parent, name := splitLast(p)
	pid, err := a.rs.dir(bk.Id, parent, 0, ErrFileNotFound)
	if err != nil {
		return nil, err
	}
	did, isDir, err := a.rs.lookupDir(pid, name)
	if err != nil {
		return nil, err
	}
	if !isDir {
		key := childKey(nil, tagFile, pid, name)
		if err := a.checkIfObjectID(bk, key, d); err != nil {
			return nil, err
		}
		return a.deleteFile(bk, key, p, ErrFileNotFound)
	}
	if d.GetIfObjectId() != 0 && d.GetIfObjectId() != did {
		return nil, fmt.Errorf("%w: %s/%s/%s is no longer object %d", ErrKeyReplaced, bk.Volume, bk.Name, p, d.GetIfObjectId())
	}
	nonEmpty, err := hasChildren(a.b, did)
	if err != nil {
		return nil, err
	}
	if nonEmpty && !d.GetRecursive() {
		return nil, fmt.Errorf("%w: %s", ErrDirectoryNotEmpty, p)
	}
	if err := a.charge(bk, 0, -1); err != nil {
		return nil, err
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	if st.journaled(st.gen) {
		dr := &stratov1.DirectoryInfo{}
		if _, err := get(a.b, childKey(a.kb, tagDir, pid, name), dr); err != nil {
			return nil, err
		}
		if err := a.retireDir(bk.Id, st, pid, name, dr, st.gen, true); err != nil {
			return nil, err
		}
	}
	if err := a.b.Delete(childKey(a.kb, tagDir, pid, name), nil); err != nil {
		return nil, err
	}
	if err := a.b.Delete(idKey(a.kb, tagDirByID, did), nil); err != nil {
		return nil, err
	}
	a.forgetDir(pid, name, did)
	if nonEmpty {
		dd := &stratov1.DeletedDirectory{ObjectId: did, BucketId: bk.Id, VolumeId: bk.VolumeId, DeletedAtUnixMs: a.now,
			Path: bk.Volume + "/" + bk.Name + "/" + p, SnapshotGen: st.gen}
		if err := put(a.b, idKey(a.kb, tagDeletedDir, did), dd); err != nil {
			return nil, err
		}
	}
	return &stratov1.DeleteResponse{}, nil
}

// checkIfObjectID refuses a delete whose if_object_id is not the object
// the key's (or file's) latest version is (a delete marker is no object).
func (a *applier) checkIfObjectID(bk *stratov1.BucketRecord, key []byte, d *stratov1.DeleteCommand) error {
	if d.GetIfObjectId() == 0 {
		return nil
	}
	cur := &stratov1.KeyRecord{}
	found, err := get(a.b, key, cur)
	if err != nil {
		return err
	}
	if !found || cur.GetObjectId() != d.GetIfObjectId() {
		return fmt.Errorf("%w: %s/%s/%s is no longer object %d", ErrKeyReplaced, bk.Volume, bk.Name, d.GetPath(), d.GetIfObjectId())
	}
	return nil
}

func (a *applier) deleteFile(bk *stratov1.BucketRecord, key []byte, name string, notFound error) (proto.Message, error) {
	old := &stratov1.KeyRecord{}
	found, err := get(a.b, key, old)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s/%s/%s", notFound, bk.Volume, bk.Name, name)
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	return &stratov1.DeleteResponse{}, a.removeFile(bk, st, key, old)
}

// removeFile deletes the record old at key: its bytes and name leave the
// usage, its blocks go unless a snapshot or another record holds them.
func (a *applier) removeFile(bk *stratov1.BucketRecord, st snapState, key []byte, old *stratov1.KeyRecord) error {
	kept := st.sees(old.SnapshotGen, st.gen)
	release, err := a.releaseOf(st, old, kept)
	if err != nil {
		return err
	}
	if err := a.charge(bk, -release, -1); err != nil {
		return err
	}
	if err := a.b.Delete(key, nil); err != nil {
		return err
	}
	return a.dropFile(bk.Id, st, key, old, kept, "delete")
}

func (a *applier) rename(r *stratov1.RenameCommand) (proto.Message, error) {
	bk, err := a.loadBucket(r.GetVolume(), r.GetBucket())
	if err != nil {
		return nil, err
	}
	if err := checkWritable(r.GetSrc()); err != nil {
		return nil, err
	}
	if err := checkWritable(r.GetDst()); err != nil {
		return nil, err
	}
	if !isFSO(bk) {
		return a.renameKey(bk, r.GetSrc(), r.GetDst())
	}
	src, err := CleanPath(r.GetSrc())
	if err != nil {
		return nil, err
	}
	dst, err := CleanPath(r.GetDst())
	if err != nil {
		return nil, err
	}
	if src == "" {
		return nil, invalidName("path", r.GetSrc(), "cannot rename the bucket's root")
	}
	sp, sn := splitLast(src)
	spid, err := a.rs.dir(bk.Id, sp, 0, ErrFileNotFound)
	if err != nil {
		return nil, err
	}
	srcDir, isDir, err := a.rs.lookupDir(spid, sn)
	if err != nil {
		return nil, err
	}
	var file *stratov1.KeyRecord
	if !isDir {
		file = &stratov1.KeyRecord{}
		if ok, err := get(a.b, childKey(a.kb, tagFile, spid, sn), file); err != nil {
			return nil, err
		} else if !ok {
			return nil, fmt.Errorf("%w: %s", ErrFileNotFound, src)
		}
	}
	avoid := srcDir // 0 for a file

	if src == dst {
		return &stratov1.RenameResponse{}, nil // onto itself
	}

	var tpid uint64
	var tname, tpath string
	if dst == "" {
		if !r.GetIntoDirectory() {
			return nil, invalidName("path", r.GetDst(), "cannot rename onto the bucket's root")
		}
		tpid, tname, tpath = bk.Id, sn, sn
	} else {
		dp, dn := splitLast(dst)
		dpid, err := a.rs.dir(bk.Id, dp, avoid, ErrParentNotFound)
		if err != nil {
			return nil, err
		}
		tpid, tname, tpath = dpid, dn, dst
		if r.GetIntoDirectory() {
			if did, ok, err := a.rs.lookupDir(dpid, dn); err != nil {
				return nil, err
			} else if ok {
				tpid, tname, tpath = did, sn, joinPath(dst, sn)
			}
		}
	}
	if tpid == spid && tname == sn {
		return &stratov1.RenameResponse{}, nil // onto itself
	}
	if avoid != 0 && tpid == avoid {
		return nil, fmt.Errorf("%w: %s under %s", ErrRenameUnderSelf, src, dst)
	}
	if _, ok, err := a.rs.lookupDir(tpid, tname); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrDirectoryExists, tpath)
	}
	if ok, err := a.rs.fileExists(tpid, tname); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrFileExists, tpath)
	}

	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	if file != nil {
		if err := a.keepFile(bk.Id, st, childKey(a.kb, tagFile, spid, sn), file); err != nil {
			return nil, err
		}
		if err := a.b.Delete(childKey(a.kb, tagFile, spid, sn), nil); err != nil {
			return nil, err
		}
		file.ParentId, file.ModificationTimeUnixMs, file.SnapshotGen = tpid, a.now, st.gen
		if err := a.followWriter(file, tpid, tname, tpath); err != nil {
			return nil, err
		}
		if err := a.journal(bk.Id, st, st.gen, childKey(a.kb, tagFile, tpid, tname)); err != nil {
			return nil, err
		}
		return &stratov1.RenameResponse{}, put(a.b, childKey(a.kb, tagFile, tpid, tname), file)
	}
	d := &stratov1.DirectoryInfo{}
	if _, err := get(a.b, childKey(a.kb, tagDir, spid, sn), d); err != nil {
		return nil, err
	}
	if err := a.retireDir(bk.Id, st, spid, sn, d, st.gen, true); err != nil {
		return nil, err
	}
	if err := a.b.Delete(childKey(a.kb, tagDir, spid, sn), nil); err != nil {
		return nil, err
	}
	a.forgetDir(spid, sn, srcDir)
	d.SnapshotGen, d.PlacedGen = st.gen, st.gen
	if err := put(a.b, childKey(a.kb, tagDir, tpid, tname), d); err != nil {
		return nil, err
	}
	if err := a.journal(bk.Id, st, st.gen, childKey(a.kb, tagDir, tpid, tname)); err != nil {
		return nil, err
	}
	return &stratov1.RenameResponse{}, a.b.Set(idKey(a.kb, tagDirByID, srcDir), dirByIDValue(tpid, tname), nil)
}

// renameKey renames an OBS key; the target must not exist.
func (a *applier) renameKey(bk *stratov1.BucketRecord, src, dst string) (proto.Message, error) {
	if bk.Versioning != versioningOff {
		return nil, fmt.Errorf("%w: %s/%s is versioned (S3): its keys are not renamed", ErrFailedPrecondition, bk.Volume, bk.Name)
	}
	if err := ValidateKeyName(src); err != nil {
		return nil, err
	}
	if err := ValidateKeyName(dst); err != nil {
		return nil, err
	}
	ki := &stratov1.KeyRecord{}
	skey := childKey(nil, tagKey, bk.Id, src)
	if ok, err := get(a.b, skey, ki); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, bk.Volume, bk.Name, src)
	}
	if src == dst {
		return &stratov1.RenameResponse{}, nil
	}
	dkey := childKey(nil, tagKey, bk.Id, dst)
	if ok, err := exists(a.b, dkey); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyExists, bk.Volume, bk.Name, dst)
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	if err := a.keepFile(bk.Id, st, skey, ki); err != nil {
		return nil, err
	}
	if err := a.b.Delete(skey, nil); err != nil {
		return nil, err
	}
	if err := a.journal(bk.Id, st, st.gen, dkey); err != nil {
		return nil, err
	}
	ki.ModificationTimeUnixMs, ki.SnapshotGen = a.now, st.gen
	if err := a.followWriter(ki, bk.Id, dst, dst); err != nil {
		return nil, err
	}
	return &stratov1.RenameResponse{}, put(a.b, dkey, ki)
}

func (a *applier) createDirectory(c *stratov1.CreateDirectoryCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	if !isFSO(bk) {
		return nil, fmt.Errorf("%w: CreateDirectory on OBS bucket %s/%s", ErrWrongLayout, bk.Volume, bk.Name)
	}
	p, err := CleanPath(c.GetPath())
	if err != nil {
		return nil, err
	}
	if err := checkWritable(p); err != nil {
		return nil, err
	}
	pid, missing, err := a.planDirs(bk.Id, p, true)
	if err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return &stratov1.CreateDirectoryResponse{ObjectId: pid}, nil
	}
	if err := checkPermission(c.Permission); err != nil {
		return nil, err
	}
	nd := dirAttrs{owner: c.GetOwner(), group: c.GetGroup(), last: c.Permission}
	if c.Permission != nil {
		nd.parents = proto.Uint32(c.GetPermission() | implicitDirBits)
	}
	if nd.group == "" {
		if nd.group, err = a.groupOf(bk, pid); err != nil {
			return nil, err
		}
	}
	if err := a.charge(bk, 0, int64(len(missing))); err != nil {
		return nil, err
	}
	id, err := a.makeDirs(bk, pid, missing, nd)
	if err != nil {
		return nil, err
	}
	return &stratov1.CreateDirectoryResponse{ObjectId: id, Created: int32(len(missing))}, nil
}
