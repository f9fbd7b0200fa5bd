package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShErasureCoding: --replication takes erasure coding configs next to
// ONE and THREE, for buckets and keys; bad ones are refused with the
// reason; info and list say how each is stored; an empty erasure coded key
// commits, and data for one is refused clearly until block groups are
// allocated (docs/ec.md).
func TestShErasureCoding(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/ecb", "--layout", "obs", "--replication", "rs-3-2-1024k")
	h.ok("sh", "bucket", "create", "/vol/plain", "--layout", "obs")
	info := h.ok("sh", "bucket", "info", "/vol/ecb")
	require.Regexp(t, `Replication:\s+rs-3-2-1024k`, info)
	bi := jsonOf[map[string]any](t, h.ok("sh", "bucket", "info", "/vol/ecb", "--json"))
	require.Equal(t, map[string]any{"codec": "ERASURE_CODEC_RS", "data": 3.0, "parity": 2.0, "cellSize": 1048576.0}, bi["erasureCoding"])
	list := strings.Split(strings.TrimSpace(h.ok("sh", "bucket", "list", "/vol")), "\n")
	require.Equal(t, []string{"ecb", "OBS", "rs-3-2-1024k"}, strings.Fields(list[1])[:3])
	require.Equal(t, []string{"plain", "OBS", "THREE"}, strings.Fields(list[2])[:3])

	for flag, why := range map[string]string{
		"rs-3-2-6k": "cell size 6144 is not a multiple of 4096",
		"xor-2-2":   "xor has exactly 1 parity member",
		"two":       `replication "two" is not ONE, THREE or an erasure coding config`,
		"lrc-3-2":   `unknown codec "lrc"`,
	} {
		line := h.fail(2, "sh", "bucket", "create", "/vol/bad", "--replication", flag)
		require.Contains(t, line, why, flag)
	}

	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	h.ok("sh", "key", "put", "/vol/ecb/empty", empty)
	h.ok("sh", "key", "put", "/vol/plain/xor", empty, "--replication", "xor-2-1-64k")
	h.ok("sh", "key", "put", "/vol/ecb/three", empty, "--replication", "THREE")
	require.Regexp(t, `Replication:\s+rs-3-2-1024k`, h.ok("sh", "key", "info", "/vol/ecb/empty"))
	require.Regexp(t, `Replication:\s+xor-2-1-64k`, h.ok("sh", "key", "info", "/vol/plain/xor"))
	require.Regexp(t, `Replication:\s+THREE`, h.ok("sh", "key", "info", "/vol/ecb/three"))
	keys := h.ok("sh", "key", "list", "/vol/ecb")
	require.Contains(t, keys, "rs-3-2-1024k")
	require.Contains(t, keys, "THREE")

	data := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(data, []byte("stripes"), 0o644))
	line := h.fail(1, "sh", "key", "put", "/vol/ecb/data", data)
	require.Contains(t, line, "writing data to an erasure coded key (rs-3-2-1024k): block groups are not allocated yet")
}
