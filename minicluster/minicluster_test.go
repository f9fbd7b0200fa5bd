package minicluster

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestWriteReadRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Start(ctx, Options{Dir: dir, BlockSize: 8 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	cl, err := c.Client()
	require.NoError(t, err)
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)

	data := randomBytes(21<<20+12345, 1)
	w, err := cl.Create(ctx, "/vol/bkt/dir/file", CreateOptionsRecursive())
	require.NoError(t, err)
	for off := 0; off < len(data); off += 100_000 {
		_, err := w.Write(data[off:min(off+100_000, len(data))])
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())

	check := func() {
		r, err := cl.Open(ctx, "/vol/bkt/dir/file")
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), r.Size())
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got))
		buf := make([]byte, 3<<20)
		n, err := r.ReadAt(buf, 7<<20+5)
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		require.True(t, bytes.Equal(data[7<<20+5:10<<20+5], buf))
		require.NoError(t, r.Close())
	}
	check()
	require.NoError(t, cl.Close())
	require.NoError(t, c.Close())

	// Everything is found again after a restart on the same directory.
	c, err = Start(ctx, Options{Dir: dir, BlockSize: 8 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	cl, err = c.Client()
	require.NoError(t, err)
	defer cl.Close()
	check()
}

func CreateOptionsRecursive() client.CreateOptions { return client.CreateOptions{Recursive: true} }
