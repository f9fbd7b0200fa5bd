package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// A small key written whole opens and commits in one Raft entry: the open
// hands out a token and the block, and only the commit is proposed. A
// leader that does not hold the token (restarted, the token expired)
// refuses the commit, and the writer writes the key again; an expired
// token's block is freed; a forged or altered token is refused; a commit
// Apply refuses leaves the token to be committed again.
func TestDeferredWrite(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{BlockSize: 4 << 20, ContainerSize: 64 << 20, TickInterval: 100 * time.Millisecond,
		ConfigureMeta: func(_ int, o *meta.Options) { o.DeferredWriteTTL = 3 * time.Second }},
		stratov1.ReplicationFactor_REPLICATION_THREE, 4<<20)
	ctx, c, cl := t.Context(), f.c, f.cl
	_, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	dw := func() meta.DeferredWriteMetrics { return c.Meta().Metrics().DeferredWrites }

	hint := func(data []byte) int64 { return int64(len(data)) }
	put := func(key string, data []byte, beforeClose func()) {
		t.Helper()
		w, err := cl.CreateKey(ctx, "vol", "obs", key, client.WriteOptions{SizeHint: hint(data)})
		require.NoError(t, err)
		_, err = w.Write(data)
		require.NoError(t, err)
		if beforeClose != nil {
			beforeClose()
		}
		require.NoError(t, w.Close())
	}
	get := func(key string) []byte {
		t.Helper()
		r, err := cl.OpenKey(ctx, "vol", "obs", key)
		require.NoError(t, err)
		defer func() { _ = r.Close() }()
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		return b
	}

	// One entry: the open is not proposed. Meta's background ticks
	// propose entries of their own now and then: the fewest entries any
	// of three writes took is the write's. Meta answers a proposer before
	// it publishes its applied index, so each count waits for the index
	// to pass the one read before the write.
	appliedAfter := func(before uint64) (now uint64) {
		t.Helper()
		require.Eventually(t, func() bool {
			now = c.Meta().Metrics().Consensus.Applied
			return now > before
		}, 10*time.Second, time.Millisecond)
		return now
	}
	small := randomBytes(3000, 1)
	applied := c.Meta().Metrics().Consensus.Applied
	put("first", small, nil) // the first block made the container and pipeline
	applied = appliedAfter(applied)
	fewest := uint64(math.MaxUint64)
	for i := range 3 {
		put(fmt.Sprint("small", i), small, nil)
		now := appliedAfter(applied)
		fewest = min(fewest, now-applied)
		applied = now
		require.Equal(t, small, get(fmt.Sprint("small", i)))
	}
	m := dw()
	require.Equal(t, uint64(4), m.Issued)
	require.Equal(t, uint64(4), m.Committed)
	require.Zero(t, m.Pending)
	require.Positive(t, m.MaxBytes)
	require.Equal(t, uint64(1), fewest, "a small key written whole takes one entry")

	// A key of several chunks opens for real: at once, or, when its size
	// hint said less, at its first full chunk.
	big := randomBytes(5<<20, 2)
	put("big", big, nil)
	require.True(t, bytes.Equal(big, get("big")))
	require.Equal(t, uint64(4), dw().Issued)
	hint = func([]byte) int64 { return 100 }
	put("bigger", big, nil)
	require.True(t, bytes.Equal(big, get("bigger")))
	require.Equal(t, uint64(5), dw().Issued)
	require.Equal(t, uint64(4), dw().Committed)
	hint = func(data []byte) int64 { return int64(len(data)) }

	// The token expires while the writer holds it: its block is freed, and
	// the writer writes the key again (its commit refused, or, when the
	// datanodes deleted the block first, its write).
	late := randomBytes(2000, 3)
	put("late", late, func() {
		require.Eventually(t, func() bool { return dw().Discarded >= 1 }, 30*time.Second, 50*time.Millisecond)
	})
	require.Equal(t, late, get("late"))
	require.GreaterOrEqual(t, dw().Expired, uint64(1))

	// A forged token (another nonce) and an altered one (another block)
	// are refused; the real one commits, once.
	var resp *stratov1.OpenKeyResponse
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		resp, err = n.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "raw", SizeHint: 10, Deferrable: true})
		return err
	}))
	require.Zero(t, resp.OpenId)
	require.Len(t, resp.Blocks, 1)
	bl := []*stratov1.BlockLocation{{BlockId: resp.Blocks[0].BlockId, Length: 0}}
	commit := func(token []byte, ifAbsent bool) error {
		return cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
			_, err := n.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "raw", CreateToken: token,
				Blocks: bl, IfAbsent: ifAbsent})
			return err
		})
	}
	alter := func(f func(oc *stratov1.OpenKeyCommand)) []byte {
		oc := &stratov1.OpenKeyCommand{}
		require.NoError(t, proto.Unmarshal(resp.CreateToken, oc))
		f(oc)
		b, err := proto.Marshal(oc)
		require.NoError(t, err)
		return b
	}
	unknown := func(err error) {
		t.Helper()
		require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, stratov1.ErrorReason_CREATE_TOKEN_UNKNOWN.String(), ce.Reason)
	}
	unknown(commit(alter(func(oc *stratov1.OpenKeyCommand) { oc.WriteNonce = []byte("0123456789abcdef") }), false))
	unknown(commit(alter(func(oc *stratov1.OpenKeyCommand) { oc.Blocks[0].BlockId.LocalId++ }), false))
	err = commit(alter(func(oc *stratov1.OpenKeyCommand) { oc.WriteNonce = nil }), false)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "a deferred create's token holds no block: %v", err)

	// Refused by Apply (the key exists, and the commit asks it not to):
	// the token goes back and commits afterwards.
	put("raw", []byte("x"), nil)
	err = commit(resp.CreateToken, true)
	require.ErrorIs(t, err, client.ErrKeyReplaced)
	require.Equal(t, uint64(1), dw().Returned)
	require.NoError(t, commit(resp.CreateToken, false))
	require.Empty(t, get("raw"))
	unknown(commit(resp.CreateToken, false))

	// A leader that restarted holds no token: the writer writes again.
	again := randomBytes(4000, 4)
	put("restart", again, func() { require.NoError(t, c.RestartMeta()) })
	require.Equal(t, again, get("restart"))
	require.Equal(t, uint64(1), dw().Refused, "the restarted leader refused the first commit")
	require.Zero(t, dw().Issued, "and the key was written again through an ordinary open")
}

