package client

import (
	"context"
	"strings"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The rooted file-system view, as Ozone's ofs and `hdfs dfs` show it: "/"
// is a directory of the volumes, "/VOLUME" a directory of its buckets,
// "/VOLUME/BUCKET/..." the bucket's tree. Every status carries its full
// path. Stat and List above work inside one bucket; StatPath and ListPath
// take any path of the view.

// ParseRootedPath parses a path that may stop at a volume or at "/" (a
// zero Path).
func ParseRootedPath(s string) (Path, error) {
	if strings.Trim(s, "/") == "" {
		return Path{}, nil
	}
	return ParsePath(s, false)
}

// StatPath returns the status of any path of the rooted view: a file, a
// directory, a bucket's root, a volume or "/".
func (c *Client) StatPath(ctx context.Context, path string) (*stratov1.FileStatus, error) {
	p, err := ParseRootedPath(path)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Volume == "":
		return &stratov1.FileStatus{Path: "/", IsDirectory: true}, nil
	case p.Bucket == "":
		v, err := c.GetVolume(ctx, p.Volume)
		if err != nil {
			return nil, err
		}
		return VolumeStatus(v), nil
	}
	st, err := c.Stat(ctx, p.String())
	if err != nil {
		return nil, err
	}
	return inBucket(p, st), nil
}

// ListPath lists a directory of the rooted view (a file lists as itself), a
// volume's buckets, or the volumes.
func (c *Client) ListPath(ctx context.Context, path string) ([]*stratov1.FileStatus, error) {
	p, err := ParseRootedPath(path)
	if err != nil {
		return nil, err
	}
	var out []*stratov1.FileStatus
	switch {
	case p.Volume == "":
		vs, err := c.ListVolumes(ctx, "")
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			out = append(out, VolumeStatus(v))
		}
	case p.Bucket == "":
		if _, err := c.GetVolume(ctx, p.Volume); err != nil {
			return nil, err
		}
		bs, err := c.ListBuckets(ctx, p.Volume, "")
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			out = append(out, BucketStatus(b))
		}
	default:
		sts, err := c.List(ctx, p.String())
		if err != nil {
			return nil, err
		}
		for _, st := range sts {
			out = append(out, inBucket(p, st))
		}
	}
	return out, nil
}

// inBucket gives a status of a bucket's entry its full path.
func inBucket(p Path, st *stratov1.FileStatus) *stratov1.FileStatus {
	full := Path{Volume: p.Volume, Bucket: p.Bucket, Key: st.Path}
	st.Path = full.String()
	return st
}

// VolumeStatus is a volume as a directory of the rooted view.
func VolumeStatus(v *stratov1.VolumeInfo) *stratov1.FileStatus {
	return &stratov1.FileStatus{Path: "/" + v.Name, IsDirectory: true, Owner: v.Owner, ObjectId: v.Id,
		ModificationTimeUnixMs: v.ModificationTimeUnixMs, CreationTimeUnixMs: v.CreationTimeUnixMs}
}

// BucketStatus is a bucket as a directory of the rooted view.
func BucketStatus(b *stratov1.BucketInfo) *stratov1.FileStatus {
	return &stratov1.FileStatus{Path: "/" + b.Volume + "/" + b.Name, IsDirectory: true, Owner: b.Owner, ObjectId: b.Id,
		Replication: b.Replication, BlockSize: b.BlockSize, ModificationTimeUnixMs: b.ModificationTimeUnixMs, CreationTimeUnixMs: b.CreationTimeUnixMs,
		Permission: b.Permission, Group: b.Group}
}
