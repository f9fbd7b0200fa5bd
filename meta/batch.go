package meta

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/metaconn"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// MaxBatchCalls bounds the calls of one BatchService call.
const MaxBatchCalls = 256

// batchMethod is a batchable method's generated handler.
type batchMethod func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error)

// batchMethods are the handlers of metaconn.Batchable, by full name.
func batchMethods() map[string]batchMethod {
	m := map[string]batchMethod{}
	d := stratov1.NamespaceService_ServiceDesc
	for _, md := range d.Methods {
		if name := "/" + d.ServiceName + "/" + md.MethodName; metaconn.Batchable[name] {
			m[name] = batchMethod(md.Handler)
		}
	}
	return m
}

// intercept is the gRPC server's unary interceptor: every call but a
// batch through s.unary; a batch straight to its handler, which sends each
// of its calls through s.unary.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if s.unary == nil || info.FullMethod == stratov1.BatchService_Batch_FullMethodName {
		return h(ctx, req)
	}
	return s.unary(ctx, req, info, h)
}

// chainUnary is the interceptors as one, the first outermost.
func chainUnary(ints []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	switch len(ints) {
	case 0:
		return nil
	case 1:
		return ints[0]
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return ints[0](ctx, req, info, chainHandler(ints[1:], info, h))
	}
}

func chainHandler(ints []grpc.UnaryServerInterceptor, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) grpc.UnaryHandler {
	if len(ints) == 0 {
		return h
	}
	return func(ctx context.Context, req any) (any, error) {
		return ints[0](ctx, req, info, chainHandler(ints[1:], info, h))
	}
}

// Batch makes a batch's calls, each as a call of its own (its interceptors,
// metadata and deadline), concurrently, and returns their results.
func (s *Server) Batch(ctx context.Context, r *stratov1.BatchRequest) (*stratov1.BatchResponse, error) {
	calls := r.GetCalls()
	if len(calls) > MaxBatchCalls {
		return nil, status.Errorf(codes.InvalidArgument, "meta: a batch of %d calls (at most %d)", len(calls), MaxBatchCalls)
	}
	s.batches.Add(1)
	s.batchedCalls.Add(uint64(len(calls)))
	resp := &stratov1.BatchResponse{Results: make([]*stratov1.BatchResult, len(calls))}
	md, _ := metadata.FromIncomingContext(ctx)
	var wg sync.WaitGroup
	for i, c := range calls {
		if i == len(calls)-1 {
			resp.Results[i] = s.batchCall(ctx, md, c)
			break
		}
		wg.Add(1)
		s.batchWorkers.run(func() {
			defer wg.Done()
			resp.Results[i] = s.batchCall(ctx, md, c)
		})
	}
	wg.Wait()
	return resp, nil
}

// batchCall makes one call of a batch whose metadata is md.
func (s *Server) batchCall(ctx context.Context, md metadata.MD, c *stratov1.BatchCall) *stratov1.BatchResult {
	h := s.batch[c.GetMethod()]
	if h == nil {
		return batchResult(status.New(codes.Unimplemented, fmt.Sprintf("meta: %q cannot be called in a batch", c.GetMethod())))
	}
	if len(c.GetMetadata()) > 0 {
		md = md.Copy()
		for _, kv := range c.GetMetadata() {
			md.Set(kv.GetKey(), kv.GetValues()...)
		}
	}
	ctx = metadata.NewIncomingContext(ctx, md)
	if t := c.GetTimeoutUs(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Microsecond)
		defer cancel()
	}
	dec := func(v any) error {
		m, ok := v.(proto.Message)
		if !ok {
			return status.Errorf(codes.Internal, "meta: %T is not a protobuf message", v)
		}
		if err := proto.Unmarshal(c.GetRequest(), m); err != nil {
			return status.Errorf(codes.InvalidArgument, "meta: a batch's %s request: %v", c.GetMethod(), err)
		}
		return nil
	}
	out, err := h(s, ctx, dec, s.unary)
	if err != nil {
		return batchResult(status.Convert(err))
	}
	b, err := proto.Marshal(out.(proto.Message))
	if err != nil {
		return batchResult(status.New(codes.Internal, fmt.Sprintf("meta: encoding the reply of %s: %v", c.GetMethod(), err)))
	}
	return &stratov1.BatchResult{Response: b}
}

// batchResult is a failed call's result.
func batchResult(st *status.Status) *stratov1.BatchResult {
	p := st.Proto()
	return &stratov1.BatchResult{Code: p.GetCode(), Message: p.GetMessage(), Details: p.GetDetails()}
}

// batchWorkerIdle is how long a batch worker waits for work before it
// exits.
const batchWorkerIdle = 5 * time.Second

// batchWorkers run the calls of batches. A call goes to a worker that
// waits for one, or to a new worker: a worker's stack has grown to what a
// call needs, where a new goroutine for every call would grow its stack
// again (a call runs the interceptors, the handler and Pebble's reads).
type batchWorkers struct {
	work chan func()
}

func newBatchWorkers() *batchWorkers { return &batchWorkers{work: make(chan func())} }

func (w *batchWorkers) run(f func()) {
	select {
	case w.work <- f:
	default:
		go w.loop(f)
	}
}

func (w *batchWorkers) loop(f func()) {
	f()
	t := time.NewTimer(batchWorkerIdle)
	defer t.Stop()
	for {
		select {
		case f := <-w.work:
			f()
			t.Reset(batchWorkerIdle)
		case <-t.C:
			return
		}
	}
}
