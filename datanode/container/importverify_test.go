package container

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// randomBlock returns a block of random chunks (random lengths, window
// sizes and checksum types) over data.
func randomBlock(r *rand.Rand, localID uint64, data []byte) Block {
	b := Block{LocalID: localID, Length: int64(len(data)), BCSID: 1}
	for off := 0; off < len(data); {
		n := min(len(data)-off, 1+r.IntN(3000))
		typ := []checksum.Type{checksum.CRC32C, checksum.CRC32, checksum.SHA256, checksum.NONE}[r.IntN(4)]
		bpc := uint32(1 + r.IntN(700))
		b.Chunks = append(b.Chunks, Chunk{Offset: int64(off), Length: int64(n), Checksums: checksum.Compute(typ, bpc, data[off:off+n])})
		off += n
	}
	return b
}

// TestStreamFileAgainstCommit feeds random frame splits of random blocks,
// in order, and checks the streaming verdict against verification of the
// whole (the oracle): good data is verified on arrival, a flipped byte in
// a checksummed window is caught, out-of-order frames leave the file to
// Commit.
func TestStreamFileAgainstCommit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		data := make([]byte, 1+r.IntN(20000))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		b := randomBlock(r, 5, data)
		im := &Import{layout: FilePerBlock, v: &Volume{fs: vfs.Default}, chunks: "c"}
		im.Expect([]Block{b})
		require.Len(t, im.streams, 1)
		var sf *streamFile
		for _, s := range im.streams {
			sf = s
		}
		got := append([]byte(nil), data...)
		flip := -1
		if iter%3 == 1 {
			flip = r.IntN(len(got))
			got[flip] ^= 0x40
		}
		var err error
		shuffled := iter%5 == 4
		frames := splitFrames(r, len(got))
		if shuffled && len(frames) > 1 {
			frames[0], frames[1] = frames[1], frames[0]
		}
		for _, f := range frames {
			if err = sf.feed(int64(f[0]), got[f[0]:f[1]]); err != nil {
				break
			}
		}
		oracle := verifyWhole(b, got)
		switch {
		case shuffled && len(frames) > 1:
			require.NoError(t, err)
			require.False(t, sf.done(), "out of order: left to Commit")
		case oracle != nil:
			require.ErrorIs(t, err, checksum.ErrMismatch, "iter %d: flipped byte %d", iter, flip)
		default:
			require.NoError(t, err, "iter %d", iter)
			require.True(t, sf.done(), "iter %d", iter)
			require.LessOrEqual(t, cap(sf.carry), 2*700+64, "carry stays within about a window")
		}
	}
}

func splitFrames(r *rand.Rand, n int) [][2]int {
	var fs [][2]int
	for at := 0; at < n; {
		k := min(n-at, 1+r.IntN(5000))
		fs = append(fs, [2]int{at, at + k})
		at += k
	}
	return fs
}

func verifyWhole(b Block, data []byte) error {
	for _, ch := range b.Chunks {
		if err := checksum.Verify(ch.Checksums, 0, data[ch.Offset:ch.Offset+ch.Length]); err != nil {
			return err
		}
	}
	return nil
}

// countingFS counts reads of files opened for writing (what Commit would
// read back).
type countingFS struct {
	vfs.FS
	reads *int
}

func (fs countingFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, cat, opts...)
	if err != nil {
		return nil, err
	}
	return countingFile{File: f, reads: fs.reads}, nil
}

type countingFile struct {
	vfs.File
	reads *int
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	*f.reads++
	return f.File.ReadAt(p, off)
}

