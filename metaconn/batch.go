package metaconn

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	gstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// DefaultBatchInFlight is how many batchable calls (or batches) a
// connection to one replica carries at once before the calls made meanwhile wait to go
// together in one BatchService call (decision 0105).
const DefaultBatchInFlight = 2

// maxBatch bounds the calls of one batch (meta takes up to 256).
const maxBatch = 64

// Batchable are the calls a batch may carry (BatchService; meta answers
// others UNIMPLEMENTED), by full method name: NamespaceService's point
// reads. Mutations go alone: each waits for its Raft entry's commit, and a
// batch of them holds its slot for the slowest, where calls of their own
// keep more proposals in flight for Raft's group commit (decision 0105
// has the measurements).
var Batchable = map[string]bool{
	stratov1.NamespaceService_LookupKey_FullMethodName:     true,
	stratov1.NamespaceService_GetFileStatus_FullMethodName: true,
	stratov1.NamespaceService_IsFileClosed_FullMethodName:  true,
	stratov1.NamespaceService_GetBucket_FullMethodName:     true,
}

// batcher gathers one connection's batchable calls. While fewer than limit
// of them are in flight, a call goes alone, as it would without batching;
// the calls made while limit are in flight wait, and the first of those in
// flight to finish sends all that wait (up to maxBatch) as one batch. A
// lone caller therefore never waits for a batch, and many callers share
// gRPC's cost per call.
type batcher struct {
	limit int
	// off: the replica has no BatchService (an older meta); calls go alone.
	off atomic.Bool
	// batches and calls: batches sent, and the calls they carried.
	batches, calls atomic.Uint64

	mu       sync.Mutex
	inFlight int
	waiting  []*waitingCall
}

// waitingCall is a call waiting for a batch.
type waitingCall struct {
	call *stratov1.BatchCall
	// deadline: the caller's, zero if none.
	deadline time.Time
	// req and reply: the call's message types, for a replica without
	// BatchService (alone).
	req, reply protoreflect.MessageType
	done       chan batchReply // buffered: the sender never blocks
}

type batchReply struct {
	response []byte
	err      error
}

func newBatcher(limit int) *batcher { return &batcher{limit: limit} }

// intercept is the batcher as the connection's innermost unary client
// interceptor: the metadata the interceptors outside it added travel with
// each call.
func (b *batcher) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if b.limit <= 0 || !Batchable[method] || b.off.Load() {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	// alone makes the call in a free slot; b.mu is held, and released.
	alone := func() error {
		b.inFlight++
		b.mu.Unlock()
		err := invoker(ctx, method, req, reply, cc, opts...)
		b.next(cc)
		return err
	}
	b.mu.Lock()
	if b.inFlight < b.limit {
		return alone()
	}
	b.mu.Unlock()
	w, err := newWaitingCall(ctx, method, req, reply)
	if err != nil {
		return err
	}
	b.mu.Lock()
	if b.inFlight < b.limit {
		// A slot came free while the request was encoded.
		return alone()
	}
	b.waiting = append(b.waiting, w)
	b.mu.Unlock()
	select {
	case r := <-w.done:
		if r.err != nil {
			return r.err
		}
		if err := proto.Unmarshal(r.response, reply.(proto.Message)); err != nil {
			return gstatus.Errorf(codes.Internal, "metaconn: decoding the reply of %s: %v", method, err)
		}
		return nil
	case <-ctx.Done():
		// The batch goes on; its answer to this call is dropped, as a
		// unary call's would be.
		return gstatus.FromContextError(ctx.Err()).Err()
	}
}

