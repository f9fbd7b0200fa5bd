package client

import (
	"context"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Bucket snapshots (docs/fs.md "Snapshots"): a snapshot's files are read
// through the usual reads at /VOLUME/BUCKET/.snapshot/NAME/PATH.

// CreateSnapshot takes a snapshot of a bucket; name "" lets meta name it
// (sYYYYMMDD-hhmmss.mmm).
func (c *Client) CreateSnapshot(ctx context.Context, volume, bucket, name string) (*stratov1.SnapshotInfo, error) {
	ctx = c.idempotent(ctx)
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.CreateSnapshotResponse, error) {
		return n.CreateSnapshot(ctx, &stratov1.CreateSnapshotRequest{Volume: volume, Bucket: bucket, Name: name})
	})
	return resp.GetSnapshot(), err
}

// DeleteSnapshot deletes a snapshot; what only it held is freed in the
// background.
func (c *Client) DeleteSnapshot(ctx context.Context, volume, bucket, name string) error {
	ctx = c.idempotent(ctx)
	_, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.DeleteSnapshotResponse, error) {
		return n.DeleteSnapshot(ctx, &stratov1.DeleteSnapshotRequest{Volume: volume, Bucket: bucket, Name: name})
	})
	return err
}

// RenameSnapshot renames a snapshot.
func (c *Client) RenameSnapshot(ctx context.Context, volume, bucket, name, newName string) (*stratov1.SnapshotInfo, error) {
	ctx = c.idempotent(ctx)
	resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.RenameSnapshotResponse, error) {
		return n.RenameSnapshot(ctx, &stratov1.RenameSnapshotRequest{Volume: volume, Bucket: bucket, Name: name, NewName: newName})
	})
	return resp.GetSnapshot(), err
}

// ListSnapshots lists every snapshot of a bucket, by name.
func (c *Client) ListSnapshots(ctx context.Context, volume, bucket string) ([]*stratov1.SnapshotInfo, error) {
	var out []*stratov1.SnapshotInfo
	after := ""
	for {
		resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.ListSnapshotsResponse, error) {
			return n.ListSnapshots(ctx, &stratov1.ListSnapshotsRequest{Volume: volume, Bucket: bucket, StartAfter: after})
		})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetSnapshots()...)
		if !resp.GetTruncated() || len(resp.GetSnapshots()) == 0 {
			return out, nil
		}
		after = out[len(out)-1].GetName()
	}
}

// GetSnapshot describes one snapshot.
func (c *Client) GetSnapshot(ctx context.Context, volume, bucket, name string) (*stratov1.SnapshotInfo, error) {
	return ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SnapshotInfo, error) {
		return n.GetSnapshot(ctx, &stratov1.GetSnapshotRequest{Volume: volume, Bucket: bucket, Name: name})
	})
}

// SnapshotDiff lists what changed in a bucket from snapshot from to snapshot
// to ("": now), every page, sorted by path.
func (c *Client) SnapshotDiff(ctx context.Context, volume, bucket, from, to string) ([]*stratov1.SnapshotDiffEntry, error) {
	var out []*stratov1.SnapshotDiffEntry
	token := ""
	for {
		resp, err := ns(ctx, c, func(ctx context.Context, n stratov1.NamespaceServiceClient) (*stratov1.SnapshotDiffResponse, error) {
			return n.SnapshotDiff(ctx, &stratov1.SnapshotDiffRequest{Volume: volume, Bucket: bucket, From: from, To: to, Token: token})
		})
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetEntries()...)
		if token = resp.GetNextToken(); token == "" {
			return out, nil
		}
	}
}
