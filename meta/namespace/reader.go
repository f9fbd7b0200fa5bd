package namespace

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Reader serves the namespace's read calls from a pebble.Reader (the DB,
// after the server's read barrier, or a snapshot). It is safe for concurrent
// use and keeps no state but the Namespace's directory cache.
type Reader struct {
	ns *Namespace
	r  pebble.Reader
	// caller: reads are authorized for it (As); nil: not checked.
	caller *Caller
}

// Reader returns a Reader over r.
func (ns *Namespace) Reader(r pebble.Reader) *Reader { return &Reader{ns: ns, r: r} }

var resolverPool = sync.Pool{New: func() any { return &resolver{buf: make([]byte, 0, 128)} }}

func (rd *Reader) resolver() *resolver {
	rs := resolverPool.Get().(*resolver)
	rs.r, rs.cache = rd.r, rd.ns.cache
	return rs
}

func (rd *Reader) release(rs *resolver) {
	rs.r, rs.cache = nil, nil
	resolverPool.Put(rs)
}

func (rd *Reader) limit(n int32) int {
	switch {
	case n <= 0:
		return rd.ns.opts.DefaultListLimit
	case int(n) > rd.ns.opts.MaxListLimit:
		return rd.ns.opts.MaxListLimit
	}
	return int(n)
}

func applyUsage(r pebble.Reader, id uint64, bytes, names *int64) error {
	u, err := getUsage(r, id)
	*bytes, *names = u.bytes, u.namespace
	return err
}

// Volume returns a volume with its usage.
func (rd *Reader) Volume(name string) (*stratov1.VolumeInfo, error) {
	if err := rd.authorized(rd.caller, volumeKind, name, "", "", RightRead); err != nil {
		return nil, err
	}
	v := &stratov1.VolumeRecord{}
	if ok, err := get(rd.r, volumeKey(nil, name), v); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeNotFound, name)
	}
	if err := applyUsage(rd.r, v.Id, &v.UsedBytes, &v.UsedNamespace); err != nil {
		return nil, err
	}
	return VolumeInfo(v), nil
}

// Bucket returns a bucket with its usage.
func (rd *Reader) Bucket(volume, name string) (*stratov1.BucketInfo, error) {
	if err := rd.authorized(rd.caller, bucketKind, volume, name, "", RightRead); err != nil {
		return nil, err
	}
	shared, err := rd.bucket(volume, name)
	if err != nil {
		return nil, err
	}
	bk := BucketInfo(shared)
	return bk, applyUsage(rd.r, bk.Id, &bk.UsedBytes, &bk.UsedNamespace)
}

// bucket returns a bucket's record, which the caller must not modify (it
// may be shared through the cache).
func (rd *Reader) bucket(volume, name string) (*stratov1.BucketRecord, error) {
	c := rd.ns.cache
	var gen uint64
	var fillOK bool
	if c != nil {
		if bk := c.getBucket(volume, name); bk != nil {
			return bk, nil
		}
		gen, fillOK = c.token()
	}
	bk := &stratov1.BucketRecord{}
	if ok, err := get(rd.r, bucketKey(nil, volume, name), bk); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrBucketNotFound, volume, name)
	}
	if fillOK {
		c.fillBucket(bk, gen)
	}
	return bk, nil
}

// scan visits records under prefix whose key suffix is > after (all when
// after is empty) and starts with sub, until visit returns false.
func scan(r pebble.Reader, prefix []byte, sub, after string, visit func(suffix, value []byte) (bool, error)) error {
	lower := append(append([]byte(nil), prefix...), sub...)
	upper := prefixEnd(lower)
	if after != "" && after >= sub {
		lower = append(append(append([]byte(nil), prefix...), after...), 0)
	}
	if upper != nil && bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		more, err := visit(it.Key()[len(prefix):], it.Value())
		if err != nil {
			_ = it.Close()
			return err
		}
		if !more {
			break
		}
	}
	return it.Close()
}

