package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func TestAdmin(t *testing.T) {
	h := startMeta(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()

	// No datanode yet: safe mode, nothing listed.
	require.Contains(t, h.ok("admin", "safemode", "status"), "Safe mode:                  ON\nHealthy datanodes:          0 (required 1)\n")
	sm := jsonOf[map[string]any](t, h.ok("admin", "safemode", "status", "--json"))
	require.Equal(t, true, sm["inSafeMode"])
	require.Equal(t, "[]\n", h.ok("admin", "datanode", "list", "--json"))
	require.Equal(t, "[]\n", h.ok("admin", "container", "list", "--json"))
	// The meta replica answers for itself: a single voter leads.
	ms := h.ok("admin", "meta", "status")
	require.Contains(t, ms, "ROLE")
	require.Contains(t, ms, "leader")
	st := jsonOf[[]map[string]any](t, h.ok("admin", "meta", "status", "--json"))
	require.Len(t, st, 1)
	require.Equal(t, "leader", st[0]["role"])

	// Three datanodes register through the real Cluster service.
	for i := 3; i >= 1; i-- {
		_, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
			return cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i), Hostname: fmt.Sprintf("host%d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 19000+i)},
				Stats: &stratov1.NodeStats{Capacity: 1 << 40, Used: 3 << 29, Remaining: 1<<40 - 3<<29, Volumes: 2, FailedVolumes: 1,
					VolumeStats: []*stratov1.VolumeStats{
						{Dir: "/data1", Capacity: 1 << 40, Used: 3 << 29, Containers: 3, State: stratov1.VolumeState_VOLUME_HEALTHY},
						{Dir: "/data2", State: stratov1.VolumeState_VOLUME_FAILED, Failure: "check /data2/.volume-check: read-only file system",
							FailedUnixMs: 1_700_000_000_000},
					}},
			})
		})
		require.NoError(t, err)
	}

	out := h.ok("admin", "datanode", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "ID   HOSTNAME  DATA ADDRESS     HEALTH   STATE       RACK           USED     CAPACITY"), lines[0])
	require.Equal(t, []string{"dn1", "host1", "127.0.0.1:19001", "HEALTHY", "IN_SERVICE", "/default-rack", "1.5", "GiB", "1", "TiB"}, strings.Fields(lines[1])[:10])
	require.True(t, strings.HasPrefix(lines[3], "dn3 "))
	dns := jsonOf[[]map[string]any](t, h.ok("admin", "datanode", "list", "--json"))
	require.Len(t, dns, 3)
	require.Equal(t, "dn1", dns[0]["details"].(map[string]any)["id"])
	require.Equal(t, "HEALTHY", dns[0]["health"])

	info := h.ok("admin", "datanode", "info", "dn2")
	require.Contains(t, info, "ID:                 dn2\n")
	require.Contains(t, info, "Capacity:           1 TiB (1099511627776 bytes)\n")
	require.Contains(t, info, "Scanner:            not reported\n")
	require.Contains(t, info, "Failed volumes:     1\n")
	require.Contains(t, info, "VOLUME  STATE    USED     CAPACITY  CONTAINERS  FAILED AT")
	require.Regexp(t, `/data1  HEALTHY  1\.5 GiB  1 TiB     3           -\s+-\n`, info)
	require.Regexp(t, `/data2  FAILED   0 B      0 B       0           2023-11-14T\S+\s+check /data2/\.volume-check: read-only file system\n`, info)
	require.Contains(t, h.ok("admin", "datanode", "info", "host3"), "ID:                 dn3\n")
	one := jsonOf[map[string]any](t, h.ok("admin", "datanode", "info", "127.0.0.1:19001", "--json"))
	require.Equal(t, "host1", one["details"].(map[string]any)["hostname"])
	require.Equal(t, `strato: datanode info dn9: datanode not found: no registered datanode has ID, hostname or address "dn9"`,
		h.fail(1, "admin", "datanode", "info", "dn9"))

	require.Contains(t, h.ok("admin", "safemode", "exit"), "Safe mode:                  OFF\n")
	require.Equal(t, false, jsonOf[map[string]any](t, h.ok("admin", "safemode", "status", "--json"))["inSafeMode"])

	// A block allocation makes a pipeline and a container.
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
	block := open.Blocks[0]

	ps := jsonOf[[]map[string]any](t, h.ok("admin", "pipeline", "list", "--json"))
	require.NotEmpty(t, ps)
	out = h.ok("admin", "pipeline", "list")
	require.True(t, strings.HasPrefix(out, "ID  REPLICATION  STATE  CREATED"), out)
	var members []string
	for _, m := range block.Pipeline.Members {
		members = append(members, m.Id)
	}
	require.Regexp(t, `(?m)^`+strconv.FormatUint(block.Pipeline.Id, 10)+` +THREE +OPEN +\S+ +`+strings.Join(members, ",")+`$`, out)

	cid := strconv.FormatUint(block.BlockId.ContainerId, 10)
	cs := jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--json"))
	require.NotEmpty(t, cs)
	require.Regexp(t, `(?m)^`+cid+` +OPEN +THREE +0 +- +`+strconv.FormatUint(block.Pipeline.Id, 10)+` `, h.ok("admin", "container", "list"))
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--state", "closed", "--json")), 0)
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--state", "OPEN", "--json")), len(cs))

	// A datanode reports a replica of the container.
	_, err = client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.HeartbeatResponse, error) {
		return cl.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: members[0], Report: &stratov1.ContainerReport{
			Replicas: []*stratov1.ContainerReplica{{ContainerId: block.BlockId.ContainerId, State: stratov1.ContainerState_CONTAINER_OPEN,
				UsedBytes: 4096, BlockCount: 1, BcsId: 7}}}})
	})
	require.NoError(t, err)
	// meta filters: by the datanode holding a replica, by problem.
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--datanode", members[0], "--json")), 1)
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--datanode", "dn-nope", "--json")), 0)
	require.Len(t, jsonOf[[]map[string]any](t, h.ok("admin", "container", "list", "--problem", "under-replicated", "--json")), 0)
	require.Contains(t, h.fail(2, "admin", "container", "list", "--problem", "sad"), "problem")
	ci := h.ok("admin", "container", "info", cid)
	require.Contains(t, ci, "ID:           "+cid+"\nState:        OPEN\n")
	require.Regexp(t, `(?m)^`+members[0]+` +OPEN +4 KiB +1 +7$`, ci)
	cj := jsonOf[map[string]any](t, h.ok("admin", "container", "info", cid, "--json"))
	require.Equal(t, "OPEN", cj["container"].(map[string]any)["state"])
	require.Contains(t, cj["replicas"], members[0])

	// An admin closes it.
	h.ok("admin", "container", "close", cid)
	require.Contains(t, h.ok("admin", "container", "info", cid), "State:        CLOSING\n")
	require.Contains(t, h.fail(1, "admin", "container", "close", "999999"), "999999")
	h.fail(2, "admin", "container", "close", "x")

	// The containers' report; the pipeline closed by an operator.
	rep := h.ok("admin", "container", "report")
	require.Regexp(t, `(?m)^Containers: +\d+\n`, rep)
	require.Regexp(t, `(?m)^  UNDER_REPLICATED: +\d+`, rep)
	require.Regexp(t, `(?m)^Problems: +as of (now|the replication pass of )`, rep)
	rj := jsonOf[map[string]any](t, h.ok("admin", "container", "report", "--json"))
	require.GreaterOrEqual(t, rj["containers"], float64(1))
	h.fail(2, "admin", "container", "report", "--samples", "-1")
	pid := strconv.FormatUint(block.Pipeline.Id, 10)
	require.Regexp(t, `^Pipeline `+pid+` closing; open containers closing with it: `, h.ok("admin", "pipeline", "close", pid))
	require.Regexp(t, `(?m)^`+pid+` +THREE +CLOSED `, h.ok("admin", "pipeline", "list"))
	require.Equal(t, "Pipeline "+pid+" closing; open containers closing with it: none\n", h.ok("admin", "pipeline", "close", pid))
	require.Contains(t, h.fail(1, "admin", "pipeline", "close", "999999"), "999999")
	h.fail(2, "admin", "pipeline", "close", "x")

	// A scan goes to holders of CLOSED replicas only: this one's is OPEN.
	require.Equal(t, "container "+cid+": no live datanode holds a CLOSED replica to scan\n", h.ok("admin", "container", "scan", cid))
	require.Contains(t, h.fail(1, "admin", "container", "scan", "999999"), "999999")
	h.fail(2, "admin", "container", "scan", "0")
}
