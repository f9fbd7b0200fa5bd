package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The rooted view: "/" lists the volumes, "/VOLUME" its buckets, and every
// status carries its full path.
func TestRootedView(t *testing.T) {
	c, err := client.New(client.Options{Meta: []string{realMeta(t)}})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	require.NoError(t, c.Mkdirs(ctx, "/vol/bkt/d/e"))

	paths := func(sts []*stratov1.FileStatus, err error) []string {
		t.Helper()
		require.NoError(t, err)
		var out []string
		for _, st := range sts {
			require.True(t, st.IsDirectory)
			out = append(out, st.Path)
		}
		return out
	}
	require.Equal(t, []string{"/vol"}, paths(c.ListPath(ctx, "/")))
	require.Equal(t, []string{"/vol/bkt"}, paths(c.ListPath(ctx, "vol")))
	require.Equal(t, []string{"/vol/bkt/d"}, paths(c.ListPath(ctx, "/vol/bkt/")))
	require.Equal(t, []string{"/vol/bkt/d/e"}, paths(c.ListPath(ctx, "/vol/bkt/d")))
	for path, want := range map[string]string{"/": "/", "//": "/", "/vol": "/vol", "/vol/bkt": "/vol/bkt", "/vol/bkt/d/e/": "/vol/bkt/d/e"} {
		st, err := c.StatPath(ctx, path)
		require.NoError(t, err, path)
		require.Equal(t, want, st.Path)
		require.True(t, st.IsDirectory)
	}
	_, err = c.StatPath(ctx, "/nov")
	require.ErrorIs(t, err, client.ErrVolumeNotFound)
	_, err = c.ListPath(ctx, "/nov")
	require.ErrorIs(t, err, client.ErrVolumeNotFound)
	_, err = c.StatPath(ctx, "/vol/nob/x")
	require.ErrorIs(t, err, client.ErrBucketNotFound)
}
