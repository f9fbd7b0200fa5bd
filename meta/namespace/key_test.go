package namespace

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestOBSKeys(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)

	// No size hint: no block, no allocator call.
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "empty"}).(*stratov1.OpenKeyResponse)
	require.Empty(t, open.Blocks)
	require.Zero(t, h.alloc.calls)
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_THREE, open.Replication)
	require.Equal(t, int64(256<<20), open.BlockSize)
	_, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "empty"})
	require.ErrorIs(t, err, ErrKeyNotFound, "visible before commit")
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "empty", OpenId: open.OpenId})
	lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "empty"})
	require.NoError(t, err)
	require.Equal(t, "empty", lk.Key.Name)
	require.Equal(t, open.OpenId, lk.Key.ObjectId)
	require.Zero(t, lk.Key.Size)
	// The open key is gone: a second commit fails.
	h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "empty", OpenId: open.OpenId})

	// A size hint allocates the first block; AllocateBlock passes excludes.
	open = h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", SizeHint: 10,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE}).(*stratov1.OpenKeyResponse)
	require.Len(t, open.Blocks, 1)
	require.Len(t, open.Blocks[0].Pipeline.Members, 1)
	ex := &stratov1.ExcludeList{Datanodes: []string{"a"}, Containers: []uint64{1}, Pipelines: []uint64{7}}
	second := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId, Exclude: ex}).(*stratov1.AllocateBlockResponse)
	require.Equal(t, ex.Datanodes, h.alloc.excludes[len(h.alloc.excludes)-1].Datanodes)
	third := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse)
	ok, err := h.rd().OpenKey(open.OpenId)
	require.NoError(t, err)
	require.Len(t, ok.Blocks, 3)

	// Only allocated blocks may be committed.
	h.fails(ErrInvalid, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId,
		Blocks: []*stratov1.BlockLocation{{BlockId: &stratov1.BlockID{ContainerId: 9, LocalId: 9}, Length: 1}}})
	h.fails(ErrInvalid, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId,
		Blocks: []*stratov1.BlockLocation{{BlockId: second.Block.BlockId, Length: 1}, {BlockId: second.Block.BlockId, Length: 1}}})
	h.fails(ErrInvalid, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId,
		Blocks: []*stratov1.BlockLocation{{BlockId: second.Block.BlockId, Length: -1}}})
	h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "other", OpenId: open.OpenId})
	h.fails(ErrNotFound, &stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: 12345})

	// Commit the first and third block; the second is freed as unused.
	res := h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", OpenId: open.OpenId, Blocks: []*stratov1.BlockLocation{
		{BlockId: open.Blocks[0].BlockId, Length: 100}, {BlockId: third.Block.BlockId, Length: 50}}}).(*stratov1.CommitKeyResponse)
	require.Equal(t, int64(150), res.Size)
	lk, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b"})
	require.NoError(t, err)
	require.Equal(t, int64(150), lk.Key.Size)
	require.Len(t, lk.Key.Blocks, 2)
	require.Equal(t, int64(0), lk.Key.Blocks[0].Offset)
	require.Equal(t, int64(100), lk.Key.Blocks[1].Offset)
	require.Equal(t, uint64(7), lk.Key.Blocks[1].Pipeline.Id, "pipeline comes from the allocation")
	require.Equal(t, stratov1.ReplicationFactor_REPLICATION_ONE, lk.Key.Replication)
	del := h.deletedBlocks()
	require.Len(t, del, 1)
	require.Equal(t, "unused", del[0].Reason)
	require.Equal(t, []uint64{second.Block.BlockId.LocalId}, blockIDs(del))
	b, n := h.usage("obs")
	require.Equal(t, int64(150), b)
	require.Equal(t, int64(2), n)

	// Overwrite: the replaced key's blocks go to the deleted-blocks table.
	oldBlocks := []uint64{lk.Key.Blocks[0].BlockId.LocalId, lk.Key.Blocks[1].BlockId.LocalId}
	h.putKey("obs", "a/b", 7)
	del = h.deletedBlocks()
	require.Len(t, del, 2)
	require.Equal(t, "overwrite", del[1].Reason)
	require.Equal(t, lk.Key.ObjectId, del[1].ObjectId)
	require.Equal(t, oldBlocks, blockIDs(del[1:]))
	b, n = h.usage("obs")
	require.Equal(t, int64(7), b)
	require.Equal(t, int64(2), n)

	// Rename.
	h.fails(ErrExists, &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "a/b", ToKey: "empty"})
	h.fails(ErrNotFound, &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "nope", ToKey: "x"})
	h.must(&stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "a/b", ToKey: "c"})
	_, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b"})
	require.ErrorIs(t, err, ErrNotFound)
	lk, err = h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "c"})
	require.NoError(t, err)
	require.Equal(t, int64(7), lk.Key.Size)

	// Delete.
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "c"})
	h.fails(ErrNotFound, &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "c"})
	del = h.deletedBlocks()
	require.Equal(t, "delete", del[len(del)-1].Reason)
	require.Equal(t, lk.Key.ObjectId, del[len(del)-1].ObjectId)
	b, n = h.usage("obs")
	require.Equal(t, int64(0), b)
	require.Equal(t, int64(1), n)

	// Names and layouts.
	h.fails(ErrInvalid, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: ""})
	h.fails(ErrFailedPrecondition, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "obs", Path: "f"})
	h.fails(ErrFailedPrecondition, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "obs", Path: "d"})
	h.fails(ErrNotFound, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "nope", Key: "k"})
	h.fails(ErrInvalid, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "k", SizeHint: -1})

	// Allocation failures reach the caller from prepare.
	h.alloc.fail = errors.New("no pipeline")
	_, err = h.do(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "k", SizeHint: 1})
	require.ErrorContains(t, err, "no pipeline")
}

