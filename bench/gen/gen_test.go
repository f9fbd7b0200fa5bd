package gen

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TestRunIntoDev does what `strato bench gen` does: open a stopped strato
// dev directory, generate into it, and start it again: every key reads
// back, verified, from three replicas.
func TestRunIntoDev(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster twice")
	}
	ctx := t.Context()
	dir := t.TempDir()
	o := minicluster.Options{Dir: dir, Datanodes: 3, ContainerSize: 8 << 20, BlockSize: 4 << 20}
	c, err := minicluster.Start(ctx, o)
	require.NoError(t, err)
	ids := map[string]bool{}
	for i := range c.DatanodeAddrs() {
		ids[c.Datanode(i).ID()] = true
	}
	require.NoError(t, c.Close())

	dev, err := OpenDev(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.Len(t, dev.Datanodes, 3)
	for _, d := range dev.Datanodes {
		require.True(t, ids[d.ID], d.ID)
	}
	res, err := Run(ctx, Config{Size: 12 << 20, ContainerSize: 8 << 20, BlockSize: 4 << 20, Datanodes: dev.Datanodes,
		Volume: "vol", Bucket: "gen"}, dev.Meta, io.Discard)
	require.NoError(t, err)
	require.NoError(t, dev.Close())
	require.Equal(t, Result{Containers: 2, Keys: 3, Bytes: 12 << 20, Elapsed: res.Elapsed}, res)

	c, err = minicluster.Start(ctx, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	list, err := cl.ListKeys(ctx, &stratov1.ListKeysRequest{Volume: "vol", Bucket: "gen", Prefix: "gen/"})
	require.NoError(t, err)
	require.Len(t, list.Keys, 3)
	payload := keyput.Payload(4 << 20)
	for _, k := range list.Keys {
		r, err := cl.OpenKey(ctx, "vol", "gen", k.Name)
		require.NoError(t, err, k.Name)
		require.Len(t, r.Info().Blocks[0].Pipeline.Members, 3)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.Equal(t, int64(-1), keyput.FirstDiff(got, payload, 4<<20), k.Name)
	}
	_, err = OpenDev(t.TempDir(), nil)
	require.ErrorContains(t, err, "is not a strato dev directory")
}
