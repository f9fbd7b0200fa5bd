package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// deferOpen prepares a deferrable open the way the server does and returns
// the create token (nil: the open must be proposed).
func (h *harness) deferOpen(req proto.Message) ([]byte, error) {
	h.t.Helper()
	cmd, err := h.prepare(req)
	if err != nil {
		return nil, err
	}
	resp, err := h.ns.DeferOpen(h.db, cmd.GetOpenKey())
	if err != nil || resp == nil {
		return nil, err
	}
	require.Zero(h.t, resp.OpenId)
	require.Equal(h.t, stratov1.ChecksumType_CHECKSUM_CRC32C, resp.ChecksumType)
	return resp.CreateToken, nil
}

func TestDeferredCreate(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fso", stratov1.BucketLayout_LAYOUT_FSO)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "d"})
	create := func(path string, overwrite, recursive bool) *stratov1.CreateFileRequest {
		return &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fso", Path: path, Overwrite: overwrite, Recursive: recursive, Deferrable: true}
	}
	commit := func(bucket, key string, token []byte) *stratov1.CommitKeyRequest {
		return &stratov1.CommitKeyRequest{Volume: "vol", Bucket: bucket, Key: key, CreateToken: token}
	}
	_, names0 := h.usage("fso")

	// Checked, not recorded: nothing is visible or open until the commit,
	// which opens and commits in one command.
	tok, err := h.deferOpen(create("d/f", false, false))
	require.NoError(t, err)
	require.NotEmpty(t, tok)
	_, err = h.stat("fso", "d/f")
	require.ErrorIs(t, err, ErrNotFound)
	res := h.must(commit("fso", "d/f", tok)).(*stratov1.CommitKeyResponse)
	require.NotZero(t, res.ObjectId)
	st, err := h.stat("fso", "d/f")
	require.NoError(t, err)
	require.Zero(t, st.Length)
	_, names := h.usage("fso")
	require.Equal(t, names0+1, names)
	it, err := h.db.NewIter(nil)
	require.NoError(t, err)
	for it.First(); it.Valid(); it.Next() { // no open key and no expiry entry left
		k := it.Key()
		require.False(t, len(k) > 1 && k[0] == prefix && (k[1] == tagOpen || k[1] == tagExpiry), "open-key state left: %x", k)
	}
	require.NoError(t, it.Close())

	// Refusals at create, as an open would give them.
	_, err = h.deferOpen(create("d/f", false, false))
	require.ErrorIs(t, err, ErrFileExists)
	_, err = h.deferOpen(create("d", true, false))
	require.ErrorIs(t, err, ErrIsADirectory)
	_, err = h.deferOpen(create("x/f", true, false))
	require.ErrorIs(t, err, ErrParentNotFound)
	// An open that creates parents, or expects data, is proposed.
	tok, err = h.deferOpen(create("x/y/f", true, true))
	require.NoError(t, err)
	require.Nil(t, tok)
	tok, err = h.deferOpen(&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fso", Path: "d/g", SizeHint: 1 << 20, Deferrable: true})
	require.NoError(t, err)
	require.Nil(t, tok)

	// Every check runs again at the commit: the state may have changed.
	tok, err = h.deferOpen(create("d/g", false, false))
	require.NoError(t, err)
	h.createFile("fso", "d/g", 10)
	h.fails(ErrFileExists, commit("fso", "d/g", tok))
	tok, err = h.deferOpen(create("d/g", true, false))
	require.NoError(t, err)
	h.must(commit("fso", "d/g", tok)) // overwrite: replaces the 10-byte file
	st, err = h.stat("fso", "d/g")
	require.NoError(t, err)
	require.Zero(t, st.Length)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fso", Path: "e"})
	tok, err = h.deferOpen(create("e/f", true, false))
	require.NoError(t, err)
	h.must(&stratov1.DeleteRequest{Volume: "vol", Bucket: "fso", Path: "e", Recursive: true})
	h.fails(ErrParentNotFound, commit("fso", "e/f", tok))

	// Bad tokens and commits.
	tok, err = h.deferOpen(create("d/h", true, false))
	require.NoError(t, err)
	h.fails(ErrInvalid, commit("fso", "d/h", []byte("not a token")))
	h.fails(ErrInvalid, commit("obs", "d/h", tok))
	h.fails(ErrOpenKeyNotFound, commit("fso", "d/other", tok))
	c := commit("fso", "d/h", tok)
	c.Hsync = true
	h.fails(ErrInvalid, c)
	c = commit("fso", "d/h", tok)
	c.OpenId = 5
	h.fails(ErrInvalid, c)
	c = commit("fso", "d/h", tok)
	c.Blocks = []*stratov1.BlockLocation{{BlockId: &stratov1.BlockID{ContainerId: 1, LocalId: 1}, Length: 1}}
	h.fails(ErrInvalid, c)
	h.must(commit("fso", "d/h", tok))

	// OBS: OpenKey semantics, the key appears at the commit.
	tok, err = h.deferOpen(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b", Deferrable: true})
	require.NoError(t, err)
	h.must(commit("obs", "a/b", tok))
	lk, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: "a/b"})
	require.NoError(t, err)
	require.Zero(t, lk.Key.Size)
}

