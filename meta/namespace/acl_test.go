package namespace

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// show writes ACL records for comparisons.
func show(rs []*stratov1.AclRecord) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.GetType().String()+":"+r.GetName()+":"+RightsString(r.GetRights())+":"+r.GetScope().String())
	}
	return out
}

func acl(t stratov1.AclType, name string, rights uint32, scope stratov1.AclScope) *stratov1.AclRecord {
	return &stratov1.AclRecord{Type: t, Name: name, Rights: rights, Scope: scope}
}

const (
	aUser   = stratov1.AclType_ACL_USER
	aGroup  = stratov1.AclType_ACL_GROUP
	aWorld  = stratov1.AclType_ACL_WORLD
	access  = stratov1.AclScope_ACL_ACCESS
	deflt   = stratov1.AclScope_ACL_DEFAULT
	editSet = stratov1.AclEdit_ACL_EDIT_SET
	editAdd = stratov1.AclEdit_ACL_EDIT_ADD
	editRm  = stratov1.AclEdit_ACL_EDIT_REMOVE
)

// The rule: administrators and the owners of the object or of anything
// above it pass; otherwise the nearest object with ACCESS entries decides.
func TestACLDecide(t *testing.T) {
	bob := &Caller{User: "bob", Groups: []string{"dev"}}
	vol := aclNode{path: "/v", owner: "alice"}
	bucketOpen := aclNode{path: "/v/b", owner: "alice", acls: []*stratov1.AclRecord{acl(aUser, "bob", RightRead|RightList, access)}}
	bucketDev := aclNode{path: "/v/b", owner: "alice", acls: []*stratov1.AclRecord{acl(aGroup, "dev", RightCreate, access)}}
	bucketWorld := aclNode{path: "/v/b", owner: "alice", acls: []*stratov1.AclRecord{acl(aWorld, "", RightRead, access)}}
	bucketDefault := aclNode{path: "/v/b", owner: "alice", acls: []*stratov1.AclRecord{acl(aUser, "bob", RightAll, deflt)}}
	keyBare := aclNode{path: "/v/b/k", owner: "alice"}
	keyCarol := aclNode{path: "/v/b/k", owner: "alice", acls: []*stratov1.AclRecord{acl(aUser, "carol", RightAll, access)}}
	keyBobs := aclNode{path: "/v/b/k", owner: "bob"}
	for _, tc := range []struct {
		name   string
		caller *Caller
		nodes  []aclNode
		right  uint32
		want   bool
	}{
		{"admin", &Caller{User: "root", Admin: true}, []aclNode{vol, keyBare}, RightDelete, true},
		{"owner of the volume", &Caller{User: "alice"}, []aclNode{vol, bucketOpen, keyCarol}, RightDelete, true},
		{"owner of the key", bob, []aclNode{vol, bucketDev, keyBobs}, RightWriteAcl, true},
		{"nobody's grant", bob, []aclNode{vol, keyBare}, RightRead, false},
		{"key inherits the bucket's", bob, []aclNode{vol, bucketOpen, keyBare}, RightRead, true},
		{"every right needed", bob, []aclNode{vol, bucketOpen, keyBare}, RightRead | RightWrite, false},
		{"not granted", bob, []aclNode{vol, bucketOpen, keyBare}, RightDelete, false},
		{"the key's own entries decide", bob, []aclNode{vol, bucketOpen, keyCarol}, RightRead, false},
		{"group", bob, []aclNode{vol, bucketDev}, RightCreate, true},
		{"other group", &Caller{User: "eve", Groups: []string{"ops"}}, []aclNode{vol, bucketDev}, RightCreate, false},
		{"world", &Caller{User: "eve"}, []aclNode{vol, bucketWorld, keyBare}, RightRead, true},
		{"DEFAULT entries grant nothing", bob, []aclNode{vol, bucketDefault, keyBare}, RightRead, false},
		{"no owner matches no user", &Caller{User: ""}, []aclNode{{path: "/x"}}, RightRead, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.caller.decide(tc.nodes, tc.right))
			err := tc.caller.check(tc.nodes, tc.right)
			if tc.want {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrPermissionDenied)
				require.ErrorIs(t, err, ErrDenied)
				require.Contains(t, err.Error(), "user "+tc.caller.User+" lacks "+RightsString(tc.right)+" on "+tc.nodes[len(tc.nodes)-1].path)
			}
		})
	}
	var none *Caller
	require.NoError(t, none.check(nil, RightAll))
}

