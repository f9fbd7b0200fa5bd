package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/minicluster"
)

// TestAdminTopology: datanodes that strato dev --racks 2 would start (a
// minicluster with Racks: 2) register with their racks, which admin
// datanode list and admin topology show.
func TestAdminTopology(t *testing.T) {
	c, err := minicluster.Start(t.Context(), minicluster.Options{Dir: t.TempDir(), Datanodes: 3, Racks: 2,
		HeartbeatInterval: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	require.NoError(t, c.WaitReady(t.Context()))
	h := &cliHarness{t: t, addr: c.MetaAddr()}

	lines := strings.Split(strings.TrimSpace(h.ok("admin", "datanode", "list")), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, "RACK", strings.Fields(lines[0])[6])
	racks := map[string]int{}
	for _, l := range lines[1:] {
		racks[strings.Fields(l)[5]]++
	}
	require.Equal(t, map[string]int{"/rack1": 2, "/rack2": 1}, racks)

	out := h.ok("admin", "topology")
	require.True(t, strings.HasPrefix(out, "/rack1 (2 datanodes)\n  "), out)
	require.Contains(t, out, "\n/rack2 (1 datanodes)\n  ")
	require.Equal(t, 3, strings.Count(out, "HEALTHY  IN_SERVICE"), out)
	require.Contains(t, out, " of ")
	topo := jsonOf[[]map[string]any](t, h.ok("admin", "topology", "--json"))
	require.Len(t, topo, 2)
	require.Equal(t, "/rack2", topo[1]["rack"])
	dn := topo[1]["datanodes"].([]any)[0].(map[string]any)
	require.Equal(t, "/rack2", dn["details"].(map[string]any)["rack"])
	require.Equal(t, "HEALTHY", dn["health"])
}
