package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestPermissionsAndGroups(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "fsb", Owner: "alice", Group: "hadoop"})
	h.volBucket("old", stratov1.BucketLayout_LAYOUT_FSO)
	st := func(bucket, path string) *stratov1.FileStatus {
		t.Helper()
		s, err := h.stat(bucket, path)
		require.NoError(t, err)
		return s
	}
	perm := func(s *stratov1.FileStatus) uint32 {
		t.Helper()
		require.NotNil(t, s.Permission, "meta always says")
		return s.GetPermission()
	}

	// Defaults: a bucket root 0755, directories 0755, files 0644 (HDFS's
	// under umask 022); the group comes down from the parent.
	require.Equal(t, uint32(0o755), perm(st("fsb", "")))
	require.Equal(t, "hadoop", st("fsb", "").Group)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d", Owner: "bob"})
	h.createFile("fsb", "d/f", 3)
	require.Equal(t, uint32(0o755), perm(st("fsb", "d")))
	require.Equal(t, uint32(0o644), perm(st("fsb", "d/f")))
	require.Equal(t, "hadoop", st("fsb", "d").Group)
	require.Equal(t, "hadoop", st("fsb", "d/f").Group)
	require.Equal(t, "", st("old", "").Group)

	// mkdirs with a permission: the missing parents get it with u+wx.
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/c", Owner: "bob",
		Permission: proto.Uint32(0o550), Group: "eng"})
	require.Equal(t, uint32(0o750), perm(st("fsb", "a")))
	require.Equal(t, uint32(0o750), perm(st("fsb", "a/b")))
	require.Equal(t, uint32(0o550), perm(st("fsb", "a/b/c")))
	require.Equal(t, "eng", st("fsb", "a/b").Group)
	require.Equal(t, "bob", st("fsb", "a/b/c").Owner)
	// A create with a permission; the group is the directory's.
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/c/f", Owner: "carol",
		Permission: proto.Uint32(0o600)}).(*stratov1.OpenKeyResponse)
	h.commitBlocks("fsb", "a/b/c/f", open.OpenId, 2)
	f := st("fsb", "a/b/c/f")
	require.Equal(t, []any{uint32(0o600), "eng", "carol"}, []any{perm(f), f.Group, f.Owner})
	require.Equal(t, f.ModificationTimeUnixMs, f.AccessTimeUnixMs)
	// A deferred create (committed with its token) keeps them too.
	res, err := h.prepare(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "a/g", Owner: "carol",
		Permission: proto.Uint32(0o640), Group: "g2", Deferrable: true})
	require.NoError(t, err)
	tok, err := h.ns.DeferOpen(h.db, res.GetOpenKey())
	require.NoError(t, err)
	require.NotEmpty(t, tok.CreateToken)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/g", CreateToken: tok.CreateToken})
	g := st("fsb", "a/g")
	require.Equal(t, []any{uint32(0o640), "g2"}, []any{perm(g), g.Group})
	// A listing says the same as a status.
	rs, err := h.rd().ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/c"})
	require.NoError(t, err)
	require.Len(t, rs.Statuses, 1)
	require.Equal(t, []any{uint32(0o600), "eng"}, []any{perm(rs.Statuses[0]), rs.Statuses[0].Group})

	// SetPermission and SetOwner on a file, a directory and the root.
	for _, p := range []string{"a/b/c/f", "a/b", ""} {
		before := st("fsb", p)
		h.must(&stratov1.SetPermissionRequest{Volume: "vol", Bucket: "fsb", Path: p, Permission: 0o1777})
		require.Equal(t, uint32(0o1777), perm(st("fsb", p)), p)
		h.must(&stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: p, Group: "ops"})
		s := st("fsb", p)
		require.Equal(t, []string{before.Owner, "ops"}, []string{s.Owner, s.Group}, p)
		h.must(&stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: p, Owner: "dave"})
		s = st("fsb", p)
		require.Equal(t, []string{"dave", "ops"}, []string{s.Owner, s.Group}, p)
		require.Equal(t, before.ModificationTimeUnixMs, s.ModificationTimeUnixMs, "%s: times unchanged", p)
		require.Equal(t, before.Length, s.Length)
	}
	bk, err := h.rd().Bucket("vol", "fsb")
	require.NoError(t, err)
	require.Equal(t, []any{uint32(0o1777), "dave", "ops"}, []any{bk.GetPermission(), bk.Owner, bk.Group})

	// A rename keeps them.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b", Dst: "moved"})
	require.Equal(t, uint32(0o1777), perm(st("fsb", "moved")))
	require.Equal(t, uint32(0o1777), perm(st("fsb", "moved/c/f")))

	// Refusals.
	h.fails(ErrInvalid, &stratov1.SetPermissionRequest{Volume: "vol", Bucket: "fsb", Path: "d", Permission: 0o10000})
	h.fails(ErrInvalid, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "d"})
	h.fails(ErrInvalid, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "x", Permission: proto.Uint32(0o20000)})
	h.fails(ErrInvalid, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x", Permission: proto.Uint32(0o20000)})
	err = h.fails(ErrNotFound, &stratov1.SetPermissionRequest{Volume: "vol", Bucket: "fsb", Path: "d/nope", Permission: 0o600})
	require.ErrorIs(t, err, ErrFileNotFound)
	err = h.fails(ErrNotFound, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "nodir/f", Owner: "x"})
	require.ErrorIs(t, err, ErrFileNotFound)
	err = h.fails(ErrNotFound, &stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "nope", ModificationTimeUnixMs: proto.Int64(5)})
	require.ErrorIs(t, err, ErrFileNotFound)

	// An OBS key has them too.
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.putKey("obs", "k/1", 1)
	h.must(&stratov1.SetPermissionRequest{Volume: "vol", Bucket: "obs", Path: "k/1", Permission: 0o400})
	h.must(&stratov1.SetOwnerRequest{Volume: "vol", Bucket: "obs", Path: "k/1", Owner: "erin", Group: "g"})
	lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "k/1"})
	require.NoError(t, err)
	require.Equal(t, []any{uint32(0o400), "erin", "g"}, []any{lk.Key.GetPermission(), lk.Key.Owner, lk.Key.Group})
	err = h.fails(ErrNotFound, &stratov1.SetPermissionRequest{Volume: "vol", Bucket: "obs", Path: "k/2", Permission: 0o400})
	require.ErrorIs(t, err, ErrKeyNotFound)

	// A file changed while open (after an hsync) keeps the change at its
	// last commit.
	open = h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/h", Owner: "bob"}).(*stratov1.OpenKeyResponse)
	bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "fsb", Key: "d/h", OpenId: open.OpenId, SizeHint: 4}).(*stratov1.AllocateBlockResponse)
	blocks := []*stratov1.BlockLocation{{BlockId: bl.Block.BlockId, Length: 2}}
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/h", OpenId: open.OpenId, Blocks: blocks, Hsync: true})
	h.must(&stratov1.SetPermissionRequest{Volume: "vol", Bucket: "fsb", Path: "d/h", Permission: 0o444})
	h.must(&stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "d/h", Group: "late"})
	blocks[0].Length = 4
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/h", OpenId: open.OpenId, Blocks: blocks})
	hs := st("fsb", "d/h")
	require.Equal(t, []any{int64(4), uint32(0o444), "late"}, []any{hs.Length, perm(hs), hs.Group})
}

