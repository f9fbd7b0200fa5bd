package local

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/stratopb"
)

// TestThreeMetaReplicas: with meta as a three-voter group, losing the
// leader loses nothing: the client and the datanodes follow the new leader
// (the datanodes register again with it), and writes and reads go on.
func TestThreeMetaReplicas(t *testing.T) {
	f := startFaultCluster(t, Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 4 << 20}, stratopb.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	before := fastRandom(9<<20, 1)
	require.NoError(t, f.write(ctx, "/vol/bkt/before", before, 128<<10, 0, nil))

	leader := -1
	for i := range 3 {
		if m := f.c.MetaServer(i); m != nil && m.Metrics().Leader {
			leader = i
		}
	}
	require.NotEqual(t, -1, leader)
	require.NoError(t, f.c.StopMeta(leader))

	after := fastRandom(7<<20, 2)
	require.NoError(t, f.write(ctx, "/vol/bkt/after", after, 128<<10, 0, nil))
	f.requireContent("/vol/bkt/before", before)
	f.requireContent("/vol/bkt/after", after)

	// The old leader comes back as a follower and catches up.
	require.NoError(t, f.c.StartMeta(leader))
	require.Eventually(t, func() bool {
		m := f.c.MetaServer(leader)
		st := m.Metrics().Consensus
		return st.LeaderID != 0 && st.Applied >= f.c.Meta().Metrics().Consensus.Commit
	}, 20*time.Second, 50*time.Millisecond)
}
