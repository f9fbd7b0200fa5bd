package cluster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// A bucket's access attributes (x-strato-acl-*: the S3 gateway's policy,
// ownership controls and AllUsers grants) take WRITE_ACL to change, as
// its ACL does; its other attributes WRITE alone. Through the Go client as
// through the gateway.
func TestACLAccessAttributes(t *testing.T) {
	a := startACL(t)
	ctx := t.Context()
	a.user("alice")
	bob := a.user("bob")
	_, err := a.admin.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	require.NoError(t, err)
	_, err = a.admin.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	require.NoError(t, a.admin.SetAcl(ctx, client.BucketObject("vol", "bkt"), mustAcls(t, "user:bob:rw")))
	attr := func(name, value string) []*stratov1.KeyAttribute {
		return []*stratov1.KeyAttribute{{Name: name, Value: value}}
	}

	require.NoError(t, bob.SetAttributes(ctx, "vol", "bkt", "", 0, attr("x-strato-tagging", "k=v")))
	err = bob.SetAttributes(ctx, "vol", "bkt", "", 0, attr("x-strato-acl-policy", `{"Statement":[]}`))
	denied(t, err, "bob", "WRITE|WRITE_ACL", "/vol/bkt")
	require.NoError(t, a.admin.AddAcl(ctx, client.BucketObject("vol", "bkt"), mustAcls(t, "user:bob:y")))
	require.NoError(t, bob.SetAttributes(ctx, "vol", "bkt", "", 0, attr("x-strato-acl-policy", "p")))
	// An access attribute kept as it is takes WRITE alone.
	require.NoError(t, a.admin.SetAcl(ctx, client.BucketObject("vol", "bkt"), mustAcls(t, "user:bob:rw")))
	require.NoError(t, bob.SetAttributes(ctx, "vol", "bkt", "", 0, append(attr("x-strato-acl-policy", "p"), attr("x-strato-tagging", "k=w")...)))
	err = bob.SetAttributes(ctx, "vol", "bkt", "", 0, attr("x-strato-tagging", "k=w"))
	denied(t, err, "bob", "WRITE|WRITE_ACL", "/vol/bkt")
}
