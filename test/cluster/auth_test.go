package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/telemetry"
)

// startAuth starts meta alone (replicas of it) with token authentication.
func startAuth(t *testing.T, replicas int, configure func(i int, o *meta.Options)) *minicluster.Cluster {
	t.Helper()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, MetaReplicas: replicas, Auth: true, ConfigureMeta: configure})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// call invokes a method of meta at addr by name, with an empty request and
// the authorization metadata auth ("": none), and returns its status.
func call(t *testing.T, addr, method, auth string) *status.Status {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if auth != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
	}
	return status.Convert(conn.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{}))
}

func issue(t *testing.T, cl *client.Client, user string, ttl time.Duration) (string, *stratov1.Token) {
	t.Helper()
	tok, info, err := cl.IssueToken(t.Context(), user, ttl)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok, "strato1."+info.GetId()+"."), tok)
	return tok, info
}

// Every NamespaceService call is refused without a valid token, each case
// with Unauthenticated and a message that says which, and served with one.
func TestAuthEveryNamespaceCall(t *testing.T) {
	c := startAuth(t, 1, nil)
	ctx := t.Context()
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	_, err = admin.CreateUser(ctx, "bob", false, []string{"dev"})
	require.NoError(t, err)
	valid, _ := issue(t, admin, "bob", 0)
	expired, _ := issue(t, admin, "bob", time.Millisecond)
	revoked, revokedInfo := issue(t, admin, "bob", 0)
	require.NoError(t, admin.RevokeToken(ctx, revokedInfo.GetId()))
	id, _, _ := strings.Cut(strings.TrimPrefix(valid, "strato1."), ".")
	wrongSecret := "strato1." + id + ".AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	time.Sleep(5 * time.Millisecond)

	refusals := []struct{ name, auth, want string }{
		{"none", "", "no token (strato login)"},
		{"not bearer", "Basic dXNlcjpwYXNz", "no token (strato login)"},
		{"malformed", "Bearer abc", "no token (strato login)"},
		{"unknown", "Bearer strato1.0123456789abcdef.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "unknown token 0123456789abcdef"},
		{"wrong secret", "Bearer " + wrongSecret, "unknown token " + id},
		{"expired", "Bearer " + expired, "expired"},
		{"revoked", "Bearer " + revoked, "revoked"},
	}
	methods := stratov1.NamespaceService_ServiceDesc.Methods
	require.NotEmpty(t, methods)
	for _, m := range methods {
		full := "/" + stratov1.NamespaceService_ServiceDesc.ServiceName + "/" + m.MethodName
		for _, r := range refusals {
			st := call(t, c.MetaAddr(), full, r.auth)
			require.Equal(t, codes.Unauthenticated, st.Code(), "%s with %s token: %v", m.MethodName, r.name, st)
			require.Contains(t, st.Message(), r.want, "%s with %s token", m.MethodName, r.name)
			require.NotContains(t, st.Message(), valid[len(valid)-20:])
		}
		st := call(t, c.MetaAddr(), full, "Bearer "+valid)
		if m.MethodName == "ExpungeTrash" {
			// Named no bucket: every bucket's trash, for administrators
			// only; the token was accepted.
			require.Equal(t, codes.PermissionDenied, st.Code(), "%v", st)
			require.Contains(t, st.Message(), "for administrators")
			continue
		}
		require.NotContains(t, []codes.Code{codes.Unauthenticated, codes.PermissionDenied}, st.Code(), "%s with a valid token: %v", m.MethodName, st)
	}

	// The Go client: the error is ErrUnauthenticated (and ErrPermission),
	// and says why.
	for _, tok := range []string{revoked, expired} {
		cl, err := c.ClientWithToken(tok)
		require.NoError(t, err)
		_, err = cl.ListVolumes(ctx, "")
		require.ErrorIs(t, err, client.ErrUnauthenticated)
		require.ErrorIs(t, err, client.ErrPermission)
		_ = cl.Close()
	}
	cl, err := c.ClientWithToken("")
	require.NoError(t, err)
	_, err = cl.ListVolumes(ctx, "")
	require.ErrorIs(t, err, client.ErrUnauthenticated)
	require.ErrorContains(t, err, "no token (strato login)")
	_ = cl.Close()

	bob, err := c.ClientWithToken(valid)
	require.NoError(t, err)
	defer func() { _ = bob.Close() }()
	_, err = bob.ListVolumes(ctx, "")
	require.NoError(t, err)
	// Creating volumes is for administrators (docs/security.md, "ACLs").
	_, err = bob.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "bobs"})
	require.ErrorIs(t, err, client.ErrPermissionDenied)

	// Deleting bob revokes his tokens.
	n, err := admin.DeleteUser(ctx, "bob")
	require.NoError(t, err)
	require.Equal(t, 2, n) // the valid and the expired ones (the third was revoked already)

	_, err = bob.ListVolumes(ctx, "")
	require.ErrorIs(t, err, client.ErrUnauthenticated)
	require.ErrorContains(t, err, "revoked")
}

