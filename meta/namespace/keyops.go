package namespace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

func isFSO(bk *stratov1.BucketInfo) bool { return bk.GetLayout() == stratov1.BucketLayout_LAYOUT_FSO }

func blockKey(id *stratov1.BlockID) [2]uint64 {
	return [2]uint64{id.GetContainerId(), id.GetLocalId()}
}

// checkAllocated validates blocks handed out by prepare: each has an ID and
// none repeats.
func checkAllocated(blocks []*stratov1.BlockLocation) error {
	seen := make(map[[2]uint64]struct{}, len(blocks))
	for _, bl := range blocks {
		if bl.GetBlockId() == nil {
			return fmt.Errorf("%w: a block without an ID", ErrInvalidBlocks)
		}
		k := blockKey(bl.BlockId)
		if _, dup := seen[k]; dup {
			return fmt.Errorf("%w: block %d/%d twice", ErrInvalidBlocks, k[0], k[1])
		}
		seen[k] = struct{}{}
	}
	return nil
}

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

// makeDirs creates names as a chain under parent and returns the last ID.
func (a *applier) makeDirs(parent uint64, names []string, owner string) (uint64, error) {
	for _, name := range names {
		id, err := a.nextID()
		if err != nil {
			return 0, err
		}
		d := &stratov1.DirectoryInfo{ObjectId: id, CreationTimeUnixMs: a.now, ModificationTimeUnixMs: a.now, Owner: owner}
		if err := put(a.b, childKey(a.kb, tagDir, parent, name), d); err != nil {
			return 0, err
		}
		if err := a.b.Set(idKey(a.kb, tagDirByID, id), dirByIDValue(parent, name), nil); err != nil {
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

// ---- open, allocate, commit -------------------------------------------------

func (a *applier) openKey(c *stratov1.OpenKeyCommand) (proto.Message, error) {
	rec, bk, err := a.newOpenKey(c, true)
	if err != nil {
		return nil, err
	}
	return &stratov1.OpenKeyResponse{
		OpenId: rec.Id, Blocks: rec.Blocks, Replication: rec.Replication,
		ChecksumType: rec.ChecksumType, BytesPerChecksum: rec.BytesPerChecksum, BlockSize: bk.BlockSize,
	}, nil
}

// newOpenKey checks open c, creates the parent directories it needs, and
// gives it an ID; persist records it in the open-key table (a deferred
// create is committed in the same apply and never recorded).
func (a *applier) newOpenKey(c *stratov1.OpenKeyCommand, persist bool) (*stratov1.OpenKeyInfo, *stratov1.BucketInfo, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, nil, err
	}
	repl := c.GetReplication()
	if repl == stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		repl = bk.Replication
	}
	switch {
	case !validReplication(repl):
		return nil, nil, fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, repl)
	case c.GetExpiresAtUnixMs() <= 0:
		return nil, nil, fmt.Errorf("%w: open key without an expiry time", ErrInvalid)
	case c.GetSizeHint() < 0:
		return nil, nil, fmt.Errorf("%w: negative size hint %d", ErrInvalid, c.GetSizeHint())
	}
	if err := checkAllocated(c.GetBlocks()); err != nil {
		return nil, nil, err
	}
	rec := &stratov1.OpenKeyInfo{
		Volume: bk.Volume, Bucket: bk.Name, BucketId: bk.Id, VolumeId: bk.VolumeId, Layout: bk.Layout,
		Replication: repl, ChecksumType: bk.ChecksumType, BytesPerChecksum: bk.BytesPerChecksum,
		CreationTimeUnixMs: a.now, ExpiresAtUnixMs: c.GetExpiresAtUnixMs(), Blocks: c.GetBlocks(),
		Overwrite: !c.GetCreateFile() || c.GetOverwrite(), Owner: c.GetOwner(),
	}
	var newDirs []string
	if !isFSO(bk) {
		if c.GetCreateFile() {
			return nil, nil, fmt.Errorf("%w: CreateFile on OBS bucket %s/%s", ErrWrongLayout, bk.Volume, bk.Name)
		}
		if err := ValidateKeyName(c.GetKey()); err != nil {
			return nil, nil, err
		}
		rec.Key, rec.ParentId, rec.FileName = c.Key, bk.Id, c.Key
	} else {
		p, err := cleanFilePath(c.GetKey())
		if err != nil {
			return nil, nil, err
		}
		parent, name := splitLast(p)
		var pid uint64
		if c.GetCreateFile() && !c.GetRecursive() {
			pid, err = a.rs.dir(bk.Id, parent, 0, ErrParentNotFound)
		} else {
			pid, newDirs, err = a.planDirs(bk.Id, parent, false)
		}
		if err != nil {
			return nil, nil, err
		}
		if len(newDirs) == 0 {
			if _, isDir, err := a.rs.lookupDir(pid, name); err != nil {
				return nil, nil, err
			} else if isDir {
				return nil, nil, fmt.Errorf("%w: %s", ErrIsADirectory, p)
			}
			if !rec.Overwrite {
				if isFile, err := a.rs.fileExists(pid, name); err != nil {
					return nil, nil, err
				} else if isFile {
					return nil, nil, fmt.Errorf("%w: %s", ErrFileExists, p)
				}
			}
		}
		rec.Key, rec.ParentId, rec.FileName = p, pid, name
	}
	// Bytes are charged at commit; a size hint that cannot fit fails early.
	if c.GetSizeHint() > 0 {
		if err := a.checkFits(bk, c.GetSizeHint()); err != nil {
			return nil, nil, err
		}
	}
	if len(newDirs) > 0 {
		if err := a.charge(bk, 0, int64(len(newDirs))); err != nil {
			return nil, nil, err
		}
		if rec.ParentId, err = a.makeDirs(rec.ParentId, newDirs, c.GetOwner()); err != nil {
			return nil, nil, err
		}
	}
	if rec.Id, err = a.nextID(); err != nil {
		return nil, nil, err
	}
	if !persist {
		return rec, bk, nil
	}
	if err := put(a.b, idKey(a.kb, tagOpen, rec.Id), rec); err != nil {
		return nil, nil, err
	}
	if err := a.b.Set(expiryKey(a.kb, rec.ExpiresAtUnixMs, rec.Id), nil, nil); err != nil {
		return nil, nil, err
	}
	return rec, bk, nil
}

