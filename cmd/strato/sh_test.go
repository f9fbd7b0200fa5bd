package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
)

func TestShVolumes(t *testing.T) {
	h := startMeta(t)
	require.Empty(t, h.ok("sh", "volume", "create", "vol1", "--owner", "alice", "--quota-bytes", "10GB", "--quota-namespace", "2"))
	created := jsonOf[map[string]any](t, h.ok("sh", "volume", "create", "/vol2", "--json"))
	require.Equal(t, "vol2", created["name"])

	info := h.ok("sh", "volume", "info", "vol1")
	for _, want := range []string{"Name:", "vol1", "Owner:", "alice", "Quota:", "10 GiB", "Bucket quota:", "2", "Used:", "0 B"} {
		require.Contains(t, info, want)
	}
	v := jsonOf[map[string]any](t, h.ok("sh", "volume", "info", "vol1", "--json"))
	require.Equal(t, "alice", v["owner"])
	require.Equal(t, 10737418240.0, v["quotaBytes"], "64-bit integers as JSON numbers")

	list := h.ok("sh", "volume", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"NAME", "OWNER", "BUCKETS", "USED", "QUOTA", "CREATED"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"vol1", "alice", "0", "0", "B", "10", "GiB"}, strings.Fields(lines[1])[:7])
	require.True(t, strings.HasPrefix(lines[2], "vol2 "))
	// Columns are aligned: every row's second column starts where the header's does.
	col := strings.Index(lines[0], "OWNER")
	for _, l := range lines[1:] {
		require.NotEqual(t, ' ', l[col], l)
		require.Equal(t, byte(' '), l[col-1], l)
	}

	vols := jsonOf[[]map[string]any](t, h.ok("sh", "volume", "list", "--json"))
	require.Len(t, vols, 2)
	require.Equal(t, "vol2", vols[1]["name"])
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("sh", "volume", "list", "--prefix", "vol2", "--json")), 1)
	require.Equal(t, "[]\n", h.ok("sh", "volume", "list", "--prefix", "zzz", "--json"), "an empty list is an empty array")

	h.ok("sh", "volume", "delete", "vol2")
	require.Contains(t, h.fail(1, "sh", "volume", "info", "vol2"), "volume not found")
}

func TestShBuckets(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol", "--quota-namespace", "2")
	h.ok("sh", "bucket", "create", "/vol/fso-bkt", "--replication", "ONE", "--checksum", "sha256",
		"--bytes-per-checksum", "64k", "--quota-bytes", "1TiB", "--quota-namespace", "100")
	b := jsonOf[map[string]any](t, h.ok("sh", "bucket", "create", "/vol/obs-bkt", "--layout", "obs", "--json"))
	require.Equal(t, "OBS", b["layout"])
	require.Equal(t, "THREE", b["replication"], "the default")
	require.Contains(t, h.fail(1, "sh", "bucket", "create", "/vol/third"), "quota exceeded: volume vol allows 2 buckets")

	info := h.ok("sh", "bucket", "info", "/vol/fso-bkt")
	for _, want := range []string{"Layout:", "FSO", "Replication:", "ONE", "Checksum:", "SHA256", "Bytes per checksum:", "64 KiB", "Quota:", "1 TiB", "Namespace quota:", "100"} {
		require.Contains(t, info, want)
	}
	bi := jsonOf[map[string]any](t, h.ok("sh", "bucket", "info", "/vol/fso-bkt", "--json"))
	require.Equal(t, "SHA256", bi["checksumType"])
	require.EqualValues(t, 65536, bi["bytesPerChecksum"])

	list := h.ok("sh", "bucket", "list", "/vol")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	require.Len(t, lines, 3)
	require.Equal(t, []string{"fso-bkt", "FSO", "ONE", "SHA256"}, strings.Fields(lines[1])[:4])
	require.Equal(t, []string{"obs-bkt", "OBS", "THREE", "CRC32C"}, strings.Fields(lines[2])[:4])
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("sh", "bucket", "list", "vol", "--prefix", "obs", "--json")), 1)
	require.Contains(t, h.fail(1, "sh", "bucket", "list", "/nosuch"), "volume not found: nosuch")

	// A bucket holding a directory cannot go; empty, it can.
	h.ok("fs", "mkdir", "/vol/fso-bkt/d")
	require.Equal(t, "strato: bucket delete /vol/fso-bkt: bucket not empty: vol/fso-bkt has 1 keys and directories",
		h.fail(1, "sh", "bucket", "delete", "/vol/fso-bkt"))
	h.ok("fs", "rm", "-r", "--skip-trash", "/vol/fso-bkt/d") // (into .Trash, it would keep the bucket)
	h.ok("sh", "bucket", "delete", "/vol/fso-bkt")
	require.Contains(t, h.fail(1, "sh", "bucket", "info", "/vol/fso-bkt"), "bucket not found: vol/fso-bkt")
	require.Contains(t, h.fail(1, "sh", "volume", "delete", "vol"), "volume not empty")
	h.ok("sh", "bucket", "delete", "/vol/obs-bkt")
	h.ok("sh", "volume", "delete", "vol")
}

