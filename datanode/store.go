package datanode

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/datanode/container"
)

// StoreOptions configure a Store. EnsureDefaults fills every unset field;
// Dirs is required.
type StoreOptions struct {
	// Dirs are the volume directories, one per disk. Required.
	Dirs []string
	// Volume configures every volume: filesystem, chunk and block limits,
	// direct I/O. Its Logger defaults to Logger.
	Volume container.Options
	// Logger receives the store's warnings. Default: slog.Default().
	Logger *slog.Logger
	// ContainerSize is the size a container grows to before it is closed
	// (Ozone's 5 GiB). A new container goes to the volume with the most
	// free space once ContainerSize − used is set aside for each of its open
	// containers. Default: 5 GiB.
	ContainerSize int64
	// Created, when set, is called with the ID of every container the
	// store creates (by the first write that names it, or CreateContainer),
	// under the store's creation lock: it must not call back into the
	// Store. The Datanode reports the new container to meta in its next
	// heartbeat with it, rather than in the next full report.
	Created func(id uint64)
	// FailedVolumesTolerated is how many volumes may fail, at start or
	// while running, before the datanode gives up (HDFS's
	// dfs.datanode.failed.volumes.tolerated). AnyFailedVolumes (-1): any
	// number, as long as one volume works (Ozone's default). Default: 0,
	// none, as HDFS; the strato datanode command defaults its flag to
	// AnyFailedVolumes.
	FailedVolumesTolerated int
	// Failed, when set, is called with a volume that failed while the
	// store ran (not one that failed to open) and the IDs of the
	// containers it held, which the store no longer serves. It runs with
	// no lock of the store held.
	Failed func(dir string, lost []uint64)
	// Clock stamps volume failures. Default: the real clock.
	Clock clockwork.Clock
}

// AnyFailedVolumes is the FailedVolumesTolerated that tolerates any number
// of failed volumes as long as one works.
const AnyFailedVolumes = -1

// DefaultContainerSize is the default of StoreOptions.ContainerSize.
const DefaultContainerSize = 5 << 30

// EnsureDefaults fills unset fields with their defaults.
func (o *StoreOptions) EnsureDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Volume.Logger == nil {
		o.Volume.Logger = o.Logger
	}
	o.Volume.EnsureDefaults()
	if o.ContainerSize == 0 {
		o.ContainerSize = DefaultContainerSize
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
}

// Validate reports the first invalid field.
func (o *StoreOptions) Validate() error {
	if len(o.Dirs) == 0 {
		return errors.New("datanode: no volume directories")
	}
	for i, d := range o.Dirs {
		if d == "" {
			return fmt.Errorf("datanode: volume directory %d is empty", i)
		}
		if slices.Contains(o.Dirs[:i], d) {
			return fmt.Errorf("datanode: volume directory %s listed twice", d)
		}
	}
	if o.ContainerSize <= 0 {
		return fmt.Errorf("datanode: ContainerSize %d must be positive", o.ContainerSize)
	}
	if o.FailedVolumesTolerated < AnyFailedVolumes {
		return fmt.Errorf("datanode: FailedVolumesTolerated %d must be -1 (any) or more", o.FailedVolumesTolerated)
	}
	return o.Volume.Validate()
}

// Store is a datanode's containers over one or more volumes (disks): it
// finds a container by ID whatever its volume, creates containers on the
// volume with the most room, and reports containers and space. A volume
// that fails (health.go) is taken out of service with its containers. It
// is safe for concurrent use.
type Store struct {
	opts StoreOptions
	vols []*container.Volume // the volumes that opened, failed or not

	mu     sync.RWMutex
	where  map[uint64]*container.Volume // container ID → its volume, on healthy volumes
	health []*volumeHealth              // one per opts.Dirs, in order
	lost   map[uint64]string            // container ID → the failed volume that held it

	createMu  sync.Mutex      // serialises creations, so that an ID lands on one volume
	importing map[uint64]bool // guarded by createMu: IDs being imported

	checkMu  sync.Mutex     // serialises health checks
	checking atomic.Bool    // a CheckVolumesSoon is running
	checks   sync.WaitGroup // the CheckVolumesSoon running, which Close waits for
}