func TestListKeys(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	keys := []string{"a", "a/1", "a/2", "a/sub/x", "a0", "b/1", "b/2/3", "c"}
	for _, k := range keys {
		h.putKey("obs", k, int64(len(k)))
	}
	list := func(prefix, after, delim string, limit int32) (out []string, res *stratov1.ListKeysResponse) {
		res, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs", Prefix: prefix, StartAfter: after, Delimiter: delim, Limit: limit})
		require.NoError(t, err)
		for _, k := range res.Keys {
			out = append(out, k.Name)
		}
		for _, cp := range res.CommonPrefixes {
			out = append(out, "P:"+cp)
		}
		return out, res
	}
	got, res := list("", "", "", 0)
	require.Equal(t, keys, got)
	require.False(t, res.Truncated)
	got, _ = list("a/", "", "", 0)
	require.Equal(t, []string{"a/1", "a/2", "a/sub/x"}, got)
	got, _ = list("a", "a/1", "", 0)
	require.Equal(t, []string{"a/2", "a/sub/x", "a0"}, got)
	got, _ = list("", "", "/", 0)
	require.Equal(t, []string{"a", "a0", "c", "P:a/", "P:b/"}, got)
	got, _ = list("a/", "", "/", 0)
	require.Equal(t, []string{"a/1", "a/2", "P:a/sub/"}, got)

	// Paging with a delimiter: every page resumes after next_start_after,
	// and together the pages are the unpaged listing in order.
	var paged []string
	after := ""
	for i := 0; ; i++ {
		res, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs", StartAfter: after, Delimiter: "/", Limit: 2})
		require.NoError(t, err)
		// Keys and prefixes of one page, merged in order.
		page := append([]string{}, res.CommonPrefixes...)
		for _, k := range res.Keys {
			page = append(page, k.Name)
		}
		paged = append(paged, page...)
		if !res.Truncated {
			break
		}
		after = res.NextStartAfter
		require.Less(t, i, 10)
	}
	require.ElementsMatch(t, []string{"a", "a/", "a0", "b/", "c"}, paged)
	require.Len(t, paged, 5)

	_, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "obs", Delimiter: "//"})
	require.ErrorIs(t, err, ErrInvalid)
	h.volBucket("fso", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("fso", "dir/f", 1)
	lk, err := h.rd().ListKeys(&stratov1.ListKeysRequest{Volume: "vol", Bucket: "fso"})
	require.NoError(t, err)
	require.Len(t, lk.Keys, 1)
	require.Equal(t, "dir/f", lk.Keys[0].Name)

	// OBS buckets answer file-system reads with implicit directories.
	st, err := h.stat("obs", "b/2")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	st, err = h.stat("obs", "a/1")
	require.NoError(t, err)
	require.False(t, st.IsDirectory)
	require.Equal(t, int64(3), st.Length)
	_, err = h.stat("obs", "zz")
	require.ErrorIs(t, err, ErrNotFound)
	require.Equal(t, []string{"a", "a/", "a0", "b/", "c"}, h.list("obs", ""))
	require.Equal(t, []string{"a/1", "a/2", "a/sub/"}, h.list("obs", "a"))
}

