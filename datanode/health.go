package datanode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/strato-io/strato/datanode/container"
)

// A volume's health, as HDFS's DiskChecker and Ozone's StorageVolumeChecker
// see it: a volume is HEALTHY until a check of its directory fails — at
// open, every Options.VolumeCheckInterval, or at once after a request met
// an I/O error (CheckVolumesSoon) — and then FAILED for good: its
// containers are no longer served or reported, new containers go
// elsewhere, and meta copies their replicas back from other datanodes. A
// failed volume comes back only when the datanode restarts with it
// working (the operator replaced the disk).

// Errors of failed volumes; classify them with errors.Is.
var (
	// ErrVolumeFailed is returned for a write to a container whose volume
	// failed, and when no healthy volume is left for a new container.
	ErrVolumeFailed = errors.New("datanode: volume failed")
	// ErrVolumesFailed is returned when more volumes failed than
	// StoreOptions.FailedVolumesTolerated, or all of them: the datanode
	// does not start, or stops.
	ErrVolumesFailed = errors.New("datanode: too many failed volumes")
)

// VolumeState is a volume's health.
type VolumeState int

// The states of a volume.
const (
	VolumeHealthy VolumeState = iota
	VolumeFailed
)

func (s VolumeState) String() string {
	if s == VolumeFailed {
		return "FAILED"
	}
	return "HEALTHY"
}

// volumeHealth is one volume directory's state; guarded by Store.mu.
type volumeHealth struct {
	dir      string
	vol      *container.Volume // nil when it failed to open
	failed   bool
	reason   string
	failedAt time.Time
}

func (h *volumeHealth) fail(reason string, at time.Time) {
	h.failed, h.reason, h.failedAt = true, reason, at
}

func (h *volumeHealth) state() VolumeState {
	if h.failed {
		return VolumeFailed
	}
	return VolumeHealthy
}

// probeFile is the file a health check writes in a volume's directory.
const probeFile = ".volume-check"

// probe checks that dir takes a write: it writes a small file, syncs it,
// reads it back and removes it, through the volumes' file system. A full
// disk is no failure (the volume still serves its containers); a read-only
// or failing one is.
func (s *Store) probe(dir string) error {
	fs := s.opts.Volume.FS
	p := fs.PathJoin(dir, probeFile)
	want := []byte("strato volume check\n")
	err := func() error {
		f, err := fs.Create(p, vfs.WriteCategoryUnspecified)
		if err != nil {
			return err
		}
		// A copy: a file system may scribble over what it was given (pebble's
		// in-memory one does in race builds, to catch reuse).
		_, err = f.Write(bytes.Clone(want))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		f, err = fs.Open(p)
		if err != nil {
			return err
		}
		got, err := io.ReadAll(f)
		_ = f.Close()
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("read back %q, wrote %q", got, want)
		}
		return fs.Remove(p)
	}()
	if err != nil && !errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("check %s: %w", p, err)
	}
	return nil
}

// CheckVolumes checks every healthy volume (probe, and whether its
// database failed: container.Volume.Err) and fails those whose check
// fails. It returns ErrVolumesFailed when more volumes have failed
// than tolerated, or all of them.
func (s *Store) CheckVolumes() error {
	s.checkMu.Lock()
	defer s.checkMu.Unlock()
	for _, h := range s.health {
		s.mu.RLock()
		failed := h.failed
		s.mu.RUnlock()
		if failed {
			continue
		}
		err := h.vol.Err() // its database failed
		if err == nil {
			err = s.probe(h.dir)
		}
		if err != nil {
			s.FailVolume(h.dir, err.Error())
		}
	}
	return s.tolerable()
}

// CheckVolumesSoon starts a CheckVolumes in the background unless one is
// running: the server asks for it when a request met an I/O error, which
// may be its disk's (HDFS's checkDiskErrorAsync). A volume that fails
// reaches StoreOptions.Failed.
func (s *Store) CheckVolumesSoon() {
	if !s.checking.CompareAndSwap(false, true) {
		return
	}
	s.checks.Add(1)
	go func() {
		defer s.checks.Done()
		defer s.checking.Store(false)
		_ = s.CheckVolumes()
	}()
}

// Tolerable returns ErrVolumesFailed, naming the failed volumes and why,
// when more have failed than StoreOptions.FailedVolumesTolerated or no
// volume works.
func (s *Store) Tolerable() error { return s.tolerable() }

// FailVolume takes the volume in dir out of service with reason: its
// containers are no longer served (Container returns container.ErrNotFound)
// nor reported (Containers), new containers go to other volumes, and its
// files are closed. StoreOptions.Failed hears of it. Failing a failed
// volume, or a directory that is not a volume, does nothing.
func (s *Store) FailVolume(dir, reason string) {
	s.createMu.Lock() // no creation or import lands on it meanwhile
	s.mu.Lock()
	var h *volumeHealth
	for _, x := range s.health {
		if x.dir == dir && !x.failed {
			h = x
		}
	}
	if h == nil {
		s.mu.Unlock()
		s.createMu.Unlock()
		return
	}
	h.fail(reason, s.opts.Clock.Now())
	var lost []uint64
	for id, v := range s.where {
		if v == h.vol {
			lost = append(lost, id)
			delete(s.where, id)
			s.lost[id] = dir
		}
	}
	s.mu.Unlock()
	s.createMu.Unlock()
	s.opts.Logger.Error("datanode: volume failed; its containers are out of service", "volume", dir, "reason", reason, "containers", len(lost))
	// Requests holding its containers end with container.ErrClosed.
	if err := h.vol.Close(); err != nil {
		s.opts.Logger.Warn("datanode: closing a failed volume", "volume", dir, "err", err)
	}
	if s.opts.Failed != nil {
		s.opts.Failed(dir, lost)
	}
}

// tolerable returns ErrVolumesFailed, naming the failed volumes and why,
// when more have failed than StoreOptions.FailedVolumesTolerated or no
// volume works.
func (s *Store) tolerable() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var failed []string
	for _, h := range s.health {
		if h.failed {
			failed = append(failed, h.dir+": "+h.reason)
		}
	}
	limit := s.opts.FailedVolumesTolerated
	if len(failed) == len(s.health) || (limit != AnyFailedVolumes && len(failed) > limit) {
		tol := "any, as long as one works"
		if limit != AnyFailedVolumes {
			tol = fmt.Sprint(limit)
		}
		return fmt.Errorf("%w: %d of %d failed (tolerated: %s): %s", ErrVolumesFailed, len(failed), len(s.health),
			tol, strings.Join(failed, "; "))
	}
	return nil
}

// failedLocked reports whether v is out of service; s.mu is held.
func (s *Store) failedLocked(v *container.Volume) bool {
	for _, h := range s.health {
		if h.vol == v {
			return h.failed
		}
	}
	return true
}

// healthyVolumes returns the volumes in service.
func (s *Store) healthyVolumes() []*container.Volume {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*container.Volume
	for _, h := range s.health {
		if !h.failed {
			out = append(out, h.vol)
		}
	}
	return out
}

// homeDirs returns the directories of the healthy volumes, in order: where
// the datanode keeps what is not a container (its identity, the block-token
// marker). There is at least one while the store is open.
func (s *Store) homeDirs() []string {
	var out []string
	for _, v := range s.healthyVolumes() {
		out = append(out, v.Dir())
	}
	return out
}
