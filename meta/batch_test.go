package meta_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/metaconn"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/proto/strato/v1"
)

// seenCalls records the unary calls a meta's interceptors saw, with the
// user each was made as.
type seenCalls struct {
	mu    sync.Mutex
	calls []string
}

func (s *seenCalls) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	user := "-"
	if id := meta.IdentityFromContext(ctx); id != nil {
		user = id.User
	}
	s.mu.Lock()
	s.calls = append(s.calls, fmt.Sprintf("%s %s %s", info.FullMethod[strings.LastIndex(info.FullMethod, "/")+1:], user, status.Code(err)))
	s.mu.Unlock()
	return resp, err
}

func (s *seenCalls) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if strings.HasPrefix(c, method+" ") {
			n++
		}
	}
	return n
}

func (s *seenCalls) saw(call string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.calls {
		if c == call {
			return true
		}
	}
	return false
}

// makeFiles creates volume vol, bucket bkt and the empty files named.
func makeFiles(t *testing.T, cl *client.Client, names ...string) {
	t.Helper()
	ctx := t.Context()
	_, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", Layout: stratov1.BucketLayout_LAYOUT_FSO})
	require.NoError(t, err)
	require.NoError(t, cl.Meta().Do(ctx, func(ctx context.Context, n stratov1.NamespaceServiceClient, _ client.ClusterStubs) error {
		for _, name := range names {
			ok, err := n.CreateFile(ctx, &stratov1.CreateFileRequest{Volume: "vol", Bucket: "bkt", Path: name, Recursive: true})
			if err != nil {
				return err
			}
			if _, err := n.CommitKey(ctx, &stratov1.CommitKeyRequest{Volume: "vol", Bucket: "bkt", Key: name, OpenId: ok.OpenId}); err != nil {
				return err
			}
		}
		return nil
	}))
}

// numbered is f0..f(n-1).
func numbered(n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("f%d", i))
	}
	return names
}

func batchCall(t *testing.T, method string, req proto.Message, md ...string) *stratov1.BatchCall {
	t.Helper()
	b, err := proto.Marshal(req)
	require.NoError(t, err)
	c := &stratov1.BatchCall{Method: method, Request: b}
	for i := 0; i+1 < len(md); i += 2 {
		c.Metadata = append(c.Metadata, &stratov1.BatchMetadata{Key: md[i], Values: []string{md[i+1]}})
	}
	return c
}

// Each call of a batch is served as a call of its own: authenticated with
// the batch's token (or its own metadata's), seen by the interceptors
// under its own method, answered with its own reply or status; calls that
// may not be batched and malformed ones fail alone.
func TestBatchServesEachCallAlone(t *testing.T) {
	var seen seenCalls
	c := startMeta(t, minicluster.Options{Auth: true, ConfigureMeta: func(_ int, o *meta.Options) {
		o.UnaryInterceptors = append(o.UnaryInterceptors, seen.intercept)
	}})
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	makeFiles(t, admin, "d/f1")
	tok, err := c.AdminToken()
	require.NoError(t, err)

	conn, err := grpc.NewClient(c.MetaAddrs()[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	bs := stratov1.NewBatchServiceClient(conn)
	ctx := t.Context()
	calls := []*stratov1.BatchCall{
		batchCall(t, stratov1.NamespaceService_GetFileStatus_FullMethodName, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "d/f1"}),
		batchCall(t, stratov1.NamespaceService_LookupKey_FullMethodName, &stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: "d/missing"}),
		batchCall(t, stratov1.NamespaceService_CreateVolume_FullMethodName, &stratov1.CreateVolumeRequest{Name: "sneaky"}),
		{Method: stratov1.NamespaceService_LookupKey_FullMethodName, Request: []byte{0xff, 0xff, 0xff}},
		batchCall(t, stratov1.NamespaceService_GetFileStatus_FullMethodName, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "d/f1"},
			"authorization", "Bearer strato1.nosuch.AAAA"),
	}

	// Without a token every call is refused, each in its result.
	resp, err := bs.Batch(ctx, &stratov1.BatchRequest{Calls: calls[:2]})
	require.NoError(t, err)
	for _, r := range resp.GetResults() {
		require.Equal(t, int32(codes.Unauthenticated), r.GetCode(), r.GetMessage())
	}

	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
	resp, err = bs.Batch(actx, &stratov1.BatchRequest{Calls: calls})
	require.NoError(t, err)
	res := resp.GetResults()
	require.Len(t, res, len(calls))
	require.Zero(t, res[0].GetCode(), res[0].GetMessage())
	var st stratov1.GetFileStatusResponse
	require.NoError(t, proto.Unmarshal(res[0].GetResponse(), &st))
	require.Equal(t, "d/f1", st.GetStatus().GetPath())
	require.Equal(t, int32(codes.NotFound), res[1].GetCode(), res[1].GetMessage())
	require.Empty(t, res[1].GetResponse())
	require.Equal(t, int32(codes.Unimplemented), res[2].GetCode())
	require.Contains(t, res[2].GetMessage(), "cannot be called in a batch")
	require.Equal(t, int32(codes.InvalidArgument), res[3].GetCode(), res[3].GetMessage())
	require.Equal(t, int32(codes.Unauthenticated), res[4].GetCode(), "the call's own metadata replaces the batch's")

	require.True(t, seen.saw("GetFileStatus admin OK"), "%v", seen.calls)
	require.True(t, seen.saw("LookupKey admin NotFound"), "%v", seen.calls)
	require.True(t, seen.saw("GetFileStatus - Unauthenticated"), "%v", seen.calls)
	require.Equal(t, 1, seen.count("CreateVolume"), "only makeFiles's: %v", seen.calls)
	_, err = admin.GetVolume(ctx, "sneaky")
	require.ErrorIs(t, err, client.ErrNotFound)

	// Too many calls: the batch itself is refused.
	many := make([]*stratov1.BatchCall, meta.MaxBatchCalls+1)
	for i := range many {
		many[i] = calls[0]
	}
	_, err = bs.Batch(actx, &stratov1.BatchRequest{Calls: many})
	requireCode(t, codes.InvalidArgument, err)
	m := c.MetaServer(0).Metrics()
	require.EqualValues(t, 2, m.Batches)
	require.EqualValues(t, 2+len(calls), m.BatchedCalls)
}

