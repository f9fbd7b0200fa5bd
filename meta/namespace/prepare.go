package namespace

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/stratopb"
)

// Prepare turns a client's mutation request into a command for Raft. It runs
// on the leader only, concurrently with other Prepares, Apply and reads. It
// validates names and arguments, reads view (the database) to fail early on
// what is already known to be wrong, fixes the time (env.Now) and allocates
// blocks (env.Allocator). It does not assign object IDs (Apply does) and its
// checks are advisory: Apply re-checks everything.
//
// req is one of the mutation requests of the Namespace service:
// Create/DeleteVolume, SetQuota, Create/DeleteBucket, OpenKey, CreateFile,
// AllocateBlock, CommitKey, DeleteKey, Delete, RenameKey, Rename,
// CreateDirectory. The Apply result of the command is the reply to send,
// except that DeleteKey and RenameKey get DeleteResponse and RenameResponse
// (the server replies DeleteKeyResponse and RenameKeyResponse).
func (ns *Namespace) Prepare(ctx context.Context, req proto.Message, view pebble.Reader, env PrepareEnv) (*stratopb.NamespaceCommand, error) {
	cmd := &stratopb.NamespaceCommand{Now: env.Now.UnixMilli()}
	switch r := req.(type) {
	case *stratopb.CreateVolumeRequest:
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
		cmd.Op = &stratopb.NamespaceCommand_CreateVolume{CreateVolume: &stratopb.VolumeInfo{
			Name: r.GetName(), Owner: r.GetOwner(), QuotaBytes: r.GetQuotaBytes(), QuotaNamespace: r.GetQuotaNamespace()}}
	case *stratopb.DeleteVolumeRequest:
		cmd.Op = &stratopb.NamespaceCommand_DeleteVolume{DeleteVolume: r}
	case *stratopb.SetQuotaRequest:
		if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_SetQuota{SetQuota: r}
	case *stratopb.CreateBucketRequest:
		bi, err := ns.prepareBucket(r, view)
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_CreateBucket{CreateBucket: bi}
	case *stratopb.DeleteBucketRequest:
		cmd.Op = &stratopb.NamespaceCommand_DeleteBucket{DeleteBucket: r}
	case *stratopb.OpenKeyRequest:
		ok, err := ns.prepareOpen(ctx, view, env, &stratopb.OpenKeyCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetKey(), Replication: r.GetReplication(),
			Owner: r.GetOwner(), SizeHint: r.GetSizeHint()}, r.GetExclude())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_OpenKey{OpenKey: ok}
	case *stratopb.CreateFileRequest:
		ok, err := ns.prepareOpen(ctx, view, env, &stratopb.OpenKeyCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Key: r.GetPath(), CreateFile: true,
			Overwrite: r.GetOverwrite(), Recursive: r.GetRecursive(), Replication: r.GetReplication(),
			Owner: r.GetOwner(), SizeHint: r.GetSizeHint()}, r.GetExclude())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_OpenKey{OpenKey: ok}
	case *stratopb.AllocateBlockRequest:
		rec := &stratopb.OpenKeyInfo{}
		if ok, err := get(view, idKey(nil, tagOpen, r.GetOpenId()), rec); err != nil {
			return nil, err
		} else if !ok || rec.Volume != r.GetVolume() || rec.Bucket != r.GetBucket() {
			return nil, fmt.Errorf("%w: %d in %s/%s", ErrOpenKeyNotFound, r.GetOpenId(), r.GetVolume(), r.GetBucket())
		}
		if env.Allocator == nil {
			return nil, fmt.Errorf("namespace: no block allocator")
		}
		bl, err := env.Allocator.AllocateBlock(ctx, rec.Replication, r.GetSizeHint(), r.GetExclude())
		if err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_AllocateBlock{AllocateBlock: &stratopb.AllocateBlockCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), OpenId: r.GetOpenId(), Block: bl}}
	case *stratopb.CommitKeyRequest:
		if len(r.GetCreateToken()) > 0 {
			if _, err := createToken(r); err != nil {
				return nil, err
			}
		}
		for _, bl := range r.GetBlocks() {
			if bl.GetBlockId() == nil || bl.GetLength() < 0 {
				return nil, fmt.Errorf("%w: block %v", ErrInvalidBlocks, bl)
			}
		}
		cmd.Op = &stratopb.NamespaceCommand_CommitKey{CommitKey: r}
	case *stratopb.DeleteKeyRequest:
		cmd.Op = &stratopb.NamespaceCommand_Delete{Delete: &stratopb.DeleteRequest{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Path: r.GetKey()}}
	case *stratopb.DeleteRequest:
		cmd.Op = &stratopb.NamespaceCommand_Delete{Delete: r}
	case *stratopb.RenameKeyRequest:
		cmd.Op = &stratopb.NamespaceCommand_Rename{Rename: &stratopb.RenameCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Src: r.GetFromKey(), Dst: r.GetToKey()}}
	case *stratopb.RenameRequest:
		cmd.Op = &stratopb.NamespaceCommand_Rename{Rename: &stratopb.RenameCommand{
			Volume: r.GetVolume(), Bucket: r.GetBucket(), Src: r.GetSrc(), Dst: r.GetDst(), IntoDirectory: true}}
	case *stratopb.CreateDirectoryRequest:
		if _, err := CleanPath(r.GetPath()); err != nil {
			return nil, err
		}
		cmd.Op = &stratopb.NamespaceCommand_CreateDirectory{CreateDirectory: r}
	default:
		return nil, fmt.Errorf("%w: %T is not a namespace mutation", ErrInvalid, req)
	}
	return cmd, nil
}

