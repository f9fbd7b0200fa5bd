package namespace

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Prepare turns a client's mutation request into a command for Raft. It runs
// on the leader only, concurrently with other Prepares, Apply and reads. It
// validates names and arguments, reads view (the database) to fail early on
// what is already known to be wrong, fixes the time (env.Now) and allocates
// blocks (env.Allocator). It does not assign object IDs (Apply does) and its
// checks are advisory: Apply re-checks everything.
//
// req is one of the mutation requests of the Namespace service:
// Create/DeleteVolume, SetQuota, UpdateVolume, Create/DeleteBucket, UpdateBucket, OpenKey, CreateFile,
// AllocateBlock, CommitKey, DeleteKey, Delete, RenameKey, Rename,
// CreateDirectory, SetAttributes, SetPermission, SetOwner, SetTimes,
// AppendFile, Truncate, Concat, RecoverLease,
// SetAcl, AddAcl, RemoveAcl, and the S3 gateways' CreateS3Key and RevokeS3Key
// and the users' CreateUser, DeleteUser, IssueToken and RevokeToken
// (AdminService). The Apply result of the command is the reply to send,
// except that DeleteKey and RenameKey get DeleteResponse and RenameResponse
// (the server replies DeleteKeyResponse and RenameKeyResponse).
//
// With env.Caller set, Prepare first checks that the caller may make the
// request (ErrPermissionDenied otherwise; acl.go) and makes it the owner of
// what the request creates (an administrator may name another owner).
func (ns *Namespace) Prepare(ctx context.Context, req proto.Message, view pebble.Reader, env PrepareEnv) (*stratov1.NamespaceCommand, error) {
	if err := ns.authorize(req, view, env.Caller); err != nil {
		return nil, err
	}
	cmd := &stratov1.NamespaceCommand{NowUnixMs: env.Now.UnixMilli()}
	switch r := req.(type) {
	case *stratov1.CreateVolumeRequest:
		rec, err := prepareVolume(r, view)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_CreateVolume{CreateVolume: rec}
	case *stratov1.DeleteVolumeRequest:
		cmd.Op = &stratov1.NamespaceCommand_DeleteVolume{DeleteVolume: &stratov1.DeleteVolumeCommand{Name: r.GetName()}}
	case *stratov1.SetQuotaRequest:
		if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_SetQuota{SetQuota: &stratov1.SetQuotaCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), QuotaBytes: r.GetQuotaBytes(), QuotaNamespace: r.GetQuotaNamespace(),
			KeepBytes: r.GetKeepBytes(), KeepNamespace: r.GetKeepNamespace()}}
	case *stratov1.CreateSnapshotRequest, *stratov1.DeleteSnapshotRequest, *stratov1.RenameSnapshotRequest:
		c, err := prepareSnapshot(req, env.Now)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_Snapshot{Snapshot: c}
	case *stratov1.UpdateVolumeRequest, *stratov1.UpdateBucketRequest:
		c, err := prepareUpdate(req)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_Update{Update: c}
	case *stratov1.CreateBucketRequest:
		bi, err := ns.prepareBucket(r, view)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_CreateBucket{CreateBucket: bi}
	case *stratov1.DeleteBucketRequest:
		cmd.Op = &stratov1.NamespaceCommand_DeleteBucket{DeleteBucket: &stratov1.DeleteBucketCommand{Volume: r.GetVolume(), Name: r.GetName()}}
	case *stratov1.OpenKeyRequest:
		ok, err := ns.prepareOpen(ctx, view, env, &stratov1.OpenKeyCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(), Replication: r.GetReplication(),
			Owner: r.GetOwner(), SizeHint: r.GetSizeHint(), Permission: r.Permission, Group: r.GetGroup()},
			r.GetErasureCoding(), r.GetExclude())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_OpenKey{OpenKey: ok}
	case *stratov1.CreateFileRequest:
		ok, err := ns.prepareOpen(ctx, view, env, &stratov1.OpenKeyCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetPath(), CreateFile: true,
			Overwrite: r.GetOverwrite(), Recursive: r.GetRecursive(), Replication: r.GetReplication(),
			Owner: r.GetOwner(), SizeHint: r.GetSizeHint(), Permission: r.Permission, Group: r.GetGroup()},
			r.GetErasureCoding(), r.GetExclude())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_OpenKey{OpenKey: ok}
	case *stratov1.AppendFileRequest, *stratov1.TruncateRequest, *stratov1.ConcatRequest, *stratov1.RecoverLeaseRequest:
		if err := ns.prepareFileOp(ctx, view, env, cmd, req); err != nil {
			return nil, err
		}
	case *stratov1.AllocateBlockRequest:
		c, err := prepareAllocate(ctx, r, view, env)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_AllocateBlock{AllocateBlock: c}
	case *stratov1.CommitKeyRequest:
		c, err := prepareCommit(r)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_CommitKey{CommitKey: c}
	case *stratov1.DeleteKeyRequest:
		cmd.Op = &stratov1.NamespaceCommand_Delete{Delete: &stratov1.DeleteCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetKey(), VersionId: r.GetVersionId(),
			IfObjectId: r.GetIfObjectId(), BypassGovernance: r.GetBypassGovernance() && ns.mayBypass(view, env.Caller, r.GetVolume(), r.GetBucket())}}
	case *stratov1.SetObjectLockRequest:
		cmd.Op = &stratov1.NamespaceCommand_SetObjectLock{SetObjectLock: &stratov1.SetObjectLockCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(), VersionId: r.GetVersionId(),
			SetRetention: r.GetSetRetention(), Mode: r.GetMode(), RetainUntilUnixMs: r.GetRetainUntilUnixMs(), LegalHold: r.LegalHold,
			BypassGovernance: r.GetBypassGovernance() && ns.mayBypass(view, env.Caller, r.GetVolume(), r.GetBucket())}}
	case *stratov1.DeleteRequest:
		cmd.Op = &stratov1.NamespaceCommand_Delete{Delete: &stratov1.DeleteCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetPath(), Recursive: r.GetRecursive()}}
	case *stratov1.RenameKeyRequest:
		cmd.Op = &stratov1.NamespaceCommand_Rename{Rename: &stratov1.RenameCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Src: r.GetFromKey(), Dst: r.GetToKey()}}
	case *stratov1.RenameRequest:
		cmd.Op = &stratov1.NamespaceCommand_Rename{Rename: &stratov1.RenameCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Src: r.GetSrc(), Dst: r.GetDst(), IntoDirectory: true}}
	case *stratov1.CreateDirectoryRequest:
		if _, err := CleanPath(r.GetPath()); err != nil {
			return nil, err
		}
		if err := checkPermission(r.Permission); err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_CreateDirectory{CreateDirectory: &stratov1.CreateDirectoryCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetPath(), Owner: r.GetOwner(),
			Permission: r.Permission, Group: r.GetGroup()}}
	case *stratov1.SetPermissionRequest, *stratov1.SetOwnerRequest, *stratov1.SetTimesRequest:
		c, err := prepareStatus(req)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_SetStatus{SetStatus: c}
	case *stratov1.SetAttributesRequest:
		attrs, err := attributeRecords(r.GetAttributes())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratov1.NamespaceCommand_SetAttributes{SetAttributes: &stratov1.SetAttributesCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(), ObjectId: r.GetObjectId(), Attributes: attrs,
			VersionId: r.GetVersionId()}}
	default:
		if err := ns.prepareAccess(cmd, req, env); err != nil {
			return nil, err
		}
	}
	own(cmd, env.Caller)
	return cmd, nil
}

