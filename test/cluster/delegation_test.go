package cluster

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// delegationUsers makes alice (the owner), rm (the renewer) and eve
// (neither) and returns a client presenting each one's own token.
func delegationUsers(t *testing.T, c *minicluster.Cluster) (admin, alice, rm, eve *client.Client) {
	t.Helper()
	admin, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	clients := make([]*client.Client, 3)
	for i, u := range []string{"alice", "rm", "eve"} {
		_, err := admin.CreateUser(t.Context(), u, false, nil)
		require.NoError(t, err)
		tok, _ := issue(t, admin, u, 0)
		clients[i] = tokenClient(t, c, tok)
	}
	return admin, clients[0], clients[1], clients[2]
}

func tokenClient(t *testing.T, c *minicluster.Cluster, tok string) *client.Client {
	t.Helper()
	cl, err := c.ClientWithToken(tok)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

func requireCode(t *testing.T, want codes.Code, err error, contains string) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want, status.Code(err), "%v", err)
	require.ErrorContains(t, err, contains)
}

// TestDelegationTokens, on a fake clock: a delegation token acts as its
// owner, cannot get tokens, is renewed by its renewer only (by the renew
// interval, never past its max date), is refused once expired or
// cancelled, is cancelled by its owner or renewer only, and is purged by
// the leader once expired.
func TestDelegationTokens(t *testing.T) {
	clock := fakeClock()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, Auth: true, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := t.Context()
	admin, alice, rm, eve := delegationUsers(t, c)

	issued := clock.Now().UnixMilli()
	dt, err := alice.GetDelegationToken(ctx, "rm/host.example.com@EXAMPLE.COM")
	require.NoError(t, err)
	info := dt.GetInfo()
	require.Equal(t, "alice", info.GetOwner())
	require.Equal(t, "rm", info.GetRenewer())
	require.Equal(t, issued, info.GetIssueUnixMs())
	require.Equal(t, issued+(24*time.Hour).Milliseconds(), info.GetExpiresUnixMs())
	require.Equal(t, issued+(7*24*time.Hour).Milliseconds(), info.GetMaxUnixMs())
	require.Equal(t, "dt"+itoa(info.GetSequence()), info.GetId())
	require.Equal(t, meta.DelegationIdentifier("alice", "rm", "", issued, info.GetMaxUnixMs(), info.GetSequence(), 1), dt.GetIdentifier())
	require.Equal(t, meta.FormatToken(info.GetId(), dt.GetPassword()), dt.GetToken())

	// It acts as alice, and gets no token.
	dcl := tokenClient(t, c, dt.GetToken())
	who, err := dcl.WhoAmI(ctx)
	require.NoError(t, err)
	require.Equal(t, "alice", who.GetUser())
	_, err = dcl.ListVolumes(ctx, "")
	require.NoError(t, err)
	_, err = dcl.GetDelegationToken(ctx, "rm")
	requireCode(t, codes.PermissionDenied, err, "real credential")
	_, _, err = dcl.IssueToken(ctx, "", 0)
	requireCode(t, codes.PermissionDenied, err, "real credential")

	// Only the renewer renews; a renewal is now + 24h, capped at the max date.
	_, err = alice.RenewDelegationToken(ctx, dt.GetToken())
	requireCode(t, codes.PermissionDenied, err, "only its renewer (rm)")
	_, err = dcl.RenewDelegationToken(ctx, dt.GetToken())
	requireCode(t, codes.PermissionDenied, err, "real credential")
	_, err = rm.RenewDelegationToken(ctx, dt.GetToken()[:len(dt.GetToken())-2]+"AA")
	requireCode(t, codes.NotFound, err, "unknown delegation token")
	// The last renewal (at 145 h) reaches the max date, so that the token
	// expires just past it below, not hours before (the leader purges
	// tokens an hour after they expired).
	for day := 1; day <= 8; day++ {
		step := 20 * time.Hour
		if day == 8 {
			step = 5 * time.Hour
		}
		clock.Advance(step)
		exp, err := rm.RenewDelegationToken(ctx, dt.GetToken())
		require.NoError(t, err)
		require.Equal(t, min(clock.Now().UnixMilli()+(24*time.Hour).Milliseconds(), info.GetMaxUnixMs()), exp)
		_, err = dcl.WhoAmI(ctx)
		require.NoError(t, err, "day %d", day)
	}
	// Past the max date it is refused, renewal too.
	clock.Advance(time.Duration(info.GetMaxUnixMs()-clock.Now().UnixMilli())*time.Millisecond + time.Millisecond)
	_, err = dcl.WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "expired")
	_, err = rm.RenewDelegationToken(ctx, dt.GetToken())
	requireCode(t, codes.PermissionDenied, err, "expired")

	// Unrenewed, a token expires after the renew interval.
	dt2, err := alice.GetDelegationToken(ctx, "rm")
	require.NoError(t, err)
	require.Greater(t, dt2.GetInfo().GetSequence(), info.GetSequence())
	d2 := tokenClient(t, c, dt2.GetToken())
	clock.Advance(24*time.Hour + time.Millisecond)
	_, err = d2.WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "expired")

	// Cancelling: the owner (with the token itself) or the renewer, not eve.
	dt3, err := alice.GetDelegationToken(ctx, "")
	require.NoError(t, err)
	require.Equal(t, "alice", dt3.GetInfo().GetRenewer())
	d3 := tokenClient(t, c, dt3.GetToken())
	requireCode(t, codes.PermissionDenied, eve.CancelDelegationToken(ctx, dt3.GetToken()), "only its owner (alice) or renewer (alice)")
	require.NoError(t, d3.CancelDelegationToken(ctx, dt3.GetToken()))
	_, err = d3.WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "cancelled")
	dt4, err := alice.GetDelegationToken(ctx, "rm")
	require.NoError(t, err)
	require.NoError(t, rm.CancelDelegationToken(ctx, dt4.GetToken()))
	_, err = tokenClient(t, c, dt4.GetToken()).WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "cancelled")

	// Listing is for administrators.
	_, err = alice.ListDelegationTokens(ctx)
	requireCode(t, codes.PermissionDenied, err, "administrators")
	all, err := admin.ListDelegationTokens(ctx)
	require.NoError(t, err)
	ids := map[string]bool{}
	for _, d := range all {
		ids[d.GetId()] = true
	}
	for _, d := range []*stratov1.GetDelegationTokenResponse{dt2, dt3, dt4} {
		require.True(t, ids[d.GetInfo().GetId()], "%s: expired or cancelled, kept an hour past its expiry", d.GetInfo().GetId())
	}
	userTokens, err := admin.ListTokens(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, userTokens, 1, "delegation tokens are not listed with the user's own")

	// The leader purges the expired ones: dt3 and dt4, cancelled, an hour
	// after their expiry passes.
	clock.Advance(25 * time.Hour)
	require.Eventually(t, func() bool {
		clock.Advance(time.Minute)
		all, err := admin.ListDelegationTokens(ctx)
		return err == nil && len(all) == 0
	}, 20*time.Second, 20*time.Millisecond)
	// Purged, a token is unknown.
	_, err = d2.WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "unknown token")
}

