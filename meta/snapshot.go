package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Bucket snapshots (meta/namespace/snapshot.go, decision 0075): create,
// delete and rename are namespace commands; the reads go through the
// namespace's Reader; the purge of what deleted snapshots held runs in the
// namespace tick.

// CreateSnapshot takes a snapshot of a bucket.
func (s *Server) CreateSnapshot(ctx context.Context, r *stratov1.CreateSnapshotRequest) (*stratov1.CreateSnapshotResponse, error) {
	return mutate[*stratov1.CreateSnapshotResponse](ctx, s, r)
}

// DeleteSnapshot deletes a snapshot; what only it held is freed in the
// background.
func (s *Server) DeleteSnapshot(ctx context.Context, r *stratov1.DeleteSnapshotRequest) (*stratov1.DeleteSnapshotResponse, error) {
	return mutate[*stratov1.DeleteSnapshotResponse](ctx, s, r)
}

// RenameSnapshot renames a snapshot.
func (s *Server) RenameSnapshot(ctx context.Context, r *stratov1.RenameSnapshotRequest) (*stratov1.RenameSnapshotResponse, error) {
	return mutate[*stratov1.RenameSnapshotResponse](ctx, s, r)
}

// ListSnapshots lists a bucket's snapshots.
func (s *Server) ListSnapshots(ctx context.Context, r *stratov1.ListSnapshotsRequest) (*stratov1.ListSnapshotsResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.ListSnapshotsResponse, error) { return rd.ListSnapshots(r) })
}

// GetSnapshot describes one snapshot.
func (s *Server) GetSnapshot(ctx context.Context, r *stratov1.GetSnapshotRequest) (*stratov1.SnapshotInfo, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.SnapshotInfo, error) { return rd.GetSnapshot(r) })
}

// SnapshotDiff lists what changed between two snapshots of a bucket, or a
// snapshot and now.
func (s *Server) SnapshotDiff(ctx context.Context, r *stratov1.SnapshotDiffRequest) (*stratov1.SnapshotDiffResponse, error) {
	return read(ctx, s, func(rd *namespace.Reader) (*stratov1.SnapshotDiffResponse, error) { return rd.SnapshotDiff(r) })
}

// purgeSnapshots frees, in bounded commands within budget, what deleted
// snapshots alone held (leader, from the namespace tick).
func (s *Server) purgeSnapshots(ctx context.Context, now time.Time, budget time.Duration) error {
	start := time.Now()
	for time.Since(start) < budget {
		cmd, err := s.ns.PreparePurgeSnapshots(s.db, now, s.opts.ReclaimBatch)
		if err != nil || cmd == nil {
			return err
		}
		res, err := s.proposeNamespace(ctx, cmd)
		if err != nil {
			return fmt.Errorf("purging deleted snapshots: %w", err)
		}
		if more, ok := res.(interface{ GetMore() bool }); !ok || !more.GetMore() {
			return nil
		}
	}
	return nil
}