// prepareAccess prepares the mutations of access: S3 keys, users, tokens
// (delegation tokens too) and ACLs.
func (ns *Namespace) prepareAccess(cmd *stratov1.NamespaceCommand, req proto.Message, env PrepareEnv) error {
	switch r := req.(type) {
	case *stratov1.CreateS3KeyRequest:
		rec, err := ns.prepareS3Key(r, env)
		if err != nil {
			return err
		}
		cmd.Op = &stratov1.NamespaceCommand_CreateS3Key{CreateS3Key: rec}
	case *stratov1.RevokeS3KeyRequest:
		cmd.Op = &stratov1.NamespaceCommand_RevokeS3Key{RevokeS3Key: &stratov1.RevokeS3KeyCommand{AccessKey: r.GetAccessKey()}}
	case *stratov1.CreateUserRequest:
		rec, err := prepareUser(r, env)
		if err != nil {
			return err
		}
		cmd.Op = &stratov1.NamespaceCommand_CreateUser{CreateUser: rec}
	case *stratov1.DeleteUserRequest:
		cmd.Op = &stratov1.NamespaceCommand_DeleteUser{DeleteUser: &stratov1.DeleteUserCommand{Name: r.GetName()}}
	case *stratov1.IssueTokenRequest:
		rec, err := prepareToken(r, env)
		if err != nil {
			return err
		}
		cmd.Op = &stratov1.NamespaceCommand_IssueToken{IssueToken: rec}
	case *stratov1.RevokeTokenRequest:
		cmd.Op = &stratov1.NamespaceCommand_RevokeToken{RevokeToken: &stratov1.RevokeTokenCommand{Id: r.GetId()}}
	case *stratov1.TokenRecord, *stratov1.RenewTokenCommand, *stratov1.PurgeTokensCommand:
		if err := prepareDelegation(cmd, req); err != nil {
			return err
		}
	case *stratov1.SetAclRequest, *stratov1.AddAclRequest, *stratov1.RemoveAclRequest:
		c, err := prepareAclEdit(req)
		if err != nil {
			return err
		}
		cmd.Op = &stratov1.NamespaceCommand_SetAcl{SetAcl: c}
	default:
		return fmt.Errorf("%w: %T is not a namespace mutation", ErrInvalid, req)
	}
	return nil
}

