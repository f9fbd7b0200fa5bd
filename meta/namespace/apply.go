package namespace

import (
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Fixed defaults apply uses when a command leaves a field unset. They are
// constants, not Options: every replica must apply a command identically.
const (
	defaultBytesPerChecksum = 16 << 10
	maxBytesPerChecksum     = 64 << 20
)

// Apply applies a prepared command to b, an indexed batch over the
// namespace's database, and returns the reply for the client. It is
// deterministic: it reads and writes only b, and takes time from the command.
//
// Apply re-checks everything the command depends on. When it returns an
// error of one of the four classes (see Class), it has written nothing to b;
// the command is then a no-op on every replica and the error goes to the
// client. Any other error (a failed Pebble read, a corrupt record) leaves b
// in an unknown state and must stop the server.
//
// Apply must be called by one goroutine at a time, in log order, each batch
// committed before the next Apply (see Committed).
func (ns *Namespace) Apply(cmd *stratov1.NamespaceCommand, b *pebble.Batch) (proto.Message, error) {
	if cmd == nil {
		return nil, fmt.Errorf("%w: nil command", ErrInvalid)
	}
	a := applierPool.Get().(*applier)
	defer a.recycle()
	a.ns, a.b, a.now, a.rs.r, a.rs.acache = ns, trackedBatch{b, ns.acache}, cmd.GetNowUnixMs(), b, ns.acache
	if prev, found, err := recordedReply(b, cmd.GetRequest()); err != nil || found {
		return prev, err // a retry of a request already applied
	}
	var res proto.Message
	var err error
	switch op := cmd.Op.(type) {
	case *stratov1.NamespaceCommand_CreateVolume:
		res, err = a.createVolume(op.CreateVolume)
	case *stratov1.NamespaceCommand_DeleteVolume:
		res, err = a.deleteVolume(op.DeleteVolume)
	case *stratov1.NamespaceCommand_SetQuota:
		res, err = a.setQuota(op.SetQuota)
	case *stratov1.NamespaceCommand_CreateBucket:
		res, err = a.createBucket(op.CreateBucket)
	case *stratov1.NamespaceCommand_DeleteBucket:
		res, err = a.deleteBucket(op.DeleteBucket)
	case *stratov1.NamespaceCommand_OpenKey:
		res, err = a.openKey(op.OpenKey)
	case *stratov1.NamespaceCommand_AllocateBlock:
		res, err = a.allocateBlock(op.AllocateBlock)
	case *stratov1.NamespaceCommand_CommitKey:
		res, err = a.commitKey(op.CommitKey)
	case *stratov1.NamespaceCommand_Delete:
		res, err = a.delete(op.Delete)
	case *stratov1.NamespaceCommand_Rename:
		res, err = a.rename(op.Rename)
	case *stratov1.NamespaceCommand_CreateDirectory:
		res, err = a.createDirectory(op.CreateDirectory)
	case *stratov1.NamespaceCommand_ExpireOpenKeys:
		res, err = a.expireOpenKeys(op.ExpireOpenKeys)
	case *stratov1.NamespaceCommand_Reclaim:
		res, err = a.reclaim(op.Reclaim)
	case *stratov1.NamespaceCommand_DiscardBlocks:
		res, err = a.discardBlocks(op.DiscardBlocks)
	case *stratov1.NamespaceCommand_RefuseWriteToken:
		res, err = a.refuseWriteToken(cmd)
	case *stratov1.NamespaceCommand_PurgeDeletedBlocks:
		res, err = a.purgeDeletedBlocks(op.PurgeDeletedBlocks)
	case *stratov1.NamespaceCommand_CreateS3Key:
		res, err = a.createS3Key(op.CreateS3Key)
	case *stratov1.NamespaceCommand_RevokeS3Key:
		res, err = a.revokeS3Key(op.RevokeS3Key)
	case *stratov1.NamespaceCommand_SetAttributes:
		res, err = a.setAttributes(op.SetAttributes)
	case *stratov1.NamespaceCommand_SetStatus:
		res, err = a.setStatus(op.SetStatus)
	case *stratov1.NamespaceCommand_CreateUser:
		res, err = a.createUser(op.CreateUser)
	case *stratov1.NamespaceCommand_DeleteUser:
		res, err = a.deleteUser(op.DeleteUser)
	case *stratov1.NamespaceCommand_IssueToken:
		res, err = a.issueToken(op.IssueToken)
	case *stratov1.NamespaceCommand_RevokeToken:
		res, err = a.revokeToken(op.RevokeToken)
	case *stratov1.NamespaceCommand_RenewToken:
		res, err = a.renewToken(op.RenewToken)
	case *stratov1.NamespaceCommand_PurgeTokens:
		res, err = a.purgeTokens(op.PurgeTokens)
	case *stratov1.NamespaceCommand_SetAcl:
		res, err = a.setAcl(op.SetAcl)
	case *stratov1.NamespaceCommand_Update:
		res, err = a.update(op.Update)
	case *stratov1.NamespaceCommand_Snapshot:
		res, err = a.snapshot(op.Snapshot)
	case *stratov1.NamespaceCommand_PurgeSnapshots:
		res, err = a.purgeSnapshots(op.PurgeSnapshots)
	case *stratov1.NamespaceCommand_Truncate:
		res, err = a.truncate(op.Truncate)
	case *stratov1.NamespaceCommand_Concat:
		res, err = a.concat(op.Concat)
	case *stratov1.NamespaceCommand_RecoverLease:
		res, err = a.recoverLease(op.RecoverLease)
	case *stratov1.NamespaceCommand_SetObjectLock:
		res, err = a.setObjectLock(op.SetObjectLock)
	default:
		return nil, fmt.Errorf("%w: unknown command %T", ErrInvalid, cmd.Op)
	}
	if err != nil {
		return nil, err
	}
	if err := a.ids.save(a.b); err != nil {
		return nil, err
	}
	if err := a.recordReply(cmd.GetRequest(), res); err != nil {
		return nil, err
	}
	return res, nil
}

type applier struct {
	ns        *Namespace
	b         trackedBatch
	now       int64
	rs        resolver
	ids       ids
	idsLoaded bool
	// Key buffers for keys used at once (kb) or held through one operation
	// (kb2); big enough that typical keys never reallocate.
	kb, kb2 []byte
	// The snapshot state of bucket snapBucket, once loaded (snapshot.go).
	snap       snapState
	snapBucket uint64
	snapLoaded bool
}

var applierPool = sync.Pool{New: func() any {
	return &applier{kb: make([]byte, 0, 512), kb2: make([]byte, 0, 512), rs: resolver{buf: make([]byte, 0, 512)}}
}}

func (a *applier) recycle() {
	*a = applier{kb: a.kb[:0], kb2: a.kb2[:0], rs: resolver{buf: a.rs.buf[:0]}}
	applierPool.Put(a)
}

func (a *applier) nextID() (uint64, error) {
	if !a.idsLoaded {
		x, err := a.loadIDs()
		if err != nil {
			return 0, err
		}
		a.ids, a.idsLoaded = x, true
	}
	return a.ids.next(), nil
}

func (a *applier) removeBucketFromCache(volume, bucket string) {
	if c := a.ns.acache; c != nil {
		c.dropBucket(string(bucketKey(nil, volume, bucket)))
	}
	if a.ns.cache != nil {
		a.ns.cache.removeBucket(volume, bucket)
	}
}

// ---- volumes ----------------------------------------------------------------

func (a *applier) loadVolume(name string) (*stratov1.VolumeRecord, error) {
	v := &stratov1.VolumeRecord{}
	ok, err := get(a.b, volumeKey(nil, name), v)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeNotFound, name)
	}
	return v, nil
}

