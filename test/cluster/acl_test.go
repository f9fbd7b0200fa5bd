package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/s3"
)

// aclCluster is meta alone with authentication, and users made by its
// administrator. The keys the tests write are empty: what is checked is
// meta's (datanodes check block tokens, not ACLs).
type aclCluster struct {
	t     *testing.T
	c     *minicluster.Cluster
	admin *client.Client
}

func startACL(t *testing.T) *aclCluster {
	t.Helper()
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true, Auth: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	admin, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	return &aclCluster{t: t, c: c, admin: admin}
}

// user makes a user with groups and returns a client with its token.
func (a *aclCluster) user(name string, groups ...string) *client.Client {
	a.t.Helper()
	_, err := a.admin.CreateUser(a.t.Context(), name, false, groups)
	require.NoError(a.t, err)
	tok, _ := issue(a.t, a.admin, name, 0)
	cl, err := a.c.ClientWithToken(tok)
	require.NoError(a.t, err)
	a.t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// denied checks that err is a refusal naming the user, the right and the
// object.
func denied(t *testing.T, err error, user, right, object string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
	var ce *client.Error
	require.True(t, errors.As(err, &ce), "%T", err)
	require.Equal(t, stratov1.ErrorReason_PERMISSION_DENIED.String(), ce.Reason, "%v", err)
	require.Contains(t, err.Error(), "user "+user+" lacks "+right+" on "+object)
}

// aclPut writes an empty key.
func aclPut(ctx context.Context, cl *client.Client, volume, bucket, key string) error {
	w, err := cl.CreateKey(ctx, volume, bucket, key, client.WriteOptions{})
	if err != nil {
		return err
	}
	return w.Close()
}

func aclRead(ctx context.Context, cl *client.Client, volume, bucket, key string) (string, error) {
	r, err := cl.OpenKey(ctx, volume, bucket, key)
	if err != nil {
		return "", err
	}
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(r)
	return string(b), err
}

func mustAcls(t *testing.T, s string) []*stratov1.Acl {
	t.Helper()
	acls, err := client.ParseAcls(s)
	require.NoError(t, err)
	return acls
}

// Owners and grants: a user creates nothing without a grant; the owner of
// a volume does everything in it; another user is refused every read,
// write, list and delete, with the right named, until a grant (to him, to
// his group, to the world) lets him do what it says and nothing more.
func TestACLOwnersAndGrants(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	alice := a.user("alice")
	bob := a.user("bob", "dev")
	carol := a.user("carol")

	_, err := alice.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol1"})
	denied(t, err, "alice", "CREATE", "/")
	v, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol1", Owner: "alice"})
	require.NoError(t, err)
	require.Equal(t, "alice", v.GetOwner())

	// alice owns the volume: she creates buckets and keys in it, and owns
	// them whatever her client says.
	b1, err := alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol1", Name: "bk1", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE, Owner: "mallory"})
	require.NoError(t, err)
	require.Equal(t, "alice", b1.GetOwner())
	_, err = alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol1", Name: "fs1", Layout: stratov1.BucketLayout_LAYOUT_FSO,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err)
	require.NoError(t, aclPut(ctx, alice, "vol1", "bk1", "k1"))
	ki, err := alice.LookupKey(ctx, "vol1", "bk1", "k1")
	require.NoError(t, err)
	require.Equal(t, "alice", ki.GetOwner())
	got, err := aclRead(ctx, alice, "vol1", "bk1", "k1")
	require.NoError(t, err)
	require.Empty(t, got)

	// bob: nothing.
	vols, err := bob.ListVolumes(ctx, "")
	require.NoError(t, err)
	require.Empty(t, vols)
	_, err = bob.GetVolume(ctx, "vol1")
	denied(t, err, "bob", "READ", "/vol1")
	_, err = bob.ListBuckets(ctx, "vol1", "")
	denied(t, err, "bob", "LIST", "/vol1")
	_, err = bob.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol1", Name: "bobs"})
	denied(t, err, "bob", "CREATE", "/vol1")
	_, err = bob.GetBucket(ctx, "vol1", "bk1")
	denied(t, err, "bob", "READ", "/vol1/bk1")
	denied(t, bob.DeleteBucket(ctx, "vol1", "bk1"), "bob", "DELETE", "/vol1/bk1")
	_, err = bob.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol1", Bucket: "bk1"})
	denied(t, err, "bob", "LIST", "/vol1/bk1")
	_, err = bob.LookupKey(ctx, "vol1", "bk1", "k1")
	denied(t, err, "bob", "READ", "/vol1/bk1/k1")
	_, err = aclRead(ctx, bob, "vol1", "bk1", "k1")
	denied(t, err, "bob", "READ", "/vol1/bk1/k1")
	denied(t, aclPut(ctx, bob, "vol1", "bk1", "k2"), "bob", "CREATE", "/vol1/bk1")
	denied(t, bob.DeleteKey(ctx, "vol1", "bk1", "k1"), "bob", "DELETE", "/vol1/bk1/k1")
	denied(t, bob.RenameKey(ctx, "vol1", "bk1", "k1", "k9"), "bob", "DELETE", "/vol1/bk1/k1")
	denied(t, bob.SetAttributes(ctx, "vol1", "bk1", "k1", 0, nil), "bob", "WRITE", "/vol1/bk1/k1")
	_, err = bob.List(ctx, "/vol1/fs1")
	denied(t, err, "bob", "LIST", "/vol1/fs1")
	denied(t, bob.Mkdirs(ctx, "/vol1/fs1/d"), "bob", "CREATE", "/vol1/fs1")
	_, _, err = bob.GetAcl(ctx, client.BucketObject("vol1", "bk1"))
	denied(t, err, "bob", "READ_ACL", "/vol1/bk1")
	denied(t, bob.AddAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:a")), "bob", "WRITE_ACL", "/vol1/bk1")
	denied(t, bob.DeleteVolume(ctx, "vol1"), "bob", "DELETE", "/vol1")

	// READ and LIST on the bucket: bob lists and reads its keys, and
	// writes and deletes nothing.
	require.NoError(t, alice.AddAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:rl")))
	lk, err := bob.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol1", Bucket: "bk1"})
	require.NoError(t, err)
	require.Len(t, lk.GetKeys(), 1)
	got, err = aclRead(ctx, bob, "vol1", "bk1", "k1")
	require.NoError(t, err)
	require.Empty(t, got)
	denied(t, aclPut(ctx, bob, "vol1", "bk1", "k1"), "bob", "CREATE", "/vol1/bk1")
	denied(t, bob.DeleteKey(ctx, "vol1", "bk1", "k1"), "bob", "DELETE", "/vol1/bk1/k1")
	_, err = bob.LookupKey(ctx, "vol1", "bk1", "nope")
	require.ErrorIs(t, err, client.ErrKeyNotFound) // he may read the bucket: he learns it is not there
	// An entry of the key's own decides for the key: a key with one that
	// leaves bob out is closed to him, the others stay open.
	require.NoError(t, aclPut(ctx, alice, "vol1", "bk1", "secret"))
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol1", "bk1", "secret"), mustAcls(t, "user:carol:r")))
	_, err = bob.LookupKey(ctx, "vol1", "bk1", "secret")
	denied(t, err, "bob", "READ", "/vol1/bk1/secret")
	_, err = carol.LookupKey(ctx, "vol1", "bk1", "secret")
	require.NoError(t, err)
	_, err = carol.LookupKey(ctx, "vol1", "bk1", "k1")
	denied(t, err, "carol", "READ", "/vol1/bk1/k1")

	// A group grant, through bob's group: he creates files, which he owns.
	require.NoError(t, alice.AddAcl(ctx, client.BucketObject("vol1", "fs1"), mustAcls(t, "group:dev:rlc")))
	require.NoError(t, bob.Mkdirs(ctx, "/vol1/fs1/bobs"))
	st, err := bob.Stat(ctx, "/vol1/fs1/bobs")
	require.NoError(t, err)
	require.Equal(t, "bob", st.GetOwner())
	sts, err := bob.List(ctx, "/vol1/fs1")
	require.NoError(t, err)
	require.Len(t, sts, 1)
	_, err = carol.List(ctx, "/vol1/fs1")
	denied(t, err, "carol", "LIST", "/vol1/fs1")

	// A WORLD grant: every user.
	require.NoError(t, alice.AddAcl(ctx, client.VolumeObject("vol1"), mustAcls(t, "world::l")))
	vols, err = carol.ListVolumes(ctx, "")
	require.NoError(t, err)
	require.Len(t, vols, 1)
	bks, err := carol.ListBuckets(ctx, "vol1", "")
	require.NoError(t, err)
	require.Len(t, bks, 2)
	_, err = carol.GetVolume(ctx, "vol1")
	denied(t, err, "carol", "READ", "/vol1")

	// The owner always changes ACLs; bob needs WRITE_ACL, and then may.
	require.NoError(t, alice.RemoveAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:l")))
	owner, acls, err := alice.GetAcl(ctx, client.BucketObject("vol1", "bk1"))
	require.NoError(t, err)
	require.Equal(t, "alice", owner)
	require.Equal(t, "user:bob:r", client.FormatAcls(acls))
	denied(t, bob.SetAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:a")), "bob", "WRITE_ACL", "/vol1/bk1")
	require.NoError(t, alice.AddAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:xy")))
	require.NoError(t, bob.AddAcl(ctx, client.BucketObject("vol1", "bk1"), mustAcls(t, "user:bob:d")))
	_, acls, err = bob.GetAcl(ctx, client.BucketObject("vol1", "bk1"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:rdxy", client.FormatAcls(acls))
	require.NoError(t, bob.DeleteKey(ctx, "vol1", "bk1", "k1"))

	// At most 64 entries.
	many := make([]*stratov1.Acl, 65)
	for i := range many {
		many[i] = &stratov1.Acl{Type: stratov1.AclType_ACL_USER, Name: "u" + strings.Repeat("x", i), Rights: 1}
	}
	err = alice.SetAcl(ctx, client.BucketObject("vol1", "bk1"), many)
	require.ErrorIs(t, err, client.ErrInvalid)
	require.ErrorContains(t, err, "at most 64")

	// The administrator passes everything.
	require.NoError(t, a.admin.DeleteKey(ctx, "vol1", "bk1", "secret"))
	_, _, err = a.admin.GetAcl(ctx, client.KeyObject("vol1", "fs1", "bobs"))
	require.NoError(t, err)
}

// DEFAULT entries are inherited: a bucket created in a volume with them
// takes them (as ACCESS and DEFAULT entries), and so do a directory and
// the directories a create makes on the way; a file takes them as ACCESS
// entries.
func TestACLDefaultsInherited(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	alice := a.user("alice")
	bob := a.user("bob")
	_, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol2", Owner: "alice"})
	require.NoError(t, err)
	require.NoError(t, alice.SetAcl(ctx, client.VolumeObject("vol2"), mustAcls(t, "user:bob:rlc[DEFAULT],group:ops:r")))
	_, acls, err := alice.GetAcl(ctx, client.VolumeObject("vol2"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:rcl[DEFAULT],group:ops:r", client.FormatAcls(acls))
	// bob has no ACCESS entry on the volume itself.
	_, err = bob.ListBuckets(ctx, "vol2", "")
	denied(t, err, "bob", "LIST", "/vol2")

	bk, err := alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol2", Name: "fso",
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err)
	require.Equal(t, "user:bob:rcl,user:bob:rcl[DEFAULT]", client.FormatAcls(bk.GetAcls()))
	require.NoError(t, alice.Mkdirs(ctx, "/vol2/fso/dir"))
	_, acls, err = alice.GetAcl(ctx, client.KeyObject("vol2", "fso", "dir"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:rcl,user:bob:rcl[DEFAULT]", client.FormatAcls(acls))

	w, err := alice.Create(ctx, "/vol2/fso/dir/sub/file", client.CreateOptions{Recursive: true})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, acls, err = alice.GetAcl(ctx, client.KeyObject("vol2", "fso", "dir/sub"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:rcl,user:bob:rcl[DEFAULT]", client.FormatAcls(acls))
	owner, acls, err := alice.GetAcl(ctx, client.KeyObject("vol2", "fso", "dir/sub/file"))
	require.NoError(t, err)
	require.Equal(t, "alice", owner)
	require.Equal(t, "user:bob:rcl", client.FormatAcls(acls))
	st, err := alice.Stat(ctx, "/vol2/fso/dir/sub/file")
	require.NoError(t, err)
	require.Equal(t, "user:bob:rcl", client.FormatAcls(st.GetAcls()))

	// What they grant works: bob reads, lists and creates below, and
	// deletes nothing.
	r, err := bob.Open(ctx, "/vol2/fso/dir/sub/file")
	require.NoError(t, err)
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.Empty(t, b)
	sts, err := bob.List(ctx, "/vol2/fso/dir/sub")
	require.NoError(t, err)
	require.Len(t, sts, 1)
	require.NoError(t, bob.Mkdirs(ctx, "/vol2/fso/dir/bobs"))
	denied(t, bob.Delete(ctx, "/vol2/fso/dir/sub/file", false), "bob", "DELETE", "/vol2/fso/dir/sub/file")
	denied(t, bob.Rename(ctx, "/vol2/fso/dir/sub/file", "/vol2/fso/dir/bobs/file"), "bob", "DELETE", "/vol2/fso/dir/sub/file")
}

// Without authentication nothing is checked: ACLs are stored and shown,
// and every client may do everything, as before.
func TestACLAuthNone(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	ctx := t.Context()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "open", Owner: "alice"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "open", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	require.NoError(t, cl.SetAcl(ctx, client.BucketObject("open", "bkt"), mustAcls(t, "user:alice:r")))
	owner, acls, err := cl.GetAcl(ctx, client.BucketObject("open", "bkt"))
	require.NoError(t, err)
	require.Equal(t, "strato", owner)
	require.Equal(t, "user:alice:r", client.FormatAcls(acls))
	_, err = cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "open", Bucket: "bkt"})
	require.NoError(t, err)
	require.NoError(t, cl.DeleteBucket(ctx, "open", "bkt"))
	require.NoError(t, cl.DeleteVolume(ctx, "open"))
}

// s3Do sends a request signed with an access key to the gateway and
// returns its status and body.
func s3Do(t *testing.T, url, method, path, accessKey, secret string) (int, string) {
	t.Helper()
	return s3DoHeader(t, url, method, path, accessKey, secret, "", "")
}

// s3DoHeader is s3Do of an empty body, with a header (signed).
func s3DoHeader(t *testing.T, url, method, path, accessKey, secret, header, value string) (int, string) {
	t.Helper()
	ctx := t.Context()
	body := ""
	req, err := http.NewRequestWithContext(ctx, method, url+path, strings.NewReader(body))
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(body))
	ph := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", ph)
	if header != "" {
		req.Header.Set(header, value)
	}
	require.NoError(t, v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secret}, req, ph, "s3", "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, string(b)
}

// The S3 gateway acts as the user of each request's access key: a proxy
// user's gateway authenticates alice's and bob's keys, and meta refuses
// bob what alice did not grant him, which S3 answers 403 AccessDenied.
func TestACLS3OnBehalfOf(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	_, err := a.admin.CreateUserWith(ctx, &stratov1.CreateUserRequest{Name: "gw", Proxy: true})
	require.NoError(t, err)
	a.user("alice")
	bob := a.user("bob")
	for _, v := range []string{"s3v", "s3v-multipart"} {
		_, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: v, Owner: "gw"})
		require.NoError(t, err)
	}
	gwTok, _ := issue(t, a.admin, "gw", 0)
	gwc, err := a.c.ClientWithToken(gwTok)
	require.NoError(t, err)
	defer func() { _ = gwc.Close() }()
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: gwc})
	require.NoError(t, err)
	gw, err := s3.New(ctx, s3.Options{Client: gwc, Credentials: mc, CleanupInterval: -1})
	require.NoError(t, err)
	defer func() { _ = gw.Close() }()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	ak, as, err := a.admin.CreateS3Key(ctx, "alice", "", "")
	require.NoError(t, err)
	bk, bs, err := a.admin.CreateS3Key(ctx, "bob", "", "")
	require.NoError(t, err)

	code, body := s3Do(t, srv.URL, http.MethodPut, "/alicebkt", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusOK, code, body)
	code, body = s3Do(t, srv.URL, http.MethodPut, "/alicebkt/obj", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusOK, code, body)
	info, err := a.admin.GetBucket(ctx, "s3v", "alicebkt")
	require.NoError(t, err)
	require.Equal(t, "alice", info.GetOwner())
	code, body = s3Do(t, srv.URL, http.MethodGet, "/alicebkt/obj", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusOK, code, body)

	for _, r := range []struct{ method, path string }{
		{http.MethodGet, "/alicebkt/obj"},
		{http.MethodHead, "/alicebkt/obj"},
		{http.MethodGet, "/alicebkt"},
		{http.MethodPut, "/alicebkt/bobs"},
		{http.MethodDelete, "/alicebkt/obj"},
	} {
		code, body = s3Do(t, srv.URL, r.method, r.path, bk.GetAccessKey(), bs)
		require.Equal(t, http.StatusForbidden, code, "%s %s: %s", r.method, r.path, body)
		if r.method != http.MethodHead {
			require.Contains(t, body, "<Code>AccessDenied</Code>", "%s %s", r.method, r.path)
			require.Contains(t, body, "user bob lacks", "%s %s", r.method, r.path)
		}
	}
	// A grant opens it.
	require.NoError(t, a.admin.AddAcl(ctx, client.BucketObject("s3v", "alicebkt"), mustAcls(t, "user:bob:rl")))
	code, body = s3Do(t, srv.URL, http.MethodGet, "/alicebkt/obj", bk.GetAccessKey(), bs)
	require.Equal(t, http.StatusOK, code, body)

	// S3's bucket ACLs: canned ACLs map to the bucket's ACL.
	code, body = s3Do(t, srv.URL, http.MethodGet, "/alicebkt?acl", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "<Permission>FULL_CONTROL</Permission>")
	require.Contains(t, body, "<ID>bob</ID>")
	// A bucket takes ACLs with ownership controls other than S3's default
	// BucketOwnerEnforced.
	code, body = s3DoHeader(t, srv.URL, http.MethodPut, "/bobbkt", bk.GetAccessKey(), bs, "x-amz-object-ownership", "ObjectWriter")
	require.Equal(t, http.StatusOK, code, body)
	code, body = s3Do(t, srv.URL, http.MethodGet, "/bobbkt", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = s3DoHeader(t, srv.URL, http.MethodPut, "/bobbkt?acl", bk.GetAccessKey(), bs, "x-amz-acl", "public-read")
	require.Equal(t, http.StatusOK, code, body)
	_, acls, err := a.admin.GetAcl(ctx, client.BucketObject("s3v", "bobbkt"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:a,world::rl", client.FormatAcls(acls))
	code, body = s3Do(t, srv.URL, http.MethodGet, "/bobbkt", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusOK, code, body)
	code, body = s3Do(t, srv.URL, http.MethodGet, "/bobbkt?acl", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusForbidden, code, body) // READ_ACL is not READ
	code, body = s3DoHeader(t, srv.URL, http.MethodPut, "/bobbkt?acl", bk.GetAccessKey(), bs, "x-amz-grant-read", "id=alice")
	require.Equal(t, http.StatusOK, code, body)
	_, acls, err = a.admin.GetAcl(ctx, client.BucketObject("s3v", "bobbkt"))
	require.NoError(t, err)
	require.Equal(t, "user:alice:rl,user:bob:a", client.FormatAcls(acls))
	code, body = s3DoHeader(t, srv.URL, http.MethodPut, "/bobbkt?acl", bk.GetAccessKey(), bs, "x-amz-acl", "private")
	require.Equal(t, http.StatusOK, code, body)
	code, body = s3Do(t, srv.URL, http.MethodGet, "/bobbkt", ak.GetAccessKey(), as)
	require.Equal(t, http.StatusForbidden, code, body)

	// Only an administrator or a proxy may act on behalf of another user.
	_, err = bob.ListVolumes(client.OnBehalfOf(ctx, "alice"), "")
	denied := status.Code(err) == codes.PermissionDenied && strings.Contains(err.Error(), "may not act on behalf of alice")
	require.True(t, denied, "%v", err)
	_, err = gwc.ListVolumes(client.OnBehalfOf(ctx, "admin"), "")
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	require.ErrorContains(t, err, "an administrator")
}

// The issue's cases: a rename across directories whose ACLs differ needs
// DELETE where the file is and CREATE where it goes (each refused alone,
// allowed together, the file keeping its own ACL); a user who may write a
// key but not read it writes it and is refused the read; a listing shows
// every entry to whoever may LIST the directory, and nothing to whoever
// may not (entries are not filtered one by one: LIST is the right to see
// the names, as in Ozone and HDFS).
func TestACLRenameWriteOnlyAndListing(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	alice := a.user("alice")
	bob := a.user("bob")
	carol := a.user("carol")
	_, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol3", Owner: "alice"})
	require.NoError(t, err)
	_, err = alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol3", Name: "fso",
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE})
	require.NoError(t, err)
	require.NoError(t, alice.Mkdirs(ctx, "/vol3/fso/src"))
	require.NoError(t, alice.Mkdirs(ctx, "/vol3/fso/dst"))
	w, err := alice.Create(ctx, "/vol3/fso/src/f", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "fso", "src/f"), mustAcls(t, "user:carol:r")))

	// src lets bob delete (and list), dst nothing yet: refused at the
	// destination.
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "fso", "src"), mustAcls(t, "user:bob:dl")))
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "fso", "src/f"), mustAcls(t, "user:carol:r,user:bob:d")))
	denied(t, bob.Rename(ctx, "/vol3/fso/src/f", "/vol3/fso/dst/f"), "bob", "CREATE", "/vol3/fso/dst")
	// dst lets him create: the rename goes through, the file keeps its ACL.
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "fso", "dst"), mustAcls(t, "user:bob:c")))
	require.NoError(t, bob.Rename(ctx, "/vol3/fso/src/f", "/vol3/fso/dst/f"))
	_, acls, err := alice.GetAcl(ctx, client.KeyObject("vol3", "fso", "dst/f"))
	require.NoError(t, err)
	require.Equal(t, "user:bob:d,user:carol:r", client.FormatAcls(acls))
	_, err = carol.Stat(ctx, "/vol3/fso/dst/f")
	require.NoError(t, err, "carol's grant moved with the file")

	// Write but not read: alice's file, bob may WRITE it (its times and
	// attributes) and nothing else. (A key bob creates is his: its owner
	// may do everything, so write-only holds for keys others own.)
	w, err = alice.Create(ctx, "/vol3/fso/dst/wo", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "fso", "dst/wo"), mustAcls(t, "user:bob:w")))
	require.NoError(t, bob.SetTimes(ctx, "/vol3/fso/dst/wo", 1_700_000_000_000, 1_700_000_000_000))
	_, err = bob.Open(ctx, "/vol3/fso/dst/wo")
	denied(t, err, "bob", "READ", "/vol3/fso/dst/wo")
	_, err = bob.Stat(ctx, "/vol3/fso/dst/wo")
	denied(t, err, "bob", "READ", "/vol3/fso/dst/wo")
	st, err := alice.Stat(ctx, "/vol3/fso/dst/wo")
	require.NoError(t, err)
	require.Equal(t, int64(1_700_000_000_000), st.GetModificationTimeUnixMs(), "bob's write landed")
	// A drop box: bob may create in the bucket, not list it.
	_, err = alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol3", Name: "drop", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE, Acls: mustAcls(t, "user:bob:c")})
	require.NoError(t, err)
	require.NoError(t, aclPut(ctx, bob, "vol3", "drop", "k"))
	_, err = bob.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol3", Bucket: "drop"})
	denied(t, err, "bob", "LIST", "/vol3/drop")

	// Listing: alice's three keys, one of them closed to carol by its own
	// ACL; carol may LIST the bucket: she sees all three names and reads
	// only what she may.
	_, err = alice.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol3", Name: "shared", Layout: stratov1.BucketLayout_LAYOUT_OBS,
		Replication: stratov1.ReplicationFactor_REPLICATION_ONE, Acls: mustAcls(t, "user:carol:rl")})
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "secret"} {
		require.NoError(t, aclPut(ctx, alice, "vol3", "shared", k))
	}
	require.NoError(t, alice.SetAcl(ctx, client.KeyObject("vol3", "shared", "secret"), mustAcls(t, "user:alice:a")))
	lk, err := carol.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol3", Bucket: "shared"})
	require.NoError(t, err)
	var names []string
	for _, k := range lk.GetKeys() {
		names = append(names, k.GetName())
	}
	require.Equal(t, []string{"a", "b", "secret"}, names)
	_, err = aclRead(ctx, carol, "vol3", "shared", "a")
	require.NoError(t, err)
	_, err = aclRead(ctx, carol, "vol3", "shared", "secret")
	denied(t, err, "carol", "READ", "/vol3/shared/secret")
	_, err = bob.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol3", Bucket: "shared"})
	denied(t, err, "bob", "LIST", "/vol3/shared")
}
