package cluster

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestFollowerReadsCheckTokensAsTheLeader: with token authentication, a
// client with follower reads reads from every replica with its token, and
// once its token's revocation has returned, no replica serves it anything:
// a follower checks the token again after its read point, against a state
// that holds the revocation, as the leader would.
func TestFollowerReadsCheckTokensAsTheLeader(t *testing.T) {
	c := startAuth(t, 3, nil)
	ctx := t.Context()
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	_, err = admin.CreateUser(ctx, "erin", false, nil)
	require.NoError(t, err)
	_, err = admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "erinvol", Owner: "erin"})
	require.NoError(t, err)

	for round := range 5 {
		tok, info := issue(t, admin, "erin", time.Hour)
		erin, err := client.New(client.Options{Meta: c.MetaAddrs(), TLS: c.ClientTLS(), Token: tok, FollowerReads: true})
		require.NoError(t, err)
		for range 6 {
			v, err := erin.GetVolume(ctx, "erinvol")
			require.NoError(t, err)
			require.Equal(t, "erin", v.GetOwner())
		}
		require.NoError(t, admin.RevokeToken(ctx, info.GetId()))
		for i := range 6 {
			_, err := erin.GetVolume(ctx, "erinvol")
			require.ErrorIs(t, err, client.ErrUnauthenticated, "round %d, read %d after the revocation returned", round, i)
		}
		served, _ := erin.Meta().FollowerReadStats()
		require.Positive(t, served, "followers served erin's reads")
		require.NoError(t, erin.Close())
	}
	var followerReads uint64
	for i := range c.MetaAddrs() {
		if m := c.MetaServer(i); m != nil {
			followerReads += m.Metrics().FollowerReads
		}
	}
	require.Positive(t, followerReads)
}

// TestFollowerReadsSignBlockTokens: with token authentication, the block
// locations a follower hands out carry read tokens it signed with the
// group's replicated keys, which the datanodes (who learn the keys from
// the leader) accept: a client with follower reads reads every key whole,
// whichever replica looked it up.
func TestFollowerReadsSignBlockTokens(t *testing.T) {
	c, cl := tokenClusterWith(t, 3, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 200 * time.Millisecond}, nil)
	data := tokenData(1<<20+17, 7)
	for i := range 3 {
		put(t, cl, "three", fmt.Sprint("k", i), data)
	}
	tok, err := c.AdminToken()
	require.NoError(t, err)
	reader, err := client.New(client.Options{Meta: c.MetaAddrs(), TLS: c.ClientTLS(), Token: tok, FollowerReads: true})
	require.NoError(t, err)
	defer func() { _ = reader.Close() }()
	for range 4 {
		for i := range 3 {
			require.Equal(t, data, get(t, reader, "three", fmt.Sprint("k", i)))
		}
	}
	served, _ := reader.Meta().FollowerReadStats()
	require.Positive(t, served)
}
