package client

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The trash, as Hadoop's TrashPolicyDefault and Ozone's ofs keep it: a
// removed /VOLUME/BUCKET/PATH moves to
// /VOLUME/BUCKET/.Trash/USER/Current/VOLUME/BUCKET/PATH (an O(1) rename
// within the bucket; under Current its full path, as `hadoop fs -rm` puts
// it, so that both leave the same layout), meta rolls Current into checkpoints and
// deletes the checkpoints older than its trash interval. Meta owns the
// policy (TrashPolicy); MoveToTrash is what `strato fs rm` does.

// TrashDir is the directory at a bucket's root that holds its trash.
const TrashDir = ".Trash"

// TrashPolicy returns meta's trash intervals (IntervalMs 0: the trash is
// off) and the user meta takes the caller for ("" without
// authentication). A meta that predates the trash answers a policy with
// the trash off.
func (c *Client) TrashPolicy(ctx context.Context) (*stratov1.TrashPolicy, error) {
	p, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.TrashPolicy, error) {
		return n.GetTrashPolicy(ctx, &stratov1.GetTrashPolicyRequest{})
	})
	if errors.Is(err, ErrUnsupported) {
		return &stratov1.TrashPolicy{}, nil
	}
	return p, err
}

// TrashUser is the user whose trash the caller's removals go to: the
// user of its token, or without authentication Options.Owner (the
// operating-system user, as Hadoop's).
func (c *Client) TrashUser(p *stratov1.TrashPolicy) string {
	if u := p.GetUser(); u != "" {
		return u
	}
	if c.opts.Owner != "" {
		return c.opts.Owner
	}
	return "strato"
}

// TrashRoot is /VOLUME/BUCKET/.Trash/USER for the bucket of p.
func TrashRoot(p Path, user string) string {
	return Path{Volume: p.Volume, Bucket: p.Bucket, Key: path.Join(TrashDir, user)}.String()
}

// InTrash reports whether p is a bucket's .Trash or under it: removing it
// deletes for real.
func InTrash(p Path) bool {
	k := strings.Trim(p.Key, "/")
	return k == TrashDir || strings.HasPrefix(k, TrashDir+"/")
}

// Expunge checkpoints every .Trash/USER/Current of a bucket (volume and
// bucket both "": of every bucket, for administrators) and deletes the
// checkpoints older than meta's trash interval, now (hadoop fs -expunge).
func (c *Client) Expunge(ctx context.Context, volume, bucket string) (*stratov1.ExpungeTrashResponse, error) {
	ctx = c.idempotent(ctx)
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ExpungeTrashResponse, error) {
		return n.ExpungeTrash(ctx, &stratov1.ExpungeTrashRequest{Volume: volume, Bucket: bucket})
	})
}

// TrashSkipped says why MoveToTrash deleted nothing and moved nothing:
// the caller should delete the path at once.
type TrashSkipped string

// The reasons MoveToTrash leaves a path to be deleted.
const (
	TrashNotSkipped TrashSkipped = ""
	TrashOff        TrashSkipped = "the trash is off (meta's --trash-interval is 0)"
	TrashOBS        TrashSkipped = "OBS buckets keep no trash"
	TrashAlready    TrashSkipped = "the path is in the trash already"
)

// MoveToTrash moves a file or directory into its bucket's
// .Trash/USER/Current, under its full path, and returns where it went. A
// name already taken there gets the time (Unix milliseconds) appended, as
// Hadoop does. It moves nothing, and says why, when the trash is off, the
// bucket is OBS, or the path is in the trash already.
func (c *Client) MoveToTrash(ctx context.Context, p string) (string, TrashSkipped, error) {
	pp, err := c.fsPath(p)
	if err != nil {
		return "", "", err
	}
	if pp.Key = strings.Trim(path.Clean("/"+pp.Key), "/"); pp.Key == "" {
		return "", "", fmt.Errorf("%w: %s is a bucket's root", ErrInvalidPath, pp)
	}
	if InTrash(pp) {
		return "", TrashAlready, nil
	}
	pol, err := c.TrashPolicy(ctx)
	if err != nil {
		return "", "", err
	}
	if pol.GetIntervalMs() <= 0 {
		return "", TrashOff, nil
	}
	b, err := c.GetBucket(ctx, pp.Volume, pp.Bucket)
	if err != nil {
		return "", "", err
	}
	if b.GetLayout() == stratov1.BucketLayout_LAYOUT_OBS {
		return "", TrashOBS, nil
	}
	if _, err := c.Stat(ctx, pp.String()); err != nil {
		return "", "", err
	}
	current := path.Join(TrashDir, c.TrashUser(pol), "Current")
	dst := Path{Volume: pp.Volume, Bucket: pp.Bucket, Key: path.Join(current, pp.Volume, pp.Bucket, pp.Key)}
	parent := Path{Volume: pp.Volume, Bucket: pp.Bucket, Key: path.Dir(dst.Key)}
	suffix := func() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }
	if err := c.Mkdirs(ctx, parent.String()); err != nil {
		if !errors.Is(err, ErrExists) && !errors.Is(err, ErrNotADirectory) {
			return "", "", err
		}
		// A file removed earlier stands where a directory is needed:
		// this path goes beside it, suffixed.
		parent.Key += suffix()
		if err := c.Mkdirs(ctx, parent.String()); err != nil {
			return "", "", err
		}
		dst.Key = path.Join(parent.Key, path.Base(pp.Key))
	}
	for attempt := 0; attempt < 5; attempt++ {
		// Rename onto a directory would move into it: a taken name is
		// suffixed first.
		if _, err := c.Stat(ctx, dst.String()); err == nil {
			dst.Key += suffix()
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return "", "", err
		}
		err := c.Rename(ctx, pp.String(), dst.String())
		if err == nil {
			return dst.String(), TrashNotSkipped, nil
		}
		if !errors.Is(err, ErrExists) {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("%w: no free name in the trash for %s", ErrExists, pp)
}