func TestImportVerifiesOnArrival(t *testing.T) {
	reads := 0
	dir := t.TempDir()
	v, err := OpenVolume(dir, Options{FS: countingFS{FS: vfs.Default, reads: &reads}})
	require.NoError(t, err)
	defer v.Close()
	r := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 50000)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	blocks := []Block{randomBlock(r, 5, data[:30000]), randomBlock(r, 6, data[30000:])}

	// In order: verified on arrival, nothing read back.
	im, err := v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	im.Expect(blocks)
	for _, f := range splitFrames(r, 30000) {
		require.NoError(t, im.WriteAt(5, 0, int64(f[0]), data[f[0]:f[1]]))
	}
	require.NoError(t, im.WriteAt(6, 0, 0, data[30000:]))
	info, err := im.Commit(blocks, 1)
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), info.UsedBytes)
	require.Zero(t, reads, "Commit read back files verified on arrival")

	// A bad byte arriving in order fails its write at once; nothing is kept.
	im, err = v.BeginImport(7, FilePerBlock)
	require.NoError(t, err)
	im.Expect(blocks)
	bad := append([]byte(nil), data[:30000]...)
	bad[12345] ^= 1
	err = im.WriteAt(5, 0, 0, bad)
	if blocks[0].Chunks[chunkAt(blocks[0], 12345)].Checksums.Type == checksum.NONE {
		require.NoError(t, err)
	} else {
		require.ErrorIs(t, err, ErrChecksum)
	}
	require.NoError(t, im.Abort())

	// Out of order and corrupt: Commit reads the file back and refuses it.
	im, err = v.BeginImport(8, FilePerBlock)
	require.NoError(t, err)
	blocks8 := []Block{importBlock(data[:100])}
	im.Expect(blocks8)
	bad = append([]byte(nil), data[:100]...)
	bad[3] ^= 1
	require.NoError(t, im.WriteAt(5, 0, 50, bad[50:]))
	require.NoError(t, im.WriteAt(5, 0, 0, bad[:50]))
	_, err = im.Commit(blocks8, 3)
	require.ErrorIs(t, err, ErrChecksum)
	require.NotZero(t, reads)

	// Commit with other blocks than expected verifies from the files.
	reads = 0
	im, err = v.BeginImport(9, FilePerBlock)
	require.NoError(t, err)
	im.Expect(blocks8)
	require.NoError(t, im.WriteAt(5, 0, 0, data[:100]))
	other := []Block{importBlock(data[:100])}
	other[0].Chunks[0].Checksums = checksum.Compute(checksum.CRC32C, 4, bad[:100])
	_, err = im.Commit(other, 3)
	require.ErrorIs(t, err, ErrChecksum)
	require.NotZero(t, reads)
}

func chunkAt(b Block, off int64) int {
	for i, ch := range b.Chunks {
		if off >= ch.Offset && off < ch.Offset+ch.Length {
			return i
		}
	}
	return -1
}

// TestImportDirect: aligned pieces of at least DirectIOMinSize go with
// O_DIRECT, the tail buffered; the container reads back whole after a
// reopen.
func TestImportDirect(t *testing.T) {
	dir := t.TempDir()
	v, err := OpenVolume(dir, Options{})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, 3<<20+100)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	b := Block{LocalID: 5, Length: int64(len(data)), BCSID: 2}
	for off := 0; off < len(data); off += 1 << 20 {
		n := min(1<<20, len(data)-off)
		b.Chunks = append(b.Chunks, Chunk{Offset: int64(off), Length: int64(n), Checksums: checksum.Compute(checksum.CRC32C, 16<<10, data[off:off+n])})
	}
	im, err := v.BeginImport(4, FilePerBlock)
	require.NoError(t, err)
	im.Expect([]Block{b})
	frame := make([]byte, 2<<20) // a receive buffer: page-aligned
	copy(frame, data)
	require.NoError(t, im.WriteAt(5, 0, 0, frame))
	if directIOSupported {
		require.Len(t, im.direct, 1, "an aligned 2 MiB piece goes with O_DIRECT")
	}
	rest := make([]byte, len(data)-len(frame))
	copy(rest, data[len(frame):])
	require.NoError(t, im.WriteAt(5, 0, int64(len(frame)), rest))
	_, err = im.Commit([]Block{b}, 2)
	require.NoError(t, err)
	require.NoError(t, v.Close())

	v, err = OpenVolume(dir, Options{})
	require.NoError(t, err)
	defer v.Close()
	c, err := v.Container(4)
	require.NoError(t, err)
	rc, err := c.ReadChunk(5, 0, int64(len(data)))
	require.NoError(t, err)
	require.NoError(t, rc.Verify())
	require.Equal(t, data, rc.Data)
}
