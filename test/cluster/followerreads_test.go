package cluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
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

// TestFollowerReadsFindMovedReplicas: a follower answers a lookup with the
// pipeline a block was written through, since only the leader hears where
// replicas are now. Once every member of that pipeline is gone (one lost
// and copied to the fourth datanode, the other two stopped), a reader with
// follower reads that finds none of them asks the leader where the block
// is and reads it from the copy.
func TestFollowerReadsFindMovedReplicas(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, Datanodes: 4, BlockSize: 4 << 20, ContainerSize: 16 << 20,
		HeartbeatInterval: 3 * time.Second, DeadAfter: 2 * time.Minute, Clock: fakeClock()},
		stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	want := fastRandom(2<<20+33, 5)
	require.NoError(t, f.write(ctx, "/vol/bkt/moved", want, 256<<10, 0, nil))
	f.closeAllContainers()
	f.waitThreeCopies("", 20*time.Second)
	r, err := f.cl.Open(ctx, "/vol/bkt/moved")
	require.NoError(t, err)
	written := r.Info().Blocks[0].Pipeline.Members
	require.NoError(t, r.Close())
	require.Len(t, written, 3)

	victim := f.index(written[0].Id)
	require.NoError(t, f.c.StopDatanode(victim))
	require.NoError(t, os.RemoveAll(f.c.DatanodeDir(victim)))
	f.waitThreeCopies(written[0].Id, 60*time.Second)
	for _, m := range written[1:] {
		require.NoError(t, f.c.StopDatanode(f.index(m.Id)))
	}

	tok, err := f.c.AdminToken()
	require.NoError(t, err)
	reader, err := client.New(client.Options{Meta: f.c.MetaAddrs(), TLS: f.c.ClientTLS(), Token: tok, NoToken: tok == "",
		FollowerReads: true, Logger: f.c.Options().Logger})
	require.NoError(t, err)
	defer func() { _ = reader.Close() }()
	for range 3 {
		r, err := reader.Open(ctx, "/vol/bkt/moved")
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.True(t, bytes.Equal(want, got))
	}
	served, _ := reader.Meta().FollowerReadStats()
	require.Positive(t, served, "a follower answered a lookup")
}

// TestNoFollowerReads: replicas run with meta.Options.NoFollowerReads
// (strato meta --follower-reads=false) refuse the follower reads asked of
// them; a client with follower reads gets every answer from the leader all
// the same, after a fallback per replica left out.
func TestNoFollowerReads(t *testing.T) {
	c := startAuth(t, 3, func(_ int, o *meta.Options) { o.NoFollowerReads = true })
	ctx := t.Context()
	tok, err := c.AdminToken()
	require.NoError(t, err)
	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), TLS: c.ClientTLS(), Token: tok, FollowerReads: true})
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "nofr"})
	require.NoError(t, err)
	for range 12 {
		_, err := cl.GetVolume(ctx, "nofr")
		require.NoError(t, err)
	}
	served, fallbacks := cl.Meta().FollowerReadStats()
	require.Zero(t, served)
	require.Positive(t, fallbacks)
	for i := range c.MetaAddrs() {
		require.Zero(t, c.MetaServer(i).Metrics().FollowerReads)
	}
}