// A deferred write's commit and the refusal of a retry of it (at a leader
// that no longer held the token) count in log order: the first applied
// decides, and the other gives its reply and changes nothing.
func TestWriteTokenRefusalInLogOrder(t *testing.T) {
	h := newHarness(t)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	// commit prepares the commit of a deferred write of key under request
	// rid, as a leader holding its token would propose it.
	commit := func(key string, rid *stratov1.RequestID) *stratov1.NamespaceCommand {
		t.Helper()
		cmd, err := h.prepare(&stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: key, SizeHint: 10, Deferrable: true})
		require.NoError(t, err)
		oc := cmd.GetOpenKey()
		require.Len(t, oc.Blocks, 1)
		oc.WriteNonce = []byte("0123456789abcdef")
		resp, err := h.ns.DeferOpen(h.db, oc)
		require.NoError(t, err)
		require.True(t, IsWriteToken(resp.CreateToken))
		cmd, err = h.prepare(&stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: key, CreateToken: resp.CreateToken,
			Blocks: []*stratov1.BlockLocation{{BlockId: &stratov1.BlockID{ContainerId: oc.Blocks[0].BlockId.ContainerId,
				LocalId: oc.Blocks[0].BlockId.LocalId}, Length: 10}}})
		require.NoError(t, err)
		cmd.Request = rid
		return cmd
	}
	exists := func(key string) bool {
		_, err := h.rd().LookupKey(&stratov1.LookupKeyRequest{Volume: "vol", Bucket: "obs", Key: key})
		if err != nil {
			require.ErrorIs(t, err, ErrNotFound)
		}
		return err == nil
	}

	// The refusal first: the commit that took the token, applied after
	// it, gives the refusal and commits nothing.
	rid := &stratov1.RequestID{Client: "c", Seq: 1}
	late := commit("late", rid)
	res, err := h.apply(h.ns.PrepareRefuseWriteToken(h.now, rid))
	require.NoError(t, err)
	require.IsType(t, &stratov1.WriteTokenRefused{}, res)
	res, err = h.apply(late)
	require.NoError(t, err)
	require.IsType(t, &stratov1.WriteTokenRefused{}, res)
	require.False(t, exists("late"))
	_, usedNames := h.usage("obs")
	require.Zero(t, usedNames)

	// The commit first: the refusal gives the commit's reply.
	rid = &stratov1.RequestID{Client: "c", Seq: 2}
	res, err = h.apply(commit("early", rid))
	require.NoError(t, err)
	first := res.(*stratov1.CommitKeyResponse)
	res, err = h.apply(h.ns.PrepareRefuseWriteToken(h.now, rid))
	require.NoError(t, err)
	require.True(t, proto.Equal(first, res), "%v, then %v", first, res)
	require.True(t, exists("early"))

	// A refusal names the request it refuses.
	_, err = h.apply(h.ns.PrepareRefuseWriteToken(h.now, nil))
	require.ErrorIs(t, err, ErrInvalid)
}
