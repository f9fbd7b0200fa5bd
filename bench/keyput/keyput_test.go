package keyput

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func TestFirstDiff(t *testing.T) {
	data := []byte("0123456789")
	key := bytes.Repeat(data, 3)
	require.Equal(t, int64(-1), FirstDiff(key, data, 30))
	require.Equal(t, int64(-1), FirstDiff(key[:25], data, 25))
	bad := bytes.Clone(key)
	bad[17] = 'x'
	require.Equal(t, int64(17), FirstDiff(bad, data, 30))
	require.Equal(t, int64(20), FirstDiff(key[:20], data, 30), "short")
	require.Equal(t, int64(30), FirstDiff(key, data, 40), "short by a whole pattern")
	require.Equal(t, int64(25), FirstDiff(key, data, 25), "long")
}

// Run then ReadBack on a real cluster, replicated and erasure coded: every
// key reads back; a key changed since is found.
func TestRunAndReadBack(t *testing.T) {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), Datanodes: 5, BlockSize: 4 << 20})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	for _, repl := range []string{"THREE", "rs-3-2-1024k"} {
		cfg := Config{Volume: "vol", Bucket: "bkt", Prefix: repl, Keys: 6, Size: 5<<20 + 3, Threads: 3}
		cfg.Replication, cfg.ErasureCoding, err = client.ParseReplication(repl)
		require.NoError(t, err)
		var out bytes.Buffer
		res, err := Run(ctx, cfg, cl, &out)
		require.NoError(t, err)
		require.Equal(t, int64(6*(5<<20+3)), res.Bytes)
		res, err = ReadBack(ctx, cfg, cl, "Read back", &out)
		require.NoError(t, err, out.String())
		require.Equal(t, int64(6*(5<<20+3)), res.Bytes)
		require.Contains(t, out.String(), "all identical")

		w, err := cl.CreateKey(ctx, "vol", "bkt", repl+"/4", client.WriteOptions{})
		require.NoError(t, err)
		other := Payload(cfg.Size)
		other[12345] ^= 1
		_, err = w.Write(other)
		require.NoError(t, err)
		require.NoError(t, w.Close())
		_, err = ReadBack(ctx, cfg, cl, "Read back", &out)
		require.ErrorContains(t, err, repl+"/4 differs from what was written at byte 12345")
	}
}
