package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Commands prepared against the same state and applied one after the
// other: Apply, not Prepare, decides. The first of each pair succeeds; the
// second fails with the given class and writes nothing (harness.apply
// checks that the batch stays empty).
func TestApplyRechecksPreparedState(t *testing.T) {
	h := newHarness(t)
	h.volBucket("fsb", fso)
	h.volBucket("obs", stratov1.BucketLayout_LAYOUT_OBS)
	h.must(&stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d"})
	h.createFile("fsb", "d/f", 1)
	h.putKey("obs", "k", 1)
	h.must(&stratov1.CreateVolumeRequest{Name: "gone"})

	for _, tc := range []struct {
		name          string
		first, second proto.Message
		class         error
	}{
		{"volume twice", &stratov1.CreateVolumeRequest{Name: "vol2"}, &stratov1.CreateVolumeRequest{Name: "vol2"}, ErrExists},
		{"bucket twice", &stratov1.CreateBucketRequest{Volume: "vol", Name: "b2b"}, &stratov1.CreateBucketRequest{Volume: "vol", Name: "b2b"}, ErrExists},
		{"bucket in a deleted volume", &stratov1.DeleteVolumeRequest{Name: "gone"}, &stratov1.CreateBucketRequest{Volume: "gone", Name: "bkt"}, ErrNotFound},
		{"mkdir then create there", &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "x"},
			&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "x"}, ErrFailedPrecondition},
		{"delete of a directory filled meanwhile", &stratov1.CreateDirectoryRequest{Volume: "vol", Bucket: "fsb", Path: "d/sub"},
			&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d"}, ErrFailedPrecondition},
		{"delete twice", &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/f"},
			&stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "d/f"}, ErrNotFound},
		{"rename twice", &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d", Dst: "e"},
			&stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "d", Dst: "e2"}, ErrNotFound},
		{"rename key twice", &stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "k", ToKey: "k2"},
			&stratov1.RenameKeyRequest{Volume: "vol", Bucket: "obs", FromKey: "k", ToKey: "k3"}, ErrNotFound},
		{"delete key twice", &stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k2"},
			&stratov1.DeleteKeyRequest{Volume: "vol", Bucket: "obs", Key: "k2"}, ErrNotFound},
		{"create in a directory deleted meanwhile", &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "e", Recursive: true},
			&stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "e/new"}, ErrNotFound},
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
	for _, cmd := range []*stratov1.NamespaceCommand{
		{},
		{Op: &stratov1.NamespaceCommand_CreateVolume{CreateVolume: &stratov1.VolumeRecord{Name: "X"}}},
		{Op: &stratov1.NamespaceCommand_CreateBucket{CreateBucket: &stratov1.BucketRecord{Volume: "vol", Name: "bkt2"}}},    // no replication, no block size
		{Op: &stratov1.NamespaceCommand_OpenKey{OpenKey: &stratov1.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "f"}}}, // no expiry
		{Op: &stratov1.NamespaceCommand_OpenKey{OpenKey: &stratov1.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "a//b", ExpiresAtUnixMs: 1}}},
		{Op: &stratov1.NamespaceCommand_OpenKey{OpenKey: &stratov1.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "f", ExpiresAtUnixMs: 1,
			Blocks: []*stratov1.BlockRecord{{}}}}},
		{Op: &stratov1.NamespaceCommand_Reclaim{Reclaim: &stratov1.ReclaimCommand{}}},
	} {
		_, err := h.apply(cmd)
		require.ErrorIs(t, err, ErrInvalid, "%v", cmd)
	}
}
