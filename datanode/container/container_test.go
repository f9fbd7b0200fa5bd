package container

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

var layouts = []Layout{FilePerBlock, FilePerChunk}

func testOptions(fs vfs.FS) Options {
	return Options{
		FS:              fs,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxChunkSize:    64 << 10,
		MaxBlockSize:    1 << 20,
		PebbleCacheSize: 1 << 20,
	}
}

func openTestVolume(t testing.TB, fs vfs.FS, dir string) *Volume {
	t.Helper()
	v, err := OpenVolume(dir, testOptions(fs))
	require.NoError(t, err)
	return v
}

// diskVolume opens a volume on the real filesystem in a test directory.
func diskVolume(t testing.TB) (*Volume, string) {
	dir := t.TempDir()
	v := openTestVolume(t, vfs.Default, dir)
	t.Cleanup(func() { v.Close() })
	return v, dir
}

// diskContainer opens a volume with opts on the real filesystem in a test
// directory (closed when the test ends) and creates FILE_PER_BLOCK
// container 1 in it.
func diskContainer(t testing.TB, opts Options) (*Volume, *Container, string) {
	t.Helper()
	dir := t.TempDir()
	v, err := OpenVolume(dir, opts)
	require.NoError(t, err)
	t.Cleanup(func() { v.Close() })
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	return v, c, dir
}

func pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

func sums(data []byte) checksum.Data { return checksum.Compute(checksum.CRC32C, 512, data) }

func write(t testing.TB, c *Container, id uint64, off int64, data []byte) {
	t.Helper()
	require.NoError(t, c.WriteChunk(id, off, data, sums(data), WriteOptions{}))
}

func readAll(t testing.TB, c *Container, id uint64) []byte {
	t.Helper()
	b, err := c.GetBlock(id)
	require.NoError(t, err)
	if b.Length == 0 {
		return nil
	}
	r, err := c.ReadChunk(id, 0, b.Length)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	return r.Bytes(0, b.Length)
}

func TestRoundTrip(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, dir := diskVolume(t)
			c, err := v.Create(7, layout)
			require.NoError(t, err)
			data := pattern(1, 10000)
			// Chunks out of order, of uneven sizes.
			cuts := []int{0, 1000, 1500, 4096, 9000, 10000}
			for _, i := range []int{3, 0, 4, 2, 1} {
				write(t, c, 1, int64(cuts[i]), data[cuts[i]:cuts[i+1]])
			}
			bcs, err := c.PutBlock(1, 10000, PutOptions{Sync: true})
			require.NoError(t, err)
			require.Equal(t, uint64(1), bcs)
			require.Equal(t, data, readAll(t, c, 1))

			// Any range: the result covers it and verifies.
			for _, rg := range [][2]int64{{0, 1}, {999, 2}, {1200, 5000}, {9999, 1}, {513, 511}} {
				r, err := c.ReadChunk(1, rg[0], rg[1])
				require.NoError(t, err)
				require.NoError(t, r.Verify())
				require.LessOrEqual(t, r.Offset, rg[0])
				require.Equal(t, data[rg[0]:rg[0]+rg[1]], r.Bytes(rg[0], rg[1]))
			}
			// Extents name real files at the right offsets.
			ext, err := c.Extents(1, 1200, 5000)
			require.NoError(t, err)
			for _, e := range ext {
				f, err := os.Open(e.Path)
				require.NoError(t, err)
				p := make([]byte, e.Length)
				_, err = f.ReadAt(p, e.FileOffset)
				f.Close()
				require.NoError(t, err)
				require.Equal(t, data[e.BlockOffset:e.BlockOffset+e.Length], p)
				require.NoError(t, checksum.Verify(e.Checksums, 0, p))
			}

			// Several blocks, paged listing, counters.
			for id := uint64(2); id <= 6; id++ {
				write(t, c, id, 0, data[:int(id)*100])
				_, err := c.PutBlock(id, int64(id)*100, PutOptions{Final: true})
				require.NoError(t, err)
			}
			var ids []uint64
			for after := uint64(0); ; {
				page, err := c.ListBlocks(after, 2)
				require.NoError(t, err)
				for _, b := range page {
					ids = append(ids, b.LocalID)
					after = b.LocalID
				}
				if len(page) < 2 {
					break
				}
			}
			require.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, ids)
			info := c.Info()
			require.Equal(t, uint64(6), info.BCSID)
			require.Equal(t, int64(6), info.BlockCount)
			require.Equal(t, int64(10000+200+300+400+500+600), info.UsedBytes)

			require.NoError(t, c.DeleteBlock(4))
			_, err = c.GetBlock(4)
			require.ErrorIs(t, err, ErrBlockNotFound)
			require.ErrorIs(t, c.DeleteBlock(4), ErrBlockNotFound)
			rep, err := c.Scan(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Bad)
			require.Empty(t, rep.Orphans)
			require.Equal(t, int64(5), rep.Blocks)

			// Everything survives a reopen; closing makes it immutable.
			require.NoError(t, c.Close())
			require.NoError(t, v.Close())
			v = openTestVolume(t, vfs.Default, dir)
			defer v.Close()
			c, err = v.Container(7)
			require.NoError(t, err)
			want := info
			want.BlockCount, want.UsedBytes, want.State = 5, info.UsedBytes-400, Closed
			require.Equal(t, want, c.Info())
			require.Equal(t, data, readAll(t, c, 1))
			require.ErrorIs(t, c.WriteChunk(9, 0, data[:10], sums(data[:10]), WriteOptions{}), ErrNotOpen)

			require.NoError(t, v.Delete(7, false))
			_, err = v.Container(7)
			require.ErrorIs(t, err, ErrNotFound)
			left, err := os.ReadDir(filepath.Join(dir, containersDir))
			require.NoError(t, err)
			require.Empty(t, left)
		})
	}
}