// checkFits fails with ErrQuotaExceeded if dBytes more bytes would not fit
// the bucket's or the volume's quota. It writes nothing.
func (a *applier) checkFits(bk *stratov1.BucketInfo, dBytes int64) error {
	bu, err := getUsage(a.b, bk.Id)
	if err != nil {
		return err
	}
	if !bu.fits(dBytes, 0) {
		return fmt.Errorf("%w: bucket %s/%s: %d+%d bytes (quota %d)", ErrQuotaExceeded, bk.Volume, bk.Name, bu.bytes, dBytes, bu.quotaBytes)
	}
	vu, err := getUsage(a.b, bk.VolumeId)
	if err != nil {
		return err
	}
	if !vu.fits(dBytes, 0) {
		return fmt.Errorf("%w: volume %s: %d+%d bytes (quota %d)", ErrQuotaExceeded, bk.Volume, vu.bytes, dBytes, vu.quotaBytes)
	}
	return nil
}

func (a *applier) loadOpenKey(id uint64, volume, bucket string) (*stratov1.OpenKeyInfo, error) {
	rec := &stratov1.OpenKeyInfo{}
	ok, err := get(a.b, idKey(a.kb, tagOpen, id), rec)
	if err != nil {
		return nil, err
	}
	if !ok || rec.Volume != volume || rec.Bucket != bucket {
		return nil, fmt.Errorf("%w: %d in %s/%s", ErrOpenKeyNotFound, id, volume, bucket)
	}
	return rec, nil
}

