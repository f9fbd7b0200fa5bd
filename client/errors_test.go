package client_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// The errors of meta calls match their class and specific error with
// errors.Is, and still carry the server's status.
func TestErrors(t *testing.T) {
	addr := realMeta(t)
	c, err := client.New(client.Options{Meta: []string{addr}})
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()

	all := []error{client.ErrNotFound, client.ErrExists, client.ErrNotEmpty, client.ErrQuota, client.ErrPrecondition,
		client.ErrInvalid, client.ErrUnavailable, client.ErrVolumeNotFound, client.ErrBucketNotFound, client.ErrKeyNotFound,
		client.ErrVolumeExists, client.ErrBucketExists, client.ErrVolumeNotEmpty, client.ErrBucketNotEmpty,
		client.ErrDirectoryNotEmpty}
	// is checks that err matches exactly the errors in want.
	is := func(err error, want ...error) {
		t.Helper()
		require.Error(t, err)
		for _, e := range all {
			if slices.Contains(want, e) {
				require.ErrorIs(t, err, e)
			} else {
				require.NotErrorIs(t, err, e)
			}
		}
	}
	_, err = c.GetVolume(ctx, "nov")
	is(err, client.ErrVolumeNotFound, client.ErrNotFound)
	require.Equal(t, codes.NotFound, status.Code(err), "the status shows through")
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, stratov1.ErrorReason_VOLUME_NOT_FOUND.String(), e.Reason)

	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	is(err, client.ErrVolumeExists, client.ErrExists)
	_, err = c.GetBucket(ctx, "vol", "nob")
	is(err, client.ErrBucketNotFound, client.ErrNotFound)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	is(err, client.ErrBucketExists, client.ErrExists)
	is(c.DeleteVolume(ctx, "vol"), client.ErrVolumeNotEmpty, client.ErrNotEmpty)
	_, err = c.LookupKey(ctx, "vol", "bkt", "nokey")
	is(err, client.ErrKeyNotFound, client.ErrNotFound)
	_, err = c.Stat(ctx, "/vol/bkt/a/b")
	is(err, client.ErrKeyNotFound, client.ErrNotFound)
	require.NoError(t, c.Mkdirs(ctx, "/vol/bkt/d/e"))
	is(c.Delete(ctx, "/vol/bkt/d", false), client.ErrDirectoryNotEmpty, client.ErrNotEmpty)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "x"})
	is(err, client.ErrInvalid)
	is(c.DeleteBucket(ctx, "vol", "bkt"), client.ErrBucketNotEmpty, client.ErrNotEmpty)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.GetVolume(cctx, "vol")
	require.ErrorIs(t, err, context.Canceled)
}
