package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/stratopb"
)

// Commands prepared against the same state and applied one after the
// other: Apply, not Prepare, decides. The first of each pair succeeds; the
// second fails with the given class and writes nothing (harness.apply
// checks that the batch stays empty).
func TestApplyRechecksPreparedState(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.volBucket("obs", stratopb.BucketLayout_LAYOUT_OBS)
	h.must(&stratopb.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d"})
	h.createFile("fsb", "d/f", 1)
	h.putKey("obs", "k", 1)
	h.must(&stratopb.CreateVolumeRequest{Name: "gone"})

	for _, tc := range []struct {
		name          string
		first, second proto.Message
		class         error
	}{
		{"volume twice", &stratopb.CreateVolumeRequest{Name: "vol2"}, &stratopb.CreateVolumeRequest{Name: "vol2"}, ErrExists},
		{"bucket twice", &stratopb.CreateBucketRequest{Volume: "vol", Name: "b2b"}, &stratopb.CreateBucketRequest{Volume: "vol", Name: "b2b"}, ErrExists},
		{"bucket in a deleted volume", &stratopb.DeleteVolumeRequest{Name: "gone"}, &stratopb.CreateBucketRequest{Volume: "gone", Name: "bkt"}, ErrNotFound},
		{"mkdir then create there", &stratopb.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "x"},
			&stratopb.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x"}, ErrFailedPrecondition},
		{"delete of a directory filled meanwhile", &stratopb.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/sub"},
			&stratopb.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d"}, ErrFailedPrecondition},
		{"delete twice", &stratopb.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/f"},
			&stratopb.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/f"}, ErrNotFound},
		{"rename twice", &stratopb.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d", Dst: "e"},
			&stratopb.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d", Dst: "e2"}, ErrNotFound},
		{"rename key twice", &stratopb.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "k", ToKey: "k2"},
			&stratopb.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "k", ToKey: "k3"}, ErrNotFound},
		{"delete key twice", &stratopb.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k2"},
			&stratopb.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k2"}, ErrNotFound},
		{"create in a directory deleted meanwhile", &stratopb.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "e", Recursive: true},
			&stratopb.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "e/new"}, ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c1, err := h.prepare(tc.first)
			require.NoError(t, err)
			c2, err := h.prepare(tc.second)
			require.NoError(t, err, "prepare sees the old state and accepts")
			_, err = h.apply(c1)
			require.NoError(t, err)
			_, err = h.apply(c2)
			require.ErrorIs(t, err, tc.class)
		})
	}
}

// Apply validates commands on its own: a command no Prepare would produce
// is refused.
func TestApplyValidatesCommands(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	for _, cmd := range []*stratopb.NamespaceCommand{
		{},
		{Op: &stratopb.NamespaceCommand_CreateVolume{CreateVolume: &stratopb.VolumeInfo{Name: "X"}}},
		{Op: &stratopb.NamespaceCommand_CreateBucket{CreateBucket: &stratopb.BucketInfo{Volume: "vol", Name: "bkt2"}}},      // no replication, no block size
		{Op: &stratopb.NamespaceCommand_OpenKey{OpenKey: &stratopb.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "f"}}}, // no expiry
		{Op: &stratopb.NamespaceCommand_OpenKey{OpenKey: &stratopb.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "a//b", ExpiresAt: 1}}},
		{Op: &stratopb.NamespaceCommand_OpenKey{OpenKey: &stratopb.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "f", ExpiresAt: 1,
			Blocks: []*stratopb.BlockLocation{{}}}}},
		{Op: &stratopb.NamespaceCommand_Reclaim{Reclaim: &stratopb.ReclaimCommand{}}},
	} {
		_, err := h.apply(cmd)
		require.ErrorIs(t, err, ErrInvalid, "%v", cmd)
	}
}
