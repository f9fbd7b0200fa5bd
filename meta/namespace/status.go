package namespace

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Permissions, groups and times. Every file, directory and bucket root
// records a POSIX permission (12 bits) and a group beside its owner, as
// HDFS does; meta stores and returns them and enforces nothing (who may do
// what is the business of authorization, not of this package). A create
// takes the permission its caller computed (the caller applies its umask,
// as HDFS's clients do) and, without a group, its parent directory's group
// (HDFS's rule). Records written before permissions existed have none and
// read as the defaults below.

const (
	// DefaultFilePermission is a file's permission when its create gave
	// none, or its record predates permissions: HDFS's 0666 under its
	// default umask 022.
	DefaultFilePermission = 0o644
	// DefaultDirPermission is a directory's (and a bucket root's), from
	// HDFS's 0777 under umask 022.
	DefaultDirPermission = 0o755
	// maxPermission: setuid, setgid, sticky, and rwx for owner, group and
	// others.
	maxPermission = 0o7777
	// implicitDirBits are added to the permission of the parents a mkdirs
	// makes on the way (u+wx, as HDFS does), so that its creator can
	// create beneath them.
	implicitDirBits = 0o300
)

func checkPermission(p *uint32) error {
	if p != nil && *p > maxPermission {
		return fmt.Errorf("%w: permission %#o (at most 07777)", ErrInvalid, *p)
	}
	return nil
}

// permissionOr is *p, or def when p is nil.
func permissionOr(p *uint32, def uint32) *uint32 {
	if p != nil {
		return proto.Uint32(*p)
	}
	return proto.Uint32(def)
}

// prepareStatus turns SetPermission, SetOwner and SetTimes into their
// command.
func prepareStatus(req proto.Message) (*stratov1.SetStatusCommand, error) {
	c := &stratov1.SetStatusCommand{}
	switch r := req.(type) {
	case *stratov1.SetPermissionRequest:
		c.Volume, c.Bucket, c.Path, c.Permission = r.GetVolume(), r.GetBucket(), r.GetPath(), proto.Uint32(r.GetPermission())
	case *stratov1.SetOwnerRequest:
		if r.GetOwner() == "" && r.GetGroup() == "" {
			return nil, fmt.Errorf("%w: SetOwner without an owner or a group", ErrInvalid)
		}
		c.Volume, c.Bucket, c.Path, c.Owner, c.Group = r.GetVolume(), r.GetBucket(), r.GetPath(), r.GetOwner(), r.GetGroup()
	case *stratov1.SetTimesRequest:
		c.Volume, c.Bucket, c.Path = r.GetVolume(), r.GetBucket(), r.GetPath()
		if r.ModificationTimeUnixMs != nil && r.GetModificationTimeUnixMs() != -1 {
			c.ModificationTimeUnixMs = proto.Int64(r.GetModificationTimeUnixMs())
		}
		if r.AccessTimeUnixMs != nil && r.GetAccessTimeUnixMs() != -1 {
			c.AccessTimeUnixMs = proto.Int64(r.GetAccessTimeUnixMs())
		}
	}
	return c, checkStatus(c)
}

func checkStatus(c *stratov1.SetStatusCommand) error {
	if err := checkPermission(c.Permission); err != nil {
		return err
	}
	if c.GetModificationTimeUnixMs() < 0 || c.GetAccessTimeUnixMs() < 0 {
		return fmt.Errorf("%w: negative time (modification %d, access %d)", ErrInvalid,
			c.GetModificationTimeUnixMs(), c.GetAccessTimeUnixMs())
	}
	return nil
}

// statusReply is the reply of the request c came from.
func statusReply(c *stratov1.SetStatusCommand) proto.Message {
	switch {
	case c.Permission != nil:
		return &stratov1.SetPermissionResponse{}
	case c.Owner != "" || c.Group != "":
		return &stratov1.SetOwnerResponse{}
	}
	return &stratov1.SetTimesResponse{}
}

