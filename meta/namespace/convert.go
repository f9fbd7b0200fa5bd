package namespace

import (
	"fmt"
	"sort"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Records (what Pebble stores, what the log carries) and API messages
// (what clients see) are separate messages, so that the API can change
// without changing the disk or log format. The conversions live here, and
// only Prepare (requests to commands), the Reader and apply's replies
// (records to API messages) use them.

// VolumeInfo is the API's view of a volume record.
func VolumeInfo(r *stratov1.VolumeRecord) *stratov1.VolumeInfo {
	if r == nil {
		return nil
	}
	return &stratov1.VolumeInfo{
		Name: r.Name, Id: r.Id, Owner: r.Owner,
		CreationTimeUnixMs: r.CreationTimeUnixMs, ModificationTimeUnixMs: r.ModificationTimeUnixMs,
		QuotaBytes: r.QuotaBytes, QuotaNamespace: r.QuotaNamespace,
		UsedBytes: r.UsedBytes, UsedNamespace: r.UsedNamespace, Acls: AclInfos(r.Acls),
	}
}

// BucketInfo is the API's view of a bucket record.
func BucketInfo(r *stratov1.BucketRecord) *stratov1.BucketInfo {
	if r == nil {
		return nil
	}
	return &stratov1.BucketInfo{
		Volume: r.Volume, Name: r.Name, Id: r.Id, Layout: r.Layout, Replication: r.Replication,
		ChecksumType: r.ChecksumType, BytesPerChecksum: r.BytesPerChecksum,
		QuotaBytes: r.QuotaBytes, QuotaNamespace: r.QuotaNamespace,
		CreationTimeUnixMs: r.CreationTimeUnixMs, ModificationTimeUnixMs: r.ModificationTimeUnixMs,
		Owner: r.Owner, UsedBytes: r.UsedBytes, UsedNamespace: r.UsedNamespace,
		BlockSize: r.BlockSize, VolumeId: r.VolumeId, Attributes: keyAttributes(r.Attributes),
		ErasureCoding: ErasureCoding(r.ErasureCoding),
		Permission:    permissionOr(r.Permission, DefaultDirPermission), Group: r.Group,
		Acls: AclInfos(r.Acls), AccessTimeUnixMs: r.AccessTimeUnixMs, Versioning: r.Versioning,
		Lifecycle:  r.Lifecycle,
		ObjectLock: BucketObjectLockInfo(r.ObjectLock),
	}
}

// KeyInfo is the API's view of a key record, with its blocks.
func KeyInfo(r *stratov1.KeyRecord) *stratov1.KeyInfo {
	if r == nil {
		return nil
	}
	ki := &stratov1.KeyInfo{
		Volume: r.Volume, Bucket: r.Bucket, Name: r.Name, ObjectId: r.ObjectId, ParentId: r.ParentId,
		Size: r.Size, Replication: r.Replication, ChecksumType: r.ChecksumType, BytesPerChecksum: r.BytesPerChecksum,
		CreationTimeUnixMs: r.CreationTimeUnixMs, ModificationTimeUnixMs: r.ModificationTimeUnixMs,
		Blocks: groupLocations(BlockLocations(r.Blocks), r.ErasureCoding), Owner: r.Owner, Attributes: keyAttributes(r.Attributes),
		ErasureCoding: ErasureCoding(r.ErasureCoding),
		Permission:    permissionOr(r.Permission, DefaultFilePermission), Group: r.Group,
		AccessTimeUnixMs: accessTime(r.AccessTimeUnixMs, r.ModificationTimeUnixMs),
		Acls:             AclInfos(r.Acls),
		DeleteMarker:     r.DeleteMarker,
		ObjectLock:       ObjectLockInfo(r.ObjectLock),
	}
	if r.VersionSeq != 0 || r.NullVersion {
		ki.VersionId = VersionID(r)
	}
	return ki
}

func keyAttributes(rs []*stratov1.AttributeRecord) []*stratov1.KeyAttribute {
	if len(rs) == 0 {
		return nil
	}
	out := make([]*stratov1.KeyAttribute, len(rs))
	for i, r := range rs {
		out[i] = &stratov1.KeyAttribute{Name: r.Name, Value: r.Value}
	}
	return out
}

// Limits of the attributes of one key.
const (
	maxAttributes     = 1024
	maxAttributeBytes = 64 << 10
)

// attributeRecords validates a commit's attributes (names unique and not
// empty, within the limits) and returns them sorted by name.
func attributeRecords(as []*stratov1.KeyAttribute) ([]*stratov1.AttributeRecord, error) {
	if len(as) == 0 {
		return nil, nil
	}
	if len(as) > maxAttributes {
		return nil, fmt.Errorf("%w: %d attributes (at most %d)", ErrInvalid, len(as), maxAttributes)
	}
	out := make([]*stratov1.AttributeRecord, len(as))
	total := 0
	for i, a := range as {
		if a.GetName() == "" {
			return nil, fmt.Errorf("%w: an attribute without a name", ErrInvalid)
		}
		total += len(a.GetName()) + len(a.GetValue())
		out[i] = &stratov1.AttributeRecord{Name: a.GetName(), Value: a.GetValue()}
	}
	if total > maxAttributeBytes {
		return nil, fmt.Errorf("%w: attributes of %d bytes (at most %d)", ErrInvalid, total, maxAttributeBytes)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("%w: attribute %q twice", ErrInvalid, out[i].Name)
		}
	}
	return out, nil
}

