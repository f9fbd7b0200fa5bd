package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func TestParseAcls(t *testing.T) {
	acls, err := ParseAcls("user:alice:rw, group:dev:rl[DEFAULT],world::r,world:a,user:bob:n[ACCESS],group:ops:cdxy")
	require.NoError(t, err)
	require.Equal(t, []*stratov1.Acl{
		{Type: stratov1.AclType_ACL_USER, Name: "alice", Rights: 3, Scope: stratov1.AclScope_ACL_ACCESS},
		{Type: stratov1.AclType_ACL_GROUP, Name: "dev", Rights: 1 | 16, Scope: stratov1.AclScope_ACL_DEFAULT},
		{Type: stratov1.AclType_ACL_WORLD, Rights: 1, Scope: stratov1.AclScope_ACL_ACCESS},
		{Type: stratov1.AclType_ACL_WORLD, Rights: 127, Scope: stratov1.AclScope_ACL_ACCESS},
		{Type: stratov1.AclType_ACL_USER, Name: "bob", Rights: 0, Scope: stratov1.AclScope_ACL_ACCESS},
		{Type: stratov1.AclType_ACL_GROUP, Name: "ops", Rights: 4 | 8 | 32 | 64, Scope: stratov1.AclScope_ACL_ACCESS},
	}, acls)
	require.Equal(t, "user:alice:rw,group:dev:rl[DEFAULT],world::r,world::a,user:bob:n,group:ops:cdxy", FormatAcls(acls))
	// Round trip.
	again, err := ParseAcls(FormatAcls(acls))
	require.NoError(t, err)
	require.Equal(t, acls, again)
	for r := uint32(0); r <= 127; r++ {
		got, err := ParseRights(FormatRights(r))
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
}

func TestParseAclErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "no ACL entry",
		"bob:rw":                `type "bob" (want user, group or world)`,
		"user:alice":            "want user:NAME:RIGHTS",
		"user::rw":              "want user:NAME:RIGHTS",
		"group:dev:rz":          `unknown right 'z'`,
		"user:alice:":           "none given",
		"user:alice:r[SOMEDAY]": `scope "SOMEDAY"`,
		"user:alice:r[DEFAULT":  "at the end",
		"world:bob:r":           "the world has no name",
	} {
		_, err := ParseAcls(in)
		require.ErrorContains(t, err, want, "%q", in)
	}
}