func checkQuotas(qb, qn int64) error {
	if qb < 0 || qn < 0 {
		return fmt.Errorf("%w: quotas must not be negative (bytes %d, namespace %d)", ErrInvalid, qb, qn)
	}
	return nil
}

func (a *applier) createVolume(v *stratov1.VolumeRecord) (proto.Message, error) {
	if err := ValidateVolumeName(v.GetName()); err != nil {
		return nil, err
	}
	if err := checkQuotas(v.GetQuotaBytes(), v.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	key := volumeKey(nil, v.GetName())
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeExists, v.GetName())
	}
	id, err := a.nextID()
	if err != nil {
		return nil, err
	}
	rec := &stratov1.VolumeRecord{
		Name: v.GetName(), Id: id, Owner: v.GetOwner(),
		CreationTimeUnixMs: a.now, ModificationTimeUnixMs: a.now,
		QuotaBytes: v.GetQuotaBytes(), QuotaNamespace: v.GetQuotaNamespace(), Acls: v.GetAcls(),
	}
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	if err := putUsage(a.b, id, usage{quotaBytes: rec.QuotaBytes, quotaNamespace: rec.QuotaNamespace}); err != nil {
		return nil, err
	}
	return &stratov1.CreateVolumeResponse{Volume: VolumeInfo(rec)}, nil
}