// A user who is not an administrator is refused the cluster's
// administration and other users' tokens and keys, and manages its own.
func TestAuthNonAdmin(t *testing.T) {
	c := startAuth(t, 1, nil)
	ctx := t.Context()
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	who, err := admin.WhoAmI(ctx)
	require.NoError(t, err)
	require.True(t, who.GetAuthenticated())
	require.Equal(t, "admin", who.GetUser())
	require.True(t, who.GetAdmin())

	_, err = admin.CreateUser(ctx, "alice", false, []string{"analysts", "dev"})
	require.NoError(t, err)
	_, err = admin.CreateUser(ctx, "alice", false, nil)
	require.ErrorIs(t, err, client.ErrExists)
	_, err = admin.CreateUser(ctx, "Not Valid", false, nil)
	require.ErrorIs(t, err, client.ErrInvalid)
	_, _, err = admin.IssueToken(ctx, "alice", 400*24*time.Hour)
	require.ErrorIs(t, err, client.ErrInvalid)
	tok, info := issue(t, admin, "alice", time.Hour)
	require.InDelta(t, time.Hour.Milliseconds(), info.GetExpiresUnixMs()-info.GetCreatedUnixMs(), 1)

	alice, err := c.ClientWithToken(tok)
	require.NoError(t, err)
	defer func() { _ = alice.Close() }()
	who, err = alice.WhoAmI(ctx)
	require.NoError(t, err)
	require.Equal(t, "alice", who.GetUser())
	require.False(t, who.GetAdmin())
	require.Equal(t, []string{"analysts", "dev"}, who.GetGroups())
	require.Equal(t, info.GetId(), who.GetTokenId())
	require.Equal(t, info.GetExpiresUnixMs(), who.GetTokenExpiresUnixMs())

	denied := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	}
	cluster := func(fn func(ctx context.Context, cc client.ClusterStubs) error) error {
		_, err := client.Cluster(ctx, alice, func(ctx context.Context, cc client.ClusterStubs) (struct{}, error) {
			return struct{}{}, fn(ctx, cc)
		})
		return err
	}
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		_, err := cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		return err
	}))
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		_, err := cc.ExitSafeMode(ctx, &stratov1.ExitSafeModeRequest{})
		return err
	}))
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		_, err := cc.DecommissionDatanode(ctx, &stratov1.DecommissionDatanodeRequest{DatanodeId: "x"})
		return err
	}))
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		_, err := cc.RemoveMetaMember(ctx, &stratov1.RemoveMetaMemberRequest{Id: 1})
		return err
	}))
	// A backup holds every user's data, tokens and S3 secrets.
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		st, err := cc.BackupMeta(ctx, &stratov1.BackupMetaRequest{})
		if err != nil {
			return err
		}
		_, err = st.Recv()
		return err
	}))
	// The cluster's summary is for administrators; its raw space
	// (Hadoop's getStatus, hdfs dfs -df) is for anyone.
	denied(cluster(func(ctx context.Context, cc client.ClusterStubs) error {
		_, err := cc.GetClusterSummary(ctx, &stratov1.GetClusterSummaryRequest{})
		return err
	}))
	_, err = alice.FsStatus(ctx)
	require.NoError(t, err)
	_, err = alice.CreateUser(ctx, "mallory", true, nil)
	denied(err)
	_, err = alice.ListUsers(ctx)
	denied(err)
	_, err = alice.DeleteUser(ctx, "admin")
	denied(err)
	_, _, err = alice.IssueToken(ctx, "admin", 0)
	denied(err)
	_, err = alice.ListTokens(ctx, "admin")
	denied(err)
	adminTokens, err := admin.ListTokens(ctx, "admin")
	require.NoError(t, err)
	require.Len(t, adminTokens, 1)
	denied(alice.RevokeToken(ctx, adminTokens[0].GetId()))

	// Her own tokens.
	own, ownInfo := issue(t, alice, "", 0)
	require.Equal(t, "alice", ownInfo.GetUser())
	toks, err := alice.ListTokens(ctx, "")
	require.NoError(t, err)
	require.Len(t, toks, 2)
	for _, tk := range toks {
		require.Equal(t, "alice", tk.GetUser())
	}
	require.NoError(t, alice.RevokeToken(ctx, ownInfo.GetId()))
	c2, err := c.ClientWithToken(own)
	require.NoError(t, err)
	_, err = c2.WhoAmI(ctx)
	require.ErrorIs(t, err, client.ErrUnauthenticated)
	_ = c2.Close()

	// S3 keys: hers, owned by her; another user's, refused; one for a
	// user who does not exist, not found.
	k, _, err := alice.CreateS3Key(ctx, "", "", "")
	require.NoError(t, err)
	require.Equal(t, "alice", k.GetUser())
	_, _, err = alice.CreateS3Key(ctx, "admin", "", "")
	denied(err)
	_, _, err = admin.CreateS3Key(ctx, "nobody", "", "")
	require.ErrorIs(t, err, client.ErrNotFound)
	ak, _, err := admin.CreateS3Key(ctx, "", "", "")
	require.NoError(t, err)
	require.Equal(t, "admin", ak.GetUser())
	_, err = alice.S3Secret(ctx, ak.GetAccessKey())
	denied(err)
	denied(alice.RevokeS3Key(ctx, ak.GetAccessKey()))
	keys, err := alice.ListS3Keys(ctx, "")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	_, err = alice.S3Secret(ctx, k.GetAccessKey())
	require.NoError(t, err)
	require.NoError(t, alice.RevokeS3Key(ctx, k.GetAccessKey()))
}

