package namespace

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func isFSO(bk *stratov1.BucketRecord) bool { return bk.GetLayout() == stratov1.BucketLayout_LAYOUT_FSO }

func blockKey(id *stratov1.BlockIDRecord) [2]uint64 {
	return [2]uint64{id.GetContainerId(), id.GetLocalId()}
}

// checkAllocated validates blocks handed out by prepare: each has an ID and
// none repeats.
func checkAllocated(blocks []*stratov1.BlockRecord) error {
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

// ---- open, allocate, commit -------------------------------------------------

func (a *applier) openKey(c *stratov1.OpenKeyCommand) (proto.Message, error) {
	if c.GetAppend() {
		return a.openAppend(c)
	}
	rec, bk, err := a.newOpenKey(c, true)
	if err != nil {
		return nil, err
	}
	return &stratov1.OpenKeyResponse{
		OpenId: rec.Id, Blocks: groupLocations(BlockLocations(rec.Blocks), rec.ErasureCoding), Replication: rec.Replication,
		ChecksumType: rec.ChecksumType, BytesPerChecksum: rec.BytesPerChecksum, BlockSize: bk.BlockSize,
		ErasureCoding: ErasureCoding(rec.ErasureCoding),
	}, nil
}

// newOpenKey checks open c, creates the parent directories it needs, and
// gives it an ID; persist records it in the open-key table (a deferred
// create is committed in the same apply and never recorded).
func (a *applier) newOpenKey(c *stratov1.OpenKeyCommand, persist bool) (*stratov1.OpenKeyInfo, *stratov1.BucketRecord, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, nil, err
	}
	repl, e, err := keyRedundancy(c.GetReplication(), c.GetErasureCoding(), bk)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case c.GetExpiresAtUnixMs() <= 0:
		return nil, nil, fmt.Errorf("%w: open key without an expiry time", ErrInvalid)
	case c.GetSizeHint() < 0:
		return nil, nil, fmt.Errorf("%w: negative size hint %d", ErrInvalid, c.GetSizeHint())
	}
	if err := checkAllocated(c.GetBlocks()); err != nil {
		return nil, nil, err
	}
	if err := checkWritable(c.GetKey()); err != nil {
		return nil, nil, err
	}
	rec := &stratov1.OpenKeyInfo{
		Volume: bk.Volume, Bucket: bk.Name, BucketId: bk.Id, VolumeId: bk.VolumeId, Layout: bk.Layout,
		Replication: repl, ErasureCoding: e, ChecksumType: bk.ChecksumType, BytesPerChecksum: bk.BytesPerChecksum,
		CreationTimeUnixMs: a.now, ExpiresAtUnixMs: c.GetExpiresAtUnixMs(), Blocks: c.GetBlocks(),
		Overwrite: !c.GetCreateFile() || c.GetOverwrite(), Owner: c.GetOwner(),
		Permission: permissionOr(c.Permission, DefaultFilePermission), Group: c.GetGroup(),
	}
	if err := checkPermission(c.Permission); err != nil {
		return nil, nil, err
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
	if rec.Group == "" && isFSO(bk) {
		// HDFS's rule: a file takes its directory's group (the
		// directories made on the way take it too).
		if rec.Group, err = a.groupOf(bk, rec.ParentId); err != nil {
			return nil, nil, err
		}
	}
	if len(newDirs) > 0 {
		if err := a.charge(bk, 0, int64(len(newDirs))); err != nil {
			return nil, nil, err
		}
		if rec.ParentId, err = a.makeDirs(bk, rec.ParentId, newDirs, dirAttrs{owner: c.GetOwner(), group: rec.Group}); err != nil {
			return nil, nil, err
		}
	}
	// The key takes its directory's (or bucket's) DEFAULT ACL entries.
	pacls, err := a.dirAcls(bk, rec.ParentId)
	if err != nil {
		return nil, nil, err
	}
	rec.Acls = inherit(pacls, false)
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
func (a *applier) checkFits(bk *stratov1.BucketRecord, dBytes int64) error {
	bu, err := a.getUsage(bk.Id)
	if err != nil {
		return err
	}
	if !bu.fits(dBytes, 0) {
		return fmt.Errorf("%w: bucket %s/%s: %d+%d bytes (quota %d)", ErrQuotaExceeded, bk.Volume, bk.Name, bu.bytes, dBytes, bu.quotaBytes)
	}
	vu, err := a.getUsage(bk.VolumeId)
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
	bl := groupLocations([]*stratov1.BlockLocation{BlockLocation(c.GetBlock())}, rec.ErasureCoding)[0]
	return &stratov1.AllocateBlockResponse{Block: bl}, nil
}

func (a *applier) commitKey(c *stratov1.CommitKeyCommand) (proto.Message, error) {
	rec, deferred, err := a.committedOpenKey(c)
	if err != nil {
		return nil, err
	}
	// The bucket is checked by ID when charging its usage: a bucket deleted
	// and created again under the same name is another bucket.
	fso := rec.Layout == stratov1.BucketLayout_LAYOUT_FSO
	name := c.GetKey()
	if fso {
		if name, err = CleanPath(name); err != nil {
			return nil, err
		}
	}
	if rec.Key != name && !rec.Hsynced { // a published file's writer follows its renames
		return nil, fmt.Errorf("%w: %d is not %s/%s/%s", ErrOpenKeyNotFound, rec.Id, rec.Volume, rec.Bucket, c.GetKey())
	}
	final, size, unused, err := committedBlocks(rec, c.GetBlocks())
	if err != nil {
		return nil, err
	}
	final, size = withBase(rec, final, size)
	var sources []composeSource
	if len(c.GetSources()) > 0 {
		if len(c.GetBlocks()) > 0 || c.GetHsync() || rec.Append {
			return nil, fmt.Errorf("%w: sources with blocks or hsync", ErrInvalidBlocks)
		}
		if sources, final, size, err = a.composeSources(rec, name, c.GetSources()); err != nil {
			return nil, err
		}
	}
	key, old, replaced, err := a.commitTarget(rec, name, fso)
	if err != nil {
		return nil, err
	}
	// own: the key there is this open key's own earlier hsync, whose
	// blocks are this key's blocks.
	own := replaced && old.ObjectId == objectOf(rec)
	if err := checkTarget(c, rec, old, replaced, own, name); err != nil {
		return nil, err
	}
	st, err := a.snaps(rec.BucketId)
	if err != nil {
		return nil, err
	}
	vw, err := a.planVersion(st, old, replaced && !own)
	if err != nil {
		return nil, err
	}
	if vw.moved != nil {
		replaced, old = false, &stratov1.KeyRecord{} // the old version stays, noncurrent
	}
	lock, err := a.commitKeyLock(c, st, old, replaced && !own, rec.Volume+"/"+rec.Bucket+"/"+name)
	if err != nil {
		return nil, err
	}
	var dNames int64 = 1
	if replaced {
		dNames = 0
	}
	// What the replaced version releases: its size, unless a snapshot
	// keeps it or another record holds its object (own: the same object,
	// charged once).
	kept := replaced && st.sees(old.SnapshotGen, st.gen)
	release := old.GetSize()
	if replaced && !own {
		if release, err = a.releaseOf(st, old, kept); err != nil {
			return nil, err
		}
	}
	if err := a.chargeIDs(rec.BucketId, rec.VolumeId, rec.Volume, rec.Bucket, size-release, dNames); err != nil {
		return nil, err
	}
	if err := a.writeVersion(rec.BucketId, rec.VolumeId, name, st, vw); err != nil {
		return nil, err
	}

	ki := &stratov1.KeyRecord{
		ObjectId: objectOf(rec), Size: size, Replication: rec.Replication, ErasureCoding: rec.ErasureCoding,
		ChecksumType: rec.ChecksumType, BytesPerChecksum: rec.BytesPerChecksum,
		CreationTimeUnixMs: rec.CreationTimeUnixMs, ModificationTimeUnixMs: a.now, Blocks: final, Owner: rec.Owner,
		Attributes: c.GetAttributes(), Permission: permissionOr(rec.Permission, DefaultFilePermission),
		Group: rec.Group, AccessTimeUnixMs: a.now, Acls: rec.Acls, SnapshotGen: st.gen, VersionSeq: vw.seq, NullVersion: vw.null,
		ObjectLock: lock, Closed: !c.GetHsync(),
	}
	if own {
		// What SetPermission, SetOwner and SetAcl changed while the file
		// was open (after its first hsync) stays, and so does its lock.
		ki.Permission, ki.Owner, ki.Group, ki.Acls = old.Permission, old.Owner, old.Group, old.Acls
		if old.ObjectLock != nil {
			ki.ObjectLock = old.ObjectLock
		}
		if rec.Append {
			ki.Attributes = old.Attributes
		}
	}
	if fso {
		ki.ParentId = rec.ParentId
	}
	if own {
		if err := a.keepFile(rec.BucketId, st, key, old); err != nil {
			return nil, err
		}
		if err := a.grow(ki, size-release); err != nil {
			return nil, err
		}
	} else if err := a.journal(rec.BucketId, st, st.gen, key); err != nil {
		return nil, err
	}
	if err := put(a.b, key, ki); err != nil {
		return nil, err
	}
	for _, src := range sources {
		// The blocks now belong to the new key: the source goes without
		// freeing them.
		if err := a.release(src.bucket.Id, src.bucket.VolumeId, src.rec.Size, 1); err != nil {
			return nil, err
		}
		if err := a.b.Delete(src.key, nil); err != nil {
			return nil, err
		}
	}
	if replaced && !own {
		if err := a.dropFile(rec.BucketId, st, key, old, kept, "overwrite"); err != nil {
			return nil, err
		}
	}
	if c.GetHsync() {
		// Still open: every allocation stays with the open key.
		rec.Hsynced = true
		if err := put(a.b, idKey(a.kb, tagOpen, rec.Id), rec); err != nil {
			return nil, err
		}
		return &stratov1.CommitKeyResponse{ObjectId: objectOf(rec), Size: size, VersionId: vw.id(st)}, nil
	}
	if len(unused) > 0 {
		if err := a.freeBlocks(rec.Id, unused, "unused"); err != nil {
			return nil, err
		}
	}
	if !deferred {
		if err := a.deleteOpenKey(rec); err != nil {
			return nil, err
		}
	}
	return &stratov1.CommitKeyResponse{ObjectId: objectOf(rec), Size: size, VersionId: vw.id(st)}, nil
}

// checkTarget refuses a commit whose target is not as it must be: a
// published file deleted or replaced while open, an existing file not to
// be overwritten, or a condition that does not hold. old is what the
// target holds (replaced: something; own: the open key's earlier hsync).
func checkTarget(c *stratov1.CommitKeyCommand, rec *stratov1.OpenKeyInfo, old *stratov1.KeyRecord, replaced, own bool, name string) error {
	switch {
	case own:
		return nil // checked at the hsync that made old
	case rec.Hsynced:
		return fmt.Errorf("%w: %s was deleted or replaced while open", ErrOpenKeyNotFound, name)
	case replaced && !rec.Overwrite:
		return fmt.Errorf("%w: %s", ErrFileExists, name)
	}
	return checkCommitCondition(c, old, replaced, rec.Volume+"/"+rec.Bucket+"/"+name)
}

// checkCommitCondition refuses a commit whose if_object_id or if_absent
// does not hold for old, the key's latest version (replaced: there is one;
// a delete marker is no object).
func checkCommitCondition(c *stratov1.CommitKeyCommand, old *stratov1.KeyRecord, replaced bool, label string) error {
	exists := replaced && !old.GetDeleteMarker()
	switch {
	case c.GetIfAbsent() && exists:
		return fmt.Errorf("%w: %s exists", ErrKeyReplaced, label)
	case c.GetIfObjectId() != 0 && !exists:
		return fmt.Errorf("%w: %s no longer exists (it was object %d)", ErrKeyReplaced, label, c.GetIfObjectId())
	case c.GetIfObjectId() != 0 && old.GetObjectId() != c.GetIfObjectId():
		return fmt.Errorf("%w: %s is no longer object %d", ErrKeyReplaced, label, c.GetIfObjectId())
	}
	return nil
}

// composeSource is a key a compose takes its blocks from.
type composeSource struct {
	bucket *stratov1.BucketRecord
	key    []byte
	rec    *stratov1.KeyRecord
}

// composeSources checks the sources of a compose (each an existing key of
// an OBS bucket, written with the open key's checksums, none twice, none
// the target) and returns them with the key's blocks and size. It writes
// nothing.
func (a *applier) composeSources(rec *stratov1.OpenKeyInfo, name string, cs []*stratov1.KeySourceCommand) (
	sources []composeSource, final []*stratov1.BlockRecord, size int64, err error) {
	seen := make(map[string]bool, len(cs))
	sources = make([]composeSource, 0, len(cs))
	for _, s := range cs {
		bk, err := a.loadBucket(s.GetVolume(), s.GetBucket())
		if err != nil {
			return nil, nil, 0, err
		}
		label := s.GetVolume() + "/" + s.GetBucket() + "/" + s.GetKey()
		switch {
		case isFSO(bk):
			return nil, nil, 0, fmt.Errorf("%w: source %s is in an FSO bucket", ErrWrongLayout, label)
		case bk.Id == rec.BucketId && s.GetKey() == name:
			return nil, nil, 0, fmt.Errorf("%w: source %s is the key composed", ErrInvalidBlocks, label)
		case seen[label]:
			return nil, nil, 0, fmt.Errorf("%w: source %s twice", ErrInvalidBlocks, label)
		}
		seen[label] = true
		if err := ValidateKeyName(s.GetKey()); err != nil {
			return nil, nil, 0, err
		}
		key := childKey(nil, tagKey, bk.Id, s.GetKey())
		kr := &stratov1.KeyRecord{}
		if found, err := get(a.b, key, kr); err != nil {
			return nil, nil, 0, err
		} else if !found {
			return nil, nil, 0, fmt.Errorf("%w: source %s", ErrKeyNotFound, label)
		}
		switch {
		case s.GetObjectId() != 0 && kr.ObjectId != s.GetObjectId():
			return nil, nil, 0, fmt.Errorf("%w: source %s is object %d, not %d", ErrInvalidBlocks, label, kr.ObjectId, s.GetObjectId())
		case !proto.Equal(kr.ErasureCoding, rec.ErasureCoding):
			// A block group read as a block, or a block as a group, is
			// garbage: a key is all groups of one config or all blocks.
			return nil, nil, 0, fmt.Errorf("%w: source %s is stored as %s, the key as %s", ErrInvalidBlocks, label,
				redundancyName(kr.Replication, kr.ErasureCoding), redundancyName(rec.Replication, rec.ErasureCoding))
		case kr.ChecksumType != rec.ChecksumType || kr.BytesPerChecksum != rec.BytesPerChecksum:
			return nil, nil, 0, fmt.Errorf("%w: source %s has checksums %v/%d, the key %v/%d", ErrInvalidBlocks, label,
				kr.ChecksumType, kr.BytesPerChecksum, rec.ChecksumType, rec.BytesPerChecksum)
		}
		if err := a.takeComposeSource(bk.Id, key, kr, label); err != nil {
			return nil, nil, 0, err
		}
		for _, bl := range kr.Blocks {
			final = append(final, &stratov1.BlockRecord{BlockId: bl.BlockId, Offset: size, Length: bl.Length, Pipeline: bl.Pipeline})
			size += bl.Length
		}
		sources = append(sources, composeSource{bucket: bk, key: key, rec: kr})
	}
	return sources, final, size, nil
}

// committedOpenKey is the open key a CommitKey names: stored, or, for a
// deferred create (deferred), made from its token with every check again.
func (a *applier) committedOpenKey(c *stratov1.CommitKeyCommand) (rec *stratov1.OpenKeyInfo, deferred bool, err error) {
	if len(c.GetCreateToken()) == 0 {
		rec, err = a.loadOpenKey(c.GetOpenId(), c.GetVolume(), c.GetBucket())
		return rec, false, err
	}
	oc, err := createToken(c)
	if err != nil {
		return nil, true, err
	}
	rec, _, err = a.newOpenKey(oc, false)
	return rec, true, err
}

// committedBlocks checks the blocks a CommitKey lists against the open
// key's allocations (their pipelines come from the allocation, lengths from
// the client) and returns them with their offsets, the key's size, and the
// allocations left out, in allocation order.
func committedBlocks(rec *stratov1.OpenKeyInfo, blocks []*stratov1.BlockRecord) (final []*stratov1.BlockRecord, size int64, unused []*stratov1.BlockRecord, err error) {
	allocated := make(map[[2]uint64]*stratov1.BlockRecord, len(rec.Blocks))
	for _, bl := range rec.Blocks {
		allocated[blockKey(bl.BlockId)] = bl
	}
	final = make([]*stratov1.BlockRecord, 0, len(blocks))
	for _, bl := range blocks {
		k := blockKey(bl.GetBlockId())
		al, ok := allocated[k]
		switch {
		case bl.GetBlockId() == nil:
			return nil, 0, nil, fmt.Errorf("%w: a block without an ID", ErrInvalidBlocks)
		case !ok:
			return nil, 0, nil, fmt.Errorf("%w: block %d/%d was not allocated to open key %d (or is listed twice)", ErrInvalidBlocks, k[0], k[1], rec.Id)
		case bl.GetLength() < 0:
			return nil, 0, nil, fmt.Errorf("%w: block %d/%d has length %d", ErrInvalidBlocks, k[0], k[1], bl.GetLength())
		}
		delete(allocated, k)
		final = append(final, &stratov1.BlockRecord{BlockId: al.BlockId, Offset: size, Length: bl.GetLength(), Pipeline: al.Pipeline})
		size += bl.GetLength()
	}
	if len(allocated) > 0 {
		unused = make([]*stratov1.BlockRecord, 0, len(allocated))
		for _, bl := range rec.Blocks { // in allocation order: deterministic
			if _, ok := allocated[blockKey(bl.BlockId)]; ok {
				unused = append(unused, bl)
			}
		}
	}
	return final, size, unused, nil
}

// commitTarget is where the committed key goes (its record key) and what
// is there now (replaced: a key or file of that name exists). For a file,
// its parent must still be a directory and the name not a directory.
func (a *applier) commitTarget(rec *stratov1.OpenKeyInfo, name string, fso bool) (key []byte, old *stratov1.KeyRecord, replaced bool, err error) {
	tag := byte(tagKey)
	if fso {
		tag = tagFile
		if rec.ParentId != rec.BucketId {
			if ok, err := a.dirAlive(rec.ParentId); err != nil {
				return nil, nil, false, err
			} else if !ok {
				return nil, nil, false, fmt.Errorf("%w: %s (deleted while %s was open)", ErrParentNotFound, parentOf(name), name)
			}
		}
		if _, isDir, err := a.rs.lookupDir(rec.ParentId, rec.FileName); err != nil {
			return nil, nil, false, err
		} else if isDir {
			return nil, nil, false, fmt.Errorf("%w: %s", ErrIsADirectory, name)
		}
	}
	key = childKey(a.kb2, tag, rec.ParentId, rec.FileName)
	old = &stratov1.KeyRecord{}
	if c := a.ns.acache; fso && c != nil && c.absent(tagFile, rec.ParentId, rec.FileName) {
		if c.verify {
			a.rs.verifyAbsent(tagFile, rec.ParentId, rec.FileName)
		}
		return key, old, false, nil
	}
	replaced, err = get(a.b, key, old)
	return key, old, replaced, err
}

func (a *applier) deleteOpenKey(rec *stratov1.OpenKeyInfo) error {
	if err := a.b.Delete(idKey(a.kb, tagOpen, rec.Id), nil); err != nil {
		return err
	}
	if rec.Append {
		if err := a.b.Delete(leaseKey(nil, rec.ObjectId), nil); err != nil {
			return err
		}
	}
	return a.b.Delete(expiryKey(a.kb, rec.ExpiresAtUnixMs, rec.Id), nil)
}

// ---- delete, rename, mkdir --------------------------------------------------

// ---- background work: expiry, reclaim, purge --------------------------------