func (a *applier) deleteVolume(r *stratov1.DeleteVolumeCommand) (proto.Message, error) {
	v, err := a.loadVolume(r.GetName())
	if err != nil {
		return nil, err
	}
	u, err := a.getUsage(v.Id)
	if err != nil {
		return nil, err
	}
	if u.namespace > 0 {
		return nil, fmt.Errorf("%w: %s has %d buckets", ErrVolumeNotEmpty, v.Name, u.namespace)
	}
	if err := a.b.Delete(volumeKey(nil, v.Name), nil); err != nil {
		return nil, err
	}
	return &stratov1.DeleteVolumeResponse{}, a.b.Delete(idKey(nil, tagUsage, v.Id), nil)
}

func (a *applier) setQuota(r *stratov1.SetQuotaCommand) (proto.Message, error) {
	if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	var id uint64
	var key []byte
	var rec proto.Message
	var qb, qn int64
	if r.GetBucket() == "" {
		v, err := a.loadVolume(r.GetVolume())
		if err != nil {
			return nil, err
		}
		v.QuotaBytes, v.QuotaNamespace = newQuotas(r, v.QuotaBytes, v.QuotaNamespace)
		v.ModificationTimeUnixMs = a.now
		id, key, rec, qb, qn = v.Id, volumeKey(nil, v.Name), v, v.QuotaBytes, v.QuotaNamespace
	} else {
		bk, err := a.loadBucket(r.GetVolume(), r.GetBucket())
		if err != nil {
			return nil, err
		}
		bk.QuotaBytes, bk.QuotaNamespace = newQuotas(r, bk.QuotaBytes, bk.QuotaNamespace)
		bk.ModificationTimeUnixMs = a.now
		id, key, rec, qb, qn = bk.Id, bucketKey(nil, bk.Volume, bk.Name), bk, bk.QuotaBytes, bk.QuotaNamespace
		a.removeBucketFromCache(bk.Volume, bk.Name)
	}
	u, err := a.getUsage(id)
	if err != nil {
		return nil, err
	}
	u.quotaBytes, u.quotaNamespace = qb, qn
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	return &stratov1.SetQuotaResponse{}, putUsage(a.b, id, u)
}

// newQuotas is what r makes of the quotas bytes and names: each replaced
// unless r keeps it.
func newQuotas(r *stratov1.SetQuotaCommand, bytes, names int64) (int64, int64) {
	if !r.GetKeepBytes() {
		bytes = r.GetQuotaBytes()
	}
	if !r.GetKeepNamespace() {
		names = r.GetQuotaNamespace()
	}
	return bytes, names
}

// ---- buckets ----------------------------------------------------------------