// gate holds the GetFileStatus calls of path "gate" until it is opened.
type gate struct {
	open    chan struct{}
	entered chan struct{} // a gated call arrived
}

func newGate() gate { return gate{open: make(chan struct{}), entered: make(chan struct{}, 1)} }

func (g gate) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if r, ok := req.(*stratov1.GetFileStatusRequest); ok && r.GetPath() == "gate" {
		select {
		case g.entered <- struct{}{}:
		default:
		}
		select {
		case <-g.open:
		case <-ctx.Done():
		}
	}
	return h(ctx, req)
}

// readWhileGated makes one read wait at the gate (holding the connection's
// one call in flight), then n concurrent reads of files f0..f(n-1) and of
// missing paths, which wait meanwhile; it opens the gate and checks that
// every read got its own answer.
func readWhileGated(t *testing.T, mc *metaconn.Conn, g gate, n int) {
	t.Helper()
	ctx := t.Context()
	nsc := stratov1.NewNamespaceServiceClient(mc)
	gated := make(chan error, 1)
	go func() {
		_, err := nsc.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: "gate"})
		gated <- err
	}()
	<-g.entered
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("f%d", i)
			st, err := nsc.GetFileStatus(ctx, &stratov1.GetFileStatusRequest{Volume: "vol", Bucket: "bkt", Path: path})
			if err == nil && st.GetStatus().GetPath() != path {
				err = fmt.Errorf("asked for %s, answered for %s", path, st.GetStatus().GetPath())
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			_, err := nsc.LookupKey(ctx, &stratov1.LookupKeyRequest{Volume: "vol", Bucket: "bkt", Key: fmt.Sprintf("missing%d", i)})
			if status.Code(err) != codes.NotFound {
				err = fmt.Errorf("missing%d: want NotFound, got %w", i, err)
			} else {
				err = nil
			}
			errs <- err
		}()
	}
	// The reads' goroutines only encode their requests and queue them:
	// no state of the client to wait on is exported, so give them time.
	time.Sleep(200 * time.Millisecond)
	close(g.open)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, codes.NotFound, status.Code(<-gated))
}

// A client's reads made while its calls in flight are at the limit go
// together as batches, each answered as if alone.
func TestClientBatchesReads(t *testing.T) {
	g := newGate()
	c := startMeta(t, minicluster.Options{ConfigureMeta: func(_ int, o *meta.Options) {
		o.UnaryInterceptors = append(o.UnaryInterceptors, g.intercept)
	}})
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	const n = 40
	makeFiles(t, admin, numbered(n)...)

	mc, err := metaconn.Dial(c.MetaAddrs(), client.Classify)
	require.NoError(t, err)
	defer func() { _ = mc.Close() }()
	mc.SetBatching(1)
	readWhileGated(t, mc, g, n)
	batches, calls := mc.BatchStats()
	require.Positive(t, batches)
	require.EqualValues(t, 2*n, calls, "every read made at the gate went in a batch")
	m := c.MetaServer(0).Metrics()
	require.Equal(t, batches, m.Batches)
	require.Equal(t, calls, m.BatchedCalls)
}

// A replica without BatchService (an older meta) answers the first batch
// UNIMPLEMENTED: its calls are made again alone, and so is every call
// after.
func TestClientBatchingFallsBack(t *testing.T) {
	c := startMeta(t, minicluster.Options{})
	admin, err := c.Client()
	require.NoError(t, err)
	defer func() { _ = admin.Close() }()
	const n = 20
	makeFiles(t, admin, numbered(n)...)

	g := newGate()
	old := grpc.NewServer(grpc.UnaryInterceptor(g.intercept))
	stratov1.RegisterNamespaceServiceServer(old, c.MetaServer(0))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = old.Serve(lis) }()
	defer old.Stop()

	mc, err := metaconn.Dial([]string{lis.Addr().String()}, client.Classify)
	require.NoError(t, err)
	defer func() { _ = mc.Close() }()
	mc.SetBatching(1)
	readWhileGated(t, mc, g, n)
	batches, _ := mc.BatchStats()
	require.Zero(t, batches)
	require.Zero(t, c.MetaServer(0).Metrics().Batches)
}