func TestShKeysWithoutData(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	h.ok("fs", "mkdir", "-p", "/vol/bkt/a/b")
	h.ok("fs", "mkdir", "/vol/bkt/c")

	// Directories are not keys; with a delimiter they are common prefixes.
	require.Equal(t, "[]\n", h.ok("sh", "key", "list", "/vol/bkt", "--json"))
	out := h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/")
	require.Equal(t, "REPLICATION  SIZE  MODIFIED  KEY\nPRE                          a/\nPRE                          c/\n", out)
	pre := jsonOf[[]map[string]any](t, h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/", "--json"))
	require.Equal(t, []map[string]any{{"prefix": "a/"}, {"prefix": "c/"}}, pre)
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/", "--limit", "1", "--json")), 1)
	require.Equal(t, []map[string]any{{"prefix": "a/b/"}},
		jsonOf[[]map[string]any](t, h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/", "--prefix", "a/", "--json")))

	require.Contains(t, h.fail(1, "sh", "key", "list", "/vol/bkt", "--delimiter", "x"), `lists with delimiter "/" or none`)
	require.Contains(t, h.fail(1, "sh", "key", "delete", "/vol/bkt/nokey"), "not found")
	require.Contains(t, h.fail(1, "sh", "key", "get", "/vol/bkt/nokey", t.TempDir()), "not found")
	require.Contains(t, h.fail(1, "sh", "key", "cat", "/vol/bkt/nokey"), "not found")
	require.Contains(t, h.fail(1, "sh", "key", "put", "/vol/nob/k", "-"), "bucket not found: vol/nob")
	require.Contains(t, h.fail(1, "sh", "key", "put", "/vol/bkt/k", "/nonexistent/file"), "open /nonexistent/file: no such file or directory")
	require.Contains(t, h.fail(2, "sh", "key", "rename", "/vol/bkt/c", "/vol/other/c"), "cannot rename a key into another bucket")

	// Rename on an FSO bucket moves a directory.
	h.ok("sh", "key", "rename", "/vol/bkt/c", "d")
	h.ok("sh", "key", "rename", "/vol/bkt/d", "/vol/bkt/e")
	require.Contains(t, h.ok("fs", "ls", "/vol/bkt"), "/vol/bkt/e\n")
}

func TestShKeyListPagesThroughEverything(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/bkt")
	// More directories than one page of the server's listing (1000).
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()
	const n = 1234
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- c.Mkdirs(ctx, fmt.Sprintf("/vol/bkt/d%05d", i))
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}

	pre := jsonOf[[]map[string]string](t, h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/", "--json"))
	require.Len(t, pre, n)
	for i, p := range pre {
		require.Equal(t, fmt.Sprintf("d%05d/", i), p["prefix"])
	}
	require.Len(t, jsonOf[[]map[string]string](t, h.ok("sh", "key", "list", "/vol/bkt", "--delimiter", "/", "--limit", "1001", "--json")), 1001)
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("fs", "ls", "/vol/bkt", "--json")), n)
	out := h.ok("fs", "ls", "/vol/bkt")
	require.True(t, strings.HasPrefix(out, fmt.Sprintf("Found %d items\n", n)), out[:40])
}
