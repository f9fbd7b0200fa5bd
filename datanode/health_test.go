package datanode

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/wire"
)

// failDir returns a file system over fs that fails every operation under
// dir once its toggle is on.
func failDir(fs vfs.FS, dir string) (vfs.FS, *errorfs.Toggle) {
	tg := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Path == dir || strings.HasPrefix(op.Path, dir+"/") {
			return errorfs.ErrInjected
		}
		return nil
	})}
	return errorfs.Wrap(fs, tg), tg
}

// putBlock writes block (id, local) of data on the store and commits it.
func putBlock(t *testing.T, s *Store, id, local uint64, data []byte) error {
	t.Helper()
	c, err := s.openForWrite(id)
	if err != nil {
		return err
	}
	if err := c.WriteChunk(local, 0, data, checksum.Compute(checksum.CRC32C, 1024, data), container.WriteOptions{}); err != nil {
		return err
	}
	_, err = c.PutBlock(local, int64(len(data)), container.PutOptions{})
	return err
}

// requireBlock reads block (id, local) back whole.
func requireBlock(t *testing.T, s *Store, id, local uint64, want []byte) {
	t.Helper()
	c, err := s.Container(id)
	require.NoError(t, err)
	r, err := c.ReadChunk(local, 0, int64(len(want)))
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.Equal(t, want, r.Bytes(0, int64(len(want))))
}

func reportedIDs(s *Store) []uint64 {
	var ids []uint64
	for _, r := range (storeReports{s: s}).Replicas() {
		ids = append(ids, r.ContainerId)
	}
	return ids
}

// TestStoreStartsWithoutAFailedVolume: a volume that fails to open (its
// file system fails every call) is recorded FAILED with its reason; the
// store opens on the others, which serve their containers and take new
// ones, as long as the failures are tolerated; beyond, or with none left,
// it refuses to open, naming the failed volume.
func TestStoreStartsWithoutAFailedVolume(t *testing.T) {
	mem := vfs.NewMem()
	fs, bad := failDir(mem, "/b")
	o := StoreOptions{Dirs: []string{"/a", "/b", "/c"}, Volume: container.Options{FS: fs}, Logger: quietLogger(),
		ContainerSize: 1 << 20, FailedVolumesTolerated: 1}
	s, err := OpenStore(o)
	require.NoError(t, err)
	for id := uint64(1); id <= 3; id++ {
		require.NoError(t, putBlock(t, s, id, 1, pattern(int64(id), 0, 4096)))
	}
	require.Equal(t, "/b", volumeOf(t, s, 2))
	require.NoError(t, s.Close())

	bad.On()
	s, err = OpenStore(o)
	require.NoError(t, err)
	st := s.Stats()
	require.Equal(t, 1, st.FailedVolumes)
	require.Equal(t, VolumeHealthy, st.Volumes[0].State)
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "injected")
	require.False(t, st.Volumes[1].FailedAt.IsZero())
	require.Equal(t, VolumeHealthy, st.Volumes[2].State)
	require.Equal(t, []uint64{1, 3}, reportedIDs(s))
	requireBlock(t, s, 1, 1, pattern(1, 0, 4096))
	requireBlock(t, s, 3, 1, pattern(3, 0, 4096))
	_, err = s.Container(2)
	require.ErrorIs(t, err, container.ErrNotFound)
	for id := uint64(10); id < 14; id++ {
		require.NoError(t, putBlock(t, s, id, 1, pattern(int64(id), 0, 4096)))
		require.NotEqual(t, "/b", volumeOf(t, s, id))
	}
	require.NoError(t, s.Close())

	o.FailedVolumesTolerated = 0
	_, err = OpenStore(o)
	require.ErrorIs(t, err, ErrVolumesFailed)
	require.Contains(t, err.Error(), "/b: open")

	o.FailedVolumesTolerated = AnyFailedVolumes
	o.Dirs = []string{"/b"}
	_, err = OpenStore(o)
	require.ErrorIs(t, err, ErrVolumesFailed, "no volume works")

	bad.Off()
	o.Dirs = []string{"/a", "/b", "/c"}
	s, err = OpenStore(o)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 0, s.Stats().FailedVolumes)
	requireBlock(t, s, 2, 1, pattern(2, 0, 4096))
}