func newWaitingCall(ctx context.Context, method string, req, reply any) (*waitingCall, error) {
	m, ok := req.(proto.Message)
	r, ok2 := reply.(proto.Message)
	if !ok || !ok2 {
		return nil, gstatus.Errorf(codes.Internal, "metaconn: %T or %T is not a protobuf message", req, reply)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		return nil, gstatus.Errorf(codes.Internal, "metaconn: encoding %s: %v", method, err)
	}
	w := &waitingCall{call: &stratov1.BatchCall{Method: method, Request: b}, done: make(chan batchReply, 1),
		req: m.ProtoReflect().Type(), reply: r.ProtoReflect().Type()}
	if md, ok := metadata.FromOutgoingContext(ctx); ok {
		for k, v := range md {
			w.call.Metadata = append(w.call.Metadata, &stratov1.BatchMetadata{Key: k, Values: v})
		}
	}
	w.deadline, _ = ctx.Deadline()
	return w, nil
}

// next is called as a call or batch in flight finishes: the calls that
// wait go as a batch in its place, or its slot is freed.
func (b *batcher) next(cc *grpc.ClientConn) {
	b.mu.Lock()
	if len(b.waiting) == 0 {
		b.inFlight--
		b.mu.Unlock()
		return
	}
	n := min(len(b.waiting), maxBatch)
	calls := make([]*waitingCall, n)
	copy(calls, b.waiting)
	b.waiting = append(b.waiting[:0], b.waiting[n:]...)
	b.mu.Unlock()
	go b.send(cc, calls)
}

// send sends calls as one batch, in a slot in flight, and gives each its
// answer.
func (b *batcher) send(cc *grpc.ClientConn, calls []*waitingCall) {
	defer b.next(cc)
	ctx := context.Background()
	req := &stratov1.BatchRequest{Calls: make([]*stratov1.BatchCall, len(calls))}
	now := time.Now()
	var latest time.Time
	bounded := true
	for i, w := range calls {
		req.Calls[i] = w.call
		if w.deadline.IsZero() {
			bounded = false
			continue
		}
		left := w.deadline.Sub(now)
		if left <= 0 {
			left = time.Microsecond
		}
		w.call.TimeoutUs = left.Microseconds()
		if w.deadline.After(latest) {
			latest = w.deadline
		}
	}
	if bounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, latest)
		defer cancel()
	}
	var resp stratov1.BatchResponse
	err := cc.Invoke(ctx, stratov1.BatchService_Batch_FullMethodName, req, &resp, grpc.MaxCallRecvMsgSize(1<<30))
	if gstatus.Code(err) == codes.Unimplemented {
		// An older meta: every call alone from now on.
		b.off.Store(true)
		for _, w := range calls {
			go b.alone(cc, w)
		}
		return
	}
	b.batches.Add(1)
	b.calls.Add(uint64(len(calls)))
	if err == nil && len(resp.GetResults()) != len(calls) {
		err = gstatus.Errorf(codes.Internal, "metaconn: a batch of %d calls answered with %d results", len(calls), len(resp.GetResults()))
	}
	for i, w := range calls {
		if err != nil {
			w.done <- batchReply{err: err}
			continue
		}
		r := resp.GetResults()[i]
		if r.GetCode() != int32(codes.OK) {
			w.done <- batchReply{err: gstatus.ErrorProto(&status.Status{Code: r.GetCode(), Message: r.GetMessage(), Details: r.GetDetails()})}
			continue
		}
		w.done <- batchReply{response: r.GetResponse()}
	}
}

// alone makes a waiting call as a call of its own (a replica without
// BatchService).
func (b *batcher) alone(cc *grpc.ClientConn, w *waitingCall) {
	ctx := context.Background()
	if !w.deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, w.deadline)
		defer cancel()
	}
	md := metadata.MD{}
	for _, kv := range w.call.GetMetadata() {
		md[kv.GetKey()] = kv.GetValues()
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	req, reply := w.req.New().Interface(), w.reply.New().Interface()
	if err := proto.Unmarshal(w.call.GetRequest(), req); err != nil {
		w.done <- batchReply{err: gstatus.Errorf(codes.Internal, "metaconn: %v", err)}
		return
	}
	if err := cc.Invoke(ctx, w.call.GetMethod(), req, reply); err != nil {
		w.done <- batchReply{err: err}
		return
	}
	out, err := proto.Marshal(reply)
	w.done <- batchReply{response: out, err: err}
}