// setStatus changes what c sets of a file, a directory, a bucket's root or
// an OBS key.
func (a *applier) setStatus(c *stratov1.SetStatusCommand) (proto.Message, error) {
	if err := checkStatus(c); err != nil {
		return nil, err
	}
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	p := c.GetPath()
	if isFSO(bk) {
		if p, err = CleanPath(p); err != nil {
			return nil, err
		}
	}
	if isFSO(bk) && p == "" {
		if c.Permission != nil {
			bk.Permission = proto.Uint32(c.GetPermission())
		}
		if c.Owner != "" {
			bk.Owner = c.Owner
		}
		if c.Group != "" {
			bk.Group = c.Group
		}
		if c.ModificationTimeUnixMs != nil {
			bk.ModificationTimeUnixMs = c.GetModificationTimeUnixMs()
		}
		if c.AccessTimeUnixMs != nil {
			bk.AccessTimeUnixMs = c.GetAccessTimeUnixMs()
		}
		a.removeBucketFromCache(bk.Volume, bk.Name)
		return statusReply(c), put(a.b, bucketKey(nil, bk.Volume, bk.Name), bk)
	}
	key, d, ki, err := a.locate(bk, p)
	if err != nil {
		if errors.Is(err, ErrKeyNotFound) && isFSO(bk) {
			return nil, fmt.Errorf("%w: %s/%s/%s", ErrFileNotFound, bk.Volume, bk.Name, p)
		}
		return nil, err
	}
	if err := a.beforeRewrite(bk.Id, key, d, ki); err != nil {
		return nil, err
	}
	if d != nil {
		if c.Permission != nil {
			d.Permission = proto.Uint32(c.GetPermission())
		}
		if c.Owner != "" {
			d.Owner = c.Owner
		}
		if c.Group != "" {
			d.Group = c.Group
		}
		if c.ModificationTimeUnixMs != nil {
			d.ModificationTimeUnixMs = c.GetModificationTimeUnixMs()
		}
		if c.AccessTimeUnixMs != nil {
			d.AccessTimeUnixMs = c.GetAccessTimeUnixMs()
		}
		return statusReply(c), put(a.b, key, d)
	}
	if c.Permission != nil {
		ki.Permission = proto.Uint32(c.GetPermission())
	}
	if c.Owner != "" {
		ki.Owner = c.Owner
	}
	if c.Group != "" {
		ki.Group = c.Group
	}
	if c.ModificationTimeUnixMs != nil {
		ki.ModificationTimeUnixMs = c.GetModificationTimeUnixMs()
	}
	if c.AccessTimeUnixMs != nil {
		ki.AccessTimeUnixMs = c.GetAccessTimeUnixMs()
	}
	return statusReply(c), put(a.b, key, ki)
}

// locate finds the record of the object at p (clean) in bucket bk, other
// than the bucket itself: an FSO directory (d) or a key or file (ki), and
// its key in the database. A key or file that is not there is
// ErrKeyNotFound.
func (a *applier) locate(bk *stratov1.BucketRecord, p string) (key []byte, d *stratov1.DirectoryInfo, ki *stratov1.KeyRecord, err error) {
	if isFSO(bk) {
		parent, base := splitLast(p)
		pid, err := a.rs.dir(bk.Id, parent, 0, ErrFileNotFound)
		if err != nil {
			return nil, nil, nil, err
		}
		if _, isDir, err := a.rs.lookupDir(pid, base); err != nil {
			return nil, nil, nil, err
		} else if isDir {
			key := childKey(nil, tagDir, pid, base)
			d := &stratov1.DirectoryInfo{}
			if _, err := get(a.b, key, d); err != nil {
				return nil, nil, nil, err
			}
			return key, d, nil, nil
		}
	}
	if key, err = a.keyRecordKey(bk, p); err != nil {
		return nil, nil, nil, err
	}
	ki = &stratov1.KeyRecord{}
	if found, err := get(a.b, key, ki); err != nil {
		return nil, nil, nil, err
	} else if !found {
		return nil, nil, nil, fmt.Errorf("%w: %s/%s/%s", ErrKeyNotFound, bk.Volume, bk.Name, p)
	}
	return key, nil, ki, nil
}

// groupOf is the group of directory id of bucket bk (its root when id is
// the bucket's ID): what a file or directory created in it without a group
// of its own takes.
func (a *applier) groupOf(bk *stratov1.BucketRecord, id uint64) (string, error) {
	if id == bk.Id {
		return bk.Group, nil
	}
	d, err := a.dirRecord(id)
	return d.GetGroup(), err
}

// dirRecord is directory id's record, read through the apply cache; nil if
// there is no such directory.
func (a *applier) dirRecord(id uint64) (*stratov1.DirectoryInfo, error) {
	var kb [16]byte
	v, found, err := a.getCached(idKey(kb[:0], tagDirByID, id))
	if err != nil || !found {
		return nil, err
	}
	if len(v) < 8 {
		return nil, fmt.Errorf("%w: directory %d's index entry", ErrCorrupt, id)
	}
	key := childKey(nil, tagDir, binary.BigEndian.Uint64(v), string(v[8:]))
	if v, found, err = a.getCached(key); err != nil || !found {
		return nil, err
	}
	d := &stratov1.DirectoryInfo{}
	if err := proto.Unmarshal(v, d); err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrCorrupt, key, err)
	}
	return d, nil
}