func TestBlockGrowsAcrossPutBlocks(t *testing.T) {
	v, _ := diskVolume(t)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	data := pattern(2, 3000)
	write(t, c, 1, 0, data[:1000])
	_, err = c.PutBlock(1, 1000, PutOptions{Final: true})
	require.NoError(t, err)
	// After Final the block reloads from the database and keeps growing.
	write(t, c, 1, 2000, data[2000:])
	write(t, c, 1, 1000, data[1000:2000])
	_, err = c.PutBlock(1, 3000, PutOptions{})
	require.NoError(t, err)
	require.Equal(t, data, readAll(t, c, 1))
	_, err = c.PutBlock(1, 2000, PutOptions{})
	require.ErrorIs(t, err, ErrInvalid, "a committed length does not shrink")
	// A synced PutBlock shorter than the committed length (an appender's
	// hsync of a block the file was truncated inside) fsyncs the block as
	// it is and changes nothing.
	_, err = c.PutBlock(1, 2000, PutOptions{Final: true, Sync: true})
	require.NoError(t, err)
	require.Equal(t, data, readAll(t, c, 1))
	require.Equal(t, int64(3000), c.Info().UsedBytes)
	require.Equal(t, int64(1), c.Info().BlockCount)
}

// Each bad input gets its own error, and the container keeps working.
func TestBadInputs(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, _ := diskVolume(t)
			c, err := v.Create(3, layout)
			require.NoError(t, err)
			closed, err := v.Create(4, layout)
			require.NoError(t, err)
			require.NoError(t, closed.Close())

			data := pattern(3, 4096)
			write(t, c, 1, 0, data)
			_, err = c.PutBlock(1, 4096, PutOptions{})
			require.NoError(t, err)
			other := pattern(4, 4096)
			corrupted := sums(data)
			corrupted.Sums[5] ^= 1
			big := make([]byte, 64<<10+1)

			cases := []struct {
				name string
				err  error
				op   func() error
			}{
				{"unknown container", ErrNotFound, func() error { _, err := v.Container(99); return err }},
				{"unknown block", ErrBlockNotFound, func() error { _, err := c.GetBlock(42); return err }},
				{"read unknown block", ErrBlockNotFound, func() error { _, err := c.ReadChunk(42, 0, 1); return err }},
				{"write to closed container", ErrNotOpen, func() error { return closed.WriteChunk(1, 0, data, sums(data), WriteOptions{}) }},
				{"put to closed container", ErrNotOpen, func() error { _, err := closed.PutBlock(1, 0, PutOptions{}); return err }},
				{"overwrite committed with different bytes", ErrOverwrite, func() error { return c.WriteChunk(1, 0, other, sums(other), WriteOptions{}) }},
				{"overlap committed", ErrOverwrite, func() error { return c.WriteChunk(1, 100, data[:10], sums(data[:10]), WriteOptions{}) }},
				{"offset past max block size", ErrBlockTooLarge, func() error { return c.WriteChunk(2, 1<<20-10, data[:11], sums(data[:11]), WriteOptions{}) }},
				{"chunk larger than max", ErrChunkTooLarge, func() error { return c.WriteChunk(2, 0, big, sums(big), WriteOptions{}) }},
				{"checksum mismatch", ErrChecksum, func() error { return c.WriteChunk(2, 0, data, corrupted, WriteOptions{}) }},
				{"too few checksums", ErrInvalid, func() error { return c.WriteChunk(2, 0, data, sums(data[:100]), WriteOptions{}) }},
				{"empty chunk", ErrInvalid, func() error { return c.WriteChunk(2, 0, nil, checksum.Data{}, WriteOptions{}) }},
				{"negative offset", ErrInvalid, func() error { return c.WriteChunk(2, -1, data, sums(data), WriteOptions{}) }},
				{"container ID 0", ErrInvalidID, func() error { _, err := v.Create(0, layout); return err }},
				{"escaping name", ErrInvalidID, func() error { _, err := ParseID("../../etc"); return err }},
				{"container exists", ErrExists, func() error { _, err := v.Create(3, layout); return err }},
				{"hole below length", ErrIncomplete, func() error {
					write(t, c, 5, 1000, data[:100])
					_, err := c.PutBlock(5, 1100, PutOptions{})
					return err
				}},
				{"range outside block", ErrInvalid, func() error { _, err := c.ReadChunk(1, 4000, 100); return err }},
				{"delete open container", ErrBadState, func() error { return v.Delete(3, false) }},
				{"reopen closed container", ErrBadState, func() error { return closed.MarkClosing() }},
			}
			seen := map[error]bool{}
			for _, tc := range cases {
				err := tc.op()
				require.ErrorIs(t, err, tc.err, tc.name)
				require.Contains(t, err.Error(), "container: ", tc.name)
				seen[tc.err] = true
				// The container still works after each refusal.
				require.Equal(t, data, readAll(t, c, 1), tc.name)
			}
			require.Len(t, seen, 12)
			// Identical retry is accepted; the block is unchanged.
			write(t, c, 1, 0, data)
			// Writes without verification skip the checksum check.
			require.NoError(t, c.WriteChunk(2, 0, data, corrupted, WriteOptions{NoVerify: true}))
			write(t, c, 3, 0, data)
			_, err = c.PutBlock(3, 4096, PutOptions{Sync: true})
			require.NoError(t, err)
			require.Equal(t, data, readAll(t, c, 3))
			rep, err := c.Scan(context.Background())
			require.NoError(t, err)
			require.Empty(t, rep.Bad)
			require.NotEmpty(t, rep.Orphans, "uncommitted writes of blocks 2 and 5")
		})
	}
}

