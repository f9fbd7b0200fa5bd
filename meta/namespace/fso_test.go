package namespace

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

const fso = stratov1.BucketLayout_LAYOUT_FSO

func TestCreateDirectoryAndStatus(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	res := h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "/a/b/c/", Owner: "carol"}).(*stratov1.CreateDirectoryResponse)
	require.Equal(t, int32(3), res.Created)
	again := h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/c"}).(*stratov1.CreateDirectoryResponse)
	require.Zero(t, again.Created, "mkdir -p of an existing directory succeeds")
	require.Equal(t, res.ObjectId, again.ObjectId)
	root := h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "/"}).(*stratov1.CreateDirectoryResponse)
	require.Zero(t, root.Created)

	st, err := h.stat("fsb", "a/b/c")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	require.Equal(t, "a/b/c", st.Path)
	require.Equal(t, "carol", st.Owner)
	require.Equal(t, res.ObjectId, st.ObjectId)
	st, err = h.stat("fsb", "")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)

	h.createFile("fsb", "a/f", 10, 20)
	st, err = h.stat("fsb", "/a/f")
	require.NoError(t, err)
	require.False(t, st.IsDirectory)
	require.Equal(t, int64(30), st.Length)
	require.Equal(t, int64(256<<20), st.BlockSize)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_THREE, st.Replication)
	require.Nil(t, st.Key)
	withBlocks, err := h.rd().GetFileStatus(&stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "fsb", Path: "a/f", WithBlocks: true})
	require.NoError(t, err)
	require.Len(t, withBlocks.Status.Key.Blocks, 2)

	// Errors.
	_, err = h.stat("fsb", "a/nope")
	require.ErrorIs(t, err, ErrNotFound)
	require.Contains(t, err.Error(), "vol/fsb/a/nope")
	_, err = h.stat("fsb", "x/y/z")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = h.stat("fsb", "a/f/g")
	require.ErrorIs(t, err, ErrNotADirectory)
	require.ErrorIs(t, err, ErrFailedPrecondition)
	_, err = h.stat("fsb", "a/../b")
	require.ErrorIs(t, err, ErrInvalid)
	err = h.fails(ErrExists, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/f"})
	require.ErrorIs(t, err, ErrFileExists)
	err = h.fails(ErrFailedPrecondition, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/f/g"})
	require.ErrorIs(t, err, ErrNotADirectory)
	h.fails(ErrInvalid, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a//b"})
	h.fails(ErrNotFound, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "nope", Path: "a"})
	_, err = h.rd().GetFileStatus(&stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "nope", Path: "a"})
	require.ErrorIs(t, err, ErrBucketNotFound)

	// LookupKey on FSO resolves paths.
	lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "fsb", Key: "/a/f"})
	require.NoError(t, err)
	require.Equal(t, "a/f", lk.Key.Name)
	require.Equal(t, int64(30), lk.Key.Size)
	_, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/b"})
	require.ErrorIs(t, err, ErrIsADirectory)
	_, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/zz"})
	require.ErrorIs(t, err, ErrKeyNotFound)
}

func TestCreateFile(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d"})

	// Parent must exist unless recursive, and must be a directory.
	err := h.fails(ErrNotFound, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y/f"})
	require.ErrorIs(t, err, ErrParentNotFound)
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y/f", Recursive: true}).(*stratov1.OpenKeyResponse)
	st, err := h.stat("fsb", "x/y")
	require.NoError(t, err, "recursive create makes the parents at once")
	require.True(t, st.IsDirectory)
	_, err = h.stat("fsb", "x/y/f")
	require.ErrorIs(t, err, ErrNotFound, "the file appears at commit")
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "x/y/f", OpenId: open.OpenId})
	_, err = h.stat("fsb", "x/y/f")
	require.NoError(t, err)
	err = h.fails(ErrFailedPrecondition, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y/f/g", Recursive: true})
	require.ErrorIs(t, err, ErrNotADirectory)
	h.fails(ErrFailedPrecondition, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y/f/g"})

	// Existing file: error without overwrite, replaced with it.
	err = h.fails(ErrExists, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y/f"})
	require.ErrorIs(t, err, ErrFileExists)
	h.createFile("fsb", "x/y/f", 5)
	st, _ = h.stat("fsb", "x/y/f")
	require.Equal(t, int64(5), st.Length)
	// A directory is never replaced.
	err = h.fails(ErrFailedPrecondition, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x/y", Overwrite: true})
	require.ErrorIs(t, err, ErrIsADirectory)
	h.fails(ErrFailedPrecondition, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d"})
	h.fails(ErrInvalid, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "/"})
	h.fails(ErrInvalid, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/./f"})
	err = h.fails(ErrInvalid, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "fsb", Key: "folder/"})
	require.Contains(t, err.Error(), "CreateDirectory")

	// Two writers without overwrite: the second commit finds the file there.
	o1 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/race"}).(*stratov1.OpenKeyResponse)
	o2 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/race"}).(*stratov1.OpenKeyResponse)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/race", OpenId: o1.OpenId})
	h.fails(ErrExists, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/race", OpenId: o2.OpenId})

	// A directory made where the open file was to go blocks the commit.
	o3 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/later"}).(*stratov1.OpenKeyResponse)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/later"})
	h.fails(ErrFailedPrecondition, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/later", OpenId: o3.OpenId})

	// The open file follows a rename of its directory; commit needs the
	// name it was opened with.
	o4 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "d/moving"}).(*stratov1.OpenKeyResponse)
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d", Dst: "e"})
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/moving", OpenId: o4.OpenId})
	_, err = h.stat("fsb", "e/moving")
	require.NoError(t, err)

	// Commit into a deleted directory fails, also when an earlier commit
	// into it succeeded.
	o5 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "e/gone/f", Recursive: true}).(*stratov1.OpenKeyResponse)
	o6 := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "e/gone/g"}).(*stratov1.OpenKeyResponse)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "e/gone/g", OpenId: o6.OpenId})
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "e/gone", Recursive: true})
	err = h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "e/gone/f", OpenId: o5.OpenId})
	require.ErrorIs(t, err, ErrParentNotFound)
}

