package container

import (
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestReplicaIndex: an erasure coded replica's index is stored with its
// container, survives a restart and the container's close, is reported in
// Info, and never changes once set; replicated containers keep 0 and the
// descriptor they always had.
func TestReplicaIndex(t *testing.T) {
	fs := vfs.NewMem()
	v := openTestVolume(t, fs, "/vol")
	c, err := v.Create(7, FilePerBlock)
	require.NoError(t, err)
	plain, err := v.Create(8, FilePerBlock)
	require.NoError(t, err)
	require.Zero(t, c.Info().ReplicaIndex)

	require.ErrorIs(t, c.SetReplicaIndex(0), ErrInvalid)
	require.ErrorIs(t, c.SetReplicaIndex(MaxReplicaIndex+1), ErrInvalid)
	require.NoError(t, c.SetReplicaIndex(4))
	require.NoError(t, c.SetReplicaIndex(4), "the same index again")
	err = c.SetReplicaIndex(2)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "holds replica index 4, not 2")
	require.Equal(t, 4, c.Info().ReplicaIndex)
	write(t, c, 1, 0, pattern(1, 1000))
	_, err = c.PutBlock(1, 1000, PutOptions{Final: true})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Equal(t, 4, c.Info().ReplicaIndex, "kept through the close")
	require.NoError(t, plain.Close())

	closed, err := v.Create(9, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, closed.SetReplicaIndex(1), ErrBadState)
	require.NoError(t, v.Close())

	v = openTestVolume(t, fs, "/vol")
	defer v.Close()
	got := map[uint64]int{}
	for _, in := range v.List() {
		got[in.ID] = in.ReplicaIndex
	}
	require.Equal(t, map[uint64]int{7: 4, 8: 0, 9: 0}, got)
	c, err = v.Container(7)
	require.NoError(t, err)
	require.Equal(t, pattern(1, 1000), readAll(t, c, 1))
}

// TestDescriptorKeepsItsFormat: a replicated container's descriptor has no
// index line (descriptors written before indexes existed read as index 0);
// an erasure coded one's round-trips; a bad index line is corruption.
func TestDescriptorKeepsItsFormat(t *testing.T) {
	old := "strato-container v1\nid 5\nlayout FILE_PER_BLOCK\nstate CLOSED\n"
	d := descriptor{id: 5, layout: FilePerBlock, state: Closed}
	require.Equal(t, old, string(d.encode()[:len(old)]))
	require.NotContains(t, string(d.encode()), "index")
	got, err := decodeDescriptor(d.encode())
	require.NoError(t, err)
	require.Equal(t, d, got)

	d.index = 14
	require.Contains(t, string(d.encode()), "\nindex 14\n")
	got, err = decodeDescriptor(d.encode())
	require.NoError(t, err)
	require.Equal(t, d, got)

	for _, bad := range []int{0, -1, MaxReplicaIndex + 1} {
		p := fmt.Appendf(nil, "%sindex %d\n", old, bad)
		p = fmt.Appendf(p, "crc %08x\n", crc32.Checksum(p, castagnoli))
		_, err := decodeDescriptor(p)
		require.ErrorIs(t, err, ErrCorrupt, "index %d", bad)
	}
}

// TestImportKeepsReplicaIndex: a container imported as a member of an
// erasure coded container (rebuilt or copied) holds the index it was given.
func TestImportKeepsReplicaIndex(t *testing.T) {
	v, _ := diskVolume(t)
	data := []byte("0123456789")
	im, err := v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	require.ErrorIs(t, im.SetReplicaIndex(-1), ErrInvalid)
	require.NoError(t, im.SetReplicaIndex(3))
	require.NoError(t, im.WriteAt(5, 0, 0, data))
	info, err := im.Commit([]Block{importBlock(data)}, 3)
	require.NoError(t, err)
	require.Equal(t, 3, info.ReplicaIndex)
	c, err := v.Container(4)
	require.NoError(t, err)
	require.Equal(t, 3, c.ReplicaIndex())
}
