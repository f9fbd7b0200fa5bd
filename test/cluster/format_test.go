package cluster

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/proto/strato/v1"
)

// TestOpensPreV1DevDirectory opens a strato dev directory written before
// the API moved to strato.v1 (testdata/dev-pre-v1.tar.gz: a volume, an FSO
// bucket with /dir/file and an OBS bucket with a/key, made by that version
// and stopped with SIGTERM). The stored records and Raft log are the same
// on the wire, so everything reads back and the cluster takes new writes.
func TestOpensPreV1DevDirectory(t *testing.T) {
	dir := t.TempDir()
	untar(t, "testdata/dev-pre-v1.tar.gz", dir)
	// Other ports than the ones the directory recorded, which may be taken.
	st := map[string]any{"meta": "127.0.0.1:0", "datanodes": []string{"127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"}}
	b, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d", "cluster.json"), b, 0o644))
	want, err := os.ReadFile(filepath.Join(dir, "src"))
	require.NoError(t, err)

	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: filepath.Join(dir, "d")})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoError(t, c.WaitReady(ctx))
	cl, err := c.Client()
	require.NoError(t, err)
	defer cl.Close()

	read := func(r *client.Reader, err error) []byte {
		t.Helper()
		require.NoError(t, err)
		defer r.Close()
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, want, read(cl.Open(ctx, "/oldv/oldb/dir/file")))
	require.Equal(t, want, read(cl.OpenKey(ctx, "oldv", "objb", "a/key")))
	b2, err := cl.GetBucket(ctx, "oldv", "objb")
	require.NoError(t, err)
	require.Equal(t, stratov1.BucketLayout_LAYOUT_OBS, b2.Layout)
	require.Positive(t, b2.CreationTimeUnixMs)

	w, err := cl.Create(ctx, "/oldv/oldb/dir/new", client.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Write([]byte("written by strato.v1"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, []byte("written by strato.v1"), read(cl.Open(ctx, "/oldv/oldb/dir/new")))
}

func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			require.NoError(t, os.MkdirAll(p, 0o755))
		case tar.TypeReg:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			var buf bytes.Buffer
			_, err := io.Copy(&buf, tr)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
		}
	}
}