// A revocation takes effect on each replica once it has applied it: a
// follower that answered NOT_LEADER to the token (it authenticated the
// call) refuses it as revoked.
func TestAuthRevocationOnFollowers(t *testing.T) {
	c := startAuth(t, 3, nil)
	ctx := t.Context()
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	_, err = admin.CreateUser(ctx, "carol", false, nil)
	require.NoError(t, err)
	tok, info := issue(t, admin, "carol", 0)

	var followers []string
	for i, a := range c.MetaAddrs() {
		if m := c.MetaServer(i); m != nil && !m.Metrics().Leader {
			followers = append(followers, a)
		}
	}
	require.Len(t, followers, 2)
	// Only the replica that made the administrator wrote its token.
	written := 0
	for i := range c.MetaAddrs() {
		if _, err := os.Stat(filepath.Join(c.MetaDir(i), meta.AdminTokenFile)); err == nil {
			written++
		}
	}
	require.Equal(t, 1, written)
	method := "/" + stratov1.NamespaceService_ServiceDesc.ServiceName + "/ListVolumes"
	for _, f := range followers {
		require.Eventually(t, func() bool {
			return call(t, f, method, "Bearer "+tok).Code() == codes.Unavailable // NOT_LEADER: authenticated
		}, 10*time.Second, 10*time.Millisecond)
	}
	require.NoError(t, admin.RevokeToken(ctx, info.GetId()))
	for _, f := range followers {
		require.Eventually(t, func() bool {
			st := call(t, f, method, "Bearer "+tok)
			return st.Code() == codes.Unauthenticated && strings.Contains(st.Message(), "revoked")
		}, 10*time.Second, 10*time.Millisecond)
	}
}

// The first start writes admin.token (0600) once; a restart neither makes
// another administrator nor writes the file again.
func TestAuthBootstrap(t *testing.T) {
	c := startAuth(t, 1, nil)
	ctx := t.Context()
	path := filepath.Join(c.MetaDir(0), meta.AdminTokenFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	tok, err := c.AdminToken()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok, "strato1."))

	require.NoError(t, os.Remove(path))
	require.NoError(t, c.RestartMeta())
	cl, err := c.Client() // the token read before
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	require.Eventually(t, func() bool { _, err := cl.WhoAmI(ctx); return err == nil }, 20*time.Second, 20*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // a bootstrap would have run by now
	_, err = os.Stat(path)
	require.ErrorIs(t, err, os.ErrNotExist)
	users, err := cl.ListUsers(ctx)
	require.NoError(t, err)
	require.Len(t, users, 1)
	toks, err := cl.ListTokens(ctx, "")
	require.NoError(t, err)
	require.Len(t, toks, 1)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The audit log names the user of every mutation, and records refused
// calls without one; it never holds a token.
func TestAuthAuditLog(t *testing.T) {
	var buf syncBuffer
	audit := telemetry.NewAudit(&buf)
	c := startAuth(t, 1, func(_ int, o *meta.Options) {
		o.UnaryInterceptors = append(o.UnaryInterceptors, audit.Unary)
	})
	ctx := t.Context()
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	_, err = admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "audited"})
	require.NoError(t, err)
	tok, _ := issue(t, admin, "admin", 0)
	st := call(t, c.MetaAddr(), "/"+stratov1.NamespaceService_ServiceDesc.ServiceName+"/DeleteVolume", "")
	require.Equal(t, codes.Unauthenticated, st.Code())

	var sawCreate, sawIssue, sawRefused bool
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		switch e["method"] {
		case "NamespaceService/CreateVolume":
			sawCreate = e["user"] == "admin" && e["code"] == "OK" && e["token"] != ""
		case "AdminService/IssueToken":
			sawIssue = e["user"] == "admin" && e["code"] == "OK"
		case "NamespaceService/DeleteVolume":
			_, hasUser := e["user"]
			sawRefused = !hasUser && e["code"] == "Unauthenticated"
		}
	}
	require.True(t, sawCreate && sawIssue && sawRefused, buf.String())
	_, secret, _ := strings.Cut(strings.TrimPrefix(tok, "strato1."), ".")
	require.NotContains(t, buf.String(), secret)
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	require.NotContains(t, buf.String(), adminTok[len(adminTok)-20:])
}
