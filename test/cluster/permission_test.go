package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Permissions, owners, groups and times through the client: creates apply
// the client's umask, SetPermission, SetOwner and SetTimes change what
// statuses and listings show. And the cluster's raw space (FsStatus).
func TestPermissionsThroughClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), BlockSize: 4 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	defer func() { _ = c.Close() }()
	cl, err := client.New(client.Options{Meta: c.MetaAddrs(), Owner: "alice", Umask: 0o027})
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Group: "hadoop"})
	require.NoError(t, err)

	stat := func(p string) *stratov1.FileStatus {
		t.Helper()
		st, err := cl.Stat(ctx, p)
		require.NoError(t, err)
		return st
	}
	// The umask (027) applies to the default 0777 and 0666, and to a
	// permission the call gives.
	require.NoError(t, cl.Mkdirs(ctx, "/vol/bkt/d"))
	require.NoError(t, cl.MkdirsPermission(ctx, "/vol/bkt/p/q", 0o775))
	w, err := cl.Create(ctx, "/vol/bkt/d/f", client.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	w, err = cl.Create(ctx, "/vol/bkt/d/g", client.CreateOptions{WriteOptions: client.WriteOptions{Permission: 0o600}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for p, want := range map[string]uint32{"/vol/bkt/d": 0o750, "/vol/bkt/p": 0o750, "/vol/bkt/p/q": 0o750,
		"/vol/bkt/d/f": 0o640, "/vol/bkt/d/g": 0o600, "/vol/bkt": 0o755} {
		st := stat(p)
		require.Equal(t, want, st.GetPermission(), "%s: %#o", p, st.GetPermission())
		require.Equal(t, "hadoop", st.Group, "%s takes its parent's group", p)
	}
	require.Equal(t, "alice", stat("/vol/bkt/d/f").Owner)

	require.NoError(t, cl.SetPermission(ctx, "/vol/bkt/d/f", 0o400))
	require.NoError(t, cl.SetOwner(ctx, "/vol/bkt/d/f", "bob", ""))
	require.NoError(t, cl.SetOwner(ctx, "/vol/bkt/d", "", "eng"))
	require.NoError(t, cl.SetTimes(ctx, "/vol/bkt/d/f", 1_000_000, -1))
	f := stat("/vol/bkt/d/f")
	require.Equal(t, []any{uint32(0o400), "bob", "hadoop", int64(1_000_000)}, []any{f.GetPermission(), f.Owner, f.Group, f.ModificationTimeUnixMs})
	require.Greater(t, f.AccessTimeUnixMs, int64(1_000_000), "-1 leaves the access time")
	require.NoError(t, cl.SetTimes(ctx, "/vol/bkt/d/f", -1, 2_000_000))
	require.Equal(t, int64(2_000_000), stat("/vol/bkt/d/f").AccessTimeUnixMs)
	list, err := cl.List(ctx, "/vol/bkt/d")
	require.NoError(t, err)
	require.Equal(t, "bob", list[0].Owner)
	require.Equal(t, "eng", stat("/vol/bkt/d").Group)
	// The data is untouched.
	r, err := cl.Open(ctx, "/vol/bkt/d/f")
	require.NoError(t, err)
	buf := make([]byte, 5)
	_, err = r.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf))
	require.NoError(t, r.Close())

	// A new file in d takes d's new group.
	w, err = cl.Create(ctx, "/vol/bkt/d/h", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, "eng", stat("/vol/bkt/d/h").Group)

	err = cl.SetPermission(ctx, "/vol/bkt/d/nope", 0o644)
	require.ErrorIs(t, err, client.ErrNotFound)
	err = cl.SetPermission(ctx, "/vol/bkt/d/f", 0o10000)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
	err = cl.SetOwner(ctx, "/vol/bkt/d/f", "", "")
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)

	// The bucket's root keeps both its times.
	require.NoError(t, cl.SetTimes(ctx, "/vol/bkt", 3_000_000, 4_000_000))
	root := stat("/vol/bkt")
	require.Equal(t, []int64{3_000_000, 4_000_000}, []int64{root.ModificationTimeUnixMs, root.AccessTimeUnixMs})

	// The raw space of the three datanodes, from their storage reports.
	space, err := cl.FsStatus(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, space.Datanodes)
	require.Positive(t, space.Capacity)
	require.Positive(t, space.Remaining)
	require.LessOrEqual(t, space.Remaining, space.Capacity)
}