// ListVolumes lists volumes in name order.
func (rd *Reader) ListVolumes(req *stratov1.ListVolumesRequest) (*stratov1.ListVolumesResponse, error) {
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListVolumesResponse{}
	err := scan(rd.r, tableKey(nil, tagVolume), req.GetPrefix(), req.GetStartAfter(), func(_, v []byte) (bool, error) {
		if len(res.Volumes) == limit {
			res.Truncated = true
			return false, nil
		}
		vi := &stratov1.VolumeRecord{}
		if err := proto.Unmarshal(v, vi); err != nil {
			return false, fmt.Errorf("%w: volume: %w", ErrCorrupt, err)
		}
		if !rd.caller.mayListVolume(vi) {
			return true, nil
		}
		info := VolumeInfo(vi)
		res.Volumes = append(res.Volumes, info)
		return true, applyUsage(rd.r, info.Id, &info.UsedBytes, &info.UsedNamespace)
	})
	return res, err
}

// ListBuckets lists a volume's buckets in name order.
func (rd *Reader) ListBuckets(req *stratov1.ListBucketsRequest) (*stratov1.ListBucketsResponse, error) {
	if err := rd.authorized(rd.caller, volumeKind, req.GetVolume(), "", "", RightList); err != nil {
		return nil, err
	}
	if ok, err := exists(rd.r, volumeKey(nil, req.GetVolume())); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", ErrVolumeNotFound, req.GetVolume())
	}
	limit := rd.limit(req.GetLimit())
	res := &stratov1.ListBucketsResponse{}
	err := scan(rd.r, bucketPrefix(nil, req.GetVolume()), req.GetPrefix(), req.GetStartAfter(), func(_, v []byte) (bool, error) {
		if len(res.Buckets) == limit {
			res.Truncated = true
			return false, nil
		}
		bk := &stratov1.BucketRecord{}
		if err := proto.Unmarshal(v, bk); err != nil {
			return false, fmt.Errorf("%w: bucket: %w", ErrCorrupt, err)
		}
		info := BucketInfo(bk)
		res.Buckets = append(res.Buckets, info)
		return true, applyUsage(rd.r, info.Id, &info.UsedBytes, &info.UsedNamespace)
	})
	return res, err
}

// OpenKey returns an open key by its handle.
func (rd *Reader) OpenKey(id uint64) (*stratov1.OpenKeyInfo, error) {
	rec := &stratov1.OpenKeyInfo{}
	if ok, err := get(rd.r, idKey(nil, tagOpen, id), rec); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %d", ErrOpenKeyNotFound, id)
	}
	return rec, nil
}

// DeletedBlocks lists entries of the deleted-blocks table after seq.
func (rd *Reader) DeletedBlocks(afterSeq uint64, limit int) ([]*stratov1.DeletedBlocks, error) {
	var out []*stratov1.DeletedBlocks
	lower := idKey(nil, tagDeleted, afterSeq+1)
	if afterSeq == ^uint64(0) {
		return nil, nil
	}
	it, err := rd.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(tableKey(nil, tagDeleted))})
	if err != nil {
		return nil, err
	}
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		d := &stratov1.DeletedBlocks{}
		if err := proto.Unmarshal(it.Value(), d); err != nil {
			_ = it.Close()
			return nil, fmt.Errorf("%w: deleted blocks: %w", ErrCorrupt, err)
		}
		out = append(out, d)
	}
	return out, it.Close()
}

// DeletedDirectories lists directories whose subtrees are still being
// reclaimed.
func (rd *Reader) DeletedDirectories(limit int) ([]*stratov1.DeletedDirectory, error) {
	var out []*stratov1.DeletedDirectory
	err := scan(rd.r, tableKey(nil, tagDeletedDir), "", "", func(_, v []byte) (bool, error) {
		if len(out) == limit {
			return false, nil
		}
		d := &stratov1.DeletedDirectory{}
		if err := proto.Unmarshal(v, d); err != nil {
			return false, fmt.Errorf("%w: deleted directory: %w", ErrCorrupt, err)
		}
		out = append(out, d)
		return true, nil
	})
	return out, err
}

// ---- keys and files ---------------------------------------------------------

