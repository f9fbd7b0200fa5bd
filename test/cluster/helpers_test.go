package cluster

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/minicluster"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// advance moves c's fake clock (Options.Clock) on by a second, the default
// tick of meta's background work, and returns how long to wait in real
// time before looking again; with the real clock it only returns that.
// Tests that wait for the cluster to act call it at each look, so that
// time passes only while they wait.
func advance(c *minicluster.Cluster) time.Duration {
	fc, ok := c.Options().Clock.(*clockwork.FakeClock)
	if !ok {
		return 100 * time.Millisecond
	}
	fc.Advance(time.Second)
	return 10 * time.Millisecond
}

// fakeClock is a fake clock for a cluster's Options.Clock.
func fakeClock() *clockwork.FakeClock {
	return clockwork.NewFakeClockAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// datanodeIndex is the index in c of the running datanode whose ID is id.
func datanodeIndex(t *testing.T, c *minicluster.Cluster, id string) int {
	t.Helper()
	for i := range c.DatanodeAddrs() {
		if dn := c.Datanode(i); dn != nil && dn.ID() == id {
			return i
		}
	}
	t.Fatalf("no running datanode %s", id)
	return -1
}
