package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// lookup returns the key at path (a snapshot's too) with its block lengths.
func (h *harness) blocksOf(bucket, path string) (*stratov1.KeyInfo, []int64) {
	h.t.Helper()
	res, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: bucket, Key: path})
	require.NoError(h.t, err)
	var lens []int64
	var off int64
	for _, bl := range res.Key.Blocks {
		require.Equal(h.t, off, bl.Offset, "block offsets follow each other")
		off += bl.Length
		lens = append(lens, bl.Length)
	}
	require.Equal(h.t, off, res.Key.Size)
	return res.Key, lens
}

// appendBlocks opens path for appending, allocates blocks of the given
// lengths and commits them (hsync: keeping it open); it returns the handle.
func (h *harness) appendBlocks(bucket, path string, hsync bool, lengths ...int64) uint64 {
	h.t.Helper()
	open := h.must(&stratov1.AppendFileRequest{Volume: "vol", Bucket: bucket, Path: path}).(*stratov1.OpenKeyResponse)
	h.commitOpen(bucket, path, open.OpenId, hsync, lengths...)
	return open.OpenId
}

func (h *harness) commitOpen(bucket, path string, openID uint64, hsync bool, lengths ...int64) {
	h.t.Helper()
	var blocks []*stratov1.BlockLocation
	for _, l := range lengths {
		bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: bucket, Key: path, OpenId: openID, SizeHint: l}).(*stratov1.AllocateBlockResponse)
		blocks = append(blocks, &stratov1.BlockLocation{BlockId: bl.Block.BlockId, Length: l})
	}
	h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: bucket, Key: path, OpenId: openID, Blocks: blocks, Hsync: hsync})
}

func (h *harness) closed(bucket, path string) bool {
	h.t.Helper()
	res, err := h.rd().IsFileClosed(&stratov1.IsFileClosedRequest{Volume: "vol", Bucket: bucket, Path: path})
	require.NoError(h.t, err)
	return res.Closed
}

func TestAppend(t *testing.T) {
	for _, layout := range []stratov1.BucketLayout{stratov1.BucketLayout_LAYOUT_FSO, stratov1.BucketLayout_LAYOUT_OBS} {
		t.Run(layout.String(), func(t *testing.T) {
			h := newHarness(t)
			h.volBucket("bkt", layout)
			first := h.createFile2(layout, "bkt", "d/f", 10, 4)
			h.must(&stratov1.SetAttributesRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", Attributes: []*stratov1.KeyAttribute{{Name: "a", Value: "1"}}})
			open := h.must(&stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "d/f", SizeHint: 3}).(*stratov1.OpenKeyResponse)
			require.Equal(t, int64(14), open.AppendOffset)
			require.Len(t, open.Blocks, 1, "a size hint allocates the first block")
			require.False(t, h.closed("bkt", "d/f"))
			// One writer at a time.
			h.fails(ErrFileOpen, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "d/f"})
			h.fails(ErrFileOpen, &stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "d/f", NewLength: 1})
			// An hsync publishes base + new; readers see it while open.
			synced := &stratov1.BlockLocation{BlockId: open.Blocks[0].BlockId, Length: 3}
			h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", OpenId: open.OpenId, Hsync: true,
				Blocks: []*stratov1.BlockLocation{synced}})
			ki, lens := h.blocksOf("bkt", "d/f")
			require.Equal(t, []int64{10, 4, 3}, lens)
			require.Equal(t, first.ObjectId, ki.ObjectId, "the same object")
			// The writer's last commit lists every block it wrote.
			bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse)
			h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f", OpenId: open.OpenId,
				Blocks: []*stratov1.BlockLocation{synced, {BlockId: bl.Block.BlockId, Length: 5}}})
			ki, lens = h.blocksOf("bkt", "d/f")
			require.Equal(t, []int64{10, 4, 3, 5}, lens, "the hsynced block and the new one")
			require.Equal(t, first.ObjectId, ki.ObjectId)
			require.Len(t, ki.Attributes, 1, "an append keeps the attributes")
			require.True(t, h.closed("bkt", "d/f"))
			bytes, names := h.usage("bkt")
			require.Equal(t, int64(22), bytes)
			if layout == stratov1.BucketLayout_LAYOUT_FSO {
				require.Equal(t, int64(2), names) // d and f
			}
			// Again, and an append of nothing.
			h.appendBlocks("bkt", "d/f", false)
			_, lens = h.blocksOf("bkt", "d/f")
			require.Equal(t, []int64{10, 4, 3, 5}, lens)
			require.Empty(t, h.deletedBlocks())
			h.fails(ErrNotFound, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "d/nope"})
		})
	}
}