// LookupKey returns a committed key (OBS) or file (FSO) with its blocks.
func (rd *Reader) LookupKey(req *stratov1.LookupKeyRequest) (*stratov1.LookupKeyResponse, error) {
	if name, rest, ok := snapshotPath(req.GetKey()); ok {
		return rd.snapLookupKey(req, name, rest)
	}
	if err := rd.authorized(rd.caller, keyKind, req.GetVolume(), req.GetBucket(), req.GetKey(), RightRead); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	ki := &stratov1.KeyRecord{}
	name := req.GetKey()
	if isFSO(bk) {
		if req.GetVersionId() != "" && req.GetVersionId() != NullVersionID {
			return nil, fmt.Errorf("%w: %s/%s is a file-system (FSO) bucket: it keeps no versions", ErrWrongLayout, bk.Volume, bk.Name)
		}
		if name, err = CleanPath(name); err != nil {
			return nil, err
		}
		if name == "" {
			return nil, fmt.Errorf("%w: %s/%s/: the bucket's root is a directory", ErrIsADirectory, bk.Volume, bk.Name)
		}
		parent, base := splitLast(name)
		rs := rd.resolver()
		defer rd.release(rs)
		pid, err := rs.dir(bk.Id, parent, 0, ErrKeyNotFound)
		if err != nil {
			return nil, err
		}
		if ok, err := get(rd.r, childKey(rs.buf, tagFile, pid, base), ki); err != nil {
			return nil, err
		} else if !ok {
			if _, isDir, err := rs.lookupDir(pid, base); err != nil {
				return nil, err
			} else if isDir {
				return nil, fmt.Errorf("%w: %s/%s/%s", ErrIsADirectory, bk.Volume, bk.Name, name)
			}
			return nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, bk.Volume, bk.Name, name)
		}
	} else {
		if req.GetVersionId() != "" {
			return rd.lookupVersion(bk, name, req.GetVersionId())
		}
		if ok, err := get(rd.r, childKey(nil, tagKey, bk.Id, name), ki); err != nil {
			return nil, err
		} else if !ok {
			if req.GetDeleteMarkers() && bk.Versioning != versioningOff {
				return rd.latestMarker(bk, name)
			}
			return nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, bk.Volume, bk.Name, name)
		}
	}
	ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, name
	info := KeyInfo(ki)
	if bk.Versioning != versioningOff {
		info.VersionId = VersionID(ki)
	}
	return &stratov1.LookupKeyResponse{Key: info}, nil
}

func dirStatus(path string, d *stratov1.DirectoryInfo) *stratov1.FileStatus {
	return &stratov1.FileStatus{Path: path, IsDirectory: true, ModificationTimeUnixMs: d.ModificationTimeUnixMs,
		CreationTimeUnixMs: d.CreationTimeUnixMs, ObjectId: d.ObjectId, Owner: d.Owner,
		Permission: permissionOr(d.Permission, DefaultDirPermission), Group: d.Group, AccessTimeUnixMs: d.AccessTimeUnixMs,
		Acls: AclInfos(d.Acls)}
}

// keyFields are what a file status shows of a key: its record's, or its
// API view's.
type keyFields interface {
	GetSize() int64
	GetReplication() stratov1.ReplicationFactor
	GetModificationTimeUnixMs() int64
	GetCreationTimeUnixMs() int64
	GetObjectId() uint64
	GetOwner() string
	GetGroup() string
	GetAccessTimeUnixMs() int64
}

func fileStatus(bk *stratov1.BucketRecord, path string, ki keyFields) *stratov1.FileStatus {
	var perm *uint32
	var acls []*stratov1.Acl
	var ecs *stratov1.ErasureCoding
	switch k := ki.(type) {
	case *stratov1.KeyRecord:
		perm, acls, ecs = k.Permission, AclInfos(k.Acls), ErasureCoding(k.ErasureCoding)
	case *stratov1.KeyInfo:
		perm, acls, ecs = k.Permission, k.Acls, k.ErasureCoding
	}
	return &stratov1.FileStatus{Path: path, Length: ki.GetSize(), Replication: ki.GetReplication(), BlockSize: bk.BlockSize,
		ModificationTimeUnixMs: ki.GetModificationTimeUnixMs(), CreationTimeUnixMs: ki.GetCreationTimeUnixMs(),
		ObjectId: ki.GetObjectId(), Owner: ki.GetOwner(), Permission: permissionOr(perm, DefaultFilePermission),
		Group: ki.GetGroup(), AccessTimeUnixMs: accessTime(ki.GetAccessTimeUnixMs(), ki.GetModificationTimeUnixMs()),
		Acls: acls, ErasureCoding: ecs}
}