// prepareVolume checks a new volume's name and quotas, and that it does not
// exist yet.
func prepareVolume(r *stratov1.CreateVolumeRequest, view pebble.Reader) (*stratov1.VolumeRecord, error) {
	if err := ValidateVolumeName(r.GetName()); err != nil {
		return nil, err
	}
	if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	if ok, err := exists(view, volumeKey(nil, r.GetName())); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeExists, r.GetName())
	}
	return &stratov1.VolumeRecord{Name: r.GetName(), Owner: r.GetOwner(), QuotaBytes: r.GetQuotaBytes(),
		QuotaNamespace: r.GetQuotaNamespace()}, nil
}

// prepareAllocate allocates the next block of an open key, with the key's
// redundancy (the leader's allocation, which apply only records).
func prepareAllocate(ctx context.Context, r *stratov1.AllocateBlockRequest, view pebble.Reader, env PrepareEnv) (*stratov1.AllocateBlockCommand, error) {
	rec := &stratov1.OpenKeyInfo{}
	if ok, err := get(view, idKey(nil, tagOpen, r.GetOpenId()), rec); err != nil {
		return nil, err
	} else if !ok || rec.Volume != r.GetVolume() || rec.Bucket != r.GetBucket() {
		return nil, fmt.Errorf("%w: %d in %s/%s", ErrOpenKeyNotFound, r.GetOpenId(), r.GetVolume(), r.GetBucket())
	}
	if env.Allocator == nil {
		return nil, fmt.Errorf("namespace: no block allocator")
	}
	bl, err := env.Allocator.AllocateBlock(ctx, rec.Replication, rec.ErasureCoding, r.GetSizeHint(), r.GetExclude())
	if err != nil {
		return nil, err
	}
	return &stratov1.AllocateBlockCommand{Volume: r.GetVolume(), Bucket: r.GetBucket(), OpenId: r.GetOpenId(), Block: bl}, nil
}

