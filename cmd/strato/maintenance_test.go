package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestAdminMaintenance: strato admin datanode maintenance puts a datanode
// in maintenance (with an end) and --end takes it out; the list shows its
// state; a decommission during a maintenance is refused with a clear
// message, as is ending a maintenance that is not one.
func TestAdminMaintenance(t *testing.T) {
	h := startMeta(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(client.Options{Meta: []string{h.addr}})
	require.NoError(t, err)
	defer c.Close()
	for i := 1; i <= 3; i++ {
		_, err := client.Cluster(ctx, c, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.RegisterResponse, error) {
			return cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i), DataAddr: fmt.Sprintf("127.0.0.1:%d", 19100+i)},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40},
			})
		})
		require.NoError(t, err)
	}

	require.Equal(t, "dn1: ENTERING_MAINTENANCE\n", h.ok("admin", "datanode", "maintenance", "dn1", "--end-in", "4h"))
	lines := strings.Split(strings.TrimSpace(h.ok("admin", "datanode", "list")), "\n")
	require.Equal(t, []string{"dn1", "127.0.0.1:19101", "HEALTHY", "ENTERING_MAINTENANCE"}, strings.Fields(lines[1])[:4])
	require.Contains(t, h.fail(1, "admin", "datanode", "decommission", "dn1"), "end its maintenance before decommissioning it")
	require.Contains(t, h.fail(1, "admin", "datanode", "maintenance", "dn1", "--end", "--end-in", "1h"), "choose one")
	require.Equal(t, "dn1: IN_SERVICE\n", h.ok("admin", "datanode", "maintenance", "dn1", "--end"))
	require.Contains(t, h.fail(1, "admin", "datanode", "maintenance", "dn1", "--end"), "not in maintenance")

	// A recommission ends a maintenance too.
	require.Equal(t, "dn2: ENTERING_MAINTENANCE\n", h.ok("admin", "datanode", "maintenance", "dn2"))
	require.Equal(t, "dn2: IN_SERVICE\n", h.ok("admin", "datanode", "recommission", "dn2"))
}