func TestACLEdits(t *testing.T) {
	cur := []*stratov1.AclRecord{acl(aUser, "bob", RightRead, access), acl(aWorld, "", RightList, access)}
	got, err := mergeAcls([]*stratov1.AclRecord{acl(aUser, "bob", RightWrite, access), acl(aGroup, "dev", RightRead, deflt)}, cur, editAdd)
	require.NoError(t, err)
	require.Equal(t, show([]*stratov1.AclRecord{acl(aUser, "bob", RightRead|RightWrite, access), acl(aGroup, "dev", RightRead, deflt),
		acl(aWorld, "", RightList, access)}), show(got))
	got, err = mergeAcls([]*stratov1.AclRecord{acl(aUser, "bob", RightRead|RightWrite, access), acl(aUser, "zed", RightAll, access)}, got, editRm)
	require.NoError(t, err)
	require.Equal(t, show([]*stratov1.AclRecord{acl(aGroup, "dev", RightRead, deflt), acl(aWorld, "", RightList, access)}), show(got))
	got, err = mergeAcls([]*stratov1.AclRecord{acl(aUser, "amy", RightRead, access)}, got, editSet)
	require.NoError(t, err)
	require.Equal(t, show([]*stratov1.AclRecord{acl(aUser, "amy", RightRead, access)}), show(got))
	require.Equal(t, show([]*stratov1.AclRecord{acl(aUser, "bob", RightRead, access)}), show(cur[:1]), "the current ACL is not modified")

	var many []*stratov1.AclRecord
	for i := range MaxAcls {
		many = append(many, acl(aUser, "u"+strings.Repeat("x", i), RightRead, access))
	}
	_, err = mergeAcls(many, nil, editSet)
	require.NoError(t, err)
	_, err = mergeAcls([]*stratov1.AclRecord{acl(aWorld, "", RightRead, access)}, many, editAdd)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "at most 64")
}

func TestACLRecordsValidate(t *testing.T) {
	got, err := AclRecords([]*stratov1.Acl{{Type: aUser, Name: "bob", Rights: RightRead}, {Type: aUser, Name: "bob", Rights: RightList}})
	require.NoError(t, err)
	require.Equal(t, show([]*stratov1.AclRecord{acl(aUser, "bob", RightRead|RightList, access)}), show(got), "merged, scope ACCESS")
	for _, bad := range []*stratov1.Acl{
		{Type: stratov1.AclType_ACL_TYPE_UNSPECIFIED, Name: "bob", Rights: 1},
		{Type: aUser, Rights: 1},
		{Type: aGroup, Name: "Not Valid", Rights: 1},
		{Type: aWorld, Name: "bob", Rights: 1},
		{Type: aUser, Name: "bob", Rights: 1 << 9},
		{Type: aUser, Name: "bob", Rights: 1, Scope: 7},
	} {
		_, err := AclRecords([]*stratov1.Acl{bad})
		require.ErrorIs(t, err, ErrInvalid, "%v", bad)
	}
}

func TestACLInherit(t *testing.T) {
	parent := []*stratov1.AclRecord{acl(aUser, "bob", RightRead, access), acl(aGroup, "dev", RightList, deflt)}
	require.Equal(t, show([]*stratov1.AclRecord{acl(aGroup, "dev", RightList, access)}), show(inherit(parent, false)))
	require.Equal(t, show([]*stratov1.AclRecord{acl(aGroup, "dev", RightList, access), acl(aGroup, "dev", RightList, deflt)}), show(inherit(parent, true)))
	require.Empty(t, inherit(nil, true))
	require.Equal(t, "READ|LIST", RightsString(RightRead|RightList))
	require.Equal(t, "ALL", RightsString(RightAll))
}