func (a *applier) allocateBlock(c *stratov1.AllocateBlockCommand) (proto.Message, error) {
	rec, err := a.loadOpenKey(c.GetOpenId(), c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	rec.Blocks = append(rec.Blocks, c.GetBlock())
	if err := checkAllocated(rec.Blocks); err != nil {
		return nil, err
	}
	if err := put(a.b, idKey(a.kb, tagOpen, rec.Id), rec); err != nil {
		return nil, err
	}
	return &stratov1.AllocateBlockResponse{Block: c.GetBlock()}, nil
}

func (a *applier) commitKey(c *stratov1.CommitKeyRequest) (proto.Message, error) {
	var rec *stratov1.OpenKeyInfo
	deferred := len(c.GetCreateToken()) > 0
	if deferred {
		oc, err := createToken(c)
		if err != nil {
			return nil, err
		}
		if rec, _, err = a.newOpenKey(oc, false); err != nil {
			return nil, err
		}
	} else {
		var err error
		if rec, err = a.loadOpenKey(c.GetOpenId(), c.GetVolume(), c.GetBucket()); err != nil {
			return nil, err
		}
	}
	var err error
	// The bucket is checked by ID when charging its usage: a bucket deleted
	// and created again under the same name is another bucket.
	fso := rec.Layout == stratov1.BucketLayout_LAYOUT_FSO
	name := c.GetKey()
	if fso {
		if name, err = CleanPath(name); err != nil {
			return nil, err
		}
	}
	if rec.Key != name {
		return nil, fmt.Errorf("%w: %d is not %s/%s/%s", ErrOpenKeyNotFound, rec.Id, rec.Volume, rec.Bucket, c.GetKey())
	}

	// The committed blocks must be this key's allocations; their pipelines
	// come from the allocation, lengths from the client.
	allocated := make(map[[2]uint64]*stratov1.BlockLocation, len(rec.Blocks))
	for _, bl := range rec.Blocks {
		allocated[blockKey(bl.BlockId)] = bl
	}
	final := make([]*stratov1.BlockLocation, 0, len(c.GetBlocks()))
	var size int64
	for _, bl := range c.GetBlocks() {
		k := blockKey(bl.GetBlockId())
		al, ok := allocated[k]
		switch {
		case bl.GetBlockId() == nil:
			return nil, fmt.Errorf("%w: a block without an ID", ErrInvalidBlocks)
		case !ok:
			return nil, fmt.Errorf("%w: block %d/%d was not allocated to open key %d (or is listed twice)", ErrInvalidBlocks, k[0], k[1], rec.Id)
		case bl.GetLength() < 0:
			return nil, fmt.Errorf("%w: block %d/%d has length %d", ErrInvalidBlocks, k[0], k[1], bl.GetLength())
		}
		delete(allocated, k)
		final = append(final, &stratov1.BlockLocation{BlockId: al.BlockId, Offset: size, Length: bl.GetLength(), Pipeline: al.Pipeline})
		size += bl.GetLength()
	}

	tag := byte(tagKey)
	if fso {
		tag = tagFile
		if rec.ParentId != rec.BucketId {
			if ok, err := a.dirAlive(rec.ParentId); err != nil {
				return nil, err
			} else if !ok {
				return nil, fmt.Errorf("%w: %s (deleted while %s was open)", ErrParentNotFound, parentOf(name), name)
			}
		}
		if _, isDir, err := a.rs.lookupDir(rec.ParentId, rec.FileName); err != nil {
			return nil, err
		} else if isDir {
			return nil, fmt.Errorf("%w: %s", ErrIsADirectory, name)
		}
	}
	key := childKey(a.kb2, tag, rec.ParentId, rec.FileName)
	old := &stratov1.KeyInfo{}
	replaced := false
	if c := a.ns.acache; fso && c != nil && c.absent(tagFile, rec.ParentId, rec.FileName) {
		if c.verify {
			a.rs.verifyAbsent(tagFile, rec.ParentId, rec.FileName)
		}
	} else if replaced, err = get(a.b, key, old); err != nil {
		return nil, err
	}
	// own: the key there is this open key's own earlier hsync, whose
	// blocks are this key's blocks.
	own := replaced && old.ObjectId == rec.Id
	switch {
	case rec.Hsynced && !own:
		return nil, fmt.Errorf("%w: %s was deleted or replaced while open", ErrOpenKeyNotFound, name)
	case replaced && !own && !rec.Overwrite:
		return nil, fmt.Errorf("%w: %s", ErrFileExists, name)
	}
	var dNames int64 = 1
	if replaced {
		dNames = 0
	}
	if err := a.chargeIDs(rec.BucketId, rec.VolumeId, rec.Volume, rec.Bucket, size-old.GetSize(), dNames); err != nil {
		return nil, err
	}

	ki := &stratov1.KeyInfo{
		ObjectId: rec.Id, Size: size, Replication: rec.Replication,
		ChecksumType: rec.ChecksumType, BytesPerChecksum: rec.BytesPerChecksum,
		CreationTimeUnixMs: rec.CreationTimeUnixMs, ModificationTimeUnixMs: a.now, Blocks: final, Owner: rec.Owner,
	}
	if fso {
		ki.ParentId = rec.ParentId
	}
	if err := put(a.b, key, ki); err != nil {
		return nil, err
	}
	if replaced && !own {
		if err := a.freeBlocks(old.ObjectId, old.Blocks, "overwrite"); err != nil {
			return nil, err
		}
	}
	if c.GetHsync() {
		// Still open: every allocation stays with the open key.
		rec.Hsynced = true
		if err := put(a.b, idKey(a.kb, tagOpen, rec.Id), rec); err != nil {
			return nil, err
		}
		return &stratov1.CommitKeyResponse{ObjectId: rec.Id, Size: size}, nil
	}
	if len(allocated) > 0 {
		unused := make([]*stratov1.BlockLocation, 0, len(allocated))
		for _, bl := range rec.Blocks { // in allocation order: deterministic
			if _, ok := allocated[blockKey(bl.BlockId)]; ok {
				unused = append(unused, bl)
			}
		}
		if err := a.freeBlocks(rec.Id, unused, "unused"); err != nil {
			return nil, err
		}
	}
	if !deferred {
		if err := a.deleteOpenKey(rec); err != nil {
			return nil, err
		}
	}
	return &stratov1.CommitKeyResponse{ObjectId: rec.Id, Size: size}, nil
}

func (a *applier) deleteOpenKey(rec *stratov1.OpenKeyInfo) error {
	if err := a.b.Delete(idKey(a.kb, tagOpen, rec.Id), nil); err != nil {
		return err
	}
	return a.b.Delete(expiryKey(a.kb, rec.ExpiresAtUnixMs, rec.Id), nil)
}

func parentOf(p string) string {
	parent, _ := splitLast(p)
	if parent == "" {
		return "/"
	}
	return parent
}

// ---- delete, rename, mkdir --------------------------------------------------

func (a *applier) delete(d *stratov1.DeleteRequest) (proto.Message, error) {
	bk, err := a.loadBucket(d.GetVolume(), d.GetBucket())
	if err != nil {
		return nil, err
	}
	if !isFSO(bk) {
		if err := ValidateKeyName(d.GetPath()); err != nil {
			return nil, err
		}
		key := childKey(nil, tagKey, bk.Id, d.GetPath())
		return a.deleteFile(bk, key, d.GetPath(), ErrKeyNotFound)
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
		return a.deleteFile(bk, childKey(nil, tagFile, pid, name), p, ErrFileNotFound)
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
	if err := a.b.Delete(childKey(a.kb, tagDir, pid, name), nil); err != nil {
		return nil, err
	}
	if err := a.b.Delete(idKey(a.kb, tagDirByID, did), nil); err != nil {
		return nil, err
	}
	a.forgetDir(pid, name, did)
	if nonEmpty {
		dd := &stratov1.DeletedDirectory{ObjectId: did, BucketId: bk.Id, VolumeId: bk.VolumeId, DeletedAtUnixMs: a.now,
			Path: bk.Volume + "/" + bk.Name + "/" + p}
		if err := put(a.b, idKey(a.kb, tagDeletedDir, did), dd); err != nil {
			return nil, err
		}
	}
	return &stratov1.DeleteResponse{}, nil
}

func (a *applier) deleteFile(bk *stratov1.BucketInfo, key []byte, name string, notFound error) (proto.Message, error) {
	old := &stratov1.KeyInfo{}
	found, err := get(a.b, key, old)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s/%s/%s", notFound, bk.Volume, bk.Name, name)
	}
	if err := a.charge(bk, -old.Size, -1); err != nil {
		return nil, err
	}
	if err := a.b.Delete(key, nil); err != nil {
		return nil, err
	}
	if err := a.freeBlocks(old.ObjectId, old.Blocks, "delete"); err != nil {
		return nil, err
	}
	return &stratov1.DeleteResponse{}, nil
}

func (a *applier) rename(r *stratov1.RenameCommand) (proto.Message, error) {
	bk, err := a.loadBucket(r.GetVolume(), r.GetBucket())
	if err != nil {
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
	var file *stratov1.KeyInfo
	if !isDir {
		file = &stratov1.KeyInfo{}
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

	if file != nil {
		if err := a.b.Delete(childKey(a.kb, tagFile, spid, sn), nil); err != nil {
			return nil, err
		}
		file.ParentId, file.ModificationTimeUnixMs = tpid, a.now
		return &stratov1.RenameResponse{}, put(a.b, childKey(a.kb, tagFile, tpid, tname), file)
	}
	d := &stratov1.DirectoryInfo{}
	if _, err := get(a.b, childKey(a.kb, tagDir, spid, sn), d); err != nil {
		return nil, err
	}
	if err := a.b.Delete(childKey(a.kb, tagDir, spid, sn), nil); err != nil {
		return nil, err
	}
	a.forgetDir(spid, sn, srcDir)
	if err := put(a.b, childKey(a.kb, tagDir, tpid, tname), d); err != nil {
		return nil, err
	}
	return &stratov1.RenameResponse{}, a.b.Set(idKey(a.kb, tagDirByID, srcDir), dirByIDValue(tpid, tname), nil)
}

// renameKey renames an OBS key; the target must not exist.
func (a *applier) renameKey(bk *stratov1.BucketInfo, src, dst string) (proto.Message, error) {
	if err := ValidateKeyName(src); err != nil {
		return nil, err
	}
	if err := ValidateKeyName(dst); err != nil {
		return nil, err
	}
	ki := &stratov1.KeyInfo{}
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
	if err := a.b.Delete(skey, nil); err != nil {
		return nil, err
	}
	ki.ModificationTimeUnixMs = a.now
	return &stratov1.RenameResponse{}, put(a.b, dkey, ki)
}

func (a *applier) createDirectory(c *stratov1.CreateDirectoryRequest) (proto.Message, error) {
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
	pid, missing, err := a.planDirs(bk.Id, p, true)
	if err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return &stratov1.CreateDirectoryResponse{ObjectId: pid}, nil
	}
	if err := a.charge(bk, 0, int64(len(missing))); err != nil {
		return nil, err
	}
	id, err := a.makeDirs(pid, missing, c.GetOwner())
	if err != nil {
		return nil, err
	}
	return &stratov1.CreateDirectoryResponse{ObjectId: id, Created: int32(len(missing))}, nil
}

// ---- background work: expiry, reclaim, purge --------------------------------

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

// unpublished returns the blocks of an open key that no committed key
// references: all of them, unless an hsync published some under the open
// key's ID and that key is still there.
func (a *applier) unpublished(rec *stratov1.OpenKeyInfo) ([]*stratov1.BlockLocation, error) {
	if !rec.Hsynced {
		return rec.Blocks, nil
	}
	tag := byte(tagKey)
	if rec.Layout == stratov1.BucketLayout_LAYOUT_FSO {
		tag = tagFile
	}
	ki := &stratov1.KeyInfo{}
	if ok, err := get(a.b, childKey(a.kb2, tag, rec.ParentId, rec.FileName), ki); err != nil || !ok || ki.ObjectId != rec.Id {
		return rec.Blocks, err
	}
	published := make(map[[2]uint64]bool, len(ki.Blocks))
	for _, bl := range ki.Blocks {
		published[blockKey(bl.BlockId)] = true
	}
	out := make([]*stratov1.BlockLocation, 0, len(rec.Blocks))
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
				if err := a.b.Delete(idKey(a.kb, tagDirByID, cid), nil); err != nil {
					return nil, err
				}
				a.forgetDir(dd.ObjectId, name, cid)
				sub := &stratov1.DeletedDirectory{ObjectId: cid, BucketId: dd.BucketId, VolumeId: dd.VolumeId,
					DeletedAtUnixMs: a.now, Path: dd.Path + "/" + name}
				if err := put(a.b, idKey(a.kb, tagDeletedDir, cid), sub); err != nil {
					return nil, err
				}
				if err := a.release(dd.BucketId, dd.VolumeId, 0, 1); err != nil {
					return nil, err
				}
				res.Directories++
			} else {
				ki := &stratov1.KeyInfo{}
				if err := proto.Unmarshal(ch.value, ki); err != nil {
					return nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, ch.key, err)
				}
				if err := a.freeBlocks(ki.ObjectId, ki.Blocks, "reclaim"); err != nil {
					return nil, err
				}
				if err := a.release(dd.BucketId, dd.VolumeId, ki.Size, 1); err != nil {
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