func keySources(ss []*stratov1.KeySource) []*stratov1.KeySourceCommand {
	if len(ss) == 0 {
		return nil
	}
	out := make([]*stratov1.KeySourceCommand, len(ss))
	for i, s := range ss {
		out[i] = &stratov1.KeySourceCommand{Volume: s.GetVolume(), Bucket: s.GetBucket(), Key: s.GetKey(), ObjectId: s.GetObjectId()}
	}
	return out
}

// BlockLocations is the API's view of block records.
func BlockLocations(rs []*stratov1.BlockRecord) []*stratov1.BlockLocation {
	if rs == nil {
		return nil
	}
	out := make([]*stratov1.BlockLocation, len(rs))
	for i, r := range rs {
		out[i] = BlockLocation(r)
	}
	return out
}

// BlockLocation is the API's view of a block record.
func BlockLocation(r *stratov1.BlockRecord) *stratov1.BlockLocation {
	if r == nil {
		return nil
	}
	l := &stratov1.BlockLocation{Offset: r.Offset, Length: r.Length}
	if id := r.BlockId; id != nil {
		l.BlockId = &stratov1.BlockID{ContainerId: id.ContainerId, LocalId: id.LocalId}
	}
	if p := r.Pipeline; p != nil {
		l.Pipeline = &stratov1.Pipeline{Id: p.Id, Members: make([]*stratov1.DatanodeDetails, len(p.Members))}
		for i, m := range p.Members {
			l.Pipeline.Members[i] = &stratov1.DatanodeDetails{Id: m.GetId(), DataAddr: m.GetDataAddr(), Hostname: m.GetHostname()}
		}
	}
	return l
}

// BlockRecord is the record of a block a client names (or an allocation
// made for it).
func BlockRecord(l *stratov1.BlockLocation) *stratov1.BlockRecord {
	if l == nil {
		return nil
	}
	r := &stratov1.BlockRecord{Offset: l.GetOffset(), Length: l.GetLength()}
	if id := l.GetBlockId(); id != nil {
		r.BlockId = &stratov1.BlockIDRecord{ContainerId: id.GetContainerId(), LocalId: id.GetLocalId()}
	}
	if p := l.GetPipeline(); p != nil {
		r.Pipeline = &stratov1.BlockPipelineRecord{Id: p.GetId(), Members: BlockMembers(p.GetMembers())}
	}
	return r
}

// BlockMembers are the records of a pipeline's members.
func BlockMembers(ds []*stratov1.DatanodeDetails) []*stratov1.BlockMemberRecord {
	out := make([]*stratov1.BlockMemberRecord, len(ds))
	for i, m := range ds {
		out[i] = &stratov1.BlockMemberRecord{Id: m.GetId(), DataAddr: m.GetDataAddr(), Hostname: m.GetHostname()}
	}
	return out
}

func blockRecords(ls []*stratov1.BlockLocation) []*stratov1.BlockRecord {
	if ls == nil {
		return nil
	}
	out := make([]*stratov1.BlockRecord, len(ls))
	for i, l := range ls {
		out[i] = BlockRecord(l)
	}
	return out
}
