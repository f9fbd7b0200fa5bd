package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShBucketLifecycle: rules set from S3's JSON are read back as S3's
// JSON; bad rules are a usage error (2) and change nothing; --clear
// removes them; an FSO bucket refuses them.
func TestShBucketLifecycle(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/obs", "--layout", "obs")
	h.ok("sh", "bucket", "create", "/vol/fsb")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := write("good.json", `{"Rules": [{"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 30}},
		{"ID": "old", "Status": "Disabled", "Filter": {"And": {"Prefix": "a/", "Tags": [{"Key": "k", "Value": "v"}]}},
		 "NoncurrentVersionExpiration": {"NoncurrentDays": 7, "NewerNoncurrentVersions": 2}}]}`)
	require.Contains(t, h.fail(1, "sh", "bucket", "lifecycle", "/vol/obs"), "no lifecycle rules")
	h.ok("sh", "bucket", "lifecycle", "/vol/obs", "--set", good)
	out := jsonOf[map[string][]map[string]any](t, h.ok("sh", "bucket", "lifecycle", "/vol/obs"))
	require.Len(t, out["Rules"], 2)
	require.Equal(t, "logs", out["Rules"][0]["ID"])
	require.Equal(t, map[string]any{"Days": 30.0}, out["Rules"][0]["Expiration"])
	require.Equal(t, map[string]any{"Prefix": "logs/"}, out["Rules"][0]["Filter"])
	require.Equal(t, "Disabled", out["Rules"][1]["Status"])

	for _, bad := range []string{
		`{"Rules": [{"ID": "x", "Status": "Enabled", "Expiration": {"Days": 0}}]}`,
		`{"Rules": [{"ID": "x", "Status": "Enabled", "Filter": {"Prefix": "a"}}]}`,
		`{"Rules": [{"ID": "x", "Status": "Enabled", "Expiration": {"Days": 1}, "Bogus": 1}]}`,
		`{"Rules": [{"ID": "x", "Status": "Enabled", "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}]}]}`,
		`not json`,
	} {
		h.fail(2, "sh", "bucket", "lifecycle", "/vol/obs", "--set", write("bad.json", bad))
	}
	out = jsonOf[map[string][]map[string]any](t, h.ok("sh", "bucket", "lifecycle", "/vol/obs"))
	require.Len(t, out["Rules"], 2, "the refusals changed nothing")
	require.Contains(t, h.fail(1, "sh", "bucket", "lifecycle", "/vol/fsb", "--set", good), "OBS buckets")
	h.fail(2, "sh", "bucket", "lifecycle", "/vol/obs", "--set", good, "--clear")
	h.ok("sh", "bucket", "lifecycle", "/vol/obs", "--clear")
	require.Contains(t, h.fail(1, "sh", "bucket", "lifecycle", "/vol/obs"), "no lifecycle rules")
}
