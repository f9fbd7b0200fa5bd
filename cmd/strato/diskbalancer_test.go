package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestDiskBalancerCommands: strato admin datanode diskbalancer start and
// stop reach the datanode as commands in its heartbeat reply, with the
// flags' threshold and bandwidth; status prints what the datanode reports
// (a record and its volumes, and JSON); bad flags are usage errors, an
// unknown datanode a failure.
func TestDiskBalancerCommands(t *testing.T) {
	h := startMeta(t)
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()
	vols := []*stratov1.VolumeStats{
		{Dir: "/d1", Capacity: 100 << 30, Used: 60 << 30, Remaining: 40 << 30, Containers: 12, State: stratov1.VolumeState_VOLUME_HEALTHY},
		{Dir: "/d2", Capacity: 100 << 30, Remaining: 100 << 30, State: stratov1.VolumeState_VOLUME_HEALTHY},
	}
	stats := &stratov1.NodeStats{Capacity: 200 << 30, Used: 60 << 30, Volumes: 2, VolumeStats: vols}
	_, err = client.Cluster(t.Context(), c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
		return cl.Register(ctx, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: "dn1", DataAddr: "127.0.0.1:19001"}, Stats: stats})
	})
	require.NoError(t, err)
	heartbeat := func() []*stratov1.DatanodeCommand {
		resp, err := client.Cluster(t.Context(), c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.HeartbeatResponse, error) {
			return cl.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: "dn1", Stats: stats})
		})
		require.NoError(t, err)
		return resp.GetCommands()
	}
	heartbeat()

	out := h.ok("admin", "datanode", "diskbalancer", "status", "dn1")
	require.Contains(t, out, "State:  not run since the datanode started\n")
	require.Contains(t, out, "/d1")
	require.Contains(t, h.ok("admin", "datanode", "info", "dn1"), "Disk balancer:      not run since the datanode started\n")

	for _, bad := range [][]string{{"--threshold", "150%"}, {"--threshold", "x"}, {"--bandwidth", "-1"}} {
		require.Contains(t, h.fail(2, append([]string{"admin", "datanode", "diskbalancer", "start", "dn1"}, bad...)...), bad[0])
	}
	require.Contains(t, h.fail(1, "admin", "datanode", "diskbalancer", "start", "dn9"), "dn9")

	out = h.ok("admin", "datanode", "diskbalancer", "start", "dn1", "--threshold", "5%", "--bandwidth", "0")
	require.Equal(t, "dn1: disk balancer starts with its next heartbeat (threshold 5%, no bandwidth cap); see strato admin datanode diskbalancer status dn1\n", out)
	cmds := heartbeat()
	require.Len(t, cmds, 1)
	require.InDelta(t, 0.05, cmds[0].GetDiskBalancer().GetThreshold(), 1e-9)
	require.Equal(t, int64(-1), cmds[0].GetDiskBalancer().GetBandwidth())
	require.False(t, cmds[0].GetDiskBalancer().GetStop())
	h.ok("admin", "datanode", "diskbalancer", "start", "dn1")
	cmds = heartbeat()
	require.InDelta(t, 0.1, cmds[0].GetDiskBalancer().GetThreshold(), 1e-9)
	require.Equal(t, int64(64<<20), cmds[0].GetDiskBalancer().GetBandwidth())
	h.ok("admin", "datanode", "diskbalancer", "stop", "dn1")
	require.True(t, heartbeat()[0].GetDiskBalancer().GetStop())

	// What the datanode reports while it runs, then once it has ended.
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	stats.DiskBalancer = &stratov1.DiskBalancerStats{Running: true, Threshold: 0.1, Bandwidth: 64 << 20, ContainersMoved: 3,
		BytesMoved: 15 << 30, SpreadStart: 0.6, SpreadNow: 0.3, StartedUnixMs: start.UnixMilli(), BytesLeft: 15 << 30}
	heartbeat()
	out = h.ok("admin", "datanode", "diskbalancer", "status", "dn1")
	require.Contains(t, out, "State:             running\n")
	require.Contains(t, out, "Containers moved:  3\n")
	require.Contains(t, out, "Bytes moved:       15 GiB (16106127360 bytes)\n")
	require.Contains(t, out, "Spread at start:   60.0%\n")
	require.Contains(t, out, "Spread now:        30.0%\n")
	require.Contains(t, out, "Bandwidth:         64 MiB/s\n")
	require.Contains(t, h.ok("admin", "datanode", "info", "dn1"), "running: 3 containers (15 GiB) moved, spread 60.0% → 30.0%")
	stats.DiskBalancer.Running, stats.DiskBalancer.Result = false, "balanced"
	stats.DiskBalancer.FinishedUnixMs = start.Add(time.Hour).UnixMilli()
	heartbeat()
	out = h.ok("admin", "datanode", "diskbalancer", "status", "dn1")
	require.Contains(t, out, "State:             ended: balanced\n")
	js := jsonOf[map[string]any](t, h.ok("admin", "datanode", "diskbalancer", "status", "dn1", "--json"))
	require.Equal(t, "dn1", js["datanode"])
	db := js["diskBalancer"].(map[string]any)
	require.Equal(t, "balanced", db["result"])
	require.Equal(t, float64(3), db["containersMoved"])
	require.Len(t, js["volumes"], 2)
}
