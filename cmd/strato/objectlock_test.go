package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShObjectLock: a bucket with object lock from the CLI; sh key info
// shows a version's lock; meta refuses sh key delete of a locked version,
// whatever the client (decision 0088).
func TestShObjectLock(t *testing.T) {
	h := dataCluster(t)
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.WriteFile(src, []byte("worm"), 0o644))
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/worm", "--layout", "OBS", "--object-lock")
	info := fieldsOf(t, h.ok("sh", "bucket", "info", "/vol/worm"))
	require.Equal(t, "ENABLED", info["Versioning"])
	require.Equal(t, "enabled, no default retention", info["Object lock"])

	h.ok("sh", "key", "put", "/vol/worm/k", src)
	h.ok("sh", "key", "retention", "/vol/worm/k", "--mode", "COMPLIANCE", "--until", "+1h")
	h.ok("sh", "key", "legalhold", "/vol/worm/k", "on")
	info = fieldsOf(t, keyFields(h.ok("sh", "key", "info", "/vol/worm/k")))
	require.Contains(t, info["Retention"], "COMPLIANCE until ")
	require.Equal(t, "ON", info["Legal hold"])
	v := info["Version"]
	require.NotEmpty(t, v)

	require.Contains(t, h.fail(1, "sh", "key", "delete", "/vol/worm/k", "--version-id", v, "--bypass-governance"), "object locked")
	require.Contains(t, h.fail(1, "sh", "key", "retention", "/vol/worm/k", "--mode", "NONE", "--bypass-governance"), "object locked")
	h.ok("sh", "key", "legalhold", "/vol/worm/k", "off", "--version-id", v)
	require.Contains(t, h.fail(1, "sh", "key", "delete", "/vol/worm/k", "--version-id", v), "COMPLIANCE retention until")
	// A delete without a version makes a delete marker: allowed.
	h.ok("sh", "key", "delete", "/vol/worm/k")
	require.Equal(t, "OFF", fieldsOf(t, keyFields(h.ok("sh", "key", "info", "/vol/worm/k", "--version-id", v)))["Legal hold"])
	require.Contains(t, h.fail(1, "sh", "bucket", "delete", "/vol/worm"), "not empty")
}

// keyFields is the fields of sh key info, without its table of blocks.
func keyFields(out string) string {
	fields, _, _ := strings.Cut(out, "\n\n")
	return fields
}