// createFile2 is createFile on FSO, putKey on OBS.
func (h *harness) createFile2(layout stratov1.BucketLayout, bucket, path string, lengths ...int64) *stratov1.CommitKeyResponse {
	if layout == stratov1.BucketLayout_LAYOUT_OBS {
		return h.putKey(bucket, path, lengths...)
	}
	return h.createFile(bucket, path, lengths...)
}

func TestAppendRefusals(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "dir"})
	h.fails(ErrIsADirectory, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "dir"})
	ec := &stratov1.ErasureCoding{Codec: stratov1.ErasureCodec_ERASURE_CODEC_RS, Data: 3, Parity: 2}
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "ec", ErasureCoding: ec}).(*stratov1.OpenKeyResponse)
	h.commitBlocks("bkt", "ec", open.OpenId, 5)
	h.fails(errECAppend, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "ec"})
	h.fails(errECAppend, &stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "ec", NewLength: 1})
	// A file being created holds its lease after its first hsync.
	open = h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "w"}).(*stratov1.OpenKeyResponse)
	h.commitOpen("bkt", "w", open.OpenId, true, 4)
	require.False(t, h.closed("bkt", "w"))
	h.fails(ErrFileOpen, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "w"})
	// The bytes an append may add count against the quota.
	h.must(&stratov1.SetQuotaRequest{Volume: "vol", Bucket: "bkt", QuotaBytes: 10})
	h.createFile("bkt", "small", 1)
	h.fails(ErrQuotaExceeded, &stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "small", SizeHint: 100})
}

func TestRecoverLease(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	// A writer that created the file hsynced 4 bytes, then wrote a block
	// it never published, and died.
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "wal"}).(*stratov1.OpenKeyResponse)
	h.commitOpen("bkt", "wal", open.OpenId, true, 4)
	late := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: open.OpenId}).(*stratov1.AllocateBlockResponse)
	require.False(t, h.closed("bkt", "wal"))
	res := h.must(&stratov1.RecoverLeaseRequest{Volume: "vol", Bucket: "bkt", Path: "wal"}).(*stratov1.RecoverLeaseResponse)
	require.True(t, res.Closed)
	require.Equal(t, int64(4), res.Length)
	require.True(t, h.closed("bkt", "wal"))
	require.Equal(t, []uint64{late.Block.BlockId.LocalId}, blockIDs(h.deletedBlocks()), "the unpublished block goes")
	// The old writer is fenced: neither hsync nor commit.
	h.fails(ErrOpenKeyNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: open.OpenId, Hsync: true})
	h.fails(ErrOpenKeyNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: open.OpenId})
	// Recovering a closed file is a no-op that says so.
	require.True(t, h.must(&stratov1.RecoverLeaseRequest{Volume: "vol", Bucket: "bkt", Path: "wal"}).(*stratov1.RecoverLeaseResponse).Closed)

	// An appender dies after an hsync; the next appender's lease is its
	// own: the first one's handle commits nothing through it.
	first := h.must(&stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "wal"}).(*stratov1.OpenKeyResponse)
	h.commitOpen("bkt", "wal", first.OpenId, true, 3)
	h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: first.OpenId})
	res = h.must(&stratov1.RecoverLeaseRequest{Volume: "vol", Bucket: "bkt", Path: "wal"}).(*stratov1.RecoverLeaseResponse)
	require.Equal(t, int64(7), res.Length, "closed at the last hsync")
	second := h.appendBlocks("bkt", "wal", false, 2)
	require.NotEqual(t, first.OpenId, second)
	h.fails(ErrOpenKeyNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: first.OpenId})
	_, lens := h.blocksOf("bkt", "wal")
	require.Equal(t, []int64{4, 3, 2}, lens)
	bytes, _ := h.usage("bkt")
	require.Equal(t, int64(9), bytes)

	// An appender's open key that expires closes the file the same way.
	third := h.appendBlocks("bkt", "wal", true, 1)
	h.now = h.now.Add(h.ns.opts.OpenKeyTTL + 1)
	cmd, err := h.ns.PrepareExpiry(h.db, h.now, 10)
	require.NoError(t, err)
	_, err = h.apply(cmd)
	require.NoError(t, err)
	require.True(t, h.closed("bkt", "wal"))
	h.fails(ErrOpenKeyNotFound, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "wal", OpenId: third})
	_, lens = h.blocksOf("bkt", "wal")
	require.Equal(t, []int64{4, 3, 2, 1}, lens)
}

