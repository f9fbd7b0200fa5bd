// The trash's meta side: the policy clients ask for, and the rounds that
// roll every bucket's .Trash/USER/Current into checkpoints and delete the
// checkpoints older than the trash interval (Hadoop's TrashPolicyDefault
// emptier, run by the leader).

package meta

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/namespace"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

const (
	// TrashDir is the directory at a bucket's root that holds its trash,
	// one directory per user (as Ozone's ofs keeps it).
	TrashDir = ".Trash"
	// TrashCurrent is where a user's removed paths go, under
	// TrashDir/USER, until the next checkpoint.
	TrashCurrent = "Current"
	// TrashCheckpointFormat names a checkpoint by the time it was made,
	// in UTC (Hadoop's TrashPolicyDefault yyMMddHHmmss); a second
	// checkpoint of the same second gets "-1", "-2" after it.
	TrashCheckpointFormat = "060102150405"
	// DefaultTrashInterval is Options.TrashInterval's default.
	DefaultTrashInterval = 24 * time.Hour
	// bucketsPerTick bounds the buckets one tick looks at, and
	// trashOpsPerTick (once reached, after a bucket) the renames and
	// deletes it proposes: a round over many buckets spreads over ticks
	// and never holds the background loop.
	bucketsPerTick  = 64
	trashOpsPerTick = 64
)

// trashRounds drives the checkpoint rounds: one round over every bucket
// each checkpoint interval, bucketsPerTick buckets a tick. Its mutex
// also keeps ExpungeTrash and the background rounds from checkpointing
// the same Current at once.
type trashRounds struct {
	mu     sync.Mutex
	next   time.Time // when the next round starts
	active bool      // a round is under way
	at     time.Time // the round's time: its checkpoints' names
	// volume and bucket are the round's cursor: the last bucket done.
	volume, bucket string
}

// trashOn reports whether the trash policy is on.
func (s *Server) trashOn() bool { return s.opts.TrashInterval > 0 }

// GetTrashPolicy returns the trash intervals and who the caller is to it.
func (s *Server) GetTrashPolicy(ctx context.Context, _ *stratov1.GetTrashPolicyRequest) (*stratov1.TrashPolicy, error) {
	p := &stratov1.TrashPolicy{}
	if s.trashOn() {
		p.IntervalMs = s.opts.TrashInterval.Milliseconds()
		p.CheckpointIntervalMs = s.opts.TrashCheckpointInterval.Milliseconds()
	}
	if id := caller(ctx); id != nil {
		p.User = id.User
	}
	return p, nil
}

// ExpungeTrash checkpoints and expires the trash of one bucket, of a
// volume's buckets, or of every bucket, now. A bucket the caller may not
// read is refused; every bucket of the cluster or of a volume is for
// administrators (with authentication).
func (s *Server) ExpungeTrash(ctx context.Context, r *stratov1.ExpungeTrashRequest) (*stratov1.ExpungeTrashResponse, error) {
	if err := s.leaderOnly(); err != nil {
		return nil, err
	}
	resp := &stratov1.ExpungeTrashResponse{}
	if !s.trashOn() {
		return resp, nil
	}
	if r.GetBucket() == "" {
		if id := caller(ctx); id != nil && !id.Admin {
			return nil, status.Errorf(codes.PermissionDenied, "meta: expunging the trash of every bucket is for administrators; %s is not one (name a bucket)", id.User)
		}
	}
	if err := s.readBarrier(ctx); err != nil {
		return nil, err
	}
	var buckets []*stratov1.BucketInfo
	if r.GetBucket() != "" {
		b, err := s.ns.Reader(s.db).As(nsCaller(ctx)).Bucket(r.GetVolume(), r.GetBucket())
		if err != nil {
			return nil, toStatus(err)
		}
		buckets = append(buckets, b)
	} else {
		vol, bkt := "", ""
		for done := false; !done; {
			var page []*stratov1.BucketInfo
			var err error
			page, done, err = s.bucketsAfter(vol, bkt, bucketsPerTick)
			if err != nil {
				return nil, toStatus(err)
			}
			for _, b := range page {
				vol, bkt = b.GetVolume(), b.GetName()
				if r.GetVolume() == "" || r.GetVolume() == b.GetVolume() {
					buckets = append(buckets, b)
				}
			}
		}
	}
	// The renames and deletes are meta's own: not the caller's (its
	// rights, its request ID), but bounded by its call.
	own, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	s.trash.mu.Lock()
	defer s.trash.mu.Unlock()
	now := s.now()
	for _, b := range buckets {
		made, deleted, err := s.expungeBucket(own, b, now)
		resp.Checkpoints += int32(made)
		resp.Deleted += int32(deleted)
		if err != nil {
			return nil, err
		}
	}
	s.opts.Logger.Info("trash expunged", "volume", r.GetVolume(), "bucket", r.GetBucket(),
		"checkpoints", resp.Checkpoints, "deleted", resp.Deleted)
	return resp, nil
}

