package wire

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/checksum"
)

// TestReadLocalPathsCodec: READ_LOCAL_PATHS goes through a frame and back,
// a response with no files, too many, a relative path or a hole is refused,
// and version 4 does not know the type.
func TestReadLocalPathsCodec(t *testing.T) {
	block := BlockID{ContainerID: 7, LocalID: 42}
	sums := checksum.Compute(checksum.CRC32C, 8, []byte("0123456789abcdef"))
	resp := &ReadLocalPathsResponse{
		Extents: []LocalExtent{
			{Chunk: Chunk{Offset: 0, Length: 16, Checksums: sums}, File: 0},
			{Chunk: Chunk{Offset: 16, Length: 16, Checksums: sums}, File: 1, FileOffset: 4096},
		},
		Files: []LocalFile{{Dev: 2049, Ino: 1, Path: "/d/1"}, {Dev: 2049, Ino: 2, Path: "/d/é"}},
	}
	for _, m := range []Message{&ReadLocalPathsRequest{Block: block, Offset: 3, Length: 6}, resp} {
		f, err := DecodeFrame(AppendFrame(nil, 9, m, nil))
		require.NoError(t, err)
		require.Equal(t, VersionReadLocalPaths, f.Header.Version)
		require.Equal(t, m, f.Msg)
	}

	bad := func(mod func(r *ReadLocalPathsResponse)) error {
		r := *resp
		r.Extents = append([]LocalExtent(nil), resp.Extents...)
		r.Files = append([]LocalFile(nil), resp.Files...)
		mod(&r)
		_, err := DecodeFrame(AppendFrame(nil, 9, &r, nil))
		return err
	}
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) { r.Files = nil }), "with 0 files")
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) {
		r.Files = make([]LocalFile, MaxLocalFiles+1)
		for i := range r.Files {
			r.Files[i].Path = "/x"
		}
	}), "with 65 files")
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) { r.Files[1].Path = "d/1" }), "not absolute")
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) { r.Files[1].Path = "" }), "not absolute")
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) { r.Extents[1].File = 2 }), "READ_LOCAL_PATHS response: extent in file 2 of 2")
	require.ErrorContains(t, bad(func(r *ReadLocalPathsResponse) { r.Extents[1].Chunk.Offset = 17 }), "extent at 17, want 16")
	_, err := DecodeFrame(AppendFrame(nil, 9, &ReadLocalPathsRequest{Block: block}, nil))
	require.ErrorContains(t, err, "READ_LOCAL_PATHS")
	require.ErrorIs(t, err, CodeInvalidArgument)
	frame := AppendFrame(nil, 9, &ReadLocalPathsRequest{Block: block, Length: 1}, nil)
	frame[4] = VersionReadLocal
	_, err = DecodeFrame(frame)
	require.ErrorIs(t, err, CodeUnsupportedType)
}

// TestReadLocalPathsOpen: the files a response names open and read back
// verified; a missing file, or another file at the path (other inode),
// is ErrNotLocal, not a bad replica; a short file is CORRUPT.
func TestReadLocalPathsOpen(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("local reads need Linux")
	}
	dir := t.TempDir()
	data := []byte("0123456789abcdef")
	p := filepath.Join(dir, "block")
	require.NoError(t, os.WriteFile(p, append([]byte("head"), data...), 0o600))
	f, err := os.Open(p)
	require.NoError(t, err)
	fi, err := f.Stat()
	require.NoError(t, err)
	lf, err := LocalFileOf(f.Name(), fi)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	resp := &ReadLocalPathsResponse{
		Extents: []LocalExtent{{Chunk: Chunk{Offset: 0, Length: 16, Checksums: checksum.Compute(checksum.CRC32C, 8, data)}, FileOffset: 4}},
		Files:   []LocalFile{lf},
	}
	rl, err := resp.Open()
	require.NoError(t, err)
	got := make([]byte, 16)
	require.NoError(t, rl.ReadInto(got))
	require.Equal(t, data, got)
	rl.Close()

	// Another file at the same path: not the datanode's.
	require.NoError(t, os.Rename(p, p+".old"))
	require.NoError(t, os.WriteFile(p, append([]byte("head"), data...), 0o600))
	_, err = resp.Open()
	require.ErrorIs(t, err, ErrNotLocal)
	require.ErrorContains(t, err, "not the datanode's")
	// No file.
	require.NoError(t, os.Remove(p))
	_, err = resp.Open()
	require.ErrorIs(t, err, ErrNotLocal)
	require.ErrorIs(t, err, os.ErrNotExist)

	// The datanode's file, short: a bad replica.
	require.NoError(t, os.Truncate(p+".old", 10))
	resp.Files[0].Path = p + ".old"
	rl, err = resp.Open()
	require.NoError(t, err)
	defer rl.Close()
	err = rl.ReadInto(got)
	require.ErrorIs(t, err, CodeCorrupt)
	require.NotErrorIs(t, err, ErrNotLocal)

	// A relative name is made absolute by the side that names it.
	t.Chdir(dir)
	f, err = os.Open("block.old")
	require.NoError(t, err)
	defer f.Close()
	fi, err = f.Stat()
	require.NoError(t, err)
	rel, err := LocalFileOf(f.Name(), fi)
	require.NoError(t, err)
	require.Equal(t, resp.Files[0], rel)
}
