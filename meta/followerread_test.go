package meta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestFollowersServeTheReadsAskedOfThem: a follower serves a read RPC a
// caller marks with FollowerReadMetadata, linearizably (a bucket created
// at the leader is there when a follower is asked right after), and counts
// it; without the mark it still answers NotLeader, and writes are refused
// with the mark too.
func TestFollowersServeTheReadsAskedOfThem(t *testing.T) {
	servers := group(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l := leaderOf(t, servers)
	_, err := l.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	fctx := metadata.NewIncomingContext(ctx, metadata.Pairs(FollowerReadMetadata, "1"))
	for _, s := range servers {
		if s == l {
			continue
		}
		_, err := s.GetVolume(ctx, &stratov1.GetVolumeRequest{Name: "vol"})
		requireCode(t, codes.Unavailable, err)
		for i := range 10 {
			name := fmt.Sprintf("b%d-%d", s.ID(), i)
			_, err := l.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: name, Layout: stratov1.BucketLayout_LAYOUT_FSO})
			require.NoError(t, err)
			b, err := s.GetBucket(fctx, &stratov1.GetBucketRequest{Volume: "vol", Name: name})
			require.NoError(t, err, "bucket %s read at follower %d right after its creation", name, s.ID())
			require.Equal(t, name, b.GetName())
		}
		list, err := s.ListBuckets(fctx, &stratov1.ListBucketsRequest{Volume: "vol"})
		require.NoError(t, err)
		require.NotEmpty(t, list.GetBuckets())
		_, err = s.CreateBucket(fctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "refused"})
		requireCode(t, codes.Unavailable, err)
		require.EqualValues(t, 11, s.Metrics().FollowerReads)
		require.Positive(t, s.node.Metrics().FollowerReads)
	}
	_, err = l.GetVolume(fctx, &stratov1.GetVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	require.Zero(t, l.Metrics().FollowerReads, "the leader serves its reads as leader")
}
