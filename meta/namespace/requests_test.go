package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/stratopb"
)

// TestRetriedRequestsApplyOnce: the same command with the same request ID,
// applied again (a client retrying after a lost reply), returns the first
// reply and changes nothing; without an ID the repeat fails.
func TestRetriedRequestsApplyOnce(t *testing.T) {
	h := newHarness(t)
	h.volBucket("bkt", stratopb.BucketLayout_LAYOUT_FSO)
	h.createFile("bkt", "a/f", 10)

	rid := &stratopb.RequestID{Client: "c1", Seq: 7}
	cmd, err := h.prepare(&stratopb.RenameRequest{Volume: "vol", Bucket: "bkt", Src: "a/f", Dst: "a/g"})
	require.NoError(t, err)
	cmd.Request = rid
	first, err := h.apply(cmd)
	require.NoError(t, err)
	before := dump(t, h.db)
	again, err := h.apply(proto.Clone(cmd).(*stratopb.NamespaceCommand))
	require.NoError(t, err, "the retry gets the first reply")
	require.True(t, proto.Equal(first, again))
	require.Equal(t, before, dump(t, h.db), "and changes nothing")
	prev, found, err := h.rd().RecordedReply(rid)
	require.NoError(t, err)
	require.True(t, found)
	require.True(t, proto.Equal(first, prev))

	// Without a request ID the same rename fails: its source is gone.
	cmd.Request = nil
	_, err = h.apply(cmd)
	require.ErrorIs(t, err, ErrNotFound)

	// A commit retried after its open key is gone returns the first reply.
	open := h.must(&stratopb.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "a/h", Recursive: true}).(*stratopb.OpenKeyResponse)
	ccmd, err := h.prepare(&stratopb.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: "a/h", OpenId: open.OpenId})
	require.NoError(t, err)
	ccmd.Request = &stratopb.RequestID{Client: "c1", Seq: 8}
	c1, err := h.apply(ccmd)
	require.NoError(t, err)
	c2, err := h.apply(ccmd)
	require.NoError(t, err)
	require.True(t, proto.Equal(c1, c2))

	// A failed request records nothing: its retry runs again.
	fcmd, err := h.prepare(&stratopb.CreateDirectoryRequest{Volume: "vol", Bucket: "bkt", Path: "a/x"})
	require.NoError(t, err)
	h.createFile("bkt", "a/x", 1)
	fcmd.Request = &stratopb.RequestID{Client: "c1", Seq: 9}
	_, err = h.apply(fcmd)
	require.Error(t, err)
	_, found, err = h.rd().RecordedReply(fcmd.Request)
	require.NoError(t, err)
	require.False(t, found)
}

// TestRequestWindow: a client's records older than requestWindow are
// dropped as newer ones are written.
func TestRequestWindow(t *testing.T) {
	h := newHarness(t)
	for _, seq := range []uint64{3, 3 + requestWindow} {
		cmd, err := h.prepare(&stratopb.CreateVolumeRequest{Name: "v" + string(rune('a'+seq%26)) + "vol", Owner: "o"})
		require.NoError(t, err)
		cmd.Request = &stratopb.RequestID{Client: "c", Seq: seq}
		_, err = h.apply(cmd)
		require.NoError(t, err)
	}
	_, found, err := h.rd().RecordedReply(&stratopb.RequestID{Client: "c", Seq: 3})
	require.NoError(t, err)
	require.False(t, found)
	_, found, err = h.rd().RecordedReply(&stratopb.RequestID{Client: "c", Seq: 3 + requestWindow})
	require.NoError(t, err)
	require.True(t, found)
}
