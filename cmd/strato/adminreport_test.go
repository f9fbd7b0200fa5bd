package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestAdminReportAndWaits: admin report in text and JSON, safemode wait
// (bounded by --timeout, then ended by the datanodes' registration), and
// decommission and maintenance --wait.
func TestAdminReportAndWaits(t *testing.T) {
	// Meta alone, whose leader acts on the replica map at once (no settle
	// period): the waits end at its next tick.
	mc, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), MetaOnly: true,
		TickInterval: 50 * time.Millisecond, ConfigureMeta: func(_ int, o *meta.Options) {
			o.Raft = consensus.Options{TickInterval: 10 * time.Millisecond, ElectionTicks: 10, HeartbeatTicks: 1}
			o.Cluster.LeaderSettle = time.Millisecond
		}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, mc.Close()) })
	h := &cliHarness{t: t, addr: mc.MetaAddr()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()

	// No datanode: meta stays in safe mode, and a bounded wait says so.
	r := h.run("admin", "safemode", "wait", "--timeout", "2s")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "safe mode: healthy datanodes 0 of 1 required")
	require.Contains(t, r.stderr, "strato: safemode wait: timed out after 2s\n")
	rep := fieldsOf(t, h.ok("admin", "report"))
	require.Contains(t, rep["Safe mode"], "ON (healthy datanodes 0 of 1 required")
	require.Equal(t, "0 (none; none)", rep["Datanodes"])

	for i := 1; i <= 3; i++ {
		_, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
			return cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i), Hostname: fmt.Sprintf("host%d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 19200+i)},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Used: 1 << 38, Remaining: 3 << 38, Volumes: 2},
			})
		})
		require.NoError(t, err)
	}
	require.Contains(t, h.ok("admin", "safemode", "wait"), "Safe mode:                  OFF\n")

	out := h.ok("admin", "report")
	head, table, ok := strings.Cut(out, "\n\n")
	require.True(t, ok, out)
	rep = fieldsOf(t, head)
	require.Equal(t, "1 (", rep["Meta leader"][:3])
	require.Contains(t, rep["Meta leader"], h.addr)
	require.Equal(t, "1 (voter 1; 1 active)", rep["Meta members"])
	require.Equal(t, "OFF", rep["Safe mode"])
	require.Equal(t, "3 (HEALTHY 3; IN_SERVICE 3)", rep["Datanodes"])
	require.Equal(t, "3 TiB (3298534883328 bytes)", rep["Capacity"])
	require.Equal(t, "768 GiB (824633720832 bytes) (25.0%)", rep["Used"])
	require.Equal(t, "2.2 TiB (2473901162496 bytes) (75.0%)", rep["Remaining"])
	require.Equal(t, "0 (none)", rep["Containers"])
	require.Equal(t, "MISSING 0, MIS_REPLICATED 0, OVER_REPLICATED 0, UNDER_REPLICATED 0, UNHEALTHY 0", rep["Container problems"])
	require.Regexp(t, `^(now \(no replication pass has finished under this leader\)|the replication pass of \d{4}-)`, rep["Problems as of"])
	require.Equal(t, "0", rep["Copies in flight"])
	require.Equal(t, "0", rep["Deletions in flight"])
	require.Equal(t, "none", rep["Decommissioning"])
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, []string{"ID", "HOSTNAME", "HEALTH", "STATE", "CAPACITY", "USED", "REMAINING", "USED%", "FAILED", "VOLUMES", "CONTAINERS", "LAST", "HEARTBEAT"},
		strings.Fields(lines[0]))
	require.Equal(t, []string{"dn1", "host1", "HEALTHY", "IN_SERVICE", "1", "TiB", "256", "GiB", "768", "GiB", "25.0%", "0/2", "0"}, strings.Fields(lines[1])[:13])

	doc := jsonOf[map[string]any](t, h.ok("admin", "report", "--json"))
	require.Equal(t, "leader", doc["metaLeader"].(map[string]any)["role"])
	require.Equal(t, false, doc["safeMode"].(map[string]any)["inSafeMode"])
	require.Equal(t, 3298534883328.0, doc["summary"].(map[string]any)["capacity"])
	require.Len(t, doc["datanodes"], 3)
	require.Equal(t, "dn1", doc["datanodes"].([]any)[0].(map[string]any)["details"].(map[string]any)["id"])

	// A container with a replica on each of dn1..dn3, which no other
	// datanode takes (dn4 and dn5 never report the copies ordered to
	// them): dn1's decommission waits, and says what for.
	var open *stratov1.OpenKeyResponse
	require.NoError(t, c.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		if _, err := n.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"}); err != nil {
			return err
		}
		if _, err := n.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"}); err != nil {
			return err
		}
		open, err = n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "f", SizeHint: 1 << 20})
		return err
	}))
	for _, m := range open.Blocks[0].Pipeline.Members {
		_, err = client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.HeartbeatResponse, error) {
			return cl.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: m.Id, Report: &stratov1.ContainerReport{
				Replicas: []*stratov1.ContainerReplica{{ContainerId: open.Blocks[0].BlockId.ContainerId, State: stratov1.ContainerState_CONTAINER_OPEN,
					UsedBytes: 4096, BlockCount: 1, BcsId: 1}}}})
		})
		require.NoError(t, err)
	}
	for i := 4; i <= 5; i++ {
		_, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
			return cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i), Hostname: fmt.Sprintf("host%d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 19200+i)},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40, Volumes: 1},
			})
		})
		require.NoError(t, err)
	}
	rep = fieldsOf(t, strings.SplitN(h.ok("admin", "report"), "\n\n", 2)[0])
	require.Equal(t, "1 (OPEN 1)", rep["Containers"])
	require.Regexp(t, `^OPEN [1-9]`, rep["Pipelines"])
	holder := open.Blocks[0].Pipeline.Members[0].Id
	r = h.run("admin", "datanode", "decommission", holder, "--wait", "--timeout", "2s")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, holder+": DECOMMISSIONING, 1 of 1 replicas waiting for copies elsewhere\n")
	require.Contains(t, r.stderr, "strato: datanode decommission "+holder+": timed out after 2s\n")
	rep = fieldsOf(t, strings.SplitN(h.ok("admin", "report"), "\n\n", 2)[0])
	require.Equal(t, holder+" (1 of 1 replicas waiting for copies)", rep["Decommissioning"])
	h.ok("admin", "datanode", "recommission", holder)

	// A datanode without containers is decommissioned, or in maintenance,
	// at the leader's next tick.
	r = h.run("admin", "datanode", "decommission", "dn4", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "dn4: DECOMMISSIONED\n", r.stdout)
	require.NotContains(t, r.stderr, "strato:")
	r = h.run("admin", "datanode", "maintenance", "dn5", "--wait")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "dn5: IN_MAINTENANCE\n", r.stdout)
	rep = fieldsOf(t, strings.SplitN(h.ok("admin", "report"), "\n\n", 2)[0])
	require.Equal(t, "5 (HEALTHY 5; DECOMMISSIONED 1, IN_MAINTENANCE 1, IN_SERVICE 3)", rep["Datanodes"])
	require.Equal(t, "dn5: IN_SERVICE\n", h.ok("admin", "datanode", "maintenance", "dn5", "--end", "--wait"))
	require.Contains(t, h.fail(2, "admin", "datanode", "recommission", "dn4", "--wait"), "unknown flag: --wait")
}