func TestListStatus(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	var want []string
	for i := range 7 {
		d := fmt.Sprintf("d/dir%d", i)
		h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: d})
		f := fmt.Sprintf("d/file%d", i)
		h.createFile("fsb", f, int64(i))
		want = append(want, d+"/")
	}
	for i := range 7 {
		want = append(want, fmt.Sprintf("d/file%d", i))
	}
	h.createFile("fsb", "d/dir3/inner")
	h.createFile("fsb", "d/a-first")
	h.createFile("fsb", "d/zz-last")
	want = append([]string{"d/a-first"}, want...)
	want = append(want, "d/zz-last")
	require.Equal(t, want, h.list("fsb", "d"), "paged by 3, merged in name order")
	require.Equal(t, []string{"d/"}, h.list("fsb", ""))
	require.Equal(t, []string{"d/dir3/inner"}, h.list("fsb", "/d/dir3/"))
	require.Equal(t, []string{"d/file2"}, h.list("fsb", "d/file2"), "a file lists as itself")
	res, err := h.rd().ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: "fsb", Path: "d", StartAfter: "file5"})
	require.NoError(t, err)
	require.Len(t, res.Statuses, 2)
	require.Equal(t, int64(6), res.Statuses[0].Length)
	_, err = h.rd().ListStatus(&stratov1.ListStatusRequest{Volume: "vol", Bucket: "fsb", Path: "nope"})
	require.ErrorIs(t, err, ErrNotFound)
}

func TestRename(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/c"})
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "t"})
	h.createFile("fsb", "a/b/c/f", 3)
	h.createFile("fsb", "a/g", 4)

	// A file, to a new name.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/g", Dst: "a/h"})
	_, err := h.stat("fsb", "a/g")
	require.ErrorIs(t, err, ErrNotFound)
	st, err := h.stat("fsb", "a/h")
	require.NoError(t, err)
	require.Equal(t, int64(4), st.Length)
	// A file into an existing directory keeps its name.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/h", Dst: "t"})
	_, err = h.stat("fsb", "t/h")
	require.NoError(t, err)

	// A directory: its subtree follows.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b", Dst: "t/bb"})
	st, err = h.stat("fsb", "t/bb/c/f")
	require.NoError(t, err)
	require.Equal(t, int64(3), st.Length)
	_, err = h.stat("fsb", "a/b/c/f")
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, []string{"t/bb/", "t/h"}, h.list("fsb", "t"))
	// Into the root.
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "t/bb", Dst: "/"})
	_, err = h.stat("fsb", "bb/c/f")
	require.NoError(t, err)

	// Under itself: refused, at any depth, and directly into itself.
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "bb/c/deep/er"})
	for _, dst := range []string{"bb/c", "bb/c/deep/er/x", "bb/c/deep", "bb/x"} {
		err := h.fails(ErrInvalid, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "bb", Dst: dst})
		require.ErrorIs(t, err, ErrRenameUnderSelf, dst)
	}
	h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "bb", Dst: "bb"}) // onto itself: no-op
	_, err = h.stat("fsb", "bb/c/f")
	require.NoError(t, err)

	// Conflicts and missing pieces.
	h.createFile("fsb", "t/h2", 1)
	err = h.fails(ErrExists, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "t/h", Dst: "t/h2"})
	require.ErrorIs(t, err, ErrFileExists)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "t/bb"})
	err = h.fails(ErrExists, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "bb", Dst: "t"})
	require.ErrorIs(t, err, ErrDirectoryExists, "t/bb exists")
	h.fails(ErrNotFound, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "nope", Dst: "x"})
	err = h.fails(ErrNotFound, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "t/h", Dst: "no/such/x"})
	require.ErrorIs(t, err, ErrParentNotFound)
	h.fails(ErrFailedPrecondition, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "t/h", Dst: "t/h2/x"})
	h.fails(ErrInvalid, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "/", Dst: "x"})
	h.fails(ErrInvalid, &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "fsb", FromKey: "t/h", ToKey: "/"})
	// RenameKey on FSO does not move into directories.
	err = h.fails(ErrExists, &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "fsb", FromKey: "t/h", ToKey: "bb"})
	require.ErrorIs(t, err, ErrDirectoryExists)
	h.must(&stratov1.RenameKeyRequest{Volume: "vol", Bucket: "fsb", FromKey: "t/h", ToKey: "bb/h"})
	_, err = h.stat("fsb", "bb/h")
	require.NoError(t, err)
}

