package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestBalancerCommands: strato admin balancer status before any run,
// start (its defaults and flags, refused while one runs), status as a
// record and a table and as JSON, stop; bad flags are usage errors.
func TestBalancerCommands(t *testing.T) {
	h := startMeta(t)
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()
	for i, used := range []int64{60 << 30, 0} {
		_, err := client.Cluster(t.Context(), c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
			return cl.Register(ctx, &stratov1.RegisterRequest{Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i+1),
				DataAddr: fmt.Sprintf("127.0.0.1:%d", 19001+i)}, Stats: &stratov1.NodeStats{Capacity: 100 << 30, Used: used}})
		})
		require.NoError(t, err)
	}

	out := h.ok("admin", "balancer", "status")
	require.Contains(t, out, "Balancer:      never started\n")
	require.Contains(t, out, "Spread now:    60.0%\n")
	lines := strings.Split(strings.TrimSpace(out[strings.Index(out, "DATANODE"):]), "\n")
	require.Equal(t, []string{"DATANODE", "USED", "CAPACITY", "USE", "CLASS"}, strings.Fields(lines[0]))
	require.Equal(t, []string{"dn1", "60", "GiB", "100", "GiB", "60.0%", "OVER"}, strings.Fields(lines[1]))
	require.Equal(t, []string{"dn2", "0", "B", "100", "GiB", "0.0%", "UNDER"}, strings.Fields(lines[2]))

	for _, bad := range [][]string{{"--threshold", "150%"}, {"--threshold", "x"}, {"--max-size-per-iteration", "0"}, {"--bandwidth", "-1"}} {
		require.Contains(t, h.fail(2, append([]string{"admin", "balancer", "start"}, bad...)...), bad[0])
	}
	out = h.ok("admin", "balancer", "start", "--threshold", "5%", "--bandwidth", "0", "--no-yield")
	require.Contains(t, out, "Balancer:                running\n")
	require.Contains(t, out, "Gives way to clients:    false\n")
	require.Contains(t, out, "Threshold:               5.0%\n")
	require.Contains(t, out, "Max size per iteration:  500 GiB\n")
	require.Contains(t, out, "Bandwidth:               no cap\n")
	require.Contains(t, out, "Spread before:           60.0%\n")
	require.Contains(t, h.fail(1, "admin", "balancer", "start"), "running already")

	st := jsonOf[map[string]any](t, h.ok("admin", "balancer", "status", "--json"))
	require.Equal(t, true, st["running"])
	require.InDelta(t, 0.05, st["threshold"], 1e-9)
	require.Equal(t, true, st["noYield"])
	require.Len(t, st["datanodes"], 2)

	out = h.ok("admin", "balancer", "stop")
	require.Contains(t, out, "Balancer:                not running (stopped by an operator)\n")
	require.Contains(t, out, "Spread after:            60.0%\n")
	out = h.ok("admin", "balancer", "start")
	require.Contains(t, out, "Threshold:               10.0%\n")
	require.Contains(t, out, "Bandwidth:               100 MiB/s per source\n")
	require.Contains(t, out, "Gives way to clients:    true\n")
}