// as prepares req for caller c and applies it.
func (h *harness) as(c *Caller, req proto.Message) (proto.Message, error) {
	h.t.Helper()
	env := h.env()
	env.Caller = c
	cmd, err := h.ns.Prepare(context.Background(), req, h.db, env)
	if err != nil {
		return nil, err
	}
	return h.apply(cmd)
}

// Prepare's checks of mutations the cluster tests do not reach: rename,
// owner and quota changes, another user's open key and create token.
func TestACLPrepareChecks(t *testing.T) {
	h := newHarness(t)
	alice := &Caller{User: "alice"}
	bob := &Caller{User: "bob", Groups: []string{"dev"}}
	h.must(&stratov1.CreateVolumeRequest{Name: "vol", Owner: "alice"})
	_, err := h.as(alice, &stratov1.CreateBucketRequest{Volume: "vol", Name: "fsb", Owner: "bob"})
	require.NoError(t, err)
	bk, err := h.rd().Bucket("vol", "fsb")
	require.NoError(t, err)
	require.Equal(t, "alice", bk.GetOwner(), "a user owns what it creates")

	open, err := h.as(alice, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/f", Recursive: true})
	require.NoError(t, err)
	openID := open.(*stratov1.OpenKeyResponse).GetOpenId()
	_, err = h.as(bob, &stratov1.AllocateBlockRequest{Volume: "vol", Bucket: "fsb", OpenId: openID})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "user bob lacks WRITE on /vol/fsb/a/b/f (open key")
	_, err = h.as(bob, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/b/f", OpenId: openID})
	require.ErrorIs(t, err, ErrPermissionDenied)
	_, err = h.as(alice, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/b/f", OpenId: openID})
	require.NoError(t, err)

	// A create token names its owner: bob cannot commit one of alice's.
	token, err := proto.Marshal(&stratov1.OpenKeyCommand{Volume: "vol", Bucket: "fsb", Key: "a/g", Owner: "alice",
		ExpiresAtUnixMs: h.now.UnixMilli() + 1000})
	require.NoError(t, err)
	_, err = h.as(bob, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "fsb", Key: "a/g", CreateToken: token})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "a create token of alice")

	_, err = h.as(bob, &stratov1.SetQuotaRequest{Volume: "vol", QuotaBytes: 1})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "quotas are for administrators")
	_, err = h.as(alice, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/f", Owner: "bob"})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "changing an owner is for administrators")
	_, err = h.as(alice, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "a/b/f", Group: "dev"})
	require.NoError(t, err)
	_, err = h.as(&Caller{User: "root", Admin: true}, &stratov1.SetOwnerRequest{Volume: "vol", Bucket: "fsb", Path: "a/b", Owner: "bob"})
	require.NoError(t, err)

	// Rename: DELETE on the source, CREATE where it lands. bob owns a/b
	// now (and so everything below it), not a.
	_, err = h.as(bob, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b/f", Dst: "a/f2"})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "user bob lacks CREATE on /vol/fsb/a")
	_, err = h.as(bob, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b/f", Dst: "a/b/f2"})
	require.NoError(t, err)
	_, err = h.as(alice, &stratov1.AddAclRequest{Object: &stratov1.AclObject{Kind: keyKind, Volume: "vol", Bucket: "fsb", Key: "a"},
		Acls: []*stratov1.Acl{{Type: aGroup, Name: "dev", Rights: RightCreate}}})
	require.NoError(t, err)
	_, err = h.as(bob, &stratov1.RenameRequest{Volume: "vol", Bucket: "fsb", Src: "a/b/f2", Dst: "a"})
	require.NoError(t, err, "into the directory a, where dev may create")
	_, err = h.as(bob, &stratov1.DeleteRequest{Volume: "vol", Bucket: "fsb", Path: "a/f2"})
	require.ErrorIs(t, err, ErrPermissionDenied)
	require.ErrorContains(t, err, "user bob lacks DELETE on /vol/fsb/a/f2")
}
