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

// TestImportWriteChunk: chunks written with WriteChunk (their checksums
// computed from the bytes written) are not read back by Commit, in both
// layouts; a block given to Commit with other checksums than those is read
// back and verified as any other.
func TestImportWriteChunk(t *testing.T) {
	for _, layout := range []Layout{FilePerBlock, FilePerChunk} {
		v, err := OpenVolume(t.TempDir(), Options{})
		require.NoError(t, err)
		a, b := []byte("rebuilt bytes, first chunk "), []byte("and the second")
		ch := func(off int, p []byte) Chunk {
			return Chunk{Offset: int64(off), Length: int64(len(p)), Checksums: checksum.Compute(checksum.CRC32C, 4, p)}
		}
		blk := Block{LocalID: 5, Length: int64(len(a) + len(b)), BCSID: 3, Chunks: []Chunk{ch(0, a), ch(len(a), b)}}

		im, err := v.BeginImport(4, layout)
		require.NoError(t, err)
		require.NoError(t, im.WriteChunk(5, blk.Chunks[0], a))
		require.NoError(t, im.WriteChunk(5, blk.Chunks[1], b))
		require.ErrorIs(t, im.WriteChunk(5, Chunk{Offset: 100, Length: 3}, b), ErrInvalid, "length differs from the bytes")
		// Damage the second chunk's file behind the import's back: Commit
		// trusts WriteChunk's checksums and does not read it.
		path, off := im.blockFile(5, int64(len(a)))
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteAt([]byte("X"), off)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		_, err = im.Commit([]Block{blk}, 3)
		require.NoError(t, err, layout)

		// Other checksums at Commit than WriteChunk computed: read back.
		im, err = v.BeginImport(6, layout)
		require.NoError(t, err)
		require.NoError(t, im.WriteChunk(5, blk.Chunks[0], a))
		require.NoError(t, im.WriteChunk(5, blk.Chunks[1], b))
		other := blk
		other.Chunks = []Chunk{blk.Chunks[0], ch(len(a), []byte("and the secon!"))}
		_, err = im.Commit([]Block{other}, 3)
		require.ErrorIs(t, err, ErrChecksum, layout)
		require.NoError(t, v.Close())
	}
}
