package namespace

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Updates after creation: a volume's owner, a bucket's owner and the
// redundancy its keys get by default (Ozone's `sh volume update` and
// `sh bucket update`). Quotas change through SetQuota. A bucket's new
// redundancy applies to the keys written after it; the keys already
// written keep theirs, as in Ozone.

// prepareUpdate turns UpdateVolume and UpdateBucket into their command,
// checking what does not depend on the database.
func prepareUpdate(req proto.Message) (*stratov1.UpdateCommand, error) {
	c := &stratov1.UpdateCommand{}
	switch r := req.(type) {
	case *stratov1.UpdateVolumeRequest:
		if r.GetOwner() == "" {
			return nil, fmt.Errorf("%w: UpdateVolume %s changes nothing (no owner)", ErrInvalid, r.GetName())
		}
		c.Volume, c.Owner = r.GetName(), r.GetOwner()
	case *stratov1.UpdateBucketRequest:
		c.Volume, c.Bucket, c.Owner, c.Replication = r.GetVolume(), r.GetName(), r.GetOwner(), r.GetReplication()
		if c.Bucket == "" {
			return nil, fmt.Errorf("%w: UpdateBucket without a bucket name", ErrInvalid)
		}
		var err error
		if c.ErasureCoding, err = ecRecord(r.GetErasureCoding()); err != nil {
			return nil, err
		}
		c.Versioning, c.ObjectLock = r.GetVersioning(), bucketObjectLockRecord(r.GetObjectLock())
		c.Lifecycle, c.ClearLifecycle = r.GetLifecycle(), r.GetClearLifecycle()
		if c.Owner == "" && c.Replication == stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED && c.ErasureCoding == nil &&
			c.Versioning == versioningOff && c.ObjectLock == nil && c.Lifecycle == nil && !c.ClearLifecycle {
			return nil, fmt.Errorf("%w: UpdateBucket %s/%s changes nothing (no owner, replication, erasure coding, versioning, object lock or lifecycle)", ErrInvalid, c.Volume, c.Bucket)
		}
	}
	return c, checkUpdate(c)
}

// checkUpdate is what prepare and apply both check of an update.
func checkUpdate(c *stratov1.UpdateCommand) error {
	if c.Replication != stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED {
		if c.ErasureCoding != nil {
			return fmt.Errorf("%w: a replication and an erasure coding: choose one", ErrInvalid)
		}
		if !validReplication(c.Replication) {
			return fmt.Errorf("%w: replication %v must be ONE or THREE", ErrInvalid, c.Replication)
		}
	}
	if c.Bucket == "" && (c.Replication != stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED || c.ErasureCoding != nil) {
		return fmt.Errorf("%w: a volume has no replication", ErrInvalid)
	}
	switch c.Versioning {
	case versioningOff, versioningEnabled, versioningSuspended:
	default:
		return fmt.Errorf("%w: versioning %v must be ENABLED or SUSPENDED", ErrInvalid, c.Versioning)
	}
	if c.Bucket == "" && c.Versioning != versioningOff {
		return fmt.Errorf("%w: a volume has no versioning", ErrInvalid)
	}
	if c.ErasureCoding != nil {
		if _, err := ECConfig(c.ErasureCoding); err != nil {
			return err
		}
	}
	if c.ObjectLock != nil {
		if c.Bucket == "" {
			return fmt.Errorf("%w: a volume has no object lock", ErrInvalid)
		}
		if err := checkBucketLock(c.ObjectLock); err != nil {
			return err
		}
	}
	if c.Lifecycle != nil || c.ClearLifecycle {
		if c.Bucket == "" {
			return fmt.Errorf("%w: a volume has no lifecycle rules", ErrInvalid)
		}
		if c.Lifecycle != nil && c.ClearLifecycle {
			return fmt.Errorf("%w: lifecycle rules and their removal: choose one", ErrInvalid)
		}
		if c.Lifecycle != nil {
			return CheckLifecycle(c.Lifecycle)
		}
	}
	return nil
}

// update applies an UpdateCommand and replies with the volume or bucket as
// changed, with its usage.
func (a *applier) update(c *stratov1.UpdateCommand) (proto.Message, error) {
	if err := checkUpdate(c); err != nil {
		return nil, err
	}
	if c.GetBucket() == "" {
		v, err := a.loadVolume(c.GetVolume())
		if err != nil {
			return nil, err
		}
		v.Owner, v.ModificationTimeUnixMs = c.GetOwner(), a.now
		if err := put(a.b, volumeKey(nil, v.Name), v); err != nil {
			return nil, err
		}
		u, err := a.getUsage(v.Id)
		if err != nil {
			return nil, err
		}
		info := VolumeInfo(v)
		info.UsedBytes, info.UsedNamespace = u.bytes, u.namespace
		return &stratov1.UpdateVolumeResponse{Volume: info}, nil
	}
	bk, err := a.loadBucket(c.GetVolume(), c.GetBucket())
	if err != nil {
		return nil, err
	}
	bk = proto.CloneOf(bk) // the apply cache may hold it
	if c.GetOwner() != "" {
		bk.Owner = c.GetOwner()
	}
	switch {
	case c.GetErasureCoding() != nil:
		bk.ErasureCoding = c.GetErasureCoding()
	case c.GetReplication() != stratov1.ReplicationFactor_REPLICATION_UNSPECIFIED:
		bk.Replication, bk.ErasureCoding = c.GetReplication(), nil
	}
	if c.GetVersioning() != versioningOff {
		// Checked before any write: it may refuse.
		if err := a.setVersioning(bk, c.GetVersioning()); err != nil {
			return nil, err
		}
	}
	if c.GetObjectLock() != nil {
		if err := a.setBucketLock(bk, c.GetObjectLock()); err != nil {
			return nil, err
		}
	}
	if err := setLifecycle(bk, c); err != nil {
		return nil, err
	}
	bk.ModificationTimeUnixMs = a.now
	a.removeBucketFromCache(bk.Volume, bk.Name)
	if err := put(a.b, bucketKey(nil, bk.Volume, bk.Name), bk); err != nil {
		return nil, err
	}
	u, err := a.getUsage(bk.Id)
	if err != nil {
		return nil, err
	}
	info := BucketInfo(bk)
	info.UsedBytes, info.UsedNamespace = u.bytes, u.namespace
	return &stratov1.UpdateBucketResponse{Bucket: info}, nil
}