func TestOpenKeyExpiry(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	ttl := h.ns.Options().OpenKeyTTL
	var ids []uint64
	for i := range 5 {
		open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: fmt.Sprint("k", i), SizeHint: 1}).(*stratov1.OpenKeyResponse)
		ids = append(ids, open.OpenId)
		h.now = h.now.Add(time.Minute)
	}
	// One of them is committed: it must never expire.
	committed := ids[1]
	okInfo, err := h.rd().OpenKey(committed)
	require.NoError(t, err)
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "k1", OpenId: committed,
		Blocks: []*stratov1.BlockLocation{{BlockId: BlockLocation(okInfo.Blocks[0]).BlockId, Length: 1}}})

	cmd, err := h.ns.PrepareExpiry(h.db, h.now, 100)
	require.NoError(t, err)
	require.Nil(t, cmd, "nothing is due yet")

	// Two minutes past the first key's expiry: k0 and k2 are due (k1 was committed).
	now := h.now.Add(ttl - 5*time.Minute + 2*time.Minute)
	cmd, err = h.ns.PrepareExpiry(h.db, now, 100)
	require.NoError(t, err)
	require.Equal(t, []uint64{ids[0], ids[2]}, cmd.GetExpireOpenKeys().OpenIds)

	// Apply re-checks the time: the same IDs in a command stamped earlier
	// expire nothing.
	early := *cmd.GetExpireOpenKeys()
	res, err := h.apply(&stratov1.NamespaceCommand{NowUnixMs: h.now.UnixMilli(), Op: &stratov1.NamespaceCommand_ExpireOpenKeys{ExpireOpenKeys: &early}})
	require.NoError(t, err)
	require.Empty(t, res.(*stratov1.ExpireOpenKeysResult).Expired)

	res, err = h.apply(cmd)
	require.NoError(t, err)
	require.Equal(t, []uint64{ids[0], ids[2]}, res.(*stratov1.ExpireOpenKeysResult).Expired)
	for _, id := range []uint64{ids[0], ids[2]} {
		_, err := h.rd().OpenKey(id)
		require.ErrorIs(t, err, ErrOpenKeyNotFound)
	}
	_, err = h.rd().OpenKey(ids[3])
	require.NoError(t, err)
	del := h.deletedBlocks()
	require.Len(t, del, 2)
	for i, d := range del {
		require.Equal(t, "expired", d.Reason)
		require.Equal(t, []uint64{ids[2*i]}, []uint64{d.ObjectId})
		require.Len(t, d.Blocks, 1)
	}
	// An expired key cannot be committed.
	h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "k0", OpenId: ids[0]})
	// Applying the same command again is a no-op.
	res, err = h.apply(cmd)
	require.NoError(t, err)
	require.Empty(t, res.(*stratov1.ExpireOpenKeysResult).Expired)

	// The limit bounds a command.
	cmd, err = h.ns.PrepareExpiry(h.db, h.now.Add(2*ttl), 1)
	require.NoError(t, err)
	require.Equal(t, []uint64{ids[3]}, cmd.GetExpireOpenKeys().OpenIds)

	// Purge forgets deleted-block entries.
	res, err = h.apply(h.ns.PreparePurge(h.now, []uint64{del[0].Seq, 999999}))
	require.NoError(t, err)
	require.Equal(t, int32(1), res.(*stratov1.PurgeDeletedBlocksResult).Purged)
	require.Len(t, h.deletedBlocks(), 1)
}

func TestQuotas(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateVolumeRequest{Name: "vol", QuotaBytes: 1000})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "fso", QuotaBytes: 500, QuotaNamespace: 4})
	h.must(&stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS})

	// Namespace: directories and files count.
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "a/b"})
	h.createFile("fso", "a/f1", 100)
	err := h.fails(ErrFailedPrecondition, &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "c/d"})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "c"})
	// Opening a fifth name is allowed, committing it is not.
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fso", Path: "a/f2"}).(*stratov1.OpenKeyResponse)
	err = h.fails(ErrFailedPrecondition, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fso", Key: "a/f2", OpenId: open.OpenId})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	require.Contains(t, err.Error(), "vol/fso")
	// Overwriting an existing file needs no new name; bytes are checked.
	h.createFile("fso", "a/f1", 500)
	err = h.fails(ErrFailedPrecondition, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fso", Path: "a/f1", Overwrite: true, SizeHint: 501})
	require.ErrorIs(t, err, ErrQuotaExceeded)
	open = h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fso", Path: "a/f1", Overwrite: true}).(*stratov1.OpenKeyResponse)
	bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "fso", Key: "a/f1", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse)
	h.fails(ErrFailedPrecondition, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fso", Key: "a/f1", OpenId: open.OpenId,
		Blocks: []*stratov1.BlockLocation{{BlockId: bl.Block.BlockId, Length: 501}}})
	b, n := h.usage("fso")
	require.Equal(t, int64(500), b)
	require.Equal(t, int64(4), n)

	// The volume's byte quota spans its buckets.
	h.putKey("obs", "x", 400)
	h.putKey("obs", "y") // an empty key always fits
	y2 := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "y2"}).(*stratov1.OpenKeyResponse).OpenId
	y2b := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "obs", Key: "y2", OpenId: y2}).(*stratov1.AllocateBlockResponse)
	err = h.fails(ErrFailedPrecondition, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "y2", OpenId: y2,
		Blocks: []*stratov1.BlockLocation{{BlockId: y2b.Block.BlockId, Length: 101}}})
	require.ErrorContains(t, err, "volume vol")
	h.fails(ErrFailedPrecondition, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "z", SizeHint: 101})
	v, _ := h.rd().Volume("vol")
	require.Equal(t, int64(900), v.UsedBytes)

	// Deleting frees bytes and names; then the blocked writes go through.
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fso", Path: "a/f1"})
	b, n = h.usage("fso")
	require.Equal(t, int64(0), b)
	require.Equal(t, int64(3), n)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "c/d"})
	v, _ = h.rd().Volume("vol")
	require.Equal(t, int64(400), v.UsedBytes)
	h.putKey("obs", "z", 600)
}