func TestParseID(t *testing.T) {
	for _, bad := range []string{"", "0", "007", "-1", "+1", "..", ".", "1/2", "../1", "1 ", "18446744073709551616", ".deleted-1"} {
		_, err := ParseID(bad)
		require.ErrorIs(t, err, ErrInvalidID, bad)
	}
	id, err := ParseID("18446744073709551615")
	require.NoError(t, err)
	require.Equal(t, ^uint64(0), id)
}

// A directory that is not a container ID is never loaded, and a corrupt
// descriptor is skipped, not fatal.
func TestOpenSkipsStrangeDirectories(t *testing.T) {
	dir := t.TempDir()
	v := openTestVolume(t, vfs.Default, dir)
	c, err := v.Create(12, FilePerBlock)
	require.NoError(t, err)
	write(t, c, 1, 0, []byte("hello"))
	_, err = c.PutBlock(1, 5, PutOptions{Sync: true})
	require.NoError(t, err)
	_, err = v.Create(13, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, v.Close())
	require.NoError(t, os.MkdirAll(filepath.Join(dir, containersDir, "..x"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, containersDir, "0012"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, containersDir, "13", descFile), []byte("strato-container v1\nid 14\n"), 0o644))
	v = openTestVolume(t, vfs.Default, dir)
	defer v.Close()
	infos := v.List()
	require.Len(t, infos, 1)
	require.Equal(t, uint64(12), infos[0].ID)
}