func TestTruncate(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("bkt", "f", 10, 10, 10)
	ids := func() []uint64 { return blockIDs(h.deletedBlocks()) }
	// Mid-block: the block it falls in is ended there, the last one freed.
	res := h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 15}).(*stratov1.TruncateResponse)
	require.True(t, res.Done)
	_, lens := h.blocksOf("bkt", "f")
	require.Equal(t, []int64{10, 5}, lens)
	require.Equal(t, []uint64{3}, ids())
	bytes, _ := h.usage("bkt")
	require.Equal(t, int64(15), bytes)
	// On a block boundary.
	h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 10})
	_, lens = h.blocksOf("bkt", "f")
	require.Equal(t, []int64{10}, lens)
	require.Equal(t, []uint64{3, 2}, ids())
	// An append after a truncate starts a new block: the truncated bytes
	// are never published again.
	h.appendBlocks("bkt", "f", false, 6)
	_, lens = h.blocksOf("bkt", "f")
	require.Equal(t, []int64{10, 6}, lens)
	// To its own length: nothing changes; longer, or negative: refused.
	require.True(t, h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 16}).(*stratov1.TruncateResponse).Done)
	h.fails(ErrInvalid, &stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 17})
	h.fails(ErrInvalid, &stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: -1})
	h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 0})
	_, lens = h.blocksOf("bkt", "f")
	require.Empty(t, lens)
	bytes, names := h.usage("bkt")
	require.Equal(t, [2]int64{0, 1}, [2]int64{bytes, names})
	require.ElementsMatch(t, []uint64{3, 2, 1, 4}, ids())
}

func TestConcat(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	target := h.createFile("bkt", "t", 10, 3)
	h.createFile("bkt", "d/s1", 4)
	h.createFile("bkt", "d/s2", 5, 6)
	h.createFile("bkt", "one", 1)
	before, names := h.usage("bkt")
	res := h.must(&stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"d/s1", "d/s2"}}).(*stratov1.ConcatResponse)
	require.Equal(t, int64(28), res.Length)
	ki, lens := h.blocksOf("bkt", "t")
	require.Equal(t, []int64{10, 3, 4, 5, 6}, lens)
	require.Equal(t, target.ObjectId, ki.ObjectId)
	_, err := h.stat("bkt", "d/s1")
	require.ErrorIs(t, err, ErrNotFound)
	after, namesAfter := h.usage("bkt")
	require.Equal(t, before, after, "the bytes move")
	require.Equal(t, names-2, namesAfter)
	require.Empty(t, h.deletedBlocks(), "no block freed")

	h.fails(ErrInvalid, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t"})
	h.fails(ErrInvalid, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"t"}})
	h.fails(ErrInvalid, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"one", "one"}})
	h.fails(ErrNotFound, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "nope", Sources: []string{"one"}})
	h.fails(ErrNotFound, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"nope"}})
	h.fails(ErrIsADirectory, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"d"}})
	open := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "open"}).(*stratov1.OpenKeyResponse)
	h.commitOpen("bkt", "open", open.OpenId, true, 2)
	h.fails(ErrFileOpen, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"open"}})
	h.fails(ErrFileOpen, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "open", Sources: []string{"one"}})
	one := h.must(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "r1", Replication: stratov1.ReplicationFactor_REPLICATION_ONE}).(*stratov1.OpenKeyResponse)
	h.commitBlocks("bkt", "r1", one.OpenId, 1)
	h.fails(ErrInvalidBlocks, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"r1"}})
}

