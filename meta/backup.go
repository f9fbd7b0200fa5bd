// Online backup (AdminService.BackupMeta) and restore (Restore) of a
// replica's state; docs/operations.md, Backup and restore.

package meta

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/strato-io/strato/meta/backup"
	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// backupTmpDir is the directory, under Options.Dir, where BackupMeta's
// checkpoints live while they are streamed (on the DB's filesystem, so
// that their sstables are hard links). Open removes what a crash left.
const backupTmpDir = "backup.tmp"

// backupChunk bounds a BackupMetaChunk: pairs, and bytes of keys and values.
const (
	backupChunkPairs = 4096
	backupChunkBytes = 1 << 20
)

// BackupMeta streams a backup of this replica (leader or follower): a
// checkpoint of its DB read back as the state machine's pairs at the
// checkpoint's applied index. The replica goes on applying meanwhile.
func (s *Server) BackupMeta(req *stratov1.BackupMetaRequest, stream stratov1.AdminService_BackupMetaServer) error {
	if s.closed.Load() {
		return toStatus(ErrClosed)
	}
	ctx := stream.Context()
	fs := s.opts.FS
	dir := fs.PathJoin(s.opts.Dir, backupTmpDir, strconv.FormatUint(s.backupSeq.Add(1), 10))
	if err := fs.MkdirAll(fs.PathDir(dir), 0o755); err != nil {
		return toStatus(err)
	}
	cp, err := s.node.Checkpoint(dir)
	if err != nil {
		return toStatus(err)
	}
	defer func() { _ = cp.Close() }()
	created := s.now()
	info := cp.Info()
	clusterID, err := cluster.StoredClusterID(cp.DB())
	if err != nil {
		return toStatus(err)
	}
	m := &stratov1.MetaBackupManifest{ClusterId: clusterID, AppliedIndex: info.Index, AppliedTerm: info.Term,
		ReplicaId: s.opts.ID, CreatedUnixMs: created.UnixMilli(), GroupId: info.GroupID}
	for _, id := range info.Voters {
		m.Members = append(m.Members, &stratov1.MetaMember{Id: id, Addr: info.Members[id], Role: "voter"})
	}
	for _, id := range info.Learners {
		m.Members = append(m.Members, &stratov1.MetaMember{Id: id, Addr: info.Members[id], Role: "learner"})
	}
	s.opts.Logger.Info("meta: backup started", "index", info.Index, "term", info.Term, "cluster_id", clusterID)
	maxPairs := int(req.GetChunkPairs())
	if maxPairs <= 0 || maxPairs > backupChunkPairs {
		maxPairs = backupChunkPairs
	}
	chunk := &stratov1.BackupMetaChunk{Manifest: m}
	var size int
	var pairs, total uint64
	err = cp.Pairs(func(k, v []byte) error {
		chunk.Keys = append(chunk.Keys, slices.Clone(k))
		chunk.Values = append(chunk.Values, slices.Clone(v))
		size += len(k) + len(v)
		pairs++
		total += uint64(len(k) + len(v))
		if len(chunk.Keys) < maxPairs && size < backupChunkBytes {
			return nil
		}
		if err := stream.Send(chunk); err != nil {
			return err
		}
		chunk, size = &stratov1.BackupMetaChunk{}, 0
		return s.backupPace(ctx, req.GetBytesPerSecond(), total, created)
	})
	if err != nil {
		s.opts.Logger.Warn("meta: backup failed", "index", info.Index, "err", err)
		return toStatus(err)
	}
	chunk.Last, chunk.TotalPairs, chunk.TotalBytes = true, pairs, total
	if err := stream.Send(chunk); err != nil {
		return err
	}
	s.opts.Logger.Info("meta: backup sent", "index", info.Index, "pairs", pairs, "bytes", total,
		"elapsed", s.now().Sub(created))
	return nil
}

// backupPace waits until sent bytes are within bps of the time since
// start (bps 0: no cap).
func (s *Server) backupPace(ctx context.Context, bps, sent uint64, start time.Time) error {
	if bps == 0 {
		return ctx.Err()
	}
	due := time.Duration(float64(sent) / float64(bps) * float64(time.Second))
	wait := due - s.now().Sub(start)
	if wait <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.opts.Clock.After(wait):
		return nil
	}
}

// Restore initialises opts.Dir, which must be empty or absent, from the
// backup in dir: a new Raft group of opts.Peers (opts.ID alone when
// empty), every voter restored from the same backup, whose state is the
// backup's (the cluster's ID included: its datanodes register again). The
// ID counters are advanced (cluster.RestoredIDCounter) so that no ID the
// old cluster handed out after the backup is handed out again. Open the
// directory with Open afterwards.
func Restore(opts Options, dir string) (backup.Manifest, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return backup.Manifest{}, err
	}
	r, err := backup.Open(opts.FS, dir)
	if err != nil {
		return backup.Manifest{}, err
	}
	m := r.Manifest()
	// Check the whole state file before writing anything.
	if err := r.Pairs(func(k, v []byte) error { return nil }); err != nil {
		return m, err
	}
	raft := opts.Raft
	if raft.Pebble == nil {
		raft.Pebble = &pebble.Options{CacheSize: opts.CacheSize}
		namespace.ConfigurePebble(raft.Pebble)
	}
	raft.ID, raft.Peers, raft.FS, raft.Dir, raft.Logger = opts.ID, opts.Peers, opts.FS, opts.Dir, opts.Logger
	put := func(set func(k, v []byte) error) error {
		seen := map[string]bool{}
		err := r.Pairs(func(k, v []byte) error {
			nv, ok, err := cluster.RestoredIDCounter(k, v)
			if err != nil {
				return err
			}
			if ok {
				seen[string(k)], v = true, nv
			}
			return set(k, v)
		})
		if err != nil {
			return err
		}
		for _, k := range cluster.IDCounterKeys() {
			if seen[string(k)] {
				continue
			}
			nv, _, err := cluster.RestoredIDCounter(k, nil)
			if err != nil {
				return err
			}
			if err := set(k, nv); err != nil {
				return err
			}
		}
		return nil
	}
	if err := consensus.Seed(raft, m.AppliedIndex, m.AppliedTerm, put); err != nil {
		return m, fmt.Errorf("meta: restore %s into %s: %w", dir, opts.Dir, err)
	}
	opts.Logger.Info("meta: restored", "backup", dir, "data", opts.Dir, "index", m.AppliedIndex,
		"term", m.AppliedTerm, "cluster_id", m.ClusterID, "pairs", m.Pairs)
	return m, nil
}
