package cluster

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// A datanode keeps the ID of the cluster it joined; pointed at another
// cluster's meta (a reused address, a moved disk), it is refused and its
// containers never enter that cluster's replica map.
func TestDatanodeOfAnotherClusterRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func() *minicluster.Cluster {
		c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 1, HeartbeatInterval: 100 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a, b := start(), start()
	clusterID := func(c *minicluster.Cluster) string {
		var id string
		require.Eventually(t, func() bool { // written once meta answered
			raw, err := os.ReadFile(filepath.Join(c.DatanodeDir(0), "cluster.id"))
			id = strings.TrimSpace(string(raw))
			return err == nil && id != ""
		}, 10*time.Second, 10*time.Millisecond)
		return id
	}
	idA, idB := clusterID(a), clusterID(b)
	require.NotEmpty(t, idA)
	require.NotEqual(t, idA, idB)

	// A's datanode, stopped, then started on its directory against B.
	require.NoError(t, a.StopDatanode(0))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dn, err := datanode.Open(datanode.Options{Dirs: []string{a.DatanodeDir(0)}, Meta: b.MetaAddrs(),
		HeartbeatInterval: 100 * time.Millisecond}, lis)
	require.NoError(t, err)
	defer func() { _ = dn.Close() }()
	time.Sleep(time.Second) // ten heartbeats
	cl, err := b.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	dns, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.ListDatanodesResponse, error) {
		return cc.ListDatanodes(ctx, &stratov1.ListDatanodesRequest{})
	})
	require.NoError(t, err)
	require.Len(t, dns.Datanodes, 1)
	require.NotEqual(t, dn.ID(), dns.Datanodes[0].GetDetails().GetId())
	require.Equal(t, idA, clusterID(a), "the datanode still belongs to A")
}
