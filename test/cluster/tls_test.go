package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// otherCA makes a CA that is not the cluster's, with a certificate "dn",
// and returns its directory.
func otherCA(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "other")
	require.NoError(t, certs.InitCA(dir))
	require.NoError(t, certs.Issue(dir, dir, "dn", nil))
	return dir
}

// TestTLS: a cluster with TLS serves a client that trusts its CA (a key
// written through a 3-datanode pipeline and read back, all over TLS), and
// refuses, quickly and saying why, clients that do not.
func TestTLS(t *testing.T) {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), TLS: true, BlockSize: 4 << 20, ContainerSize: 64 << 20})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	cl, err := c.Client()
	require.NoError(t, err)
	defer cl.Close()

	_, err = cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt",
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE})
	require.NoError(t, err)
	data := randomBytes(9<<20+123, 7)
	w, err := cl.Create(ctx, "/vol/bkt/key", client.CreateOptions{})
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r, err := cl.Open(ctx, "/vol/bkt/key")
	require.NoError(t, err)
	got, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, r.Close())
	require.True(t, bytes.Equal(data, got))
	buckets, err := cl.ListBuckets(ctx, "vol", "")
	require.NoError(t, err)
	require.Len(t, buckets, 1)

	// The datanodes speak only TLS: a plain connection fails, one that
	// trusts the CA is served (reads of a TLS conn go through memory).
	for _, addr := range c.DatanodeAddrs() {
		_, err := wire.Dial(ctx, addr, wire.ConnOptions{DialTimeout: 2 * time.Second})
		require.Error(t, err, addr)
		conn, err := wire.Dial(ctx, addr, wire.ConnOptions{TLS: c.ClientTLS()})
		require.NoError(t, err, addr)
		require.NoError(t, conn.Close())
	}

	other := otherCA(t)
	otherTLS, err := certs.ClientConfig(filepath.Join(other, certs.CACert), "", "")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		tls  *tls.Config
		want string
	}{
		{"no TLS", nil, "does it require TLS"},
		{"another CA", otherTLS, "certificate signed by unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad, err := client.New(client.Options{Meta: c.MetaAddrs(), TLS: tc.tls})
			require.NoError(t, err)
			defer bad.Close()
			start := time.Now()
			_, err = bad.ListBuckets(ctx, "vol", "")
			require.ErrorIs(t, err, client.ErrTLS)
			require.ErrorContains(t, err, tc.want)
			require.Less(t, time.Since(start), 5*time.Second)
			// The data path's calls (retried while meta is unavailable)
			// give up as fast.
			start = time.Now()
			_, err = bad.Open(ctx, "/vol/bkt/key")
			require.ErrorIs(t, err, client.ErrTLS)
			require.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// TestTLSRefusesForeignDatanode: meta refuses the DatanodeService (and
// RaftService) calls of a peer whose certificate the cluster's CA did not
// sign, or that shows none.
func TestTLSRefusesForeignDatanode(t *testing.T) {
	ctx := t.Context()
	c, err := minicluster.Start(ctx, minicluster.Options{Dir: t.TempDir(), TLS: true, MetaOnly: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	other := otherCA(t)
	// It trusts the cluster's CA (so the handshake succeeds) but presents
	// a certificate of another.
	foreign, err := certs.ClientConfig(c.CAFile(), filepath.Join(other, "dn.crt"), filepath.Join(other, "dn.key"))
	require.NoError(t, err)
	for name, cfg := range map[string]*tls.Config{"foreign certificate": foreign, "no certificate": c.ClientTLS()} {
		t.Run(name, func(t *testing.T) {
			conn, err := grpc.NewClient(c.MetaAddr(), grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
			require.NoError(t, err)
			defer conn.Close()
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err = stratov1.NewDatanodeServiceClient(conn).Register(ctx, &stratov1.RegisterRequest{
				Details: &stratov1.DatanodeDetails{Id: "intruder", DataAddr: "127.0.0.1:1"}})
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
			require.ErrorContains(t, err, "certificate signed by the cluster CA")
			// Nor may it speak Raft to the replicas.
			stream, err := stratov1.NewRaftServiceClient(conn).Send(ctx)
			if err == nil {
				_, err = stream.CloseAndRecv()
			}
			require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)
			// Clients need no certificate.
			_, err = stratov1.NewAdminServiceClient(conn).GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
			require.NoError(t, err)
		})
	}
}

// TestTLSThreeMetaReplicas: the replicas of a TLS cluster talk Raft over
// mutual TLS: they elect a leader, replicate, and elect another when the
// leader stops.
func TestTLSThreeMetaReplicas(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{TLS: true, MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 4 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	before := fastRandom(5<<20, 1)
	require.NoError(t, f.write(ctx, "/vol/bkt/before", before, 128<<10, 0, nil))
	leader := -1
	for i := range 3 {
		if m := f.c.MetaServer(i); m.Metrics().Leader {
			leader = i
		}
	}
	require.NotEqual(t, -1, leader)
	// Every replica applied what the leader committed.
	commit := f.c.MetaServer(leader).Metrics().Consensus.Commit
	require.Eventually(t, func() bool {
		for i := range 3 {
			if f.c.MetaServer(i).Metrics().Consensus.Applied < commit {
				return false
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond)

	require.NoError(t, f.c.StopMeta(leader))
	after := fastRandom(3<<20, 2)
	require.NoError(t, f.write(ctx, "/vol/bkt/after", after, 128<<10, 0, nil))
	f.requireContent("/vol/bkt/before", before)
	f.requireContent("/vol/bkt/after", after)
}

// TestTLSLocalReads: with TLS, a client on the datanodes' host reads their
// replicas from the block files all the same: the local socket speaks TLS
// and the datanode shows its certificate there, so nothing is sent over
// TCP. A raw client on the socket needs the block's READ token for
// READ_LOCAL, as for READ_LOCAL_PATHS there and on TLS over TCP from this
// host; READ_LOCAL over TCP is still refused, and a client without TLS
// cannot use the socket.
func TestTLSLocalReads(t *testing.T) {
	c, cl := tokenClusterWith(t, 3, minicluster.Options{TLS: true}, nil)
	ctx := t.Context()
	data := tokenData(9<<20+123, 4)
	put(t, cl, "three", "k", data)
	require.True(t, bytes.Equal(data, get(t, cl, "three", "k")))
	requireReadPath(t, c, false)
	var localBytes int64
	for i := range c.DatanodeAddrs() {
		localBytes += c.Datanode(i).ServerMetrics().LocalBytes
	}
	require.GreaterOrEqual(t, localBytes, int64(len(data)))

	ki, err := cl.LookupKey(ctx, "vol", "three", "k")
	require.NoError(t, err)
	bl := ki.Blocks[0]
	b := wire.BlockID{ContainerID: bl.BlockId.GetContainerId(), LocalID: bl.BlockId.GetLocalId()}
	addr := bl.Pipeline.Members[0].DataAddr
	want := data[:bl.Length]
	readBack := func(rl *wire.ReadLocalResponse) []byte {
		t.Helper()
		defer rl.Close()
		got := make([]byte, rl.End()-rl.Offset())
		require.NoError(t, rl.ReadInto(got))
		return got
	}

	lc, err := wire.DialLocal(ctx, addr, wire.ConnOptions{TLS: c.ClientTLS(), ClientID: "raw"})
	require.NoError(t, err)
	defer func() { _ = lc.Close() }()
	conn, err := wire.Dial(ctx, addr, wire.ConnOptions{TLS: c.ClientTLS(), ClientID: "raw"})
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	_, err = lc.ReadLocal(ctx, &wire.ReadLocalRequest{Block: b, Length: uint32(bl.Length)})
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	for _, wc := range []*wire.Conn{lc, conn} {
		_, err = wc.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Length: uint32(bl.Length)})
		require.ErrorIs(t, err, wire.CodeAccessDenied)
		require.NoError(t, wc.Authorize(ctx, bl.Token))
		paths, err := wc.ReadLocalPaths(ctx, &wire.ReadLocalPathsRequest{Block: b, Length: uint32(bl.Length)})
		require.NoError(t, err)
		rl, err := paths.Open()
		require.NoError(t, err)
		require.True(t, bytes.Equal(want, readBack(rl)))
	}
	lr, err := lc.ReadLocal(ctx, &wire.ReadLocalRequest{Block: b, Length: uint32(bl.Length)})
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, readBack(lr)))
	_, _, err = conn.Do(ctx, &wire.ReadLocalRequest{Block: b, Length: 10}, nil, nil)
	require.ErrorIs(t, err, wire.CodeUnsupportedType)
	require.ErrorContains(t, err, "local socket only")

	_, err = wire.DialLocal(ctx, addr, wire.ConnOptions{DialTimeout: 2 * time.Second})
	require.Error(t, err, "a client without TLS on the TLS socket")
}

// TestTLSLocalImpostor: a process that holds a datanode's local socket
// name before the datanode starts (so that the datanode serves no local
// reads), answering with a certificate of another CA or without TLS, is
// refused by a client with TLS: the handshake fails, no request reaches it,
// and the client reads that datanode's replica over TCP, the right bytes.
func TestTLSLocalImpostor(t *testing.T) {
	c, cl := tokenClusterWith(t, 3, minicluster.Options{TLS: true}, nil)
	ctx := t.Context()
	data := tokenData(3<<20+7, 5) // one block
	put(t, cl, "one", "k", data)
	ki, err := cl.LookupKey(ctx, "vol", "one", "k")
	require.NoError(t, err)
	member := ki.Blocks[0].Pipeline.Members[0]
	idx := datanodeIndex(t, c, member.Id)
	other := otherCA(t)
	otherServer, err := certs.ServerConfig(filepath.Join(other, "dn.crt"), filepath.Join(other, "dn.key"), filepath.Join(other, certs.CACert))
	require.NoError(t, err)

	for name, cfg := range map[string]*tls.Config{"another CA": otherServer, "no TLS": nil} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, c.StopDatanode(idx))
			l, err := wire.ListenLocal(member.DataAddr, cfg)
			require.NoError(t, err)
			var accepted, spoke atomic.Int64
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					nc, err := l.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					if tc, ok := nc.(*wire.TLSConn); ok {
						if tc.HandshakeContext(ctx) == nil {
							spoke.Add(1)
						}
					} else {
						// Hears the client's hello, says nothing.
						_, _ = nc.Read(make([]byte, 512))
					}
					_ = nc.Close()
				}
			}()
			defer func() {
				_ = l.Close()
				<-done
			}()
			require.NoError(t, c.StartDatanode(idx))
			require.NoError(t, c.WaitReady(ctx))
			// Its block-token keys come with its first heartbeat.
			require.Eventually(t, func() bool {
				conn, err := wire.Dial(ctx, member.DataAddr, wire.ConnOptions{TLS: c.ClientTLS()})
				if err != nil {
					return false
				}
				defer func() { _ = conn.Close() }()
				return conn.Authorize(ctx, ki.Blocks[0].Token) == nil
			}, 20*time.Second, 50*time.Millisecond)

			fresh, err := c.Client()
			require.NoError(t, err)
			defer func() { _ = fresh.Close() }()
			require.True(t, bytes.Equal(data, get(t, fresh, "one", "k")))
			require.Positive(t, accepted.Load(), "the client tried the socket")
			require.Zero(t, spoke.Load(), "no handshake succeeded")
			require.Zero(t, c.Datanode(idx).ServerMetrics().LocalReads)
			// A read's bytes are counted once its last byte is sent, which
			// may be after the client has them.
			require.Eventually(t, func() bool {
				return c.Datanode(idx).ServerMetrics().BytesOut >= int64(len(data))
			}, 5*time.Second, 10*time.Millisecond, "read over TCP")
		})
	}
}
