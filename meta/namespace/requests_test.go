package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

// A reply recorded before the API moved to strato.v1 (type
// "strato.CreateVolumeResponse") is still found for a retry.
func TestRecordedReplyOfThePreV1Package(t *testing.T) {
	db := openDB(t)
	id := &stratov1.RequestID{Client: "c1", Seq: 7}
	reply, err := proto.Marshal(&stratov1.CreateVolumeResponse{Volume: &stratov1.VolumeInfo{Name: "vol", Id: 42}})
	require.NoError(t, err)
	b := db.NewBatch()
	require.NoError(t, put(b, requestKey(nil, id.Client, id.Seq), &stratov1.RequestResult{Type: "strato.CreateVolumeResponse", Reply: reply}))
	require.NoError(t, b.Commit(nil))

	got, found, err := recordedReply(db, id)
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "vol", got.(*stratov1.CreateVolumeResponse).GetVolume().GetName())

	require.Equal(t, "strato.v1.KeyInfo", string(replyType("strato.v1.KeyInfo")))
	require.Equal(t, "other.Thing", string(replyType("other.Thing")))
}