func (a *applier) loadBucket(volume, name string) (*stratov1.BucketRecord, error) {
	a.kb = bucketKey(a.kb, volume, name)
	c := a.ns.acache
	if c != nil {
		if hit, ok := c.buckets[string(a.kb)]; ok {
			if c.verify {
				got := &stratov1.BucketRecord{}
				if ok, err := get(a.b, a.kb, got); err != nil || !ok || !proto.Equal(got, hit) {
					panic(fmt.Sprintf("namespace: apply cache has bucket %s/%s = %v, batch says %v %v %v", volume, name, hit, got, ok, err))
				}
			}
			return proto.Clone(hit).(*stratov1.BucketRecord), nil
		}
	}
	bk := &stratov1.BucketRecord{}
	ok, err := get(a.b, a.kb, bk)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrBucketNotFound, volume, name)
	}
	if c != nil {
		c.fillBucket(a.kb, bk)
	}
	return bk, nil
}

func (a *applier) createBucket(bi *stratov1.BucketRecord) (proto.Message, error) {
	if err := ValidateBucketName(bi.GetName()); err != nil {
		return nil, err
	}
	if err := checkQuotas(bi.GetQuotaBytes(), bi.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	rec := &stratov1.BucketRecord{
		Volume: bi.GetVolume(), Name: bi.GetName(), Layout: bi.GetLayout(),
		Replication: bi.GetReplication(), ChecksumType: bi.GetChecksumType(),
		BytesPerChecksum: bi.GetBytesPerChecksum(), QuotaBytes: bi.GetQuotaBytes(),
		QuotaNamespace: bi.GetQuotaNamespace(), CreationTimeUnixMs: a.now, ModificationTimeUnixMs: a.now,
		Owner: bi.GetOwner(), BlockSize: bi.GetBlockSize(), ErasureCoding: bi.GetErasureCoding(),
		Permission: permissionOr(bi.Permission, DefaultDirPermission), Group: bi.GetGroup(),
	}
	if bi.GetObjectLock() != nil {
		// Object lock: versioned from the start, for good.
		if err := checkBucketLock(bi.GetObjectLock()); err != nil {
			return nil, err
		}
		if bi.GetLayout() != stratov1.BucketLayout_LAYOUT_OBS {
			return nil, fmt.Errorf("%w: object lock needs an object-store (OBS) bucket: it keeps versions", ErrWrongLayout)
		}
		rec.ObjectLock, rec.Versioning = proto.CloneOf(bi.GetObjectLock()), versioningEnabled
	}
	if err := checkPermission(bi.Permission); err != nil {
		return nil, err
	}
	if rec.ErasureCoding != nil {
		if _, err := ECConfig(rec.ErasureCoding); err != nil {
			return nil, err
		}
	}
	if rec.Layout == stratov1.BucketLayout_LAYOUT_UNSPECIFIED {
		rec.Layout = stratov1.BucketLayout_LAYOUT_FSO
	}
	if rec.ChecksumType == stratov1.ChecksumType_CHECKSUM_TYPE_UNSPECIFIED {
		rec.ChecksumType = stratov1.ChecksumType_CHECKSUM_CRC32C
	}
	if rec.BytesPerChecksum == 0 {
		rec.BytesPerChecksum = defaultBytesPerChecksum
	}
	switch {
	case rec.Layout != stratov1.BucketLayout_LAYOUT_FSO && rec.Layout != stratov1.BucketLayout_LAYOUT_OBS:
		return nil, fmt.Errorf("%w: bucket layout %v", ErrInvalid, rec.Layout)
	case !validReplication(rec.Replication):
		return nil, fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, rec.Replication)
	case !validChecksum(rec.ChecksumType):
		return nil, fmt.Errorf("%w: checksum type %v", ErrInvalid, rec.ChecksumType)
	case rec.BytesPerChecksum < 0 || rec.BytesPerChecksum > maxBytesPerChecksum:
		return nil, fmt.Errorf("%w: bytes per checksum %d must be in (0, %d]", ErrInvalid, rec.BytesPerChecksum, maxBytesPerChecksum)
	case rec.BlockSize <= 0:
		return nil, fmt.Errorf("%w: block size %d must be positive", ErrInvalid, rec.BlockSize)
	}
	v, err := a.loadVolume(rec.Volume)
	if err != nil {
		return nil, err
	}
	vu, err := a.getUsage(v.Id)
	if err != nil {
		return nil, err
	}
	if !vu.fits(0, 1) {
		return nil, fmt.Errorf("%w: volume %s allows %d buckets", ErrQuotaExceeded, v.Name, vu.quotaNamespace)
	}
	key := bucketKey(nil, rec.Volume, rec.Name)
	if ok, err := exists(a.b, key); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrBucketExists, rec.Volume, rec.Name)
	}
	id, err := a.nextID()
	if err != nil {
		return nil, err
	}
	rec.Id, rec.VolumeId = id, v.Id
	// A bucket takes its volume's DEFAULT entries (acl.go), and those
	// the command adds.
	if rec.Acls, err = mergeAcls(bi.GetAcls(), inherit(v.Acls, true), stratov1.AclEdit_ACL_EDIT_ADD); err != nil {
		return nil, err
	}
	if err := put(a.b, key, rec); err != nil {
		return nil, err
	}
	if err := putUsage(a.b, id, usage{quotaBytes: rec.QuotaBytes, quotaNamespace: rec.QuotaNamespace}); err != nil {
		return nil, err
	}
	if rec.ObjectLock != nil {
		if err := a.putSnapState(id, snapState{volumeID: v.Id, versioning: rec.Versioning, lock: rec.ObjectLock}); err != nil {
			return nil, err
		}
	}
	vu.namespace++
	if err := putUsage(a.b, v.Id, vu); err != nil {
		return nil, err
	}
	if c := a.ns.acache; c != nil && rec.Layout == stratov1.BucketLayout_LAYOUT_FSO {
		c.markEmpty(id) // the root directory of a new bucket
	}
	return &stratov1.CreateBucketResponse{Bucket: BucketInfo(rec)}, nil
}

