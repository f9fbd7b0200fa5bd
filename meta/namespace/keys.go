package namespace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Key layout. Every key of the namespace starts with 'N' (consensus owns
// 0x00, meta/cluster 'C'), then a table tag. Integers are 8-byte big-endian
// so that they sort numerically.
//
//	N c                      → last assigned object ID (8 bytes)
//	N v <volume>             → VolumeInfo (usage fields zero; see N u)
//	N b <volume> 0x00 <bucket> → BucketInfo (usage fields zero)
//	N u <id>                 → usage of a volume or bucket: used bytes, used
//	                           namespace, quota bytes, quota namespace (4×8 bytes)
//	N d <parentID> <name>    → DirectoryInfo (FSO directory table)
//	N i <dirID>              → <parentID> <name>: live directories by ID
//	N f <parentID> <name>    → KeyInfo (FSO file table; name fields empty)
//	N k <bucketID> <key>     → KeyInfo (OBS key table; name fields empty)
//	N V <bucketID> <key> 0 <^seq> → KeyInfo: S3 noncurrent versions and
//	                           delete markers (versions.go)
//	N o <openID>             → OpenKeyInfo (open-key table)
//	N e <expiresAt> <openID> → empty (open keys by expiry time)
//	N L <objectID>           → <openID>: the appender holding a closed file's lease (append.go)
//	N x <seq>                → DeletedBlocks (deleted-blocks table)
//	N D <dirID>              → DeletedDirectory (subtrees being reclaimed)
//	N s <access key>         → S3KeyRecord (the S3 gateways' access keys)
//	N U <user name>          → UserRecord (users, users.go)
//	N T <token ID>           → TokenRecord (their tokens)
//	N S, P, h, J, R, Q       → bucket snapshots' state, records, kept
//	                           versions, journal, shared objects and purge
//	                           queue (snapshot.go)
const (
	prefix        = 'N'
	tagCounter    = 'c'
	tagVolume     = 'v'
	tagBucket     = 'b'
	tagUsage      = 'u'
	tagDir        = 'd'
	tagDirByID    = 'i'
	tagFile       = 'f'
	tagKey        = 'k'
	tagOpen       = 'o'
	tagExpiry     = 'e'
	tagDeleted    = 'x'
	tagDeletedDir = 'D'
	tagRequest    = 'q' // client, 0, seq → RequestResult
	tagS3Key      = 's'
	tagUser       = 'U'
	tagToken      = 'T'
)

func tableKey(buf []byte, tag byte) []byte { return append(buf[:0], prefix, tag) }

// theCounterKey is never modified: Pebble does not write to keys it is given.
var theCounterKey = []byte{prefix, tagCounter}

func counterKey() []byte { return theCounterKey }

func volumeKey(buf []byte, volume string) []byte {
	return append(tableKey(buf, tagVolume), volume...)
}

func bucketPrefix(buf []byte, volume string) []byte {
	return append(append(tableKey(buf, tagBucket), volume...), 0)
}

func bucketKey(buf []byte, volume, bucket string) []byte {
	return append(bucketPrefix(buf, volume), bucket...)
}

// idKey is <N><tag><id>.
func idKey(buf []byte, tag byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(tableKey(buf, tag), id)
}

// childKey is <N><tag><parent><name>: directory, file and OBS key tables.
func childKey(buf []byte, tag byte, parent uint64, name string) []byte {
	return append(idKey(buf, tag, parent), name...)
}

func expiryKey(buf []byte, expiresAt int64, openID uint64) []byte {
	k := binary.BigEndian.AppendUint64(tableKey(buf, tagExpiry), uint64(max(expiresAt, 0)))
	return binary.BigEndian.AppendUint64(k, openID)
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// get reads key into m. found is false when the key does not exist.
func get(r pebble.Reader, key []byte, m proto.Message) (found bool, err error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer closer.Close()
	if err := proto.Unmarshal(v, m); err != nil {
		return false, fmt.Errorf("%w: %q: %w", ErrCorrupt, key, err)
	}
	return true, nil
}

// exists reports whether key exists.
func exists(r pebble.Reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	closer.Close()
	return true, nil
}

var marshalOpts = proto.MarshalOptions{Deterministic: true}

func put(b pebble.Writer, key []byte, m proto.Message) error {
	v, err := marshalOpts.Marshal(m)
	if err != nil {
		return err
	}
	return b.Set(key, v, nil)
}

// dirObjectID reads field 1 (object_id) of an encoded DirectoryInfo without
// decoding the rest.
func dirObjectID(v []byte) (uint64, error) {
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 {
			break
		}
		v = v[n:]
		if num == 1 && typ == protowire.VarintType {
			id, n := protowire.ConsumeVarint(v)
			if n < 0 {
				break
			}
			return id, nil
		}
		n = protowire.ConsumeFieldValue(num, typ, v)
		if n < 0 {
			break
		}
		v = v[n:]
	}
	return 0, fmt.Errorf("%w: directory record without an object ID", ErrCorrupt)
}

// usage is the N u record of a volume or a bucket.
type usage struct {
	bytes, namespace           int64
	quotaBytes, quotaNamespace int64
}

func (u *usage) encode() []byte {
	var v [32]byte
	binary.BigEndian.PutUint64(v[0:], uint64(u.bytes))
	binary.BigEndian.PutUint64(v[8:], uint64(u.namespace))
	binary.BigEndian.PutUint64(v[16:], uint64(u.quotaBytes))
	binary.BigEndian.PutUint64(v[24:], uint64(u.quotaNamespace))
	return v[:]
}

func getUsage(r pebble.Reader, id uint64) (usage, error) {
	u, _, err := lookupUsage(r, id)
	return u, err
}

// lookupUsage reads the usage record of id; found is false if there is none
// (the volume or bucket does not exist).
func lookupUsage(r pebble.Reader, id uint64) (u usage, found bool, err error) {
	var kb [16]byte
	v, closer, err := r.Get(idKey(kb[:0], tagUsage, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return usage{}, false, nil
	}
	if err != nil {
		return usage{}, false, err
	}
	defer closer.Close()
	u, err = decodeUsage(id, v)
	return u, err == nil, err
}

// lookupUsage is lookupUsage for Apply, through the apply cache.
func (a *applier) lookupUsage(id uint64) (u usage, found bool, err error) {
	var kb [16]byte
	v, found, err := a.getCached(idKey(kb[:0], tagUsage, id))
	if err != nil || !found {
		return usage{}, false, err
	}
	u, err = decodeUsage(id, v)
	return u, err == nil, err
}

func (a *applier) getUsage(id uint64) (usage, error) {
	u, _, err := a.lookupUsage(id)
	return u, err
}

func decodeUsage(id uint64, v []byte) (usage, error) {
	if len(v) != 32 {
		return usage{}, fmt.Errorf("%w: usage of %d: %d bytes", ErrCorrupt, id, len(v))
	}
	return usage{
		bytes:          int64(binary.BigEndian.Uint64(v[0:])),
		namespace:      int64(binary.BigEndian.Uint64(v[8:])),
		quotaBytes:     int64(binary.BigEndian.Uint64(v[16:])),
		quotaNamespace: int64(binary.BigEndian.Uint64(v[24:])),
	}, nil
}

func putUsage(b pebble.Writer, id uint64, u usage) error {
	var kb [16]byte
	return b.Set(idKey(kb[:0], tagUsage, id), u.encode(), nil)
}

// fits reports whether adding dBytes and dNamespace stays within the quotas
// (a quota of 0 is unlimited; shrinking always fits).
func (u *usage) fits(dBytes, dNamespace int64) bool {
	if u.quotaBytes > 0 && dBytes > 0 && u.bytes+dBytes > u.quotaBytes {
		return false
	}
	if u.quotaNamespace > 0 && dNamespace > 0 && u.namespace+dNamespace > u.quotaNamespace {
		return false
	}
	return true
}

// ids hands out object IDs during one Apply: read the counter once, write it
// back once at the end if anything was taken.
type ids struct {
	last, start uint64
}

func (x *ids) next() uint64 { x.last++; return x.last }

// loadIDs reads the counter through the apply cache.
func (a *applier) loadIDs() (ids, error) {
	v, found, err := a.getCached(counterKey())
	if err != nil || !found {
		return ids{}, err
	}
	if len(v) != 8 {
		return ids{}, fmt.Errorf("%w: ID counter: %d bytes", ErrCorrupt, len(v))
	}
	n := binary.BigEndian.Uint64(v)
	return ids{last: n, start: n}, nil
}

func (x *ids) save(b pebble.Writer) error {
	if x.last == x.start {
		return nil
	}
	return b.Set(counterKey(), binary.BigEndian.AppendUint64(nil, x.last), nil)
}
