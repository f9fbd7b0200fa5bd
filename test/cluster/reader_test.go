package cluster

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
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
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 1 << 20, ContainerSize: 16 << 20})
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

// requireReadPath checks how the cluster's datanodes served reads: over
// TCP only (tcp) or by handing out block files only.
func requireReadPath(t *testing.T, c *minicluster.Cluster, tcp bool) {
	t.Helper()
	var local, sent int64
	for i := range c.DatanodeAddrs() {
		if dn := c.Datanode(i); dn != nil {
			m := dn.ServerMetrics()
			local += m.LocalReads
			sent += m.BytesOut
		}
	}
	if tcp {
		require.Zero(t, local, "local reads")
		require.Positive(t, sent, "bytes sent over TCP")
	} else {
		require.Positive(t, local, "local reads")
		require.Zero(t, sent, "bytes sent over TCP")
	}
}

// TestLocalReads: a client on the datanodes' host reads replicas from the
// block files the datanodes hand over (nothing goes over TCP), in ranges
// of every alignment, across blocks; with local reads disabled it reads
// over TCP; a datanode that stops is read around, and one that comes back
// is read locally again; a READ_LOCAL over TCP is refused.
func TestLocalReads(t *testing.T) {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 1 << 20, ContainerSize: 16 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	newClient := func(tcp bool) *client.Client {
		cl, err := client.New(client.Options{Meta: c.MetaAddrs(), ChunkSize: 256 << 10, NoToken: true, DisableLocalReads: tcp})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	cl := newClient(false)
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	data := randomBytes(3<<20+4321, 5)
	w, err := cl.CreateKey(ctx, "vol", "bkt", "k", client.WriteOptions{})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())

	readAll := func(cl *client.Client) {
		t.Helper()
		r, err := cl.OpenKey(ctx, "vol", "bkt", "k")
		require.NoError(t, err)
		defer r.Close()
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got))
		for _, rg := range [][2]int{{0, 1}, {7, 100_000}, {1<<20 - 3, 10}, {1<<20 + 16<<10, 16 << 10}, {5, 3 << 20}, {len(data) - 9, 9}} {
			buf := make([]byte, rg[1])
			n, err := r.ReadAt(buf, int64(rg[0]))
			require.NoError(t, err)
			require.Equal(t, rg[1], n)
			require.True(t, bytes.Equal(data[rg[0]:rg[0]+rg[1]], buf), "range %v", rg)
		}
	}
	readAll(cl)
	requireReadPath(t, c, false)

	readAll(newClient(true))
	var sent int64
	for i := range c.DatanodeAddrs() {
		sent += c.Datanode(i).ServerMetrics().BytesOut
	}
	require.Positive(t, sent, "the TCP client read over TCP")

	// A stopped datanode: its replicas are read from the others; back,
	// it serves local reads again.
	ki, err := cl.LookupKey(ctx, "vol", "bkt", "k")
	require.NoError(t, err)
	first := ki.Blocks[0].Pipeline.Members[0]
	idx := datanodeIndex(t, c, first.Id)
	require.NoError(t, c.StopDatanode(idx))
	readAll(cl)
	// Its data directory is its user's alone again when it starts (HDFS's
	// dfs.datanode.data.dir.perm): a local reader of another user would
	// read over TCP.
	require.NoError(t, os.Chmod(c.DatanodeDir(idx), 0o755))
	require.NoError(t, c.StartDatanode(idx))
	for i := range c.DatanodeAddrs() {
		fi, err := os.Stat(c.DatanodeDir(i))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(datanode.DataDirMode), fi.Mode().Perm(), "datanode %d's directory", i)
	}
	require.NoError(t, c.WaitReady(ctx))
	dn := c.Datanode(idx)
	require.Eventually(t, func() bool {
		r, err := newClient(false).OpenKey(ctx, "vol", "bkt", "k")
		require.NoError(t, err)
		defer r.Close()
		_, err = io.Copy(io.Discard, r)
		require.NoError(t, err)
		return dn.ServerMetrics().LocalReads > 0
	}, 10*time.Second, 100*time.Millisecond, "the restarted datanode serves local reads")

	// READ_LOCAL on the TCP port is refused by the datanode.
	conn, err := wire.Dial(ctx, first.DataAddr, wire.ConnOptions{})
	require.NoError(t, err)
	defer conn.Close()
	_, _, err = conn.Do(ctx, &wire.ReadLocalRequest{Block: wire.BlockID{ContainerID: ki.Blocks[0].BlockId.ContainerId, LocalID: ki.Blocks[0].BlockId.LocalId}, Length: 10}, nil, nil)
	require.ErrorIs(t, err, wire.CodeUnsupportedType)
	require.ErrorContains(t, err, "local socket only")

	// READ_LOCAL_PATHS on the TCP port, from this host: the paths of the
	// files, which read back the block's bytes.
	for _, bl := range ki.Blocks {
		b := wire.BlockID{ContainerID: bl.BlockId.ContainerId, LocalID: bl.BlockId.LocalId}
		paths, err := conn.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Length: uint32(bl.Length)})
		require.NoError(t, err)
		rl, err := paths.Open()
		require.NoError(t, err)
		got := make([]byte, bl.Length)
		require.NoError(t, rl.ReadInto(got))
		rl.Close()
		require.True(t, bytes.Equal(data[bl.Offset:bl.Offset+bl.Length], got), "block at %d", bl.Offset)
	}
}