// TestAppendTruncateConcatSnapshots: a snapshot taken before an append, a
// truncate or a concat still reads the old content, the blocks it holds
// are not freed until it goes, and the bytes are released then.
func TestAppendTruncateConcatSnapshots(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("bkt", "f", 10, 10)
	h.createFile("bkt", "t", 3)
	h.createFile("bkt", "s", 4)
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "bkt", Name: "s1"})
	h.fails(ErrHasSnapshots, &stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"s"}})

	h.appendBlocks("bkt", "f", false, 7)
	h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 5})
	_, lens := h.blocksOf("bkt", "f")
	require.Equal(t, []int64{5}, lens)
	_, lens = h.blocksOf("bkt", ".snapshot/s1/f")
	require.Equal(t, []int64{10, 10}, lens, "the snapshot reads the file as it was")
	require.Empty(t, h.deletedBlocks(), "the snapshot and the file hold every block")
	bytes, _ := h.usage("bkt")
	require.Equal(t, int64(27+7), bytes, "held bytes stay charged until their last holder goes")

	h.createFile("bkt", "s2", 6)
	h.must(&stratov1.ConcatRequest{Volume: "vol", Bucket: "bkt", Target: "t", Sources: []string{"s2"}})
	_, lens = h.blocksOf("bkt", "t")
	require.Equal(t, []int64{3, 6}, lens)
	_, lens = h.blocksOf("bkt", ".snapshot/s1/t")
	require.Equal(t, []int64{3}, lens)

	// Snapshot gone and purged, files deleted: every block is freed once
	// and the bucket holds nothing.
	h.must(&stratov1.DeleteSnapshotRequest{Volume: "vol", Bucket: "bkt", Name: "s1"})
	for i := 0; ; i++ {
		require.Less(t, i, 1000)
		cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, 3)
		require.NoError(t, err)
		if cmd == nil {
			break
		}
		_, err = h.apply(cmd)
		require.NoError(t, err)
	}
	for _, f := range []string{"f", "t", "s"} {
		h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: f})
	}
	freed := blockIDs(h.deletedBlocks())
	require.ElementsMatch(t, []uint64{1, 2, 3, 4, 5, 6}, freed)
	bytes, names := h.usage("bkt")
	require.Equal(t, [2]int64{0, 0}, [2]int64{bytes, names})
}

// TestRenameWhileAppending: the appender's commit follows the file to its
// new name (Hadoop's contract testRenameFileBeingAppended).
func TestRenameWhileAppending(t *testing.T) {
	for _, layout := range []stratov1.BucketLayout{stratov1.BucketLayout_LAYOUT_FSO, stratov1.BucketLayout_LAYOUT_OBS} {
		t.Run(layout.String(), func(t *testing.T) {
			h := newHarness(t)
			h.volBucket("bkt", layout)
			h.createFile2(layout, "bkt", "d/f", 3)
			open := h.must(&stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "d/f"}).(*stratov1.OpenKeyResponse)
			if layout == stratov1.BucketLayout_LAYOUT_FSO {
				h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "e"})
				h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "bkt", Src: "d/f", Dst: "e/g"})
			} else {
				h.must(&stratov1.RenameKeyRequest{Volume: "vol", Bucket: "bkt", FromKey: "d/f", ToKey: "e/g"})
			}
			require.False(t, h.closed("bkt", "e/g"))
			h.commitOpen("bkt", "d/f", open.OpenId, false, 4)
			_, lens := h.blocksOf("bkt", "e/g")
			require.Equal(t, []int64{3, 4}, lens)
			require.True(t, h.closed("bkt", "e/g"))
			_, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/f"})
			require.ErrorIs(t, err, ErrNotFound)
		})
	}
}

