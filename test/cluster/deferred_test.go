package cluster

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Files created without a size hint take a deferred open: empty ones are
// created and committed in one Raft entry; a writer with data, or one that
// hsyncs, opens the key for real when it needs to.
func TestDeferredCreateThroughClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 4 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	require.NoError(t, cl.Mkdirs(ctx, "/vol/bkt/d"))

	// The server answers a deferrable create with a token, no open key.
	var resp *stratov1.OpenKeyResponse
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		resp, err = n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: "d/raw", Deferrable: true})
		return err
	}))
	require.Zero(t, resp.OpenId)
	require.NotEmpty(t, resp.CreateToken)

	// Empty: create, close.
	w, err := cl.Create(ctx, "/vol/bkt/d/empty", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	st, err := cl.Stat(ctx, "/vol/bkt/d/empty")
	require.NoError(t, err)
	require.Zero(t, st.Length)

	// A create refused at once (as an open would be): an existing file
	// without overwrite, a directory, a missing parent.
	_, err = cl.Create(ctx, "/vol/bkt/d/empty", client.CreateOptions{})
	require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)
	_, err = cl.Create(ctx, "/vol/bkt/d", client.CreateOptions{Overwrite: true})
	require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
	_, err = cl.Create(ctx, "/vol/bkt/nodir/f", client.CreateOptions{})
	require.Equal(t, codes.NotFound, status.Code(err), "%v", err)

	// Data over several blocks, then an hsync before any data, then data.
	data := randomBytes(9<<20+77, 3)
	w, err = cl.Create(ctx, "/vol/bkt/d/data", client.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	w, err = cl.Create(ctx, "/vol/bkt/d/synced", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Hsync())
	_, err = cl.Stat(ctx, "/vol/bkt/d/synced")
	require.NoError(t, err, "hsync publishes the file")
	_, err = w.Write(data[:1000])
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for path, want := range map[string][]byte{"/vol/bkt/d/data": data, "/vol/bkt/d/synced": data[:1000]} {
		r, err := cl.Open(ctx, path)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.True(t, bytes.Equal(want, got), path)
	}
}
