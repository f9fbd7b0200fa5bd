package namespace

import (
	"fmt"
	"maps"
	"strings"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// SetAttributes replaces the attributes of a committed key or of a bucket
// (the S3 gateway's object and bucket tagging): the record is rewritten
// with the new list and nothing else changes — not the data, the size, the
// times nor the usage.

func (a *applier) setAttributes(c *stratov1.SetAttributesCommand) (proto.Message, error) {
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	if c.GetKey() == "" {
		bk.Attributes = c.GetAttributes()
		a.removeBucketFromCache(bk.Volume, bk.Name)
		return &stratov1.SetAttributesResponse{}, put(a.b, bucketKey(nil, bk.Volume, bk.Name), bk)
	}
	key, err := a.keyRecordKey(bk, c.GetKey())
	if err != nil {
		return nil, err
	}
	label := bk.Volume + "/" + bk.Name + "/" + c.GetKey()
	ki := &stratov1.KeyRecord{}
	found, err := get(a.b, key, ki)
	if err != nil {
		return nil, err
	}
	if c.GetVersionId() != "" && (!found || VersionID(ki) != c.GetVersionId()) {
		return a.setVersionAttributes(bk, c)
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", ErrKeyNotFound, label)
	}
	if c.GetObjectId() != 0 && ki.ObjectId != c.GetObjectId() {
		return nil, fmt.Errorf("%w: %s is object %d, not %d", ErrKeyReplaced, label, ki.ObjectId, c.GetObjectId())
	}
	if err := a.beforeRewrite(bk.Id, key, nil, ki); err != nil {
		return nil, err
	}
	ki.Attributes = c.GetAttributes()
	return &stratov1.SetAttributesResponse{}, put(a.b, key, ki)
}

// keyRecordKey is where a committed key's record is (it may not exist):
// the OBS key table, or the FSO file table under the key's parent, which
// must exist. A directory is not a key (ErrIsADirectory).
func (a *applier) keyRecordKey(bk *stratov1.BucketRecord, name string) ([]byte, error) {
	if !isFSO(bk) {
		if err := ValidateKeyName(name); err != nil {
			return nil, err
		}
		return childKey(nil, tagKey, bk.Id, name), nil
	}
	p, err := CleanPath(name)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, fmt.Errorf("%w: %s/%s/: the bucket's root is a directory", ErrIsADirectory, bk.Volume, bk.Name)
	}
	parent, base := splitLast(p)
	pid, err := a.rs.dir(bk.Id, parent, 0, ErrKeyNotFound)
	if err != nil {
		return nil, err
	}
	if _, isDir, err := a.rs.lookupDir(pid, base); err != nil {
		return nil, err
	} else if isDir {
		return nil, fmt.Errorf("%w: %s/%s/%s", ErrIsADirectory, bk.Volume, bk.Name, p)
	}
	return childKey(nil, tagFile, pid, base), nil
}

// AccessAttributePrefix names the attributes of a bucket that say who may
// do what (the S3 gateway's bucket policy, ownership controls and public
// grants): changing one takes WRITE_ACL on the bucket, as changing its ACL
// does, besides the WRITE any change of its attributes takes.
const AccessAttributePrefix = "x-strato-acl-"

// bucketAttributesRight is the right a SetAttributes of a bucket takes:
// WRITE, and WRITE_ACL too when it changes an access attribute.
func (rd *Reader) bucketAttributesRight(r *stratov1.SetAttributesRequest) uint32 {
	bk, err := rd.bucket(r.GetVolume(), r.GetBucket())
	if err != nil {
		return RightWrite // the request's own checks report it
	}
	if !maps.Equal(accessAttributes(bk.GetAttributes()), accessAttributes(r.GetAttributes())) {
		return RightWrite | RightWriteAcl
	}
	return RightWrite
}

// accessAttributes are the access attributes of a list (a record's or a
// request's).
func accessAttributes[A interface {
	GetName() string
	GetValue() string
}](as []A) map[string]string {
	m := map[string]string{}
	for _, a := range as {
		if strings.HasPrefix(a.GetName(), AccessAttributePrefix) {
			m[a.GetName()] = a.GetValue()
		}
	}
	return m
}