// OpenStore opens (creating if needed) every volume of opts.Dirs and loads
// their containers. A container ID found on two volumes is served from the
// first listed and logged. A volume that does not open is recorded as
// FAILED with its reason; the store opens if at least one volume works and
// no more failed than FailedVolumesTolerated, and otherwise returns an
// error naming every failed volume (ErrVolumesFailed).
func OpenStore(opts StoreOptions) (*Store, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Store{opts: opts, where: make(map[uint64]*container.Volume), lost: make(map[uint64]string)}
	for _, dir := range opts.Dirs {
		h := &volumeHealth{dir: dir}
		s.health = append(s.health, h)
		v, err := container.OpenVolume(dir, opts.Volume)
		if err == nil {
			err = s.probe(dir)
			if err != nil {
				_ = v.Close()
			}
		}
		if err != nil {
			h.fail(fmt.Sprintf("open: %v", err), opts.Clock.Now())
			opts.Logger.Error("datanode: volume failed to open; starting without it", "volume", dir, "err", err)
			continue
		}
		h.vol = v
		s.vols = append(s.vols, v)
		for _, info := range v.List() {
			if other, ok := s.where[info.ID]; ok {
				s.dropDuplicate(info, other, v)
				continue
			}
			s.where[info.ID] = v
		}
	}
	if err := s.tolerable(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// dropDuplicate handles a container found on a second volume, dup, when
// first serves it: the old copy of a move between volumes that a stop cut
// short (diskbalance.go). Both CLOSED, the copies hold the same blocks
// (the old one perhaps some deleted since) and dup goes; otherwise both
// stay and first serves.
func (s *Store) dropDuplicate(info container.Info, first, dup *container.Volume) {
	log := s.opts.Logger
	c, err := first.Container(info.ID)
	if err != nil || c.State() != container.Closed || info.State != container.Closed {
		log.Warn("datanode: container on two volumes; serving the first", "container", info.ID, "first", first.Dir(), "second", dup.Dir())
		return
	}
	if err := dup.Delete(info.ID, false); err != nil {
		log.Warn("datanode: second copy of a container not deleted; serving the first", "container", info.ID,
			"first", first.Dir(), "second", dup.Dir(), "err", err)
		return
	}
	log.Info("datanode: second copy of a closed container deleted (a move between volumes was cut short)",
		"container", info.ID, "kept", first.Dir(), "deleted", dup.Dir())
}

// Close closes every volume.
func (s *Store) Close() error {
	s.checks.Wait()
	var errs []error
	for _, v := range s.vols {
		errs = append(errs, v.Close())
	}
	return errors.Join(errs...)
}

// Container returns the container with the given ID (container.ErrNotFound
// if no healthy volume holds it: a reader goes to another replica).
func (s *Store) Container(id uint64) (*container.Container, error) {
	s.mu.RLock()
	v, lost := s.where[id], s.lost[id]
	s.mu.RUnlock()
	if v == nil {
		if lost != "" {
			return nil, fmt.Errorf("%w: %d (its volume %s failed)", container.ErrNotFound, id, lost)
		}
		return nil, fmt.Errorf("%w: %d", container.ErrNotFound, id)
	}
	return v.Container(id)
}

// CreateContainer creates an OPEN FILE_PER_BLOCK container on the volume
// with the most room (container.ErrExists if any volume holds the ID).
func (s *Store) CreateContainer(id uint64) (*container.Container, error) {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if _, err := s.Container(id); err == nil {
		return nil, fmt.Errorf("%w: %d", container.ErrExists, id)
	}
	return s.createLocked(id)
}

// PlaceReplica carries out meta's placement of an erasure coded
// container's replica on this datanode: the container is created if no
// volume holds it (a write may have created it first) and stores replica
// index (container.SetReplicaIndex); data is the config's data members,
// which says whether the index is a parity member's (0: not known).
func (s *Store) PlaceReplica(id uint64, index, data int) error {
	c, err := s.openForWrite(id)
	if err != nil {
		return err
	}
	if err := c.SetReplicaIndex(index); err != nil {
		return err
	}
	if data > 0 && index > data {
		c.SetParity()
	}
	return nil
}

// openForWrite returns the container, creating it if no volume holds it:
// containers are created by the first write that names them, as Ozone's
// client-driven creation does.
func (s *Store) openForWrite(id uint64) (*container.Container, error) {
	c, err := s.Container(id)
	if err == nil || !errors.Is(err, container.ErrNotFound) {
		return c, err
	}
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if c, err := s.Container(id); err == nil {
		return c, nil
	}
	return s.createLocked(id)
}

func (s *Store) createLocked(id uint64) (*container.Container, error) {
	if s.importing[id] {
		return nil, fmt.Errorf("%w: %d (being imported)", container.ErrExists, id)
	}
	s.mu.RLock()
	lost := s.lost[id]
	s.mu.RUnlock()
	if lost != "" {
		// Its replica here is gone with the volume: a write that names it
		// must not start an empty one in its place.
		return nil, fmt.Errorf("%w: container %d was on %s", ErrVolumeFailed, id, lost)
	}
	v, err := s.pickVolume()
	if err != nil {
		return nil, err
	}
	c, err := v.Create(id, container.FilePerBlock)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.where[id] = v
	s.mu.Unlock()
	s.opts.Logger.Debug("datanode: container created", "container", id, "volume", v.Dir())
	if s.opts.Created != nil {
		s.opts.Created(id)
	}
	return c, nil
}

// pickVolume returns the healthy volume with the most free space once the
// open containers' growth is set aside (the first on ties, and when no
// volume reports its usage, the one with the fewest open containers).
func (s *Store) pickVolume() (*container.Volume, error) {
	var best *container.Volume
	bestRoom := int64(0)
	for i, vs := range s.volumeStats() {
		if vs.State != VolumeHealthy {
			continue
		}
		if room := vs.Available - vs.Reserved; best == nil || room > bestRoom {
			best, bestRoom = s.health[i].vol, room
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: no healthy volume left", ErrVolumeFailed)
	}
	return best, nil
}

// CloseContainer closes a container: waits for writes in flight, makes
// everything written durable and refuses writes from then on. Closing a
// CLOSED container does nothing.
func (s *Store) CloseContainer(id uint64) error {
	c, err := s.Container(id)
	if err != nil {
		return err
	}
	return c.Close()
}

// DeleteContainer removes a container and its data; an OPEN or CLOSING
// container only with force.
func (s *Store) DeleteContainer(id uint64, force bool) error {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.Lock()
	v := s.where[id]
	if v == nil {
		// A replica lost with its volume is deleted already, as far as
		// meta is concerned.
		delete(s.lost, id)
		s.mu.Unlock()
		return fmt.Errorf("%w: %d", container.ErrNotFound, id)
	}
	s.mu.Unlock()
	if err := v.Delete(id, force); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.where, id)
	s.mu.Unlock()
	return nil
}

// DeleteBlocks removes blocks no key references any more from a container
// (container.Container.DeleteBlocks). A container this store does not hold
// has nothing to delete: that is no error.
func (s *Store) DeleteBlocks(id uint64, localIDs []uint64) (blocks int, bytes int64, err error) {
	c, err := s.Container(id)
	if errors.Is(err, container.ErrNotFound) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	blocks, bytes, err = c.DeleteBlocks(localIDs)
	if errors.Is(err, container.ErrNotFound) {
		return blocks, bytes, nil // deleted meanwhile
	}
	return blocks, bytes, err
}

// Containers returns the Info of every container, by ID: what a container
// report lists.
func (s *Store) Containers() []container.Info {
	var out []container.Info
	for _, v := range s.healthyVolumes() {
		for _, in := range v.List() {
			s.mu.RLock()
			w := s.where[in.ID]
			s.mu.RUnlock()
			if w != nil && w != v {
				continue // the old copy of a container moved to another volume
			}
			out = append(out, in)
		}
	}
	slices.SortStableFunc(out, func(a, b container.Info) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return slices.CompactFunc(out, func(a, b container.Info) bool { return a.ID == b.ID })
}

// Stats is the store's space and container summary.
type Stats struct {
	// Capacity, Available and Used add up the healthy volumes'.
	Capacity, Available, Used int64
	// Containers and OpenContainers count containers of every healthy
	// volume.
	Containers, OpenContainers int
	// FailedVolumes counts the volumes out of service.
	FailedVolumes int
	// Volumes are every volume, failed ones included, in the order of
	// StoreOptions.Dirs.
	Volumes []VolumeStats
}

// VolumeStats is one volume's space and containers.
type VolumeStats struct {
	Dir string
	// Capacity is the size of the volume's filesystem and Available what it
	// has free for strato, both 0 when the filesystem does not report them.
	Capacity, Available int64
	// Used is the committed bytes of the volume's containers.
	Used int64
	// Reserved is the room set aside for open containers to grow:
	// ContainerSize − used for each.
	Reserved                   int64
	Containers, OpenContainers int
	// WriteCache, WriteCacheMax and WriteCacheDropped: the bytes of
	// buffered block writes the volume leaves in the page cache, their
	// bound (0: none) and the bytes dropped from it so far
	// (container.Options.WriteCacheBytes).
	WriteCache, WriteCacheMax, WriteCacheDropped int64
	// State is VolumeHealthy or VolumeFailed. A failed volume reports
	// no space and no containers: they are out of service.
	State VolumeState
	// Reason says why a failed volume failed, and FailedAt when.
	Reason   string
	FailedAt time.Time
}

// Stats returns the store's space and container counts, per volume and in
// total.
func (s *Store) Stats() Stats {
	var st Stats
	st.Volumes = s.volumeStats()
	for _, v := range st.Volumes {
		if v.State == VolumeFailed {
			st.FailedVolumes++
		}
		st.Capacity += v.Capacity
		st.Available += v.Available
		st.Used += v.Used
		st.Containers += v.Containers
		st.OpenContainers += v.OpenContainers
	}
	return st
}

func (s *Store) volumeStats() []VolumeStats {
	s.mu.RLock()
	health := make([]volumeHealth, len(s.health))
	for i, h := range s.health {
		health[i] = *h
	}
	s.mu.RUnlock()
	out := make([]VolumeStats, len(health))
	for i, h := range health {
		out[i] = VolumeStats{Dir: h.dir, State: h.state(), Reason: h.reason, FailedAt: h.failedAt}
		if h.failed {
			continue
		}
		v := h.vol
		vs := out[i]
		if du, err := s.opts.Volume.FS.GetDiskUsage(v.Dir()); err == nil {
			vs.Capacity, vs.Available = int64(du.TotalBytes), int64(du.AvailBytes)
		}
		vs.WriteCache, vs.WriteCacheMax, vs.WriteCacheDropped = v.WriteCache()
		for _, info := range v.List() {
			vs.Containers++
			vs.Used += info.UsedBytes
			if info.State == container.Open {
				vs.OpenContainers++
				vs.Reserved += max(s.opts.ContainerSize-info.UsedBytes, 0)
			}
		}
		out[i] = vs
	}
	return out
}

// osFiles reports whether the volumes' files are OS files (vfs.Default),
// so that the data server can open them with os.Open and sendfile them.
func (s *Store) osFiles() bool { return s.opts.Volume.FS == vfs.Default }

// maxChunk returns the largest chunk the volumes accept.
func (s *Store) maxChunk() int64 { return s.opts.Volume.MaxChunkSize }