// accessTime is a file's access time: the stored one, or (a record written
// before access times were) its modification time.
func accessTime(atime, mtime int64) int64 {
	if atime == 0 {
		return mtime
	}
	return atime
}

// fileStatusWithKey is fileStatus with the key and its blocks when the
// caller asked for them.
func fileStatusWithKey(bk *stratov1.BucketRecord, path string, ki *stratov1.KeyRecord, withBlocks bool) *stratov1.FileStatus {
	st := fileStatus(bk, path, ki)
	if withBlocks {
		ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, path
		st.Key = KeyInfo(ki)
	}
	return st
}

func rootStatus(bk *stratov1.BucketRecord) *stratov1.FileStatus {
	return &stratov1.FileStatus{IsDirectory: true, ModificationTimeUnixMs: bk.ModificationTimeUnixMs,
		AccessTimeUnixMs: bk.AccessTimeUnixMs, CreationTimeUnixMs: bk.CreationTimeUnixMs, ObjectId: bk.Id, Owner: bk.Owner,
		Permission: permissionOr(bk.Permission, DefaultDirPermission), Group: bk.Group, Acls: AclInfos(bk.Acls)}
}

// GetFileStatus returns the status of a file or directory ("" is the root).
// On an OBS bucket, a key is a file and a prefix followed by '/' a directory.
func (rd *Reader) GetFileStatus(req *stratov1.GetFileStatusRequest) (*stratov1.GetFileStatusResponse, error) {
	if name, rest, ok := snapshotPath(req.GetPath()); ok {
		return rd.snapFileStatus(req, name, rest)
	}
	if err := rd.authorized(rd.caller, keyKind, req.GetVolume(), req.GetBucket(), req.GetPath(), RightRead); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	if !isFSO(bk) {
		return rd.obsFileStatus(bk, req)
	}
	p, err := CleanPath(req.GetPath())
	if err != nil {
		return nil, err
	}
	if p == "" {
		return &stratov1.GetFileStatusResponse{Status: rootStatus(bk)}, nil
	}
	parent, name := splitLast(p)
	rs := rd.resolver()
	defer rd.release(rs)
	pid, err := rs.dir(bk.Id, parent, 0, ErrFileNotFound)
	if err != nil {
		return nil, err
	}
	ki := &stratov1.KeyRecord{}
	if ok, err := get(rd.r, childKey(rs.buf, tagFile, pid, name), ki); err != nil {
		return nil, err
	} else if ok {
		return &stratov1.GetFileStatusResponse{Status: fileStatusWithKey(bk, p, ki, req.GetWithBlocks())}, nil
	}
	d := &stratov1.DirectoryInfo{}
	if ok, err := get(rd.r, childKey(rs.buf, tagDir, pid, name), d); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, bk.Volume, bk.Name, p)
	}
	return &stratov1.GetFileStatusResponse{Status: dirStatus(p, d)}, nil
}

func (rd *Reader) obsFileStatus(bk *stratov1.BucketRecord, req *stratov1.GetFileStatusRequest) (*stratov1.GetFileStatusResponse, error) {
	p := strings.TrimPrefix(req.GetPath(), "/")
	if p == "" {
		return &stratov1.GetFileStatusResponse{Status: rootStatus(bk)}, nil
	}
	ki := &stratov1.KeyRecord{}
	if ok, err := get(rd.r, childKey(nil, tagKey, bk.Id, p), ki); err != nil {
		return nil, err
	} else if ok {
		return &stratov1.GetFileStatusResponse{Status: fileStatusWithKey(bk, p, ki, req.GetWithBlocks())}, nil
	}
	dir := strings.TrimSuffix(p, "/") + "/"
	found, err := firstValue(rd.r, childKey(nil, tagKey, bk.Id, dir), nil)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, bk.Volume, bk.Name, p)
	}
	return &stratov1.GetFileStatusResponse{Status: &stratov1.FileStatus{Path: strings.TrimSuffix(p, "/"), IsDirectory: true}}, nil
}