// TestStoreStartsWithoutAnUnusableDirectory: on the real file system, a
// volume directory that cannot be one (a regular file stands in its
// place; tests run as root, where permissions stop nothing) fails alone.
func TestStoreStartsWithoutAnUnusableDirectory(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")}
	require.NoError(t, os.WriteFile(dirs[1], []byte("not a directory"), 0o644))
	s, err := OpenStore(StoreOptions{Dirs: dirs, Logger: quietLogger(), FailedVolumesTolerated: AnyFailedVolumes})
	require.NoError(t, err)
	defer s.Close()
	st := s.Stats()
	require.Equal(t, 1, st.FailedVolumes)
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "not a directory")
	for id := uint64(1); id <= 4; id++ {
		require.NoError(t, putBlock(t, s, id, 1, pattern(int64(id), 0, 8192)))
		requireBlock(t, s, id, 1, pattern(int64(id), 0, 8192))
		require.NotEqual(t, dirs[1], volumeOf(t, s, id))
	}
}

// TestStoreVolumeFailsAtRunTime: once a volume's disk fails every call, a
// write there fails with an I/O error, which has the volumes checked: the
// volume is taken out of service, its containers are neither served nor
// reported, Failed hears of them, a write naming one is refused rather
// than starting an empty replica, and the other volumes lose nothing.
func TestStoreVolumeFailsAtRunTime(t *testing.T) {
	fs, bad := failDir(vfs.NewMem(), "/vol1")
	var mu sync.Mutex
	lost := map[string][]uint64{}
	n := startNode(t, nodeConfig{fs: fs, dirs: 3})
	n.store.opts.Failed = func(dir string, ids []uint64) {
		mu.Lock()
		defer mu.Unlock()
		lost[dir] = append(lost[dir], ids...)
	}
	n.store.opts.FailedVolumesTolerated = 1
	c := n.dial(t)
	for id := uint64(1); id <= 6; id++ {
		writeBlock(t, c, bid(id, 1), pattern(int64(id), 0, 50000), 20000, nil, false)
	}
	var onBad []uint64
	for id := uint64(1); id <= 6; id++ {
		if volumeOf(t, n.store, id) == "/vol1" {
			onBad = append(onBad, id)
		}
	}
	require.Len(t, onBad, 2)

	bad.On()
	ctx := t.Context()
	data := pattern(99, 0, 20000)
	err := c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(onBad[0], 2), Checksums: sums(data)}, data)
	requireCode(t, err, wire.CodeIO)
	require.Eventually(t, func() bool { return n.store.Stats().FailedVolumes == 1 }, 5*time.Second, 10*time.Millisecond)
	st := n.store.Stats()
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "injected")
	require.Equal(t, 4, st.Containers)
	// Failed is called after the volume is marked failed.
	lostNow := func() map[string][]uint64 {
		mu.Lock()
		defer mu.Unlock()
		out := map[string][]uint64{}
		for dir, ids := range lost {
			out[dir] = slices.Sorted(slices.Values(ids))
		}
		return out
	}
	require.Eventually(t, func() bool { return len(lostNow()["/vol1"]) >= len(onBad) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, map[string][]uint64{"/vol1": onBad}, lostNow())
	require.NoError(t, n.store.Tolerable())

	for _, id := range onBad {
		_, _, err := c.ReadChunk(ctx, &wire.ReadChunkRequest{Block: bid(id, 1), Length: 100}, nil)
		requireCode(t, err, wire.CodeContainerNotFound)
		err = c.WriteChunk(ctx, &wire.WriteChunkRequest{Block: bid(id, 3), Checksums: sums(data)}, data)
		requireCode(t, err, wire.CodeIO)
		require.NotContains(t, reportedIDs(n.store), id)
	}
	for id := uint64(1); id <= 6; id++ {
		if !slices.Contains(onBad, id) {
			require.Equal(t, pattern(int64(id), 0, 50000), readRange(t, c, bid(id, 1), 0, 50000))
		}
	}
	for id := uint64(20); id < 24; id++ {
		writeBlock(t, c, bid(id, 1), pattern(int64(id), 0, 5000), 5000, nil, false)
		require.NotEqual(t, "/vol1", volumeOf(t, n.store, id))
	}

	// A second failure is one too many.
	n.store.FailVolume("/vol2", "test")
	require.ErrorIs(t, n.store.Tolerable(), ErrVolumesFailed)
}