// TestDelegationTokensSurviveFailover: a delegation token issued by one
// leader authenticates and renews at the next, which continues its
// sequence numbers, and at a replica restarted on its directory.
func TestDelegationTokensSurviveFailover(t *testing.T) {
	c := startAuth(t, 3, nil)
	ctx := t.Context()
	_, alice, rm, _ := delegationUsers(t, c)
	dt, err := alice.GetDelegationToken(ctx, "rm")
	require.NoError(t, err)
	leader := -1
	for i := range 3 {
		if m := c.MetaServer(i); m != nil && m.Metrics().Leader {
			leader = i
		}
	}
	require.NotEqual(t, -1, leader)
	require.NoError(t, c.StopMeta(leader))

	dcl := tokenClient(t, c, dt.GetToken())
	require.Eventually(t, func() bool {
		who, err := dcl.WhoAmI(ctx)
		return err == nil && who.GetUser() == "alice"
	}, 30*time.Second, 50*time.Millisecond)
	_, err = rm.RenewDelegationToken(ctx, dt.GetToken())
	require.NoError(t, err)
	dt2, err := alice.GetDelegationToken(ctx, "rm")
	require.NoError(t, err)
	require.Greater(t, dt2.GetInfo().GetSequence(), dt.GetInfo().GetSequence())
	require.NoError(t, rm.CancelDelegationToken(ctx, dt2.GetToken()))

	// The old leader restarts on its directory, catches up, and the
	// second leader stops: the group of the restarted replica and the
	// third still knows both tokens.
	require.NoError(t, c.StartMeta(leader))
	m := c.MetaServer(leader)
	require.Eventually(t, func() bool {
		st := m.Metrics().Consensus
		return st.LeaderID != 0 && st.Applied >= c.Meta().Metrics().Consensus.Commit
	}, 20*time.Second, 50*time.Millisecond)
	second := -1
	for i := range 3 {
		if m := c.MetaServer(i); m != nil && m.Metrics().Leader {
			second = i
		}
	}
	require.NotEqual(t, leader, second)
	require.NoError(t, c.StopMeta(second))
	require.Eventually(t, func() bool {
		who, err := dcl.WhoAmI(ctx)
		return err == nil && who.GetUser() == "alice"
	}, 30*time.Second, 50*time.Millisecond)
	_, err = tokenClient(t, c, dt2.GetToken()).WhoAmI(ctx)
	requireCode(t, codes.Unauthenticated, err, "cancelled")
	_, err = rm.RenewDelegationToken(ctx, dt.GetToken())
	require.NoError(t, err)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestDelegationTokenBlockTokens: a key is written and read with a
// delegation token (its block tokens signed for its owner), and the block
// tokens meta hands out with it expire no later than it does; past its
// expiry the datanodes refuse them.
func TestDelegationTokenBlockTokens(t *testing.T) {
	clock := fakeClock()
	c, cl := tokenClusterWith(t, 3, minicluster.Options{HeartbeatInterval: 3 * time.Second, Clock: clock}, func(_ int, o *meta.Options) {
		o.DelegationTokenRenewInterval = time.Hour
	})
	ctx := t.Context()
	dt, err := cl.GetDelegationToken(ctx, "")
	require.NoError(t, err)
	dcl := tokenClient(t, c, dt.GetToken())
	data := tokenData(300<<10, 3)
	put(t, dcl, "three", "k", data)
	require.Equal(t, data, get(t, dcl, "three", "k"))
	ki, err := dcl.LookupKey(ctx, "vol", "three", "k")
	require.NoError(t, err)
	bt, err := wire.ParseBlockToken(ki.Blocks[0].Token)
	require.NoError(t, err)
	require.Equal(t, "admin", bt.User)
	require.Equal(t, dt.GetInfo().GetExpiresUnixMs(), bt.ExpiresUnixMs, "capped at the delegation token's expiry, not 10h")

	clock.Advance(time.Hour + time.Millisecond)
	conn, err := wire.Dial(ctx, ki.Blocks[0].Pipeline.Members[0].DataAddr, wire.ConnOptions{})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	err = conn.Authorize(ctx, ki.Blocks[0].Token)
	if err == nil {
		_, _, err = conn.ReadChunk(ctx, &wire.ReadChunkRequest{Block: wire.BlockID{ContainerID: ki.Blocks[0].BlockId.GetContainerId(),
			LocalID: ki.Blocks[0].BlockId.GetLocalId()}, Length: 10}, nil)
	}
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	_, err = dcl.LookupKey(ctx, "vol", "three", "k")
	requireCode(t, codes.Unauthenticated, err, "expired")
}