// trashTick does a bounded step of the current checkpoint round, or
// starts one at the next multiple of the checkpoint interval.
func (s *Server) trashTick(ctx context.Context) error {
	if !s.trashOn() {
		return nil
	}
	s.trash.mu.Lock()
	defer s.trash.mu.Unlock()
	t := &s.trash
	now := s.now()
	if !t.active {
		if t.next.IsZero() {
			// A new leader waits for the next boundary, as any leader
			// would: rounds stay on the same schedule across elections.
			t.next = nextCheckpoint(now, s.opts.TrashCheckpointInterval)
		}
		if now.Before(t.next) {
			return nil
		}
		t.active, t.at, t.volume, t.bucket = true, now, "", ""
		t.next = nextCheckpoint(now, s.opts.TrashCheckpointInterval)
	}
	buckets, done, err := s.bucketsAfter(t.volume, t.bucket, bucketsPerTick)
	if err != nil {
		return fmt.Errorf("trash: listing buckets: %w", err)
	}
	ops := 0
	for _, b := range buckets {
		if ops >= trashOpsPerTick {
			return nil // the rest of the round next tick, after the last bucket done
		}
		made, deleted, err := s.expungeBucket(ctx, b, t.at)
		ops += made + deleted
		if made+deleted > 0 {
			s.opts.Logger.Info("trash checkpointed", "volume", b.GetVolume(), "bucket", b.GetName(),
				"checkpoints", made, "deleted", deleted)
		}
		if err != nil {
			// The bucket is tried again next round; the rest go on.
			s.opts.Logger.Warn("trash checkpoint", "volume", b.GetVolume(), "bucket", b.GetName(), "err", err)
		}
		if ctx.Err() != nil {
			return nil // the rest of the round next tick, from this bucket
		}
		t.volume, t.bucket = b.GetVolume(), b.GetName()
	}
	if done {
		t.active = false
	}
	return nil
}

// nextCheckpoint is the first multiple of interval (since Go's zero time:
// for an interval that divides a day, on the hour and UTC midnight) after
// now, when a round starts (Hadoop's emptier waits for such boundaries
// too): every leader, and every restart, keeps one schedule.
func nextCheckpoint(now time.Time, interval time.Duration) time.Time {
	return now.Truncate(interval).Add(interval)
}

// bucketsAfter lists up to n buckets after (volume, bucket), in volume
// then bucket order; done says there are no more.
func (s *Server) bucketsAfter(volume, bucket string, n int) (out []*stratov1.BucketInfo, done bool, err error) {
	rd := s.ns.Reader(s.db)
	for {
		if volume != "" {
			for len(out) < n {
				resp, err := rd.ListBuckets(&stratov1.ListBucketsRequest{Volume: volume, StartAfter: bucket, Limit: int32(n - len(out))})
				if errors.Is(err, namespace.ErrNotFound) {
					break // the volume went meanwhile
				}
				if err != nil {
					return nil, false, err
				}
				out = append(out, resp.GetBuckets()...)
				if !resp.GetTruncated() || len(resp.GetBuckets()) == 0 {
					break
				}
				bucket = resp.GetBuckets()[len(resp.GetBuckets())-1].GetName()
			}
			if len(out) >= n {
				return out, false, nil
			}
		}
		vr, err := rd.ListVolumes(&stratov1.ListVolumesRequest{StartAfter: volume, Limit: 1})
		if err != nil {
			return nil, false, err
		}
		if len(vr.GetVolumes()) == 0 {
			return out, true, nil
		}
		volume, bucket = vr.GetVolumes()[0].GetName(), ""
	}
}

