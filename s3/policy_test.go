package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/s3"
)

// authGateway is a cluster whose meta authenticates its callers, a
// gateway whose user is the proxy gw (owner of the S3 volumes), and the
// keys of two users, alice and bob; anon sends unsigned requests.
type authGateway struct {
	admin            *client.Client
	srv              *httptest.Server
	alice, bob, anon *awss3.Client
}

func startAuthGateway(t *testing.T) *authGateway { return startAuthGatewayWith(t, "gw") }

// startAuthGatewayWith is startAuthGateway with the S3 volumes owned by
// volumeOwner (not the gateway's user: opened to S3's users by ACLs).
func startAuthGatewayWith(t *testing.T, volumeOwner string) *authGateway {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Auth: true, BlockSize: 8 << 20, ContainerSize: 256 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.WaitReady(ctx))
	admin, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	_, err = admin.CreateUserWith(ctx, &stratov1.CreateUserRequest{Name: "gw", Proxy: true})
	require.NoError(t, err)
	for _, u := range []string{"alice", "bob"} {
		_, err := admin.CreateUser(ctx, u, false, nil)
		require.NoError(t, err)
	}
	for v, acls := range map[string]string{"s3v": "world::lc", "s3v-multipart": "world::c,world::a[DEFAULT]"} {
		_, err := admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: v, Owner: volumeOwner})
		require.NoError(t, err)
		parsed, err := client.ParseAcls(acls)
		require.NoError(t, err)
		require.NoError(t, admin.AddAcl(ctx, client.VolumeObject(v), parsed))
	}
	tok, _, err := admin.IssueToken(ctx, "gw", 0)
	require.NoError(t, err)
	gwc, err := c.ClientWithToken(tok)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gwc.Close() })
	mc, err := s3.NewMetaCredentials(s3.MetaCredentialsOptions{Client: gwc})
	require.NoError(t, err)
	gw, err := s3.New(ctx, s3.Options{Client: gwc, Credentials: mc, CleanupInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { _ = gw.Close() })
	a := &authGateway{admin: admin, srv: httptest.NewServer(gw)}
	t.Cleanup(a.srv.Close)
	key := func(user string) *awss3.Client {
		k, secret, err := admin.CreateS3Key(ctx, user, "", "")
		require.NoError(t, err)
		return sdkAt(t, a.srv.URL, func(o *awss3.Options) {
			o.Credentials = aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: k.GetAccessKey(), SecretAccessKey: secret}, nil
			}))
		})
	}
	a.alice, a.bob = key("alice"), key("bob")
	a.anon = sdkAt(t, a.srv.URL, func(o *awss3.Options) { o.Credentials = aws.AnonymousCredentials{} })
	return a
}

// putPolicy puts a policy of one statement on a bucket.
func putPolicy(t *testing.T, c *awss3.Client, bucket, effect, principal, action, resource, condition string) {
	t.Helper()
	doc := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":%q,"Principal":%s,"Action":%q,"Resource":%q`,
		effect, principal, action, resource)
	if condition != "" {
		doc += `,"Condition":` + condition
	}
	doc += "}]}"
	_, err := c.PutBucketPolicy(t.Context(), &awss3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(doc)})
	require.NoError(t, err, doc)
}

// tryGet is the error code of a GET ("" when it succeeds).
func tryGet(t *testing.T, c *awss3.Client, bucket, key string) string {
	t.Helper()
	out, err := c.GetObject(t.Context(), &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return apiCode(err)
	}
	_, _ = io.Copy(io.Discard, out.Body)
	_ = out.Body.Close()
	return ""
}

func tryPut(t *testing.T, c *awss3.Client, bucket, key string) string {
	t.Helper()
	_, err := c.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x")})
	return apiCode(err)
}

func tryList(t *testing.T, c *awss3.Client, bucket, prefix string) string {
	t.Helper()
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	_, err := c.ListObjectsV2(t.Context(), in)
	return apiCode(err)
}

