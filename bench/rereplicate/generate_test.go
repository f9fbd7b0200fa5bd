package rereplicate

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestGenReadable: data generated offline into stopped datanodes is served
// by them afterwards: every key reads back, verified, from three replicas.
func TestGenReadable(t *testing.T) {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 4, ContainerSize: 32 << 20, BlockSize: 8 << 20})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	keys, err := generate(ctx, Config{Size: 72 << 20, ContainerSize: 32 << 20, BlockSize: 8 << 20}, c, io.Discard, func() error { return nil })
	require.NoError(t, err)
	require.Len(t, keys, 9)
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	payload := keyput.Payload(8 << 20)
	for _, k := range keys {
		r, err := cl.OpenKey(ctx, "rerepl", "data", k)
		require.NoError(t, err)
		require.Len(t, r.Info().Blocks[0].Pipeline.Members, 3)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.Equal(t, int64(-1), keyput.FirstDiff(got, payload, 8<<20), k)
	}
	cs, err := listContainers(ctx, cl)
	require.NoError(t, err)
	closed := 0
	for _, ci := range cs {
		if ci.State == stratov1.ContainerState_CONTAINER_CLOSED {
			closed++
		}
	}
	require.Equal(t, 3, closed, "72 MiB in containers of 32 MiB (4 blocks of 8 MiB each)")
}
