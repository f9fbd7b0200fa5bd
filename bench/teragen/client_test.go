package teragen

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// TeraGen into strato, replicated and erasure coded (whose writers skip
// the hsync erasure coded files do not have): the same bytes, read back
// with the same checksum.
func TestRunClientFiles(t *testing.T) {
	ctx := context.Background()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 5, BlockSize: 4 << 20})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	parts, sum := expectedTeraGen(70_001, 2)
	for _, repl := range []string{"THREE", "rs-3-2-1024k"} {
		var wo client.WriteOptions
		wo.Replication, wo.ErasureCoding, err = client.ParseReplication(repl)
		require.NoError(t, err)
		dir := "/vol/bkt/" + repl
		res, err := Run(ctx, Config{Rows: 70_001, Path: dir, Writers: 2}, ClientFiles{Client: cl, Write: wo}, io.Discard)
		require.NoError(t, err, repl)
		require.Equal(t, sum, res.Checksum)
		for i, want := range parts {
			r, err := cl.Open(ctx, dir+"/"+PartName(i))
			require.NoError(t, err)
			require.Equal(t, repl, client.Redundancy(r.Info().Replication, r.Info().ErasureCoding))
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.NoError(t, r.Close())
			require.True(t, bytes.Equal(want, got), "%s: part %d differs", repl, i)
		}
	}
}