// ListStatus lists a directory's children in name order, from the first
// name after start_after. Listing a file returns its own status.
func (rd *Reader) ListStatus(req *stratov1.ListStatusRequest) (*stratov1.ListStatusResponse, error) {
	if name, rest, ok := snapshotPath(req.GetPath()); ok {
		return rd.snapListStatus(req, name, rest)
	}
	if err := rd.authorized(rd.caller, keyKind, req.GetVolume(), req.GetBucket(), req.GetPath(), RightList); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	limit := rd.limit(req.GetLimit())
	if !isFSO(bk) {
		return rd.obsListStatus(bk, req, limit)
	}
	p, err := CleanPath(req.GetPath())
	if err != nil {
		return nil, err
	}
	rs := rd.resolver()
	defer rd.release(rs)
	id := bk.Id
	if p != "" {
		parent, name := splitLast(p)
		pid, err := rs.dir(bk.Id, parent, 0, ErrFileNotFound)
		if err != nil {
			return nil, err
		}
		did, isDir, err := rs.lookupDir(pid, name)
		if err != nil {
			return nil, err
		}
		if !isDir {
			ki := &stratov1.KeyRecord{}
			if ok, err := get(rd.r, childKey(rs.buf, tagFile, pid, name), ki); err != nil {
				return nil, err
			} else if !ok {
				return nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, bk.Volume, bk.Name, p)
			}
			if req.GetStartAfter() != "" {
				return &stratov1.ListStatusResponse{}, nil
			}
			return &stratov1.ListStatusResponse{Statuses: []*stratov1.FileStatus{fileStatus(bk, p, ki)}}, nil
		}
		id = did
	}

	res := &stratov1.ListStatusResponse{}
	var its [2]*pebble.Iterator
	for i, tag := range []byte{tagDir, tagFile} {
		prefix := idKey(nil, tag, id)
		lower := prefix
		if sa := req.GetStartAfter(); sa != "" {
			lower = append(append(append([]byte(nil), prefix...), sa...), 0)
		}
		it, err := rd.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixEnd(prefix)})
		if err != nil {
			if i == 1 {
				_ = its[0].Close()
			}
			return nil, err
		}
		it.First()
		its[i] = it
	}
	defer func() {
		_ = its[0].Close()
		_ = its[1].Close()
	}()
	for its[0].Valid() || its[1].Valid() {
		// Take the smaller name; a name is never both a file and a directory.
		i := 0
		if !its[0].Valid() || (its[1].Valid() && bytes.Compare(its[1].Key()[10:], its[0].Key()[10:]) < 0) {
			i = 1
		}
		if len(res.Statuses) == limit {
			res.Truncated = true
			break
		}
		it := its[i]
		name := string(it.Key()[10:])
		if i == 0 {
			d := &stratov1.DirectoryInfo{}
			if err := proto.Unmarshal(it.Value(), d); err != nil {
				return nil, fmt.Errorf("%w: directory %s: %w", ErrCorrupt, name, err)
			}
			res.Statuses = append(res.Statuses, dirStatus(joinPath(p, name), d))
		} else {
			ki := &stratov1.KeyRecord{}
			if err := proto.Unmarshal(it.Value(), ki); err != nil {
				return nil, fmt.Errorf("%w: file %s: %w", ErrCorrupt, name, err)
			}
			res.Statuses = append(res.Statuses, fileStatus(bk, joinPath(p, name), ki))
		}
		it.Next()
	}
	for _, it := range its {
		if err := it.Error(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// keysAsStatuses is an OBS listing with delimiter "/" as ListStatus
// answers it: keys as files, common prefixes as directories, merged back
// into name order.
func keysAsStatuses(bk *stratov1.BucketRecord, lk *stratov1.ListKeysResponse) *stratov1.ListStatusResponse {
	res := &stratov1.ListStatusResponse{Truncated: lk.Truncated}
	i, j := 0, 0
	for i < len(lk.Keys) || j < len(lk.CommonPrefixes) {
		if j >= len(lk.CommonPrefixes) || (i < len(lk.Keys) && lk.Keys[i].Name < lk.CommonPrefixes[j]) {
			ki := lk.Keys[i]
			res.Statuses = append(res.Statuses, fileStatus(bk, ki.Name, ki))
			i++
		} else {
			res.Statuses = append(res.Statuses, &stratov1.FileStatus{Path: strings.TrimSuffix(lk.CommonPrefixes[j], "/"), IsDirectory: true})
			j++
		}
	}
	return res
}

func (rd *Reader) obsListStatus(bk *stratov1.BucketRecord, req *stratov1.ListStatusRequest, limit int) (*stratov1.ListStatusResponse, error) {
	p := strings.Trim(req.GetPath(), "/")
	prefix := ""
	if p != "" {
		prefix = p + "/"
	}
	after := ""
	if req.GetStartAfter() != "" {
		after = prefix + req.GetStartAfter()
	}
	lk, err := rd.listOBS(bk, prefix, after, "/", limit)
	if err != nil {
		return nil, err
	}
	res := keysAsStatuses(bk, lk)
	if len(res.Statuses) == 0 && p != "" {
		// Not a directory: a key, or nothing.
		st, err := rd.obsFileStatus(bk, &stratov1.GetFileStatusRequest{Path: p})
		if err != nil {
			return nil, err
		}
		if !st.Status.IsDirectory && req.GetStartAfter() == "" {
			res.Statuses = append(res.Statuses, st.Status)
		}
	}
	return res, nil
}

// ListKeys lists a bucket's keys in order: those starting with prefix,
// after start_after; with a delimiter, keys containing it after the prefix
// are rolled up into common prefixes (S3 ListObjectsV2).
func (rd *Reader) ListKeys(req *stratov1.ListKeysRequest) (*stratov1.ListKeysResponse, error) {
	if name, rest, ok := snapshotPath(req.GetPrefix()); ok && strings.Contains(strings.TrimPrefix(req.GetPrefix(), "/"), "/") {
		return rd.snapListKeys(req, name, rest)
	}
	if err := rd.authorized(rd.caller, bucketKind, req.GetVolume(), req.GetBucket(), "", RightList); err != nil {
		return nil, err
	}
	bk, err := rd.bucket(req.GetVolume(), req.GetBucket())
	if err != nil {
		return nil, err
	}
	if len(req.GetDelimiter()) > 1 {
		return nil, fmt.Errorf("%w: delimiter %q must be one character", ErrInvalid, req.GetDelimiter())
	}
	if isFSO(bk) {
		return rd.listFSO(bk, req.GetPrefix(), req.GetStartAfter(), req.GetDelimiter(), rd.limit(req.GetLimit()))
	}
	return rd.listOBS(bk, req.GetPrefix(), req.GetStartAfter(), req.GetDelimiter(), rd.limit(req.GetLimit()))
}

func (rd *Reader) listOBS(bk *stratov1.BucketRecord, prefix, after, delim string, limit int) (*stratov1.ListKeysResponse, error) {
	tp := idKey(nil, tagKey, bk.Id)
	lower := append(append([]byte(nil), tp...), prefix...)
	upper := prefixEnd(lower)
	if after >= prefix && after != "" {
		lower = append(append(append([]byte(nil), tp...), after...), 0)
	}
	if bytes.Compare(lower, upper) >= 0 {
		return &stratov1.ListKeysResponse{}, nil
	}
	it, err := rd.r.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	defer func() { _ = it.Close() }()
	res := &stratov1.ListKeysResponse{}
	n := 0
	for ok := it.First(); ok; {
		name := it.Key()[len(tp):]
		if delim != "" {
			if i := bytes.IndexByte(name[len(prefix):], delim[0]); i >= 0 {
				cp := name[:len(prefix)+i+1]
				if string(cp) <= after {
					// The previous page ended with this common prefix.
					ok = it.SeekGE(append(append([]byte(nil), tp...), prefixEnd(cp)...))
					continue
				}
				if n == limit {
					res.Truncated = true
					break
				}
				res.CommonPrefixes = append(res.CommonPrefixes, string(cp))
				res.NextStartAfter = string(cp)
				n++
				ok = it.SeekGE(append(append([]byte(nil), tp...), prefixEnd(cp)...))
				continue
			}
		}
		if n == limit {
			res.Truncated = true
			break
		}
		ki := &stratov1.KeyRecord{}
		if err := proto.Unmarshal(it.Value(), ki); err != nil {
			return nil, fmt.Errorf("%w: key %s: %w", ErrCorrupt, name, err)
		}
		ki.Volume, ki.Bucket, ki.Name = bk.Volume, bk.Name, string(name)
		res.Keys = append(res.Keys, KeyInfo(ki))
		res.NextStartAfter = ki.Name
		n++
		ok = it.Next()
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	return res, nil
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