func TestSetTimes(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("fsb", "d/f", 3)
	st := func(path string) *stratov1.FileStatus {
		t.Helper()
		s, err := h.stat("fsb", path)
		require.NoError(t, err)
		return s
	}
	before := st("d/f")
	require.Equal(t, h.now.UnixMilli(), before.AccessTimeUnixMs, "a commit sets the access time")

	// Hadoop's setTimes: -1 (or unset) leaves a time unchanged.
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "d/f", ModificationTimeUnixMs: proto.Int64(1000), AccessTimeUnixMs: proto.Int64(-1)})
	s := st("d/f")
	require.Equal(t, []int64{1000, before.AccessTimeUnixMs}, []int64{s.ModificationTimeUnixMs, s.AccessTimeUnixMs})
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "d/f", AccessTimeUnixMs: proto.Int64(2000)})
	s = st("d/f")
	require.Equal(t, []int64{1000, 2000}, []int64{s.ModificationTimeUnixMs, s.AccessTimeUnixMs})
	require.Equal(t, before.CreationTimeUnixMs, s.CreationTimeUnixMs)
	require.Equal(t, before.ObjectId, s.ObjectId)

	// Directories and the root.
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "d", ModificationTimeUnixMs: proto.Int64(3000), AccessTimeUnixMs: proto.Int64(4000)})
	s = st("d")
	require.Equal(t, []int64{3000, 4000}, []int64{s.ModificationTimeUnixMs, s.AccessTimeUnixMs})
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", ModificationTimeUnixMs: proto.Int64(5000)})
	require.Equal(t, []int64{5000, 0}, []int64{st("").ModificationTimeUnixMs, st("").AccessTimeUnixMs})
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", ModificationTimeUnixMs: proto.Int64(-1), AccessTimeUnixMs: proto.Int64(6000)})
	require.Equal(t, []int64{5000, 6000}, []int64{st("").ModificationTimeUnixMs, st("").AccessTimeUnixMs},
		"the root keeps its access time too")
	bk, err := h.rd().Bucket("vol", "fsb")
	require.NoError(t, err)
	require.Equal(t, []int64{5000, 6000}, []int64{bk.ModificationTimeUnixMs, bk.AccessTimeUnixMs})
	// Both unchanged: nothing happens, and it succeeds.
	h.must(&stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "d/f", ModificationTimeUnixMs: proto.Int64(-1), AccessTimeUnixMs: proto.Int64(-1)})
	require.Equal(t, int64(1000), st("d/f").ModificationTimeUnixMs)
	h.fails(ErrInvalid, &stratov1.SetTimesRequest{Volume: "vol", Bucket: "fsb", Path: "d/f", ModificationTimeUnixMs: proto.Int64(-2)})
}

// Records written before permissions, groups and access times read as the
// defaults.
func TestStatusOfOldRecords(t *testing.T) {
	bk := &stratov1.BucketRecord{BlockSize: 1}
	require.Equal(t, uint32(DefaultFilePermission), fileStatus(bk, "f", &stratov1.KeyRecord{}).GetPermission())
	require.Equal(t, int64(7), fileStatus(bk, "f", &stratov1.KeyRecord{ModificationTimeUnixMs: 7}).AccessTimeUnixMs)
	require.Equal(t, uint32(DefaultDirPermission), dirStatus("d", &stratov1.DirectoryInfo{}).GetPermission())
	require.Equal(t, uint32(DefaultDirPermission), rootStatus(bk).GetPermission())
	require.Equal(t, uint32(DefaultFilePermission), KeyInfo(&stratov1.KeyRecord{}).GetPermission())
	require.Equal(t, uint32(DefaultDirPermission), BucketInfo(&stratov1.BucketRecord{}).GetPermission())
}
