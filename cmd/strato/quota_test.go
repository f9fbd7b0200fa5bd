package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

func TestShQuotasAndUpdates(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol", "--owner", "alice", "--quota-namespace", "5")
	h.ok("sh", "bucket", "create", "/vol/bkt", "--owner", "alice")

	// setquota: one quota given, the other stays.
	require.Empty(t, h.ok("sh", "volume", "setquota", "/vol", "--bytes", "1TiB"))
	info := fieldsOf(t, h.ok("sh", "volume", "info", "vol"))
	require.Equal(t, "1 TiB", info["Quota"])
	require.Equal(t, "5", info["Bucket quota"])
	v := jsonOf[map[string]any](t, h.ok("sh", "volume", "setquota", "vol", "--namespace", "7", "--json"))
	require.Equal(t, 1099511627776.0, v["quotaBytes"])
	require.Equal(t, 7.0, v["quotaNamespace"])
	h.ok("sh", "volume", "clrquota", "/vol", "--namespace")
	info = fieldsOf(t, h.ok("sh", "volume", "info", "vol"))
	require.Equal(t, []string{"1 TiB", "unlimited"}, []string{info["Quota"], info["Bucket quota"]})
	h.ok("sh", "volume", "clrquota", "/vol")
	info = fieldsOf(t, h.ok("sh", "volume", "info", "vol"))
	require.Equal(t, []string{"unlimited", "unlimited"}, []string{info["Quota"], info["Bucket quota"]})

	h.ok("sh", "bucket", "setquota", "/vol/bkt", "--bytes", "10GB", "--namespace", "1")
	info = fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/bkt"))
	require.Equal(t, []string{"10 GiB", "1"}, []string{info["Quota"], info["Namespace quota"]})
	h.ok("fs", "mkdir", "/vol/bkt/d1")
	require.Contains(t, h.fail(1, "fs", "mkdir", "/vol/bkt/d2"), "quota exceeded")
	h.ok("sh", "bucket", "clrquota", "/vol/bkt", "--namespace")
	h.ok("fs", "mkdir", "/vol/bkt/d2")
	info = fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/bkt"))
	require.Equal(t, []string{"10 GiB", "unlimited"}, []string{info["Quota"], info["Namespace quota"]})

	// update: owners, the bucket's redundancy and its quota of bytes.
	require.Empty(t, h.ok("sh", "volume", "update", "/vol", "--owner", "bob"))
	require.Equal(t, "bob", fieldsOf(t, h.ok("sh", "volume", "info", "vol"))["Owner"])
	h.ok("sh", "bucket", "update", "/vol/bkt", "--owner", "carol", "--replication", "ONE")
	info = fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/bkt"))
	require.Equal(t, []string{"carol", "ONE"}, []string{info["Owner"], info["Replication"]})
	b := jsonOf[map[string]any](t, h.ok("sh", "bucket", "update", "/vol/bkt", "--replication", "rs-3-2-1024k", "--quota-bytes", "2GiB", "--json"))
	require.Equal(t, 2147483648.0, b["quotaBytes"])
	require.Equal(t, "carol", b["owner"])
	require.Equal(t, "rs-3-2-1024k", fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/bkt"))["Replication"])

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sh", "volume", "setquota", "/vol"}, "give --bytes, --namespace or both"},
		{[]string{"sh", "volume", "setquota", "/vol", "--bytes", "lots"}, "--bytes"},
		{[]string{"sh", "bucket", "setquota", "/vol/bkt", "--namespace", "-1"}, "--namespace -1: must be 0 (unlimited) or more"},
		{[]string{"sh", "bucket", "setquota", "/vol", "--bytes", "1"}, "names no bucket"},
		{[]string{"sh", "volume", "update", "/vol"}, "--owner: required"},
		{[]string{"sh", "bucket", "update", "/vol/bkt"}, "give --owner, --replication, --versioning or --quota-bytes"},
		{[]string{"sh", "bucket", "update", "/vol/bkt", "--replication", "TWO"}, "--replication"},
	} {
		require.Contains(t, h.fail(2, tc.args...), tc.want)
	}
	require.Contains(t, h.fail(1, "sh", "volume", "setquota", "/nosuch", "--bytes", "1"), "volume not found")
	require.Contains(t, h.fail(1, "sh", "bucket", "update", "/vol/nosuch", "--owner", "x"), "bucket not found")

	// S3 versioning: an object-store bucket's, never back to unversioned.
	require.Equal(t, "UNVERSIONED", info["Versioning"])
	require.Contains(t, h.fail(1, "sh", "bucket", "update", "/vol/bkt", "--versioning", "enabled"), "object-store (OBS) buckets only")
	h.ok("sh", "bucket", "create", "/vol/obs", "--layout", "OBS")
	h.ok("sh", "bucket", "update", "/vol/obs", "--versioning", "enabled")
	require.Equal(t, "ENABLED", fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/obs"))["Versioning"])
	h.ok("sh", "bucket", "update", "/vol/obs", "--versioning", "Suspended")
	require.Equal(t, "SUSPENDED", fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/obs"))["Versioning"])
	require.Contains(t, h.fail(2, "sh", "bucket", "update", "/vol/obs", "--versioning", "unversioned"), "--versioning")
}

// With authentication, quotas and owners are for administrators; a
// bucket's owner may change its replication.
func TestShQuotasAndUpdatesNeedRights(t *testing.T) {
	c := authCluster(t)
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	adminTok, err := c.AdminToken()
	require.NoError(t, err)
	t.Setenv(client.TokenEnv, adminTok)
	h.ok("admin", "user", "create", "alice")
	h.ok("sh", "volume", "create", "vol1", "--owner", "alice")
	aliceTok := fieldsOf(t, h.ok("admin", "token", "issue", "--user", "alice"))["Token"]

	t.Setenv(client.TokenEnv, aliceTok)
	h.ok("sh", "bucket", "create", "/vol1/bk1")
	require.Contains(t, h.fail(1, "sh", "volume", "setquota", "/vol1", "--bytes", "1TiB"), "quotas are for administrators")
	require.Contains(t, h.fail(1, "sh", "bucket", "clrquota", "/vol1/bk1"), "quotas are for administrators")
	require.Contains(t, h.fail(1, "sh", "volume", "update", "/vol1", "--owner", "bob"), "changing an owner is for administrators")
	require.Contains(t, h.fail(1, "sh", "bucket", "update", "/vol1/bk1", "--owner", "bob"), "changing an owner is for administrators")
	h.ok("sh", "bucket", "update", "/vol1/bk1", "--replication", "ONE")
	require.Equal(t, "ONE", fieldsOf(t, h.ok("sh", "bucket", "info", "/vol1/bk1"))["Replication"])

	t.Setenv(client.TokenEnv, adminTok)
	h.ok("sh", "bucket", "setquota", "/vol1/bk1", "--namespace", "10")
	h.ok("sh", "bucket", "update", "/vol1/bk1", "--owner", "bob")
	require.Equal(t, "bob", fieldsOf(t, h.ok("sh", "bucket", "info", "/vol1/bk1"))["Owner"])
}
