package datanode

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/datanode/container"
)

func openMemStore(t *testing.T, fs vfs.FS, dirs ...string) *Store {
	s, err := OpenStore(StoreOptions{Dirs: dirs, Volume: container.Options{FS: fs}, Logger: quietLogger(), ContainerSize: 1 << 20})
	require.NoError(t, err)
	return s
}

func volumeOf(t *testing.T, s *Store, id uint64) string {
	for _, v := range s.Stats().Volumes {
		s.mu.RLock()
		w := s.where[id]
		s.mu.RUnlock()
		if w != nil && w.Dir() == v.Dir {
			return v.Dir
		}
	}
	t.Fatalf("container %d on no volume", id)
	return ""
}

// TestStoreVolumes: containers spread over the volumes by room, are found
// whatever their volume, and are found again after a restart.
func TestStoreVolumes(t *testing.T) {
	fs := vfs.NewMem()
	s := openMemStore(t, fs, "/a", "/b")
	// The in-memory FS reports no disk usage: the open containers' growth
	// (ContainerSize − used) decides, so creations alternate.
	for id := uint64(1); id <= 4; id++ {
		_, err := s.openForWrite(id)
		require.NoError(t, err)
	}
	require.Equal(t, "/a", volumeOf(t, s, 1))
	require.Equal(t, "/b", volumeOf(t, s, 2))
	require.Equal(t, "/a", volumeOf(t, s, 3))
	require.Equal(t, "/b", volumeOf(t, s, 4))

	// Data written counts as used; a closed container reserves nothing.
	c, err := s.Container(2)
	require.NoError(t, err)
	data := pattern(1, 0, 4096)
	require.NoError(t, c.WriteChunk(1, 0, data, checksum.Compute(checksum.CRC32C, 1024, data), container.WriteOptions{}))
	_, err = c.PutBlock(1, 4096, container.PutOptions{})
	require.NoError(t, err)
	require.NoError(t, s.CloseContainer(4))
	st := s.Stats()
	require.Equal(t, 4, st.Containers)
	require.Equal(t, 3, st.OpenContainers)
	require.Equal(t, int64(4096), st.Used)
	require.Equal(t, int64(2<<20), st.Volumes[0].Reserved)
	require.Equal(t, int64(1<<20-4096), st.Volumes[1].Reserved)
	_, err = s.openForWrite(5)
	require.NoError(t, err)
	require.Equal(t, "/b", volumeOf(t, s, 5), "the volume with less set aside")

	// Explicit creation refuses an ID any volume holds.
	_, err = s.CreateContainer(3)
	require.ErrorIs(t, err, container.ErrExists)
	_, err = s.CreateContainer(6)
	require.NoError(t, err)

	infos := s.Containers()
	require.Len(t, infos, 6)
	for i, info := range infos {
		require.Equal(t, uint64(i+1), info.ID)
	}
	require.Equal(t, container.Closed, infos[3].State)

	require.ErrorIs(t, s.DeleteContainer(1, false), container.ErrBadState)
	require.NoError(t, s.DeleteContainer(4, false))
	_, err = s.Container(4)
	require.ErrorIs(t, err, container.ErrNotFound)
	require.ErrorIs(t, s.CloseContainer(4), container.ErrNotFound)

	require.NoError(t, s.Close())
	s = openMemStore(t, fs, "/a", "/b")
	defer s.Close()
	require.Len(t, s.Containers(), 5)
	require.Equal(t, "/b", volumeOf(t, s, 2))
	c, err = s.Container(2)
	require.NoError(t, err)
	blk, err := c.GetBlock(1)
	require.NoError(t, err)
	require.Equal(t, int64(4096), blk.Length)
}

// TestStoreDiskUsage: with usage reported, the volume with most free space
// wins.
func TestStoreDiskUsage(t *testing.T) {
	s, err := OpenStore(StoreOptions{Dirs: []string{t.TempDir(), t.TempDir()}, Logger: quietLogger()})
	require.NoError(t, err)
	defer s.Close()
	st := s.Stats()
	require.Positive(t, st.Capacity)
	require.Positive(t, st.Available)
	require.Equal(t, st.Volumes[0].Capacity+st.Volumes[1].Capacity, st.Capacity)
	_, err = s.openForWrite(1)
	require.NoError(t, err)
	_, err = s.openForWrite(2)
	require.NoError(t, err)
	require.NotEqual(t, volumeOf(t, s, 1), volumeOf(t, s, 2), "same disk: the first volume's reservation sends the second container elsewhere")
}

func TestStoreOptions(t *testing.T) {
	for _, o := range []StoreOptions{
		{},
		{Dirs: []string{""}},
		{Dirs: []string{"/a", "/a"}},
		{Dirs: []string{"/a"}, ContainerSize: -1},
		{Dirs: []string{"/a"}, Volume: container.Options{MaxChunkSize: -1}},
	} {
		o.Volume.FS = vfs.NewMem()
		_, err := OpenStore(o)
		require.Error(t, err, "%+v", o)
	}
}

// TestStoreCreated: Created hears of each container the store creates,
// whether by a write or by CreateContainer, once, and not of containers
// found again on reopening.
func TestStoreCreated(t *testing.T) {
	fs := vfs.NewMem()
	var created []uint64
	o := StoreOptions{Dirs: []string{"/a"}, Volume: container.Options{FS: fs}, Logger: quietLogger(),
		Created: func(id uint64) { created = append(created, id) }}
	s, err := OpenStore(o)
	require.NoError(t, err)
	_, err = s.openForWrite(7)
	require.NoError(t, err)
	_, err = s.openForWrite(7)
	require.NoError(t, err)
	_, err = s.CreateContainer(9)
	require.NoError(t, err)
	_, err = s.CreateContainer(9)
	require.ErrorIs(t, err, container.ErrExists)
	require.Equal(t, []uint64{7, 9}, created)
	require.NoError(t, s.Close())

	created = nil
	s, err = OpenStore(o)
	require.NoError(t, err)
	require.Empty(t, created)
	require.NoError(t, s.Close())
}

// TestStorePlaceReplica: meta's placement of an erasure coded replica
// creates the container if no write did first, stores its replica index,
// and the full report carries it; a second placement with another index is
// refused.
func TestStorePlaceReplica(t *testing.T) {
	fs := vfs.NewMem()
	o := StoreOptions{Dirs: []string{"/a", "/b"}, Volume: container.Options{FS: fs}, Logger: quietLogger()}
	s, err := OpenStore(o)
	require.NoError(t, err)
	require.NoError(t, s.PlaceReplica(5, 2, 3))
	_, err = s.openForWrite(6) // a write first
	require.NoError(t, err)
	require.NoError(t, s.PlaceReplica(6, 9, 6))
	require.NoError(t, s.PlaceReplica(6, 9, 6))
	require.ErrorIs(t, s.PlaceReplica(6, 1, 6), container.ErrInvalid)
	// Index 2 of rs-3-2 is a data member, index 9 of rs-6-3 a parity one.
	c5, err := s.Container(5)
	require.NoError(t, err)
	require.False(t, c5.Parity())
	c6, err := s.Container(6)
	require.NoError(t, err)
	require.True(t, c6.Parity())
	_, err = s.openForWrite(7)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = OpenStore(o)
	require.NoError(t, err)
	defer s.Close()
	got := map[uint64]int32{}
	for _, r := range (storeReports{s: s}).Replicas() {
		got[r.ContainerId] = r.ReplicaIndex
	}
	require.Equal(t, map[uint64]int32{5: 2, 6: 9, 7: 0}, got)
}