// Bucket policies on a meta with authentication: an Allow opens to bob
// what meta's ACLs refuse him, a Deny closes what an ACL grants, and the
// conditions s3:prefix and aws:SourceIp decide as they say.
func TestBucketPolicyUsers(t *testing.T) {
	a := startAuthGateway(t)
	ctx := t.Context()
	const b = "pol"
	_, err := a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b), ObjectOwnership: types.ObjectOwnershipObjectWriter})
	require.NoError(t, err)
	for _, k := range []string{"a.txt", "private/s.txt", "logs/x"} {
		put(t, a.alice, b, k, []byte(k))
	}
	require.Equal(t, "AccessDenied", tryGet(t, a.bob, b, "a.txt"))

	// An Allow for bob: he reads, and nothing more.
	putPolicy(t, a.alice, b, "Allow", `{"AWS":["arn:aws:iam::123456789012:user/bob"]}`, "s3:GetObject", "arn:aws:s3:::pol/*", "")
	require.Equal(t, "", tryGet(t, a.bob, b, "a.txt"))
	require.Equal(t, "AccessDenied", tryPut(t, a.bob, b, "bobs"))
	require.Equal(t, "AccessDenied", tryList(t, a.bob, b, ""))
	out, err := a.alice.GetBucketPolicy(ctx, &awss3.GetBucketPolicyInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Contains(t, aws.ToString(out.Policy), "user/bob")
	// Only whoever may change the bucket's ACL changes its policy.
	_, err = a.bob.PutBucketPolicy(ctx, &awss3.PutBucketPolicyInput{Bucket: aws.String(b), Policy: out.Policy})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = a.bob.GetBucketPolicy(ctx, &awss3.GetBucketPolicyInput{Bucket: aws.String(b)})
	require.Equal(t, "AccessDenied", apiCode(err))

	// A grant of the ACL lets bob read; a Deny of the policy wins over it.
	// WRITE lets him tag the bucket, not change its policy (meta asks
	// WRITE_ACL for that).
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String(b), GrantRead: aws.String(`id="bob"`),
		GrantWrite: aws.String(`id="bob"`)})
	require.NoError(t, err)
	_, err = a.bob.PutBucketTagging(ctx, &awss3.PutBucketTaggingInput{Bucket: aws.String(b),
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}}})
	require.NoError(t, err)
	_, err = a.bob.PutBucketPolicy(ctx, &awss3.PutBucketPolicyInput{Bucket: aws.String(b),
		Policy: aws.String(strings.ReplaceAll(aws.ToString(out.Policy), "GetObject", "*"))})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = a.bob.DeleteBucketPolicy(ctx, &awss3.DeleteBucketPolicyInput{Bucket: aws.String(b)})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = a.alice.DeleteBucketPolicy(ctx, &awss3.DeleteBucketPolicyInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, "", tryGet(t, a.bob, b, "private/s.txt"))
	putPolicy(t, a.alice, b, "Deny", `"bob"`, "s3:GetObject", "arn:aws:s3:::pol/private/*", "")
	require.Equal(t, "AccessDenied", tryGet(t, a.bob, b, "private/s.txt"))
	require.Equal(t, "", tryGet(t, a.bob, b, "a.txt"))
	require.Equal(t, "", tryGet(t, a.alice, b, "private/s.txt")) // the Deny names bob only

	// s3:prefix: bob lists logs/ and nothing else.
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String(b), ACL: types.BucketCannedACLPrivate})
	require.NoError(t, err)
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:ListBucket", "arn:aws:s3:::pol", `{"StringEquals":{"s3:prefix":"logs/"}}`)
	require.Equal(t, "", tryList(t, a.bob, b, "logs/"))
	require.Equal(t, "AccessDenied", tryList(t, a.bob, b, "private/"))
	require.Equal(t, "AccessDenied", tryList(t, a.bob, b, ""))

	// aws:SourceIp: the test's requests come from 127.0.0.1.
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:GetObject", "arn:aws:s3:::pol/*", `{"IpAddress":{"aws:SourceIp":"127.0.0.0/8"}}`)
	require.Equal(t, "", tryGet(t, a.bob, b, "a.txt"))
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:GetObject", "arn:aws:s3:::pol/*", `{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`)
	require.Equal(t, "AccessDenied", tryGet(t, a.bob, b, "a.txt"))
	putPolicy(t, a.alice, b, "Deny", `"*"`, "s3:GetObject", "arn:aws:s3:::pol/*", `{"NotIpAddress":{"aws:SourceIp":"10.0.0.0/8"}}`)
	require.Equal(t, "AccessDenied", tryGet(t, a.alice, b, "a.txt"))

	// A copy a policy allows reads no source the user may not read.
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:*", "arn:aws:s3:::pol/*", "")
	_, err = a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("secret")})
	require.NoError(t, err)
	put(t, a.alice, "secret", "s p.txt", []byte("secret"))
	for src, want := range map[string]string{"secret/s%20p.txt": "AccessDenied", "/secret/s%20p.txt": "AccessDenied",
		"secret/s%20p.txt?versionId=null": "AccessDenied", "pol/a.txt": ""} {
		_, err = a.bob.CopyObject(ctx, &awss3.CopyObjectInput{Bucket: aws.String(b), Key: aws.String("copied"), CopySource: aws.String(src)})
		require.Equal(t, want, apiCode(err), src)
	}

	// s3:x-amz-acl: bob writes only objects he hands to the bucket's owner.
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:PutObject", "arn:aws:s3:::pol/*", `{"StringEquals":{"s3:x-amz-acl":"bucket-owner-full-control"}}`)
	require.Equal(t, "AccessDenied", tryPut(t, a.bob, b, "bobs"))
	_, err = a.bob.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("bobs"), Body: strings.NewReader("x"),
		ACL: types.ObjectCannedACLBucketOwnerFullControl})
	require.NoError(t, err)
	// s3:max-keys and aws:SecureTransport (the test's gateway is plain HTTP).
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:ListBucket", "arn:aws:s3:::pol",
		`{"NumericLessThanEquals":{"s3:max-keys":"10"},"Bool":{"aws:SecureTransport":"false"}}`)
	_, err = a.bob.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), MaxKeys: aws.Int32(5)})
	require.NoError(t, err)
	_, err = a.bob.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), MaxKeys: aws.Int32(50)})
	require.Equal(t, "AccessDenied", apiCode(err))
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:ListBucket", "arn:aws:s3:::pol", `{"Bool":{"aws:SecureTransport":"true"}}`)
	_, err = a.bob.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(b), MaxKeys: aws.Int32(5)})
	require.Equal(t, "AccessDenied", apiCode(err))

	_, err = a.alice.DeleteBucketPolicy(ctx, &awss3.DeleteBucketPolicyInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, "", tryGet(t, a.alice, b, "a.txt"))
	_, err = a.alice.GetBucketPolicy(ctx, &awss3.GetBucketPolicyInput{Bucket: aws.String(b)})
	require.Equal(t, "NoSuchBucketPolicy", apiCode(err))

	// DeleteObjects: the policy decides each key.
	putPolicy(t, a.alice, b, "Allow", `"bob"`, "s3:DeleteObject", "arn:aws:s3:::pol/logs/*", "")
	del, err := a.bob.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: aws.String("logs/x")}, {Key: aws.String("a.txt")}}}})
	require.NoError(t, err)
	require.Len(t, del.Deleted, 1)
	require.Equal(t, "logs/x", aws.ToString(del.Deleted[0].Key))
	require.Len(t, del.Errors, 1)
	require.Equal(t, "AccessDenied", aws.ToString(del.Errors[0].Code))
	require.Equal(t, "", tryGet(t, a.alice, b, "a.txt"))
	require.Equal(t, "NoSuchKey", tryGet(t, a.alice, b, "logs/x"))
}

// Anonymous requests: refused by default; served where a policy allows
// Principal "*" or the bucket's ACL is public-read, never for
// authenticated-read.
func TestBucketPolicyAnonymous(t *testing.T) {
	a := startAuthGateway(t)
	ctx := t.Context()
	_, err := a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("open")})
	require.NoError(t, err)
	put(t, a.alice, "open", "a.txt", []byte("hello"))
	put(t, a.alice, "open", "b.txt", []byte("hello"))
	require.Equal(t, "AccessDenied", tryGet(t, a.anon, "open", "a.txt"))
	_, err = a.anon.ListBuckets(ctx, &awss3.ListBucketsInput{})
	require.Equal(t, "AccessDenied", apiCode(err))

	putPolicy(t, a.alice, "open", "Allow", `"*"`, "s3:GetObject", "arn:aws:s3:::open/a.txt", "")
	require.Equal(t, "", tryGet(t, a.anon, "open", "a.txt"))
	require.Equal(t, "AccessDenied", tryGet(t, a.anon, "open", "b.txt"))
	require.Equal(t, "AccessDenied", tryPut(t, a.anon, "open", "c.txt"))
	require.Equal(t, "", tryGet(t, a.bob, "open", "a.txt")) // "*" is every user too
	st, err := a.alice.GetBucketPolicyStatus(ctx, &awss3.GetBucketPolicyStatusInput{Bucket: aws.String("open")})
	require.NoError(t, err)
	require.True(t, aws.ToBool(st.PolicyStatus.IsPublic))
	// s3:* to "*" opens everything but the changes of access, which stay
	// with whoever holds WRITE_ACL.
	putPolicy(t, a.alice, "open", "Allow", `"*"`, "s3:*", "arn:aws:s3:::open*", "")
	require.Equal(t, "", tryPut(t, a.bob, "open", "bobs"))
	require.Equal(t, "", tryGet(t, a.anon, "open", "bobs"))
	_, err = a.bob.DeleteBucketPolicy(ctx, &awss3.DeleteBucketPolicyInput{Bucket: aws.String("open")})
	require.Equal(t, "AccessDenied", apiCode(err))
	_, err = a.anon.DeleteBucketPolicy(ctx, &awss3.DeleteBucketPolicyInput{Bucket: aws.String("open")})
	require.Equal(t, "MethodNotAllowed", apiCode(err))
	putPolicy(t, a.alice, "open", "Allow", `"*"`, "s3:GetObject", "arn:aws:s3:::open/a.txt", "")
	resp, err := http.Get(a.srv.URL + "/open/a.txt")
	require.NoError(t, err)
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, "hello", string(data))

	for _, acl := range []types.BucketCannedACL{types.BucketCannedACLPublicRead, types.BucketCannedACLAuthenticatedRead} {
		b := "acl-" + string(acl)
		_, err = a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b), ACL: acl, ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred})
		require.NoError(t, err)
		put(t, a.alice, b, "k", []byte("v"))
		want := ""
		if acl == types.BucketCannedACLAuthenticatedRead {
			want = "AccessDenied"
		}
		require.Equal(t, want, tryGet(t, a.anon, b, "k"), acl)
		require.Equal(t, want, tryList(t, a.anon, b, ""), acl)
		require.Equal(t, "", tryGet(t, a.bob, b, "k"), acl)
		require.Equal(t, "AccessDenied", tryPut(t, a.anon, b, "w"), acl)
	}
	// A Deny to everyone wins over the public ACL.
	putPolicy(t, a.alice, "acl-public-read", "Deny", `"*"`, "s3:GetObject", "arn:aws:s3:::acl-public-read/*", "")
	require.Equal(t, "AccessDenied", tryGet(t, a.anon, "acl-public-read", "k"))
}

// Grants: headers and documents map onto meta's ACLs and read back; the
// ownership controls decide which a bucket takes.
func TestBucketAndObjectGrants(t *testing.T) {
	a := startAuthGateway(t)
	ctx := t.Context()
	_, err := a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("enf")})
	require.NoError(t, err)
	oc, err := a.alice.GetBucketOwnershipControls(ctx, &awss3.GetBucketOwnershipControlsInput{Bucket: aws.String("enf")})
	require.NoError(t, err)
	require.Equal(t, types.ObjectOwnershipBucketOwnerEnforced, oc.OwnershipControls.Rules[0].ObjectOwnership)
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String("enf"), ACL: types.BucketCannedACLPublicRead})
	require.Equal(t, "AccessControlListNotSupported", apiCode(err))
	_, err = a.alice.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("enf"), Key: aws.String("k"), Body: strings.NewReader("x"),
		ACL: types.ObjectCannedACLPublicRead})
	require.Equal(t, "AccessControlListNotSupported", apiCode(err))
	_, err = a.alice.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String("enf"), Key: aws.String("k"),
		ACL: types.ObjectCannedACLPublicRead})
	require.Equal(t, "AccessControlListNotSupported", apiCode(err))
	_, err = a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("enf2"), ACL: types.BucketCannedACLPublicRead})
	require.Equal(t, "InvalidBucketAclWithObjectOwnership", apiCode(err))
	_, err = a.alice.PutBucketOwnershipControls(ctx, &awss3.PutBucketOwnershipControlsInput{Bucket: aws.String("enf"),
		OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipObjectWriter}}}})
	require.NoError(t, err)

	// Grant headers, read back by GetBucketAcl.
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String("enf"), GrantRead: aws.String(`id="bob"`),
		GrantReadACP: aws.String(`uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"`)})
	require.NoError(t, err)
	acl, err := a.alice.GetBucketAcl(ctx, &awss3.GetBucketAclInput{Bucket: aws.String("enf")})
	require.NoError(t, err)
	require.Equal(t, "alice", aws.ToString(acl.Owner.ID))
	require.ElementsMatch(t, []string{"alice FULL_CONTROL", "bob READ", "AuthenticatedUsers READ_ACP"}, grantsOf(acl.Grants))
	_, acls, err := a.admin.GetAcl(ctx, client.BucketObject("s3v", "enf"))
	require.NoError(t, err)
	require.Equal(t, "user:alice:a,user:bob:rl,world::x", client.FormatAcls(acls))
	require.Equal(t, "", tryList(t, a.bob, "enf", ""))

	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String("enf"), GrantRead: aws.String(`id="nobody"`)})
	require.Equal(t, "InvalidArgument", apiCode(err))
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String("enf"), ACL: types.BucketCannedACLPrivate, GrantRead: aws.String(`id="bob"`)})
	require.Equal(t, "InvalidRequest", apiCode(err))

	// An object's ACL: a document, read back; bob reads that object only.
	_, err = a.alice.PutBucketAcl(ctx, &awss3.PutBucketAclInput{Bucket: aws.String("enf"), ACL: types.BucketCannedACLPrivate})
	require.NoError(t, err)
	put(t, a.alice, "enf", "shared", []byte("s"))
	put(t, a.alice, "enf", "mine", []byte("m"))
	_, err = a.alice.PutObjectAcl(ctx, &awss3.PutObjectAclInput{Bucket: aws.String("enf"), Key: aws.String("shared"),
		AccessControlPolicy: &types.AccessControlPolicy{Owner: &types.Owner{ID: aws.String("alice")}, Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("bob")}, Permission: types.PermissionRead}}}})
	require.NoError(t, err)
	oa, err := a.alice.GetObjectAcl(ctx, &awss3.GetObjectAclInput{Bucket: aws.String("enf"), Key: aws.String("shared")})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"alice FULL_CONTROL", "bob READ"}, grantsOf(oa.Grants))
	require.Equal(t, "", tryGet(t, a.bob, "enf", "shared"))
	require.Equal(t, "AccessDenied", tryGet(t, a.bob, "enf", "mine"))
	// A canned ACL with PutObject.
	_, err = a.alice.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("enf"), Key: aws.String("pub"), Body: bytes.NewReader([]byte("p")),
		ACL: types.ObjectCannedACLAuthenticatedRead})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return tryGet(t, a.bob, "enf", "pub") == "" }, 5*time.Second, 50*time.Millisecond)

	// A grant with CreateMultipartUpload is the completed object's.
	mpu, err := a.alice.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{Bucket: aws.String("enf"), Key: aws.String("mp"),
		GrantRead: aws.String(`id="bob"`)})
	require.NoError(t, err)
	part, err := a.alice.UploadPart(ctx, &awss3.UploadPartInput{Bucket: aws.String("enf"), Key: aws.String("mp"), UploadId: mpu.UploadId,
		PartNumber: aws.Int32(1), Body: strings.NewReader("parts")})
	require.NoError(t, err)
	_, err = a.alice.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{Bucket: aws.String("enf"), Key: aws.String("mp"),
		UploadId: mpu.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return tryGet(t, a.bob, "enf", "mp") == "" }, 5*time.Second, 50*time.Millisecond)
	oa, err = a.alice.GetObjectAcl(ctx, &awss3.GetObjectAclInput{Bucket: aws.String("enf"), Key: aws.String("mp")})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"alice FULL_CONTROL", "bob READ"}, grantsOf(oa.Grants))
	head, err := a.alice.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String("enf"), Key: aws.String("mp")})
	require.NoError(t, err)
	require.Empty(t, head.Metadata)

	_, err = a.alice.DeleteBucketOwnershipControls(ctx, &awss3.DeleteBucketOwnershipControlsInput{Bucket: aws.String("enf")})
	require.NoError(t, err)
	_, err = a.alice.GetBucketOwnershipControls(ctx, &awss3.GetBucketOwnershipControlsInput{Bucket: aws.String("enf")})
	require.Equal(t, "OwnershipControlsNotFoundError", apiCode(err))
}

// grantsOf names grants "ID PERMISSION" (a group by the last part of its URI).
func grantsOf(gs []types.Grant) []string {
	var out []string
	for _, g := range gs {
		who := aws.ToString(g.Grantee.ID)
		if u := aws.ToString(g.Grantee.URI); u != "" {
			who = u[strings.LastIndex(u, "/")+1:]
		}
		out = append(out, who+" "+string(g.Permission))
	}
	return out
}

// A gateway whose user may not read the buckets (a proxy that does not own
// the S3 volume) serves its users as before, refuses to take a policy it
// could not enforce, and serves no anonymous request.
func TestBucketPolicyGatewayWithoutRights(t *testing.T) {
	a := startAuthGatewayWith(t, "admin")
	ctx := t.Context()
	_, err := a.alice.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String("mine")})
	require.NoError(t, err)
	put(t, a.alice, "mine", "k", []byte("v"))
	require.Equal(t, []byte("v"), get(t, a.alice, "mine", "k"))
	require.Equal(t, "AccessDenied", tryGet(t, a.bob, "mine", "k"))
	_, err = a.alice.PutBucketPolicy(ctx, &awss3.PutBucketPolicyInput{Bucket: aws.String("mine"),
		Policy: aws.String(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::mine/*"}]}`)})
	require.Equal(t, "AccessDenied", apiCode(err))
	require.ErrorContains(t, err, "could not enforce a policy")
	require.Equal(t, "AccessDenied", tryGet(t, a.anon, "mine", "k"))
}

// Without authentication every key may do anything, but a policy's Deny
// still refuses and anonymous requests are served where a policy or a
// public ACL allows them.
func TestBucketPolicyWithoutAuth(t *testing.T) {
	c := sdk(t, false)
	anon := sdk(t, false, func(o *awss3.Options) { o.Credentials = aws.AnonymousCredentials{} })
	b := newBucket(t, c)
	put(t, c, b, "k", []byte("v"))
	put(t, c, b, "private/k", []byte("v"))
	require.Equal(t, "AccessDenied", tryGet(t, anon, b, "k"))
	putPolicy(t, c, b, "Deny", `"*"`, "s3:GetObject", "arn:aws:s3:::"+b+"/private/*", "")
	require.Equal(t, "AccessDenied", tryGet(t, c, b, "private/k"))
	require.Equal(t, "", tryGet(t, c, b, "k"))
	require.Equal(t, "AccessDenied", tryGet(t, anon, b, "k"))
	_, err := c.PutBucketOwnershipControls(t.Context(), &awss3.PutBucketOwnershipControlsInput{Bucket: aws.String(b),
		OwnershipControls: &types.OwnershipControls{Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipObjectWriter}}}})
	require.NoError(t, err)
	_, err = c.PutBucketAcl(t.Context(), &awss3.PutBucketAclInput{Bucket: aws.String(b), ACL: types.BucketCannedACLPublicRead})
	require.NoError(t, err)
	require.Equal(t, "", tryGet(t, anon, b, "k"))
	require.Equal(t, "AccessDenied", tryGet(t, anon, b, "private/k")) // the Deny to "*" wins
	require.Equal(t, "AccessDenied", tryPut(t, anon, b, "new"))

	// A policy attribute the gateway cannot read (another tool wrote it)
	// refuses every request but the policy's own replacement or removal.
	require.NoError(t, env.client.SetAttributes(t.Context(), "s3v", b, "", 0,
		[]*stratov1.KeyAttribute{{Name: "x-strato-acl-policy", Value: "not a policy"}}))
	require.Eventually(t, func() bool { return tryGet(t, c, b, "k") == "AccessDenied" }, 5*time.Second, 100*time.Millisecond)
	_, err = c.DeleteBucketPolicy(t.Context(), &awss3.DeleteBucketPolicyInput{Bucket: aws.String(b)})
	require.NoError(t, err)
	require.Equal(t, "", tryGet(t, c, b, "k"))
}