// TestDiskFull injects ENOSPC into block file writes: the write fails with
// ErrDiskFull, nothing is recorded, and once space is back the same block
// and other blocks work.
func TestDiskFull(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			full := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
				if (op.Kind == errorfs.OpFileWriteAt || op.Kind == errorfs.OpCreate) && filepath.Base(filepath.Dir(op.Path)) == chunksDir {
					return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
				}
				return nil
			})}
			fs := errorfs.Wrap(vfs.NewMem(), full)
			v := openTestVolume(t, fs, "/vol")
			defer v.Close()
			c, err := v.Create(1, layout)
			require.NoError(t, err)
			data := pattern(5, 2048)
			write(t, c, 1, 0, data[:1024])
			full.On()
			err = c.WriteChunk(1, 1024, data[1024:], sums(data[1024:]), WriteOptions{})
			require.ErrorIs(t, err, ErrDiskFull)
			require.ErrorIs(t, err, syscall.ENOSPC)
			err = c.WriteChunk(2, 0, data, sums(data), WriteOptions{})
			require.ErrorIs(t, err, ErrDiskFull)
			// The failed chunk was not recorded: committing past it is refused.
			_, err = c.PutBlock(1, 2048, PutOptions{})
			require.ErrorIs(t, err, ErrIncomplete)
			_, err = c.PutBlock(1, 1024, PutOptions{})
			require.NoError(t, err, "metadata still commits while block files cannot grow")
			full.Off()
			write(t, c, 1, 1024, data[1024:])
			write(t, c, 2, 0, data)
			_, err = c.PutBlock(1, 2048, PutOptions{Sync: true})
			require.NoError(t, err)
			_, err = c.PutBlock(2, 2048, PutOptions{Sync: true})
			require.NoError(t, err)
			require.Equal(t, data, readAll(t, c, 1))
			require.Equal(t, data, readAll(t, c, 2))
		})
	}
}

// A damaged byte on disk is found by Scan and by a reader's Verify.
func TestScanFindsCorruption(t *testing.T) {
	v, _ := diskVolume(t)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	data := pattern(6, 5000)
	for id := uint64(1); id <= 3; id++ {
		write(t, c, id, 0, data)
		_, err = c.PutBlock(id, 5000, PutOptions{Final: true})
		require.NoError(t, err)
	}
	require.NoError(t, c.Close())
	path := c.blockPath(2)
	p, err := os.ReadFile(path)
	require.NoError(t, err)
	p[3333] ^= 0x10
	require.NoError(t, os.WriteFile(path, p, 0o644))
	require.NoError(t, os.Truncate(c.blockPath(3), 100))

	rep, err := c.Scan(context.Background())
	require.NoError(t, err)
	require.Len(t, rep.Bad, 2)
	require.Equal(t, uint64(2), rep.Bad[0].LocalID)
	require.ErrorIs(t, rep.Bad[0].Err, checksum.ErrMismatch)
	require.Equal(t, uint64(3), rep.Bad[1].LocalID)
	require.ErrorIs(t, rep.Bad[1].Err, ErrCorrupt)
	r, err := c.ReadChunk(2, 3300, 10)
	require.NoError(t, err)
	require.ErrorIs(t, r.Verify(), ErrChecksum)
	_, err = c.ReadChunk(3, 3000, 10)
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, c.MarkUnhealthy())
	require.Equal(t, Unhealthy, c.State())
}

