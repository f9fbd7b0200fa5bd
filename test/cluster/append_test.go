package cluster

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func startAppendCluster(t *testing.T) (context.Context, *client.Client, *minicluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 1 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := c.Client()
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	return ctx, cl, c
}

func readAll(ctx context.Context, t *testing.T, cl *client.Client, path string) []byte {
	t.Helper()
	r, err := cl.Open(ctx, path)
	require.NoError(t, err)
	defer func() { _ = r.Close() }()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

func writeAll(t *testing.T, w *client.Writer, parts ...[]byte) {
	t.Helper()
	for _, p := range parts {
		_, err := w.Write(p)
		require.NoError(t, err)
	}
}

// TestAppendTruncateConcatThroughClient: appends read back after the old
// bytes (across a partial last block), a truncate mid-block then an
// append never shows the cut bytes again, a snapshot before them reads the
// old content, concat joins files, and a recovered file's writer is fenced.
func TestAppendTruncateConcatThroughClient(t *testing.T) {
	ctx, cl, _ := startAppendCluster(t)
	a, b, c := fastRandom(1<<20+12345, 1), fastRandom(700_000, 2), fastRandom(5000, 3)
	w, err := cl.Create(ctx, "/vol/bkt/f", client.CreateOptions{})
	require.NoError(t, err)
	writeAll(t, w, a)
	require.NoError(t, w.Close())
	_, err = cl.CreateSnapshot(ctx, "vol", "bkt", "s1")
	require.NoError(t, err)

	w, err = cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(len(a)), w.AppendOffset())
	_, err = cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{})
	require.ErrorIs(t, err, client.ErrPrecondition, "one writer at a time")
	writeAll(t, w, b)
	require.NoError(t, w.Close())
	want := append(bytes.Clone(a), b...)
	require.True(t, bytes.Equal(want, readAll(ctx, t, cl, "/vol/bkt/f")))
	require.True(t, bytes.Equal(a, readAll(ctx, t, cl, "/vol/bkt/.snapshot/s1/f")), "the snapshot reads the file before the append")

	// Mid-block truncate, then an append: the cut bytes never come back.
	done, err := cl.Truncate(ctx, "/vol/bkt/f", 1000)
	require.NoError(t, err)
	require.True(t, done)
	w, err = cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{SizeHint: int64(len(c))})
	require.NoError(t, err)
	writeAll(t, w, c)
	// The hsync fsyncs the file's blocks too, the one cut inside included.
	require.NoError(t, w.Hsync())
	require.NoError(t, w.Close())
	want = append(bytes.Clone(a[:1000]), c...)
	require.True(t, bytes.Equal(want, readAll(ctx, t, cl, "/vol/bkt/f")))
	require.True(t, bytes.Equal(a, readAll(ctx, t, cl, "/vol/bkt/.snapshot/s1/f")))

	// Concat.
	for i, d := range [][]byte{b, c} {
		w, err := cl.Create(ctx, "/vol/bkt/part"+string(rune('0'+i)), client.CreateOptions{})
		require.NoError(t, err)
		writeAll(t, w, d)
		require.NoError(t, w.Close())
	}
	n, err := cl.Concat(ctx, "/vol/bkt/f", []string{"/vol/bkt/part0", "/vol/bkt/part1"})
	require.NoError(t, err)
	want = append(append(want, b...), c...)
	require.Equal(t, int64(len(want)), n)
	require.True(t, bytes.Equal(want, readAll(ctx, t, cl, "/vol/bkt/f")))
	_, err = cl.Stat(ctx, "/vol/bkt/part0")
	require.ErrorIs(t, err, client.ErrNotFound)

	// A writer hsyncs, writes more, and is abandoned: recovery closes the
	// file at the hsync and its late hsync and close fail.
	w, err = cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{})
	require.NoError(t, err)
	writeAll(t, w, b[:1000])
	require.NoError(t, w.Hsync())
	writeAll(t, w, b[1000:])
	closed, err := cl.IsFileClosed(ctx, "/vol/bkt/f")
	require.NoError(t, err)
	require.False(t, closed)
	ok, length, err := cl.RecoverLease(ctx, "/vol/bkt/f")
	require.NoError(t, err)
	require.True(t, ok)
	want = append(want, b[:1000]...)
	require.Equal(t, int64(len(want)), length)
	closed, err = cl.IsFileClosed(ctx, "/vol/bkt/f")
	require.NoError(t, err)
	require.True(t, closed)
	require.Error(t, w.Hsync(), "the fenced writer cannot publish")
	require.Error(t, w.Close())
	require.True(t, bytes.Equal(want, readAll(ctx, t, cl, "/vol/bkt/f")))
}

// TestAppendWithBlockTokens: with authentication, the blocks AppendFile
// hands out (the first one allocated, and the file's blocks its first
// hsync fsyncs) carry tokens that let the appender write and sync them.
func TestAppendWithBlockTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 1 << 20, ContainerSize: 64 << 20, Auth: true})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	a, b := fastRandom(1<<20+100, 5), fastRandom(5000, 6)
	w, err := cl.Create(ctx, "/vol/bkt/f", client.CreateOptions{})
	require.NoError(t, err)
	writeAll(t, w, a)
	require.NoError(t, w.Close())
	w, err = cl.Append(ctx, "/vol/bkt/f", client.WriteOptions{SizeHint: int64(len(b))})
	require.NoError(t, err)
	writeAll(t, w, b)
	require.NoError(t, w.Hsync())
	require.NoError(t, w.Close())
	require.True(t, bytes.Equal(append(bytes.Clone(a), b...), readAll(ctx, t, cl, "/vol/bkt/f")))
}