func (ns *Namespace) prepareBucket(r *stratopb.CreateBucketRequest, view pebble.Reader) (*stratopb.BucketInfo, error) {
	if err := ValidateVolumeName(r.GetVolume()); err != nil {
		return nil, err
	}
	if err := ValidateBucketName(r.GetName()); err != nil {
		return nil, err
	}
	if err := checkQuotas(r.GetQuotaBytes(), r.GetQuotaNamespace()); err != nil {
		return nil, err
	}
	bi := &stratopb.BucketInfo{
		Volume: r.GetVolume(), Name: r.GetName(), Layout: r.GetLayout(), Replication: r.GetReplication(),
		ChecksumType: r.GetChecksumType(), BytesPerChecksum: r.GetBytesPerChecksum(),
		QuotaBytes: r.GetQuotaBytes(), QuotaNamespace: r.GetQuotaNamespace(), Owner: r.GetOwner(),
		BlockSize: r.GetBlockSize(),
	}
	if bi.Layout == stratopb.BucketLayout_LAYOUT_UNSPECIFIED {
		bi.Layout = stratopb.BucketLayout_LAYOUT_FSO
	}
	if bi.Replication == stratopb.ReplicationFactor_REPLICATION_UNSPECIFIED {
		bi.Replication = ns.opts.DefaultReplication
	}
	if bi.ChecksumType == stratopb.ChecksumType_CHECKSUM_TYPE_UNSPECIFIED {
		bi.ChecksumType = stratopb.ChecksumType_CHECKSUM_CRC32C
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
func (ns *Namespace) prepareOpen(ctx context.Context, view pebble.Reader, env PrepareEnv, c *stratopb.OpenKeyCommand, ex *stratopb.ExcludeList) (*stratopb.OpenKeyCommand, error) {
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
	if c.Replication == stratopb.ReplicationFactor_REPLICATION_UNSPECIFIED {
		c.Replication = bk.Replication
	}
	if !validReplication(c.Replication) {
		return nil, fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, c.Replication)
	}
	c.ExpiresAt = env.Now.Add(ns.opts.OpenKeyTTL).UnixMilli()
	if c.SizeHint > 0 {
		if env.Allocator == nil {
			return nil, fmt.Errorf("namespace: no block allocator")
		}
		bl, err := env.Allocator.AllocateBlock(ctx, c.Replication, min(c.SizeHint, bk.BlockSize), ex)
		if err != nil {
			return nil, err
		}
		c.Blocks = []*stratopb.BlockLocation{bl}
	}
	return c, nil
}

// PrepareExpiry returns a command expiring up to limit open keys whose
// expiry time is at or before now, or nil when there are none. The server
// issues it periodically on the leader.
func (ns *Namespace) PrepareExpiry(view pebble.Reader, now time.Time, limit int) (*stratopb.NamespaceCommand, error) {
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
	return &stratopb.NamespaceCommand{Now: now.UnixMilli(), Op: &stratopb.NamespaceCommand_ExpireOpenKeys{
		ExpireOpenKeys: &stratopb.ExpireOpenKeysCommand{OpenIds: ids}}}, nil
}

// PrepareReclaim returns a command reclaiming up to limit entries under
// deleted directories, or nil when none is pending. The server issues it
// periodically (and again at once while the result says More).
func (ns *Namespace) PrepareReclaim(view pebble.Reader, now time.Time, limit int) (*stratopb.NamespaceCommand, error) {
	found, err := firstValue(view, tableKey(nil, tagDeletedDir), nil)
	if err != nil || !found {
		return nil, err
	}
	return &stratopb.NamespaceCommand{Now: now.UnixMilli(), Op: &stratopb.NamespaceCommand_Reclaim{
		Reclaim: &stratopb.ReclaimCommand{Limit: int32(limit)}}}, nil
}

// PreparePurge returns a command forgetting deleted-block entries whose
// blocks the datanodes have deleted.
func (ns *Namespace) PreparePurge(now time.Time, seqs []uint64) *stratopb.NamespaceCommand {
	return &stratopb.NamespaceCommand{Now: now.UnixMilli(), Op: &stratopb.NamespaceCommand_PurgeDeletedBlocks{
		PurgeDeletedBlocks: &stratopb.PurgeDeletedBlocksCommand{Seqs: seqs}}}
}
