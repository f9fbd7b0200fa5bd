package meta_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/topology"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestTopologyMapsRegisteringDatanodes: meta's table names the rack of
// two datanodes (one by ID, one by host) over what they say; the third
// keeps its own; ListDatanodes shows the result.
func TestTopologyMapsRegisteringDatanodes(t *testing.T) {
	tab, err := topology.ParseTable(strings.NewReader("dn1 /dc1/r1\n127.0.0.2 /dc1/r2\n"))
	require.NoError(t, err)
	mc := dial(t, startMeta(t, minicluster.Options{ConfigureMeta: func(_ int, o *meta.Options) { o.Topology = tab }}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var dns []*stratov1.DatanodeInfo
	require.NoError(t, mc.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl client.ClusterStubs) error {
		for i, own := range []string{"", "/own", "/own3"} {
			if _, err := cl.Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: fmt.Sprintf("dn%d", i+1), DataAddr: fmt.Sprintf("127.0.0.%d:19000", i+1), Rack: own},
				Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}}); err != nil {
				return err
			}
		}
		resp, err := cl.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
		dns = resp.GetDatanodes()
		return err
	}))
	racks := map[string]string{}
	for _, d := range dns {
		racks[d.GetDetails().GetId()] = d.GetDetails().GetRack()
	}
	require.Equal(t, map[string]string{"dn1": "/dc1/r1", "dn2": "/dc1/r2", "dn3": "/own3"}, racks)
}
