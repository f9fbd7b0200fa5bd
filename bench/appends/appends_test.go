package appends

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/bench/benchcluster"
)

func TestRunSmall(t *testing.T) {
	ctx := t.Context()
	conn, err := benchcluster.Connect(ctx, benchcluster.Options{Bench: "append", Dir: benchcluster.Dir{Path: t.TempDir()}})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	require.NoError(t, conn.EnsureBucket(ctx, "vol", "bkt"))
	res, err := Run(ctx, Config{Path: "/vol/bkt/f", BaseSize: 3 << 20, Size: 100 << 10, Count: 5}, conn.Client, io.Discard)
	require.NoError(t, err)
	require.Equal(t, int64(3<<20+5*100<<10), res.Length)
	require.Positive(t, res.Latency.P50)
}
