package cluster

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestContainerClosedUnderWriters: meta closes containers while writers
// are in the middle of blocks in them (allocations fill small containers,
// and an operator closes one by hand). A datanode drops chunks no PutBlock
// covered when a container closes, so the writers must resend everything
// not committed, not only what was unacknowledged.
func TestContainerClosedUnderWriters(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{BlockSize: 4 << 20, ContainerSize: 12 << 20, HeartbeatInterval: 20 * time.Millisecond}, stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	const writers = 6
	data := make([][]byte, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		data[i] = fastRandom(24<<20+i*4099, uint64(i+1))
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.write(ctx, fmt.Sprintf("/vol/bkt/w%d", i), data[i], 64<<10, 3<<20, func(*client.Writer, int) {
				// Close by hand the newest open container, as `strato admin`
				// or a failed pipeline would.
				var open *stratov1.ContainerInfo
				for _, c := range f.containers() {
					if c.State == stratov1.ContainerState_CONTAINER_OPEN {
						open = c
					}
				}
				if c := open; c != nil {
					err := f.cl.CloseContainer(ctx, c.Id, "", "test")
					require.NoError(t, err)
				}
			})
		}()
	}
	wg.Wait()
	for i := range writers {
		require.NoError(t, errs[i], "writer %d", i)
	}
	for i := range writers {
		f.requireContent(fmt.Sprintf("/vol/bkt/w%d", i), data[i])
	}
	closing := 0
	for _, c := range f.containers() {
		if c.State != stratov1.ContainerState_CONTAINER_OPEN {
			closing++
		}
	}
	require.Greater(t, closing, 1, "containers were closed under the writers")
}