func (a *applier) deleteBucket(r *stratov1.DeleteBucketCommand) (proto.Message, error) {
	bk, err := a.loadBucket(r.GetVolume(), r.GetName())
	if err != nil {
		return nil, err
	}
	u, err := a.getUsage(bk.Id)
	if err != nil {
		return nil, err
	}
	if u.namespace > 0 {
		return nil, fmt.Errorf("%w: %s/%s has %d keys and directories", ErrBucketNotEmpty, bk.Volume, bk.Name, u.namespace)
	}
	st, err := a.snaps(bk.Id)
	if err != nil {
		return nil, err
	}
	if len(st.ids) > 0 {
		return nil, fmt.Errorf("%w: %s/%s has %d (delete them first)", ErrHasSnapshots, bk.Volume, bk.Name, len(st.ids))
	}
	if purging, err := exists(a.b, idKey(nil, tagSnapPurge, bk.Id)); err != nil {
		return nil, err
	} else if purging {
		return nil, fmt.Errorf("%w: %s/%s: what its deleted snapshots held is still being freed; try again shortly", ErrHasSnapshots, bk.Volume, bk.Name)
	}
	if err := a.b.Delete(snapStateKey(nil, bk.Id), nil); err != nil {
		return nil, err
	}
	// The counter is exact; the scan guards the invariant at little cost
	// (bucket deletion is rare).
	tag := byte(tagKey)
	if bk.Layout == stratov1.BucketLayout_LAYOUT_FSO {
		if nonEmpty, err := hasChildren(a.b, bk.Id); err != nil || nonEmpty {
			if err == nil {
				err = fmt.Errorf("%w: %s/%s", ErrBucketNotEmpty, bk.Volume, bk.Name)
			}
			return nil, err
		}
	} else {
		p := idKey(nil, tag, bk.Id)
		it, err := a.b.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
		if err != nil {
			return nil, err
		}
		found := it.First()
		if err := it.Close(); err != nil {
			return nil, err
		}
		if found {
			return nil, fmt.Errorf("%w: %s/%s", ErrBucketNotEmpty, bk.Volume, bk.Name)
		}
	}
	vu, err := a.getUsage(bk.VolumeId)
	if err != nil {
		return nil, err
	}
	vu.namespace--
	a.removeBucketFromCache(bk.Volume, bk.Name)
	if err := a.b.Delete(bucketKey(nil, bk.Volume, bk.Name), nil); err != nil {
		return nil, err
	}
	if err := a.b.Delete(idKey(nil, tagUsage, bk.Id), nil); err != nil {
		return nil, err
	}
	return &stratov1.DeleteBucketResponse{}, putUsage(a.b, bk.VolumeId, vu)
}

