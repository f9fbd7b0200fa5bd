package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestShErasureCoding: --replication takes erasure coding configs next to
// ONE and THREE, for buckets and keys; bad ones are refused with the
// reason; info and list say how each is stored; an empty erasure coded key
// commits, and data for one needs data+parity datanodes (docs/ec.md).
func TestShErasureCoding(t *testing.T) {
	h := startMeta(t)
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/ecb", "--layout", "obs", "--replication", "rs-3-2-1024k")
	h.ok("sh", "bucket", "create", "/vol/plain", "--layout", "obs")
	info := h.ok("sh", "bucket", "info", "/vol/ecb")
	require.Regexp(t, `Replication:\s+rs-3-2-1024k`, info)
	bi := jsonOf[map[string]any](t, h.ok("sh", "bucket", "info", "/vol/ecb", "--json"))
	require.Equal(t, map[string]any{"codec": "RS", "data": 3.0, "parity": 2.0, "cellSize": 1048576.0}, bi["erasureCoding"])
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
	h.ok("admin", "safemode", "exit")
	line := h.fail(1, "sh", "key", "put", "/vol/ecb/data", data)
	require.Contains(t, line, "no pipeline available for replication rs-3-2-1024k: 0 healthy datanodes with room for a pipeline, need 5")
}

// TestAdminErasureCodedContainer: `admin container info` of an erasure
// coded container says its config, which indexes have no good replica,
// and each replica's index (in index order); pipelines and containers are
// listed with their configs.
func TestAdminErasureCodedContainer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	// Production heartbeats (3 s) on a fake clock, moved on at each look.
	clock := clockwork.NewFakeClock()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 5,
		HeartbeatInterval: 3 * time.Second, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	h := &cliHarness{t: t, addr: c.MetaAddr()}
	h.ok("sh", "volume", "create", "vol")
	h.ok("sh", "bucket", "create", "/vol/ecb", "--layout", "obs", "--replication", "rs-3-2-1024k")
	cl, err := c.Client()
	require.NoError(t, err)
	defer cl.Close()
	var open *stratov1.OpenKeyResponse
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) (err error) {
		open, err = n.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "ecb", Key: "k", SizeHint: 1 << 20})
		return err
	}))
	bl := open.Blocks[0]
	cid := strconv.FormatUint(bl.BlockId.ContainerId, 10)

	var info string
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		info = h.ok("admin", "container", "info", cid)
		return strings.Contains(info, "Replicas:         5\n")
	}, time.Minute, 10*time.Millisecond, "the members report the container")
	require.Contains(t, info, "Replication:      rs-3-2-1024k\n")
	require.Contains(t, info, "Missing indexes:  none\n")
	require.Regexp(t, `(?m)^DATANODE +STATE +USED +BLOCKS +BCSID +INDEX$`, info)
	for i, m := range bl.Pipeline.Members {
		require.Regexp(t, `(?m)^`+regexp.QuoteMeta(m.Id)+` +OPEN +.* `+strconv.Itoa(i+1)+`$`, info)
	}
	require.Regexp(t, `(?m)^`+cid+` +OPEN +rs-3-2-1024k `, h.ok("admin", "container", "list"))
	require.Regexp(t, `(?m)^`+strconv.FormatUint(bl.Pipeline.Id, 10)+` +rs-3-2-1024k +OPEN `, h.ok("admin", "pipeline", "list"))

	// A member stops: after it is stale its index is missing.
	for i := range 5 {
		if c.Datanode(i).ID() == bl.Pipeline.Members[1].Id {
			require.NoError(t, c.StopDatanode(i))
		}
	}
	require.Eventually(t, func() bool {
		clock.Advance(time.Second)
		return strings.Contains(h.ok("admin", "container", "info", cid), "Missing indexes:  2\n")
	}, time.Minute, 10*time.Millisecond)
}