// prepareCommit checks a commit's blocks, attributes, sources and create
// token.
func prepareCommit(r *stratov1.CommitKeyRequest) (*stratov1.CommitKeyCommand, error) {
	for _, bl := range r.GetBlocks() {
		if bl.GetBlockId() == nil || bl.GetLength() < 0 {
			return nil, fmt.Errorf("%w: block %v", ErrInvalidBlocks, bl)
		}
	}
	attrs, err := attributeRecords(r.GetAttributes())
	if err != nil {
		return nil, err
	}
	if len(r.GetSources()) > 0 && (len(r.GetBlocks()) > 0 || r.GetHsync()) {
		return nil, fmt.Errorf("%w: sources with blocks or hsync", ErrInvalidBlocks)
	}
	if r.GetIfObjectId() != 0 && r.GetIfAbsent() {
		return nil, fmt.Errorf("%w: a commit with both if_object_id and if_absent", ErrInvalid)
	}
	c := &stratov1.CommitKeyCommand{Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(), OpenId: r.GetOpenId(),
		Blocks: blockRecords(r.GetBlocks()), Hsync: r.GetHsync(), CreateToken: r.GetCreateToken(),
		Attributes: attrs, Sources: keySources(r.GetSources()), ObjectLock: objectLockRecord(r.GetObjectLock()),
		IfObjectId: r.GetIfObjectId(), IfAbsent: r.GetIfAbsent()}
	if len(c.CreateToken) > 0 {
		if _, err := createToken(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// prepareAclEdit turns SetAcl, AddAcl and RemoveAcl into one command.
func prepareAclEdit(req proto.Message) (*stratov1.SetAclCommand, error) {
	switch r := req.(type) {
	case *stratov1.SetAclRequest:
		return prepareAcl(r.GetObject(), r.GetAcls(), stratov1.AclEdit_ACL_EDIT_SET)
	case *stratov1.AddAclRequest:
		return prepareAcl(r.GetObject(), r.GetAcls(), stratov1.AclEdit_ACL_EDIT_ADD)
	case *stratov1.RemoveAclRequest:
		return prepareAcl(r.GetObject(), r.GetAcls(), stratov1.AclEdit_ACL_EDIT_REMOVE)
	}
	return nil, fmt.Errorf("%w: %T is no ACL edit", ErrInvalid, req)
}

func (ns *Namespace) prepareBucket(r *stratov1.CreateBucketRequest, view pebble.Reader) (*stratov1.BucketRecord, error) {
	if err := ValidateVolumeName(r.GetVolume()); err != nil {
		return nil, err
	}
	if err := ValidateBucketName(r.GetName()); err != nil {
		return nil, err
	}
	if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	bi := &stratov1.BucketRecord{
		Volume: r.GetVolume(), Name: r.GetName(), Layout: r.GetLayout(), Replication: r.GetReplication(),
		ChecksumType: r.GetChecksumType(), BytesPerChecksum: r.GetBytesPerChecksum(),
		QuotaBytes: r.GetQuotaBytes(), QuotaNamespace: r.GetQuotaNamespace(), Owner: r.GetOwner(),
		BlockSize: r.GetBlockSize(), Permission: permissionOr(r.Permission, DefaultDirPermission), Group: r.GetGroup(),
	}
	if err := checkPermission(r.Permission); err != nil {
		return nil, err
	}
	var err error
	if bi.Acls, err = AclRecords(r.GetAcls()); err != nil {
		return nil, err
	}
	if bi.ErasureCoding, err = ecRecord(r.GetErasureCoding()); err != nil {
		return nil, err
	}
	if bi.Layout == stratov1.BucketLayout_LAYOUT_UNSPECIFIED {
		bi.Layout = stratov1.BucketLayout_LAYOUT_FSO
	}
	if r.GetObjectLock() {
		if isFSO(bi) {
			return nil, fmt.Errorf("%w: object lock needs an object-store (OBS) bucket: it keeps versions", ErrWrongLayout)
		}
		bi.ObjectLock, bi.Versioning = &stratov1.BucketObjectLockRecord{Enabled: true}, versioningEnabled
	}
	if bi.Replication == stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		bi.Replication = ns.opts.DefaultReplication
	}
	if bi.ChecksumType == stratov1.ChecksumType_CHECKSUM_TYPE_UNSPECIFIED {
		bi.ChecksumType = stratov1.ChecksumType_CHECKSUM_CRC32C
	}
	if bi.BytesPerChecksum == 0 {
		bi.BytesPerChecksum = defaultBytesPerChecksum
	}
	if bi.BlockSize == 0 {
		bi.BlockSize = ns.opts.DefaultBlockSize
	}
	if !validReplication(bi.Replication) {
		return nil, fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, bi.Replication)
	}
	if ok, err := exists(view, volumeKey(nil, r.GetVolume())); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeNotFound, r.GetVolume())
	}
	if ok, err := exists(view, bucketKey(nil, r.GetVolume(), r.GetName())); err != nil {
		return nil, err
	} else if ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrBucketExists, r.GetVolume(), r.GetName())
	}
	return bi, nil
}