// TestStoreReadOnlyVolume: a volume whose directory turns read-only (a
// read-only tmpfs mounted over it, as a disk's file system remounts itself
// read-only on errors) fails its next health check; the others carry on,
// and after a restart it fails to open, saying why. Needs root to mount.
func TestStoreReadOnlyVolume(t *testing.T) {
	mount := func(dir string, args ...string) error {
		out, err := exec.Command("mount", append(args, "tmpfs", dir)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mount %v: %w: %s", args, err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
		return nil
	}
	// Three disks of one size, so that containers land on each.
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for _, d := range dirs {
		if err := mount(d, "-t", "tmpfs", "-o", "size=64m"); err != nil {
			t.Skipf("cannot mount a tmpfs: %v", err)
		}
	}
	disk := dirs[1]
	o := StoreOptions{Dirs: dirs, Logger: quietLogger(), FailedVolumesTolerated: 1, ContainerSize: 1 << 20}
	s, err := OpenStore(o)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	for id := uint64(1); id <= 6; id++ {
		require.NoError(t, putBlock(t, s, id, 1, pattern(int64(id), 0, 8192)))
	}
	require.NoError(t, s.CheckVolumes())
	require.Equal(t, 0, s.Stats().FailedVolumes)

	require.NoError(t, mount(disk, "-t", "tmpfs", "-o", "ro,size=1m"))
	require.NoError(t, s.CheckVolumes(), "one failure is tolerated")
	st := s.Stats()
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "read-only")
	require.Equal(t, 4, st.Containers)
	check := func(s *Store) {
		for id := uint64(1); id <= 6; id++ {
			if _, err := s.Container(id); err == nil {
				require.NotEqual(t, disk, volumeOf(t, s, id))
				requireBlock(t, s, id, 1, pattern(int64(id), 0, 8192))
			}
		}
	}
	check(s)
	require.NoError(t, s.Close())

	s, err = OpenStore(o)
	require.NoError(t, err)
	st = s.Stats()
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "read-only")
	require.Equal(t, 4, st.Containers)
	check(s)
}

// openDatanode opens a datanode over dirs whose meta is nowhere (it keeps
// trying to register, which these tests do not need).
func openDatanode(t *testing.T, dirs []string, fs vfs.FS, clock clockwork.Clock, tolerated int) (*Datanode, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	o := Options{Dirs: dirs, Meta: []string{"127.0.0.1:1"}, Clock: clock, Logger: quietLogger(), DisableLocalReads: true,
		VolumeCheckInterval: time.Minute}
	o.Store.Volume.FS = fs
	o.Store.FailedVolumesTolerated = tolerated
	d, err := Open(o, l)
	if err != nil {
		_ = l.Close()
	}
	return d, err
}

