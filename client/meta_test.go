package client_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// hungReplica is a replica that accepts connections and calls and never
// answers: a paused process, or a leader cut off from its followers that
// holds its clients' proposals (the injected fault).
func hungReplica(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		<-stream.Context().Done()
		return stream.Context().Err()
	}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func realMeta(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := meta.Open(meta.Options{Dir: t.TempDir(), Listen: lis.Addr().String()})
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	require.NoError(t, srv.WaitReady(t.Context()))
	return lis.Addr().String()
}

// TestHungReplicaIsPassedBy: a namespace call (a read, or a mutation with
// its request ID) whose attempt at a replica gets no answer goes to the next
// replica after the attempt timeout, instead of waiting on the hung one
// until the caller gives up; other calls are not sent again.
func TestHungReplicaIsPassedBy(t *testing.T) {
	hung, good := hungReplica(t), realMeta(t)
	newClient := func(attempt time.Duration) *client.Client {
		c, err := client.New(client.Options{Meta: []string{hung, good}, AttemptTimeout: attempt})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}

	// Without an attempt timeout, the hung replica holds the call until
	// the caller's deadline.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	_, err := newClient(-1).CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	cancel()
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)

	c := newClient(200 * time.Millisecond)
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt"})
	require.NoError(t, err)
	require.NoError(t, c.Mkdirs(ctx, "/vol/bkt/d"))
	st, err := c.Stat(ctx, "/vol/bkt/d")
	require.NoError(t, err)
	require.True(t, st.IsDirectory)
	require.Less(t, time.Since(start), 5*time.Second)

	// A cluster call is not retry-safe: it waits on the hung replica.
	c2 := newClient(200 * time.Millisecond)
	ctx2, cancel2 := context.WithTimeout(t.Context(), time.Second)
	defer cancel2()
	_, err = client.Cluster(ctx2, c2, func(ctx context.Context, cl client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
		return cl.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
	})
	require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
}

// TestReplicaDeadlineFiresFirst: the attempt's deadline travels to the
// replica, whose copy may fire before the client's; that DeadlineExceeded
// is the attempt's timeout too, and the call goes to the next replica.
func TestReplicaDeadlineFiresFirst(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
		return status.Error(codes.DeadlineExceeded, "the replica's copy of the deadline fired")
	}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c, err := client.New(client.Options{Meta: []string{lis.Addr().String(), realMeta(t)}, AttemptTimeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
}

// Every meta address refusing the connection, with none ever answering,
// fails within RefusedTimeout with the refusal, not at the caller's
// deadline; a MetaConn whose replica answered before keeps waiting for it
// (a restart) until the caller's deadline.
func TestRefusedEverywhereFailsFast(t *testing.T) {
	dead := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return addr
	}
	c, err := client.New(client.Options{Meta: []string{dead(), dead()}})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err = c.GetVolume(ctx, "vol")
	took := time.Since(start)
	require.ErrorIs(t, err, client.ErrUnavailable)
	require.Contains(t, err.Error(), "connection refused")
	require.Less(t, took, client.RefusedTimeout+2*time.Second)

	// A replica that answered once, then went away: the call waits.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	srv, err := meta.Open(meta.Options{Dir: t.TempDir(), Listen: addr})
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	require.NoError(t, srv.WaitReady(t.Context()))
	c2, err := client.New(client.Options{Meta: []string{addr}})
	require.NoError(t, err)
	defer c2.Close()
	_, err = c2.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	require.NoError(t, srv.Close())
	short, cancel2 := context.WithTimeout(context.Background(), client.RefusedTimeout+2*time.Second)
	defer cancel2()
	_, err = c2.GetVolume(short, "vol")
	require.ErrorIs(t, err, context.DeadlineExceeded, "waited for the replica that answered before: %v", err)
}

// hangUpFirst is a listener that resets every connection it accepts until
// until, before any byte is read or written (the injected fault: a replica
// starting, whose first connections end before its preface), then hands
// them to the server.
type hangUpFirst struct {
	net.Listener
	until time.Time
}

func (l *hangUpFirst) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || time.Now().After(l.until) {
			return c, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // a reset, as a process that dies does
		}
		_ = c.Close()
	}
}

// A client whose first connections to meta end before the server's preface
// (a replica starting) keeps trying, and its call succeeds once meta
// answers; it is not told that meta requires TLS.
func TestConnectionsClosedBeforePrefaceAreRetried(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	srv, err := meta.Open(meta.Options{Dir: t.TempDir(), Listen: addr})
	require.NoError(t, err)
	defer srv.Close()
	go func() { _ = srv.Serve(&hangUpFirst{Listener: lis, until: time.Now().Add(time.Second)}) }()

	c, err := client.New(client.Options{Meta: []string{addr}})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
}
