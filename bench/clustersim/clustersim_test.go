package clustersim_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bench/clustersim"
	"github.com/strato-io/strato/minicluster"
)

// TestSimulation: 100 simulated datanodes against an in-process meta make
// 300 containers and heartbeat; every container ends with its three
// replicas reported and CLOSED (meta closed the full containers and the
// datanodes carried the commands out, and meta recorded them CLOSED), and
// no heartbeat failed; full reports that say nothing new are not read;
// the operator's lists answer; meta, restarted, leaves safe mode as the
// datanodes register again.
func TestSimulation(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	mc, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), MetaOnly: true, ContainerSize: 16 << 20, BlockSize: 16 << 20,
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer mc.Close()
	res, err := clustersim.Run(ctx, clustersim.Options{Meta: mc.MetaAddr(), Datanodes: 100, Containers: 300, ContainerSize: 16 << 20,
		HeartbeatInterval: 200 * time.Millisecond, FullReportEvery: 5, Duration: 2 * time.Second, Restart: mc.RestartMeta,
		Stats: func() clustersim.MetaStats {
			m := mc.Meta().Metrics()
			return clustersim.MetaStats{Closing: m.ClosingContainers, FullReports: m.FullReports, Repeated: m.RepeatedFullReports}
		}})
	require.NoError(t, err)
	require.Zero(t, res.HeartbeatErrors)
	require.GreaterOrEqual(t, res.Replicas, 3*300)
	require.Equal(t, res.Replicas, res.Closed, "every replica closed")
	require.Positive(t, res.FullReports)
	require.Positive(t, res.FullRepeated, "the containers closed, full reports said nothing new and were not read")
	require.Greater(t, res.Heartbeats, 100*5, "about 10 a datanode in 2 s")
	require.Positive(t, res.P99)
	require.Positive(t, res.SafeModeExit, "meta left safe mode after its restart, the datanodes registered again")
	require.Less(t, res.Settle, time.Minute, "meta recorded every container CLOSED before the heartbeats were measured")
	calls := map[string]int{}
	for _, a := range res.Admin {
		require.Positive(t, a.Took, a.Call)
		calls[a.Call] = a.Records
	}
	require.Equal(t, 100, calls["datanodes, first page"])
	require.GreaterOrEqual(t, calls["containers, first page"], 300)
	require.GreaterOrEqual(t, calls["containers, a page from the middle"], 150, "the containers after ID 150")
	require.Positive(t, calls["containers of one datanode"])
	require.Positive(t, calls["pipelines"])
	require.Equal(t, 1, calls["cluster summary"])
}
