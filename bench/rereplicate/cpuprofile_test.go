package rereplicate

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/datanode/replication"
)

func spin(d time.Duration) {
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		x++
	}
	_ = x
}

// TestLabelProfile: CPU spent under a datanode's replication labels is
// counted for that datanode and role, and the rest as Other.
func TestLabelProfile(t *testing.T) {
	p := startLabelProfile()
	pprof.Do(context.Background(), replication.ProfileLabels("dn-a", replication.RolePush), func(context.Context) { spin(300 * time.Millisecond) })
	pprof.Do(context.Background(), replication.ProfileLabels("dn-b", replication.RoleImport), func(context.Context) { spin(300 * time.Millisecond) })
	spin(100 * time.Millisecond)
	cpu, err := p.stop("")
	require.NoError(t, err)
	require.Greater(t, cpu.Push["dn-a"], 0.1)
	require.Greater(t, cpu.Import["dn-b"], 0.1)
	require.Zero(t, cpu.Push["dn-b"])
	require.Greater(t, cpu.Total(replication.RolePush), 0.1)
	require.Greater(t, cpu.Other, 0.0)
	_, err = p.stop("") // again: no figures, no error
	require.NoError(t, err)
}