// TestTruncateThenAppendUnderSnapshot: a file a snapshot holds, truncated
// then appended to: the snapshot reads the old bytes; the cut blocks and
// bytes stay held until the object's last holder goes; then every block
// is freed once and the bucket's usage returns to nothing.
func TestTruncateThenAppendUnderSnapshot(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratov1.BucketLayout_LAYOUT_FSO)
	h.createFile("bkt", "f", 10, 10)
	h.must(&stratov1.CreateSnapshotRequest{Volume: "vol", Bucket: "bkt", Name: "s1"})
	h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 5})
	h.appendBlocks("bkt", "f", false, 3)
	h.must(&stratov1.TruncateRequest{Volume: "vol", Bucket: "bkt", Path: "f", NewLength: 7})
	h.appendBlocks("bkt", "f", false, 4)
	_, lens := h.blocksOf("bkt", "f")
	require.Equal(t, []int64{5, 2, 4}, lens)
	_, lens = h.blocksOf("bkt", ".snapshot/s1/f")
	require.Equal(t, []int64{10, 10}, lens)
	require.Empty(t, h.deletedBlocks())
	h.must(&stratov1.DeleteSnapshotRequest{Volume: "vol", Bucket: "bkt", Name: "s1"})
	for i := 0; ; i++ {
		require.Less(t, i, 1000)
		cmd, err := h.ns.PreparePurgeSnapshots(h.db, h.now, 3)
		require.NoError(t, err)
		if cmd == nil {
			break
		}
		_, err = h.apply(cmd)
		require.NoError(t, err)
	}
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "bkt", Path: "f"})
	require.ElementsMatch(t, []uint64{1, 2, 3, 4}, blockIDs(h.deletedBlocks()))
	bytes, names := h.usage("bkt")
	require.Equal(t, [2]int64{0, 0}, [2]int64{bytes, names})
}

// TestRenameWhileWriting: a new file published by an hsync and renamed
// before its close is closed at its new name; a closed file appended to
// twice follows a rename during each append (a close marks the record
// closed, an append's lease clears the mark).
func TestRenameWhileWriting(t *testing.T) {
	for _, layout := range []stratov1.BucketLayout{stratov1.BucketLayout_LAYOUT_FSO, stratov1.BucketLayout_LAYOUT_OBS} {
		t.Run(layout.String(), func(t *testing.T) {
			h := newHarness(t)
			h.volBucket("bkt", layout)
			rename := func(src, dst string) {
				if layout == stratov1.BucketLayout_LAYOUT_FSO {
					h.must(&stratov1.RenameRequest{Volume: "vol", Bucket: "bkt", Src: src, Dst: dst})
				} else {
					h.must(&stratov1.RenameKeyRequest{Volume: "vol", Bucket: "bkt", FromKey: src, ToKey: dst})
				}
			}
			openID := h.openKey("bkt", "a")
			var blocks []*stratov1.BlockLocation
			commit := func(hsync bool, length int64) {
				bl := h.must(&stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "bkt", Key: "a", OpenId: openID, SizeHint: length}).(*stratov1.AllocateBlockResponse)
				blocks = append(blocks, &stratov1.BlockLocation{BlockId: bl.Block.BlockId, Length: length})
				h.must(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "a", OpenId: openID, Blocks: blocks, Hsync: hsync})
			}
			commit(true, 5)
			rename("a", "b")
			require.False(t, h.closed("bkt", "b"))
			commit(false, 6)
			_, lens := h.blocksOf("bkt", "b")
			require.Equal(t, []int64{5, 6}, lens)
			require.True(t, h.closed("bkt", "b"))
			for i, name := range []string{"c", "d"} {
				open := h.must(&stratov1.AppendFileRequest{Volume: "vol", Bucket: "bkt", Path: "b"}).(*stratov1.OpenKeyResponse)
				rename("b", name)
				h.commitOpen("bkt", "b", open.OpenId, false, int64(7+i))
				rename(name, "b")
			}
			_, lens = h.blocksOf("bkt", "b")
			require.Equal(t, []int64{5, 6, 7, 8}, lens)
			require.True(t, h.closed("bkt", "b"))
		})
	}
}