func TestHsync(t *testing.T) {
	for _, layout := range []stratov1.BucketLayout{stratov1.BucketLayout_LAYOUT_FSO, stratov1.BucketLayout_LAYOUT_OBS} {
		t.Run(layout.String(), func(t *testing.T) {
			h := newHarness(t)
			h.volBucket("bkt", layout)
			h.putKey("bkt", "d/f", 7) // an older version, replaced by the first hsync
			_, names0 := h.usage("bkt")
			open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f"}).(*stratov1.OpenKeyResponse)
			alloc := func() *stratov1.BlockID {
				return h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse).Block.BlockId
			}
			b1, b2 := alloc(), alloc()
			sync := func(hsync bool, blocks ...*stratov1.BlockLocation) *stratov1.CommitKeyResponse {
				return h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", OpenId: open.OpenId, Blocks: blocks, Hsync: hsync}).(*stratov1.CommitKeyResponse)
			}
			size := func() int64 {
				k, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f"})
				require.NoError(t, err)
				return k.Key.Size
			}
			require.Equal(t, int64(7), size())
			sync(true, &stratov1.BlockLocation{BlockId: b1, Length: 100})
			require.Equal(t, int64(100), size())
			require.Len(t, h.deletedBlocks(), 1, "the replaced version's block is freed")
			sync(true, &stratov1.BlockLocation{BlockId: b1, Length: 256}, &stratov1.BlockLocation{BlockId: b2, Length: 10})
			require.Equal(t, int64(266), size())
			bytes, names := h.usage("bkt")
			require.Equal(t, int64(266), bytes)
			require.Equal(t, names0, names)
			_, err := h.rd().OpenKey(open.OpenId)
			require.NoError(t, err, "still open")

			sync(false, &stratov1.BlockLocation{BlockId: b1, Length: 256}, &stratov1.BlockLocation{BlockId: b2, Length: 300})
			require.Equal(t, int64(556), size())
			require.Len(t, h.deletedBlocks(), 1, "hsynced blocks are the key's own: nothing more freed")
			_, err = h.rd().OpenKey(open.OpenId)
			require.ErrorIs(t, err, ErrOpenKeyNotFound)
		})
	}
}

func TestHsyncedKeyDeletedWhileOpen(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_OBS)
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k", SizeHint: 1}).(*stratov1.OpenKeyResponse)
	bl := []*stratov1.BlockLocation{{BlockId: open.Blocks[0].BlockId, Length: 5}}
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k", OpenId: open.OpenId, Blocks: bl, Hsync: true})
	h.must(&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k"})
	h.fails(ErrNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "k", OpenId: open.OpenId, Blocks: bl})
}

func TestHsyncedOpenKeyExpiryKeepsPublishedBlocks(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	open := h.must(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "bkt", Key: "f", SizeHint: 1}).(*stratov1.OpenKeyResponse)
	b1 := open.Blocks[0].BlockId
	b2 := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "f", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse).Block.BlockId
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "f", OpenId: open.OpenId, Hsync: true,
		Blocks: []*stratov1.BlockLocation{{BlockId: b1, Length: 5}}})
	cmd, err := h.ns.PrepareExpiry(h.db, h.now.Add(2*h.ns.Options().OpenKeyTTL), 10)
	require.NoError(t, err)
	_, err = h.apply(cmd)
	require.NoError(t, err)
	del := h.deletedBlocks()
	require.Len(t, del, 1)
	require.Len(t, del[0].Blocks, 1)
	require.Equal(t, [2]uint64{b2.ContainerId, b2.LocalId}, [2]uint64{del[0].Blocks[0].ContainerId, del[0].Blocks[0].LocalId}, "only the unpublished block is freed")
	st, err := h.stat("bkt", "f")
	require.NoError(t, err)
	require.Equal(t, int64(5), st.Length, "the hsynced file outlives its writer")
}