// expungeBucket deletes every user's checkpoints of bucket b older than
// the trash interval at now, then rolls each Current into a checkpoint
// named by now. OBS buckets keep no trash (clients delete at once there).
// Deletions go through the namespace's Delete, so the blocks are freed by
// block deletion as any other delete's.
func (s *Server) expungeBucket(ctx context.Context, b *stratov1.BucketInfo, now time.Time) (made, deleted int, err error) {
	if b.GetLayout() == stratov1.BucketLayout_LAYOUT_OBS {
		return 0, 0, nil
	}
	users, err := s.trashList(b, TrashDir)
	if err != nil {
		return 0, 0, err
	}
	for _, u := range users {
		if !u.GetIsDirectory() {
			continue
		}
		root := path.Join(TrashDir, path.Base(u.GetPath()))
		entries, err := s.trashList(b, root)
		if err != nil {
			return made, deleted, err
		}
		names := make(map[string]bool, len(entries))
		current := false
		for _, e := range entries {
			name := path.Base(e.GetPath())
			names[name] = true
			if name == TrashCurrent {
				current = e.GetIsDirectory()
				continue
			}
			t, ok := checkpointTime(name)
			if !ok || !e.GetIsDirectory() || now.Sub(t) <= s.opts.TrashInterval {
				continue
			}
			err := s.trashMutate(ctx, &stratov1.DeleteRequest{Volume: b.GetVolume(), Bucket: b.GetName(),
				Path: path.Join(root, name), Recursive: true})
			if err != nil {
				return made, deleted, fmt.Errorf("deleting checkpoint %s: %w", path.Join(root, name), err)
			}
			deleted++
		}
		if !current {
			continue
		}
		name := now.UTC().Format(TrashCheckpointFormat)
		for i := 1; names[name]; i++ {
			name = fmt.Sprintf("%s-%d", now.UTC().Format(TrashCheckpointFormat), i)
		}
		err = s.trashMutate(ctx, &stratov1.RenameRequest{Volume: b.GetVolume(), Bucket: b.GetName(),
			Src: path.Join(root, TrashCurrent), Dst: path.Join(root, name)})
		if err != nil {
			return made, deleted, fmt.Errorf("checkpointing %s: %w", path.Join(root, TrashCurrent), err)
		}
		made++
	}
	return made, deleted, nil
}

// checkpointTime parses a checkpoint's name ("-N" suffix allowed).
func checkpointTime(name string) (time.Time, bool) {
	base, _, _ := strings.Cut(name, "-")
	t, err := time.ParseInLocation(TrashCheckpointFormat, base, time.UTC)
	return t, err == nil
}

// trashList lists a directory of bucket b, every page; a directory that
// is not there lists nothing.
func (s *Server) trashList(b *stratov1.BucketInfo, dir string) ([]*stratov1.FileStatus, error) {
	rd := s.ns.Reader(s.db)
	var all []*stratov1.FileStatus
	after := ""
	for {
		resp, err := rd.ListStatus(&stratov1.ListStatusRequest{Volume: b.GetVolume(), Bucket: b.GetName(), Path: dir, StartAfter: after})
		if errors.Is(err, namespace.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		all = append(all, resp.GetStatuses()...)
		if !resp.GetTruncated() || len(resp.GetStatuses()) == 0 {
			return all, nil
		}
		after = path.Base(resp.GetStatuses()[len(resp.GetStatuses())-1].GetPath())
	}
}

// trashMutate runs one of the trash's renames or deletes as meta itself
// (no caller: the namespace checks no rights). A path a user moved or
// deleted meanwhile is not an error.
func (s *Server) trashMutate(ctx context.Context, req interface {
	GetVolume() string
	GetBucket() string
}) error {
	var err error
	switch r := req.(type) {
	case *stratov1.DeleteRequest:
		_, err = mutate[*stratov1.DeleteResponse](ctx, s, r)
	case *stratov1.RenameRequest:
		_, err = mutate[*stratov1.RenameResponse](ctx, s, r)
	default:
		return fmt.Errorf("meta: trash: unexpected %T", req)
	}
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}