func TestConcurrentWriters(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, _ := diskVolume(t)
			c, err := v.Create(1, layout)
			require.NoError(t, err)
			const writers, blocksPer, chunks, size = 8, 4, 8, 700
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range blocksPer {
						id := uint64(w*blocksPer + k + 1)
						data := pattern(id, chunks*size)
						for _, i := range rand.Perm(chunks) {
							p := data[i*size : (i+1)*size]
							if err := c.WriteChunk(id, int64(i*size), p, sums(p), WriteOptions{}); err != nil {
								errs <- err
								return
							}
						}
						if _, err := c.PutBlock(id, chunks*size, PutOptions{Sync: k%2 == 0, Final: true}); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			// Chunks of one block from many goroutines at once.
			shared := pattern(1000, 32*size)
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < 32; i += 4 {
						p := shared[i*size : (i+1)*size]
						if err := c.WriteChunk(1000, int64(i*size), p, sums(p), WriteOptions{}); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			_, err = c.PutBlock(1000, 32*size, PutOptions{})
			require.NoError(t, err)
			require.NoError(t, c.Sync())
			for id := uint64(1); id <= writers*blocksPer; id++ {
				require.Equal(t, pattern(id, chunks*size), readAll(t, c, id))
			}
			require.Equal(t, shared, readAll(t, c, 1000))
			info := c.Info()
			require.Equal(t, uint64(writers*blocksPer+1), info.BCSID)
			require.Equal(t, int64(writers*blocksPer+1), info.BlockCount)
		})
	}
}

