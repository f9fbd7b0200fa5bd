package namespace

import (
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
		UsedBytes: r.UsedBytes, UsedNamespace: r.UsedNamespace,
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
		BlockSize: r.BlockSize, VolumeId: r.VolumeId,
	}
}

// KeyInfo is the API's view of a key record, with its blocks.
func KeyInfo(r *stratov1.KeyRecord) *stratov1.KeyInfo {
	if r == nil {
		return nil
	}
	return &stratov1.KeyInfo{
		Volume: r.Volume, Bucket: r.Bucket, Name: r.Name, ObjectId: r.ObjectId, ParentId: r.ParentId,
		Size: r.Size, Replication: r.Replication, ChecksumType: r.ChecksumType, BytesPerChecksum: r.BytesPerChecksum,
		CreationTimeUnixMs: r.CreationTimeUnixMs, ModificationTimeUnixMs: r.ModificationTimeUnixMs,
		Blocks: BlockLocations(r.Blocks), Owner: r.Owner,
	}
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
		r.Pipeline = &stratov1.BlockPipelineRecord{Id: p.GetId(), Members: make([]*stratov1.BlockMemberRecord, len(p.GetMembers()))}
		for i, m := range p.GetMembers() {
			r.Pipeline.Members[i] = &stratov1.BlockMemberRecord{Id: m.GetId(), DataAddr: m.GetDataAddr(), Hostname: m.GetHostname()}
		}
	}
	return r
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