// prepareOpen checks the bucket and the key name, and allocates the first
// block when the writer expects data.
func (ns *Namespace) prepareOpen(ctx context.Context, view pebble.Reader, env PrepareEnv, c *stratov1.OpenKeyCommand,
	e *stratov1.ErasureCoding, ex *stratov1.ExcludeList) (*stratov1.OpenKeyCommand, error) {
	// Through the reader's bucket cache: what prepare reads is advisory.
	bk, err := ns.Reader(view).bucket(c.Volume, c.Bucket)
	if err != nil {
		return nil, err
	}
	if isFSO(bk) {
		p, err := cleanFilePath(c.Key)
		if err != nil {
			return nil, err
		}
		c.Key = p
	} else {
		if c.CreateFile {
			return nil, fmt.Errorf("%w: CreateFile on OBS bucket %s/%s", ErrWrongLayout, bk.Volume, bk.Name)
		}
		if err := ValidateKeyName(c.Key); err != nil {
			return nil, err
		}
	}
	if c.SizeHint < 0 {
		return nil, fmt.Errorf("%w: negative size hint %d", ErrInvalid, c.SizeHint)
	}
	if err := checkPermission(c.Permission); err != nil {
		return nil, err
	}
	if c.ErasureCoding, err = ecRecord(e); err != nil {
		return nil, err
	}
	if c.Replication, c.ErasureCoding, err = keyRedundancy(c.Replication, c.ErasureCoding, bk); err != nil {
		return nil, err
	}
	c.ExpiresAtUnixMs = env.Now.Add(ns.opts.OpenKeyTTL).UnixMilli()
	if c.SizeHint > 0 {
		if env.Allocator == nil {
			return nil, fmt.Errorf("namespace: no block allocator")
		}
		bl, err := env.Allocator.AllocateBlock(ctx, c.Replication, c.ErasureCoding, min(c.SizeHint, bk.BlockSize), ex)
		if err != nil {
			return nil, err
		}
		c.Blocks = []*stratov1.BlockRecord{bl}
	}
	return c, nil
}

// PrepareExpiry returns a command expiring up to limit open keys whose
// expiry time is at or before now, or nil when there are none. The server
// issues it periodically on the leader.
func (ns *Namespace) PrepareExpiry(view pebble.Reader, now time.Time, limit int) (*stratov1.NamespaceCommand, error) {
	p := tableKey(nil, tagExpiry)
	upper := binary.BigEndian.AppendUint64(tableKey(nil, tagExpiry), uint64(max(now.UnixMilli(), 0))+1)
	it, err := view.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	var ids []uint64
	for ok := it.First(); ok && len(ids) < limit; ok = it.Next() {
		if k := it.Key(); len(k) == 18 {
			ids = append(ids, binary.BigEndian.Uint64(k[10:]))
		}
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.NamespaceCommand_ExpireOpenKeys{
		ExpireOpenKeys: &stratov1.ExpireOpenKeysCommand{OpenIds: ids}}}, nil
}

// PrepareReclaim returns a command reclaiming up to limit entries under
// deleted directories, or nil when none is pending. The server issues it
// periodically (and again at once while the result says More).
func (ns *Namespace) PrepareReclaim(view pebble.Reader, now time.Time, limit int) (*stratov1.NamespaceCommand, error) {
	found, err := firstValue(view, tableKey(nil, tagDeletedDir), nil)
	if err != nil || !found {
		return nil, err
	}
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.NamespaceCommand_Reclaim{
		Reclaim: &stratov1.ReclaimCommand{Limit: int32(limit)}}}, nil
}

// PreparePurge returns a command forgetting deleted-block entries whose
// blocks the datanodes have deleted.
func (ns *Namespace) PreparePurge(now time.Time, seqs []uint64) *stratov1.NamespaceCommand {
	return &stratov1.NamespaceCommand{NowUnixMs: now.UnixMilli(), Op: &stratov1.NamespaceCommand_PurgeDeletedBlocks{
		PurgeDeletedBlocks: &stratov1.PurgeDeletedBlocksCommand{Seqs: seqs}}}
}