// The write path of FILE_PER_BLOCK allocates nothing per chunk.
func TestWriteChunkDoesNotAllocate(t *testing.T) {
	v, _ := diskVolume(t)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	data := pattern(9, 1024)
	s := sums(data)
	var off int64
	write := func() {
		if err := c.WriteChunk(1, off, data, s, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		off += 1024
	}
	for range 600 { // let the chunk list grow past reallocations
		write()
	}
	off = 600 * 1024
	allocs := testing.AllocsPerRun(200, write)
	require.Less(t, allocs, 0.1)
}

func TestDescriptorRoundTrip(t *testing.T) {
	d := descriptor{id: 99, layout: FilePerChunk, state: Closing}
	got, err := decodeDescriptor(d.encode())
	require.NoError(t, err)
	require.Equal(t, d, got)
	bad := d.encode()
	bad[bytes.IndexByte(bad, '9')] = '8'
	_, err = decodeDescriptor(bad)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestStateTransitions(t *testing.T) {
	all := []State{Open, Closing, Closed, Unhealthy}
	allowed := map[[2]State]bool{{Open, Closing}: true, {Open, Closed}: true, {Closing, Closed}: true}
	for _, from := range all {
		for _, to := range all {
			want := from == to || to == Unhealthy || allowed[[2]State{from, to}]
			require.Equal(t, want, from.CanTransition(to), fmt.Sprintf("%v -> %v", from, to))
		}
	}
}

func TestOptions(t *testing.T) {
	var o Options
	o.EnsureDefaults()
	require.NoError(t, o.Validate())
	require.Equal(t, int64(DefaultMaxBlockSize), o.MaxBlockSize)
	require.Equal(t, FilePerBlock, o.DefaultLayout)
	o.MaxChunkSize = o.MaxBlockSize + 1
	require.ErrorIs(t, o.Validate(), ErrInvalid)
	l, err := ParseLayout("file_per_chunk")
	require.NoError(t, err)
	require.Equal(t, FilePerChunk, l)
	_, err = ParseLayout("RAW")
	require.ErrorIs(t, err, ErrInvalid)
}

// A deleted container's handle and a closed volume's containers refuse
// everything with a clear error; a directory left by a Create that never
// returned does not block the ID.
func TestDetachedContainers(t *testing.T) {
	dir := t.TempDir()
	v := openTestVolume(t, vfs.Default, dir)
	c, err := v.Create(1, FilePerBlock)
	require.NoError(t, err)
	d, err := v.Create(2, FilePerBlock)
	require.NoError(t, err)
	require.NoError(t, v.Delete(2, true))
	require.ErrorIs(t, d.WriteChunk(1, 0, []byte("x"), sums([]byte("x")), WriteOptions{}), ErrNotFound)
	require.ErrorIs(t, d.Close(), ErrNotFound)
	require.NoError(t, v.Close())
	require.ErrorIs(t, c.WriteChunk(1, 0, []byte("x"), sums([]byte("x")), WriteOptions{}), ErrClosed)
	_, err = c.PutBlock(1, 0, PutOptions{})
	require.ErrorIs(t, err, ErrClosed)
	_, err = v.Create(3, FilePerBlock)
	require.ErrorIs(t, err, ErrClosed)

	require.NoError(t, os.MkdirAll(filepath.Join(dir, containersDir, "3", chunksDir), 0o755))
	v = openTestVolume(t, vfs.Default, dir)
	defer v.Close()
	_, err = v.Container(3)
	require.ErrorIs(t, err, ErrNotFound)
	_, err = v.Create(3, FilePerBlock)
	require.NoError(t, err)
}

// TestRowBound: a block's first write skips the lookup of its row only when
// its local ID is above every committed one. Committed blocks, released from
// memory or found again after a reopen, still refuse different bytes, and a
// block below the bound that was never committed is written normally.
func TestRowBound(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.String(), func(t *testing.T) {
			v, dir := diskVolume(t)
			c, err := v.Create(7, layout)
			require.NoError(t, err)
			data, other := pattern(1, 2048), pattern(2, 2048)
			for _, id := range []uint64{5, 9} {
				write(t, c, id, 0, data)
				_, err = c.PutBlock(id, int64(len(data)), PutOptions{Final: true})
				require.NoError(t, err)
			}
			bound, err := c.blockRowBound()
			require.NoError(t, err)
			require.Equal(t, uint64(9), bound)
			check := func(c *Container) {
				t.Helper()
				for _, id := range []uint64{5, 9} {
					require.ErrorIs(t, c.WriteChunk(id, 0, other, sums(other), WriteOptions{}), ErrOverwrite, "block %d", id)
					require.NoError(t, c.WriteChunk(id, 0, data, sums(data), WriteOptions{}), "a retry of block %d", id)
					require.Equal(t, data, readAll(t, c, id))
				}
			}
			check(c)
			write(t, c, 7, 0, other) // below the bound, never committed
			_, err = c.PutBlock(7, int64(len(other)), PutOptions{Final: true})
			require.NoError(t, err)
			write(t, c, 12, 0, other) // above it
			_, err = c.PutBlock(12, int64(len(other)), PutOptions{Final: true})
			require.NoError(t, err)

			require.NoError(t, v.Close())
			v = openTestVolume(t, vfs.Default, dir)
			t.Cleanup(func() { v.Close() })
			c, err = v.Container(7)
			require.NoError(t, err)
			bound, err = c.blockRowBound()
			require.NoError(t, err)
			require.Equal(t, uint64(12), bound, "read from the database")
			check(c)
			require.ErrorIs(t, c.WriteChunk(12, 0, data, sums(data), WriteOptions{}), ErrOverwrite)
			require.Equal(t, other, readAll(t, c, 7))
		})
	}
}