// TestDatanodeIdentityOnEveryDisk: the identity and the cluster ID are
// kept in every data directory, copied there from a datanode of before
// that kept them in the first alone, and survive the loss of the first
// disk (replaced by an empty one).
func TestDatanodeIdentityOnEveryDisk(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")}
	require.NoError(t, os.MkdirAll(dirs[0], 0o700))
	// The layout of before: both files in the first directory.
	require.NoError(t, os.WriteFile(filepath.Join(dirs[0], "datanode.id"), []byte("dn-old\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dirs[0], "cluster.id"), []byte("cluster-1\n"), 0o644))
	d, err := openDatanode(t, dirs, vfs.Default, clockwork.NewFakeClock(), AnyFailedVolumes)
	require.NoError(t, err)
	require.Equal(t, "dn-old", d.ID())
	require.NoError(t, d.Close())
	for _, dir := range dirs {
		for file, want := range map[string]string{"datanode.id": "dn-old\n", "cluster.id": "cluster-1\n"} {
			b, err := os.ReadFile(filepath.Join(dir, file))
			require.NoError(t, err)
			require.Equal(t, want, string(b), "%s in %s", file, dir)
		}
	}

	// The first disk is replaced by an empty one.
	require.NoError(t, os.RemoveAll(dirs[0]))
	d, err = openDatanode(t, dirs, vfs.Default, clockwork.NewFakeClock(), AnyFailedVolumes)
	require.NoError(t, err)
	require.Equal(t, "dn-old", d.ID())
	require.NoError(t, d.Close())
	b, err := os.ReadFile(filepath.Join(dirs[0], "datanode.id"))
	require.NoError(t, err)
	require.Equal(t, "dn-old\n", string(b))

	// Directories of two datanodes are refused.
	require.NoError(t, os.WriteFile(filepath.Join(dirs[2], "datanode.id"), []byte("dn-other\n"), 0o644))
	_, err = openDatanode(t, dirs, vfs.Default, clockwork.NewFakeClock(), AnyFailedVolumes)
	require.ErrorContains(t, err, "two datanodes")
	require.NoError(t, os.WriteFile(filepath.Join(dirs[2], "datanode.id"), []byte("dn-old\n"), 0o644))

	// The first disk is unusable: the identity comes from the others.
	require.NoError(t, os.RemoveAll(dirs[0]))
	require.NoError(t, os.WriteFile(dirs[0], []byte("not a directory"), 0o644))
	d, err = openDatanode(t, dirs, vfs.Default, clockwork.NewFakeClock(), AnyFailedVolumes)
	require.NoError(t, err)
	require.Equal(t, "dn-old", d.ID())
	require.Equal(t, VolumeFailed, d.Store().Stats().Volumes[0].State)
	require.NoError(t, d.Close())

	// With only the first holding it (the layout of before) and unusable,
	// no new identity is made up.
	for _, dir := range dirs[1:] {
		require.NoError(t, os.Remove(filepath.Join(dir, "datanode.id")))
	}
	_, err = openDatanode(t, dirs, vfs.Default, clockwork.NewFakeClock(), AnyFailedVolumes)
	require.ErrorContains(t, err, "the first is unreadable")
}

// TestDatanodeStopsPastTheToleratedFailures: a datanode with two disks
// that tolerates one failed volume carries on after the first fails its
// periodic check, and stops on its own, saying why, when the second
// fails; one that tolerates none does not start without all its disks.
func TestDatanodeStopsPastTheToleratedFailures(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")}
	var mu sync.Mutex
	failing := map[string]bool{}
	fs := errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		mu.Lock()
		defer mu.Unlock()
		for dir := range failing {
			if op.Path == dir || strings.HasPrefix(op.Path, dir+"/") {
				return errorfs.ErrInjected
			}
		}
		return nil
	}))
	fail := func(dir string) {
		mu.Lock()
		failing[dir] = true
		mu.Unlock()
	}
	clock := clockwork.NewFakeClock()
	d, err := openDatanode(t, dirs, fs, clock, 1)
	require.NoError(t, err)
	defer d.Close()

	fail(dirs[1])
	require.Eventually(t, func() bool {
		clock.Advance(time.Minute)
		return d.Store().Stats().FailedVolumes == 1
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, d.Err())
	fail(dirs[0])
	require.Eventually(t, func() bool {
		clock.Advance(time.Minute)
		select {
		case <-d.Done():
			return true
		default:
			return false
		}
	}, 5*time.Second, 10*time.Millisecond)
	require.ErrorIs(t, d.Err(), ErrVolumesFailed)
	require.ErrorContains(t, d.Err(), "2 of 3 failed (tolerated: 1)")
	require.ErrorContains(t, d.Err(), dirs[0]+": check")
	require.NoError(t, d.Close())

	// Restarted with the disks still failing, and none tolerated.
	_, err = openDatanode(t, dirs, fs, clockwork.NewFakeClock(), 0)
	require.ErrorIs(t, err, ErrVolumesFailed)
	require.ErrorContains(t, err, dirs[1]+": open")
}

// TestStoreVolumeDatabaseFails: when a volume's database log fails, a
// commit there is an error (Pebble's fatal commit error does not take the
// process down), the volume's next check fails it with that reason, and
// the other volumes commit on.
func TestStoreVolumeDatabaseFails(t *testing.T) {
	var on atomic.Bool
	fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if on.Load() && strings.HasPrefix(op.Path, "/b/db/") && strings.HasSuffix(op.Path, ".log") &&
			op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
			return errorfs.ErrInjected
		}
		return nil
	}))
	s, err := OpenStore(StoreOptions{Dirs: []string{"/a", "/b"}, Volume: container.Options{FS: fs}, Logger: quietLogger(),
		ContainerSize: 1 << 20, FailedVolumesTolerated: 1})
	require.NoError(t, err)
	defer s.Close()
	for id := uint64(1); id <= 2; id++ {
		require.NoError(t, putBlock(t, s, id, 1, pattern(int64(id), 0, 4096)))
	}
	require.Equal(t, "/b", volumeOf(t, s, 2))

	on.Store(true)
	err = putBlock(t, s, 2, 2, pattern(7, 0, 4096))
	require.ErrorContains(t, err, "database failed")
	require.NoError(t, s.CheckVolumes())
	st := s.Stats()
	require.Equal(t, VolumeFailed, st.Volumes[1].State)
	require.Contains(t, st.Volumes[1].Reason, "database failed")
	require.NoError(t, putBlock(t, s, 1, 2, pattern(8, 0, 4096)))
	requireBlock(t, s, 1, 2, pattern(8, 0, 4096))
	require.ErrorIs(t, putBlock(t, s, 2, 3, pattern(9, 0, 4096)), ErrVolumeFailed, "a write naming a lost container")
}