// ---- shared helpers ---------------------------------------------------------

// freeBlocks records blocks no key references any more in the deleted-blocks
// table.
func (a *applier) freeBlocks(objectID uint64, blocks []*stratov1.BlockRecord, reason string) error {
	if len(blocks) == 0 {
		return nil
	}
	seq, err := a.nextID()
	if err != nil {
		return err
	}
	rec := &stratov1.DeletedBlocks{Seq: seq, ObjectId: objectID, DeletedAtUnixMs: a.now, Reason: reason,
		Blocks: make([]*stratov1.BlockIDRecord, 0, len(blocks))}
	for _, bl := range blocks {
		rec.Blocks = append(rec.Blocks, bl.GetBlockId())
	}
	return put(a.b, idKey(a.kb, tagDeleted, seq), rec)
}

// charge adds dBytes and dNamespace to a bucket's usage and dBytes to its
// volume's, failing with ErrQuotaExceeded (and writing nothing) if a quota
// would be exceeded.
func (a *applier) charge(bk *stratov1.BucketRecord, dBytes, dNamespace int64) error {
	return a.chargeIDs(bk.Id, bk.VolumeId, bk.Volume, bk.Name, dBytes, dNamespace)
}

// chargeIDs is charge by IDs; the names only label errors. A bucket without
// usage record no longer exists: ErrBucketNotFound.
func (a *applier) chargeIDs(bucketID, volumeID uint64, volume, bucket string, dBytes, dNamespace int64) error {
	bu, found, err := a.lookupUsage(bucketID)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("%w: %s/%s", ErrBucketNotFound, volume, bucket)
	}
	if !bu.fits(dBytes, dNamespace) {
		return fmt.Errorf("%w: bucket %s/%s: %d+%d bytes (quota %d), %d+%d names (quota %d)", ErrQuotaExceeded,
			volume, bucket, bu.bytes, dBytes, bu.quotaBytes, bu.namespace, dNamespace, bu.quotaNamespace)
	}
	var vu usage
	if dBytes != 0 {
		if vu, err = a.getUsage(volumeID); err != nil {
			return err
		}
		if !vu.fits(dBytes, 0) {
			return fmt.Errorf("%w: volume %s: %d+%d bytes (quota %d)", ErrQuotaExceeded, volume, vu.bytes, dBytes, vu.quotaBytes)
		}
	}
	if dBytes == 0 && dNamespace == 0 {
		return nil
	}
	bu.bytes += dBytes
	bu.namespace += dNamespace
	if err := putUsage(a.b, bucketID, bu); err != nil {
		return err
	}
	if dBytes != 0 {
		vu.bytes += dBytes
		return putUsage(a.b, volumeID, vu)
	}
	return nil
}

// release is charge for reclaim, which knows only IDs and never fails on
// quota (it only shrinks usage). Usage of a deleted bucket is not recreated.
func (a *applier) release(bucketID, volumeID uint64, bytes, names int64) error {
	bu, found, err := a.lookupUsage(bucketID)
	if err != nil || !found {
		return err
	}
	bu.bytes -= bytes
	bu.namespace -= names
	if err := putUsage(a.b, bucketID, bu); err != nil {
		return err
	}
	if bytes == 0 {
		return nil
	}
	vu, found, err := a.lookupUsage(volumeID)
	if err != nil || !found {
		return err
	}
	vu.bytes -= bytes
	return putUsage(a.b, volumeID, vu)
}