// A retry of a deferred write's commit that reaches a leader not holding
// the token (here: a forged token under the same request ID) is refused in
// log order, under its request ID. The attempt that holds the token, under
// that ID, then commits nothing; a new request commits it.
func TestDeferredWriteRefusedUnderItsRequest(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{BlockSize: 4 << 20, ContainerSize: 64 << 20, TickInterval: 100 * time.Millisecond},
		stratov1.ReplicationFactor_REPLICATION_THREE, 4<<20)
	ctx, cl := t.Context(), f.cl
	_, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "obs", Layout: stratov1.BucketLayout_LAYOUT_OBS})
	require.NoError(t, err)
	dw := func() meta.DeferredWriteMetrics { return f.c.Meta().Metrics().DeferredWrites }
	var raw *stratov1.OpenKeyResponse
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		raw, err = n.OpenKey(ctx, &stratov1.OpenKeyRequest{Volume: "vol", Bucket: "obs", Key: "raw", SizeHint: 10, Deferrable: true})
		return err
	}))
	require.Len(t, raw.Blocks, 1)
	commitAs := func(ctx context.Context, token []byte) error {
		return cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
			_, err := n.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "obs", Key: "raw", CreateToken: token,
				Blocks: []*stratov1.BlockLocation{{BlockId: raw.Blocks[0].BlockId, Length: 0}}})
			return err
		})
	}
	unknown := func(err error) {
		t.Helper()
		var ce *client.Error
		require.True(t, errors.As(err, &ce), "%v", err)
		require.Equal(t, stratov1.ErrorReason_CREATE_TOKEN_UNKNOWN.String(), ce.Reason)
	}
	oc := &stratov1.OpenKeyCommand{}
	require.NoError(t, proto.Unmarshal(raw.CreateToken, oc))
	oc.WriteNonce = []byte("fedcba9876543210")
	forged, err := proto.Marshal(oc)
	require.NoError(t, err)

	retried := metadata.AppendToOutgoingContext(ctx, "strato-client", "retrying-writer", "strato-request", "1")
	unknown(commitAs(retried, forged))
	unknown(commitAs(retried, raw.CreateToken))
	_, err = cl.OpenKey(ctx, "vol", "obs", "raw")
	require.ErrorIs(t, err, client.ErrNotFound)
	require.Equal(t, uint64(1), dw().Refused, "the second attempt got the request's recorded refusal")
	require.Zero(t, dw().Returned, "the attempt under the refused request never took the token")
	require.NoError(t, commitAs(ctx, raw.CreateToken))
	_, err = cl.OpenKey(ctx, "vol", "obs", "raw")
	require.NoError(t, err)
	require.Equal(t, uint64(1), dw().Committed)
}

// TestDeferredWritesAcrossLeaders: small keys written whole while meta's
// leadership moves from replica to replica. A commit that reaches a leader
// other than the one that gave its token out is refused, and the writer
// writes the key again: every key acknowledged reads back whole.
func TestDeferredWritesAcrossLeaders(t *testing.T) {
	f := startFaultCluster(t, minicluster.Options{MetaReplicas: 3, HeartbeatInterval: 100 * time.Millisecond,
		TickInterval: 100 * time.Millisecond, BlockSize: 4 << 20}, stratov1.ReplicationFactor_REPLICATION_THREE, 1<<20)
	ctx := t.Context()
	var (
		mu      sync.Mutex
		written = map[string][]byte{}
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	for w := range 3 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w%d/k%05d", w, i)
				data := fastRandom(1000+i%3000, uint64(w<<20|i))
				wr, err := f.cl.CreateKey(ctx, "vol", "bkt", key, client.WriteOptions{SizeHint: int64(len(data))})
				if err != nil {
					continue
				}
				if _, err := wr.Write(data); err != nil {
					wr.Abort()
					continue
				}
				if wr.Close() != nil {
					continue // not acknowledged: not checked
				}
				mu.Lock()
				written[key] = data
				mu.Unlock()
			}
		})
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(written)
	}
	progress := func() {
		t.Helper()
		target := count() + 20
		require.Eventually(t, func() bool { return count() >= target }, 30*time.Second, 10*time.Millisecond, "writes go on")
	}
	progress()
	for move := range 4 {
		to := uint64((move+1)%3 + 1)
		_, err := client.Cluster(ctx, f.cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.MetaMembersResponse, error) {
			return cc.TransferMetaLeader(ctx, &stratov1.TransferMetaLeaderRequest{Id: to})
		})
		require.NoError(t, err)
		progress()
	}
	stop.Store(true)
	wg.Wait()

	var issued, refused uint64
	for i := range 3 {
		m := f.c.MetaServer(i).Metrics().DeferredWrites
		issued, refused = issued+m.Issued, refused+m.Refused
	}
	require.Positive(t, issued)
	t.Logf("%d keys written; %d deferred writes issued, %d commits refused and written again", count(), issued, refused)
	mu.Lock()
	defer mu.Unlock()
	for key, want := range written {
		f.requireContent("/vol/bkt/"+key, want)
	}
}
