package container

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

func importBlock(data []byte) Block {
	return Block{LocalID: 5, Length: int64(len(data)), BCSID: 3, Chunks: []Chunk{
		{Offset: 0, Length: int64(len(data)), Checksums: checksum.Compute(checksum.CRC32C, 4, data)}}}
}

func TestImport(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVolume(dir, Options{})
	require.NoError(t, err)
	data := []byte("hello, imported world")

	im, err := v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	_, err = v.BeginImport(4, FilePerBlock)
	require.ErrorIs(t, err, ErrExists, "one import per ID")
	_, err = v.Create(4, FilePerBlock)
	require.ErrorIs(t, err, ErrExists, "no creation during an import")
	require.NoError(t, im.WriteAt(5, 0, 7, data[7:]))
	require.NoError(t, im.WriteAt(5, 0, 0, data[:7]))
	info, err := im.Commit([]Block{importBlock(data)}, 3)
	require.NoError(t, err)
	require.Equal(t, Info{ID: 4, State: Closed, Layout: FilePerBlock, BCSID: 3, UsedBytes: int64(len(data)), BlockCount: 1}, info)
	require.NoError(t, v.Close())

	v, err = OpenVolume(dir, Options{})
	require.NoError(t, err)
	defer v.Close()
	c, err := v.Container(4)
	require.NoError(t, err)
	require.Equal(t, info, c.Info())
	r, err := c.ReadChunk(5, 0, int64(len(data)))
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.Equal(t, data, r.Data)
	_, err = v.BeginImport(4, FilePerBlock)
	require.ErrorIs(t, err, ErrExists)
}

func TestImportFailures(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVolume(dir, Options{})
	require.NoError(t, err)
	data := []byte("0123456789")
	tmpEmpty := func() {
		es, err := os.ReadDir(filepath.Join(dir, tmpDir))
		require.NoError(t, err)
		require.Empty(t, es)
	}

	// A corrupt byte.
	im, err := v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	bad := append([]byte(nil), data...)
	bad[3] ^= 1
	require.NoError(t, im.WriteAt(5, 0, 0, bad))
	_, err = im.Commit([]Block{importBlock(data)}, 3)
	require.ErrorIs(t, err, ErrChecksum)
	tmpEmpty()

	// Missing bytes, then an extra file.
	im, err = v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, im.WriteAt(5, 0, 0, data[:4]))
	_, err = im.Commit([]Block{importBlock(data)}, 3)
	require.ErrorIs(t, err, ErrIncomplete)
	im, err = v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, im.WriteAt(5, 0, 0, data))
	require.NoError(t, im.WriteAt(6, 0, 0, data))
	_, err = im.Commit([]Block{importBlock(data)}, 3)
	require.ErrorIs(t, err, ErrInvalid)
	tmpEmpty()

	// Abort.
	im, err = v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, im.WriteAt(5, 0, 0, data))
	require.NoError(t, im.Abort())
	tmpEmpty()
	_, err = v.Container(4)
	require.ErrorIs(t, err, ErrNotFound)

	// A crash mid-import: the volume closes with the import in progress and
	// rows of it already written; reopening removes both.
	im, err = v.BeginImport(8, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, im.WriteAt(5, 0, 0, data))
	require.NoError(t, v.db.Set(counterKey(8), appendCounterRow(nil, counters{bcsID: 1}), nil))
	require.NoError(t, v.Close())
	v, err = OpenVolume(dir, Options{})
	require.NoError(t, err)
	defer v.Close()
	tmpEmpty()
	_, closer, err := v.db.Get(counterKey(8))
	require.Error(t, err)
	if closer != nil {
		closer.Close()
	}
	require.Empty(t, v.List())
}
