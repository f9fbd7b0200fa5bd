package meta

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/meta/cluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Metrics counts the datanodes by health: a datanode silent past
// StaleAfter is stale, past DeadAfter dead.
func TestMetricsDatanodeHealth(t *testing.T) {
	clock := clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	co := cluster.Options{StaleAfter: time.Minute, DeadAfter: 10 * time.Minute}
	// The background tick never comes: the test calls tick.
	s := startServer(t, Options{Dir: t.TempDir(), TickInterval: 1000 * time.Hour, Clock: clock, Cluster: co}, listen(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.WaitReady(ctx))
	ids := []string{"dn1", "dn2", "dn3"}
	for i, id := range ids {
		_, err := s.Register(ctx, &stratov1.RegisterRequest{
			Details: &stratov1.DatanodeDetails{Id: id, DataAddr: fmt.Sprintf("127.0.0.1:%d", 19200+i)},
			Stats:   &stratov1.NodeStats{Capacity: 1 << 40, Remaining: 1 << 40}})
		require.NoError(t, err)
	}
	beat := func(ids ...string) {
		for _, id := range ids {
			_, err := s.Heartbeat(ctx, &stratov1.HeartbeatRequest{DatanodeId: id})
			require.NoError(t, err)
		}
	}
	counts := func() [4]int {
		require.NoError(t, s.tick(ctx))
		m := s.Metrics()
		return [4]int{m.Datanodes, m.HealthyDatanodes, m.StaleDatanodes, m.DeadDatanodes}
	}
	require.Equal(t, [4]int{3, 3, 0, 0}, counts())

	clock.Advance(2 * time.Minute) // dn3 silent: stale
	beat("dn1", "dn2")
	require.Equal(t, [4]int{3, 2, 1, 0}, counts())

	clock.Advance(9 * time.Minute) // dn3 silent 11 minutes: dead; dn2 9: stale
	beat("dn1")
	require.Equal(t, [4]int{3, 1, 1, 1}, counts())
}
