package minicluster

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

var errSink = errors.New("sink failed")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errSink
	}
	f.n -= len(p)
	return len(p), nil
}

// TestReaderCopyTo: a streaming reader writes ranges straight from its
// read buffers (CopyTo, WriteTo: what the S3 gateway's GET uses) with the
// same bytes as Read, across chunks and blocks, at the key's end, after a
// Seek and between Reads; buffers the client reuses are never shared by
// two readers (run with -race); a failing writer stops the copy with its
// error.
func TestReaderCopyTo(t *testing.T) {
	ctx := t.Context()
	c, err := Start(ctx, Options{Dir: t.TempDir(), BlockSize: 1 << 20, ContainerSize: 16 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), ChunkSize: 64 << 10, NoToken: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	data := map[string][]byte{"a": randomBytes(2<<20+12345, 1), "b": randomBytes(3<<20+7, 2)}
	for k, d := range data {
		w, err := cl.CreateKey(ctx, "vol", "bkt", k, client.WriteOptions{})
		require.NoError(t, err)
		_, err = w.Write(d)
		require.NoError(t, err)
		require.NoError(t, w.Close())
	}

	open := func(k string) *client.Reader {
		r, err := cl.OpenKey(ctx, "vol", "bkt", k)
		require.NoError(t, err)
		return r
	}
	d := data["a"]
	r := open("a")
	var buf bytes.Buffer
	n, err := io.Copy(&buf, r) // WriteTo
	require.NoError(t, err)
	require.Equal(t, int64(len(d)), n)
	require.True(t, bytes.Equal(d, buf.Bytes()))
	require.NoError(t, r.Close())

	for _, rg := range [][2]int64{{0, 1}, {65535, 2}, {1<<20 - 10, 20}, {1 << 20, 64 << 10}, {100, 1<<20 + 64<<10 + 3},
		{int64(len(d)) - 5, 5}, {int64(len(d)) - 5, 100}, {int64(len(d)), 10}} {
		r := open("a")
		_, err := r.Seek(rg[0], io.SeekStart)
		require.NoError(t, err)
		buf.Reset()
		n, err := r.CopyTo(&buf, rg[1])
		require.NoError(t, err)
		want := d[rg[0]:min(rg[0]+rg[1], int64(len(d)))]
		require.Equal(t, int64(len(want)), n, "range %v", rg)
		require.True(t, bytes.Equal(want, buf.Bytes()), "range %v", rg)
		// Read goes on where the copy stopped.
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		require.True(t, bytes.Equal(d[rg[0]+n:], rest), "after range %v", rg)
		require.NoError(t, r.Close())
	}

	// Two readers at once, each many times: pooled buffers stay their own.
	var wg sync.WaitGroup
	for k, want := range data {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				r, err := cl.OpenKey(ctx, "vol", "bkt", k)
				if !check(t, err == nil, "open %s: %v", k, err) {
					return
				}
				var b bytes.Buffer
				_, err = r.WriteTo(&b)
				check(t, err == nil && bytes.Equal(want, b.Bytes()), "key %s read back differs (err %v)", k, err)
				_ = r.Close()
			}
		}()
	}
	wg.Wait()

	r = open("b")
	n, err = r.CopyTo(&failAfter{n: 100_000}, 1<<20)
	require.ErrorIs(t, err, errSink)
	require.Equal(t, int64(100_000), n)
	require.NoError(t, r.Close())
}

func check(t *testing.T, ok bool, format string, args ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
	return ok
}