// Renaming and deleting a directory cost the same whatever its size.
func TestDirectoryOpsAreO1(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	writes := func(req proto.Message) uint32 {
		cmd, err := h.prepare(req)
		require.NoError(t, err)
		b := h.db.NewIndexedBatch()
		defer b.Close()
		_, err = h.ns.Apply(cmd, b)
		require.NoError(t, err)
		n := b.Count()
		require.NoError(t, b.Commit(pebble.NoSync))
		h.ns.Committed()
		return n
	}
	var counts []uint32
	for _, n := range []int{1, 200} {
		dir := fmt.Sprintf("big%d", n)
		for i := range n {
			h.createFile("fsb", fmt.Sprintf("%s/sub/f%d", dir, i), 1)
		}
		counts = append(counts, writes(&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: dir, Dst: dir + "-moved"}))
		counts = append(counts, writes(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: dir + "-moved", Recursive: true}))
	}
	require.Equal(t, counts[0], counts[2], "rename")
	require.Equal(t, counts[1], counts[3], "delete")
	require.LessOrEqual(t, counts[3], uint32(6))
}

func TestDelete(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.createFile("fsb", "d/f1", 10, 20)
	h.createFile("fsb", "d/sub/f2", 5)
	h.createFile("fsb", "d/sub/deeper/f3", 7)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/sub/empty"})
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "e"})
	b, n := h.usage("fsb")
	require.Equal(t, int64(42), b)
	require.Equal(t, int64(8), n)

	err := h.fails(ErrFailedPrecondition, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d"})
	require.ErrorIs(t, err, ErrDirectoryNotEmpty)
	require.Contains(t, err.Error(), "d")
	h.fails(ErrNotFound, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/nope"})
	h.fails(ErrNotFound, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "x/y"})
	h.fails(ErrInvalid, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "/", Recursive: true})

	// An empty directory, then a file.
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "e"})
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "fsb", Key: "d/f1"})
	del := h.deletedBlocks()
	require.Len(t, del, 1)
	require.Equal(t, "delete", del[0].Reason)
	require.Len(t, del[0].Blocks, 2)
	b, n = h.usage("fsb")
	require.Equal(t, int64(12), b)
	require.Equal(t, int64(6), n)

	// Recursive: gone at once, reclaimed later.
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d", Recursive: true})
	_, err = h.stat("fsb", "d")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = h.stat("fsb", "d/sub/f2")
	require.ErrorIs(t, err, ErrNotFound)
	require.Empty(t, h.list("fsb", ""))
	pending, err := h.rd().DeletedDirectories(10)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, "vol/fsb/d", pending[0].Path)
	_, n = h.usage("fsb")
	require.Equal(t, int64(5), n, "the subtree is released as it is reclaimed")
	h.fails(ErrFailedPrecondition, &stratov1.DeleteBucketRequest{Volume: "vol", Name: "fsb"})

	steps := h.reclaimAll(2)
	require.Greater(t, steps, 2, "a small limit takes several commands")
	b, n = h.usage("fsb")
	require.Zero(t, b)
	require.Zero(t, n)
	del = h.deletedBlocks()
	require.Len(t, del, 3)
	require.ElementsMatch(t, []string{"delete", "reclaim", "reclaim"}, []string{del[0].Reason, del[1].Reason, del[2].Reason})
	pending, err = h.rd().DeletedDirectories(10)
	require.NoError(t, err)
	require.Empty(t, pending)
	// Nothing of the bucket's tree is left in the database.
	for _, kv := range dump(t, h.db) {
		k := kv[0]
		require.NotContains(t, []byte{tagDir, tagFile, tagDirByID, tagDeletedDir}, k[1], "%q left over", k)
	}
	h.must(&stratov1.DeleteBucketRequest{Volume: "vol", Name: "fsb"})
}
