package consensus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/internal/reconnect"
	"github.com/strato-io/strato/proto/strato/v1"
)

const (
	peerQueueLen      = 4096
	sendBatchMsgs     = 512
	sendBatchBytes    = 1 << 20 // well under gRPC's default 4 MiB receive limit
	snapshotChunkSize = 1 << 20
	minBackoff        = 10 * time.Millisecond
	maxBackoff        = time.Second
)

// transport sends raft messages to peers over gRPC: one goroutine and one
// client stream per peer, connected lazily and reconnected with backoff.
// Messages to a peer that is down or slow are dropped (raft retries) and the
// peer is reported unreachable to raft. The peers follow the group's
// address book (sync); a node with no configuration yet (waiting to join)
// also answers the nodes it hears from, at the address their batches carry.
type transport struct {
	n       *Node
	mu      sync.RWMutex
	peers   map[uint64]*peer
	learned map[uint64]string // peers known only from their batches
	// drop, when set, is asked about every outgoing message; tests use it
	// to cut links.
	drop   atomic.Pointer[func(*pb.Message) bool]
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type peer struct {
	t      *transport
	id     uint64
	addr   string
	q      chan *pb.Message
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	conn   *grpc.ClientConn
	closed bool
}

func newTransport(n *Node) *transport {
	ctx, cancel := context.WithCancel(context.Background())
	return &transport{n: n, peers: map[uint64]*peer{}, learned: map[uint64]string{}, ctx: ctx, cancel: cancel}
}

// sync makes the peers those of addrs (but this node): it connects to new
// members, drops removed ones, and reconnects to one whose address changed.
func (t *transport) sync(addrs map[uint64]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, p := range t.peers {
		if a, ok := addrs[id]; !ok || a != p.addr {
			if _, learned := t.learned[id]; learned && !ok && len(addrs) == 0 {
				continue // still waiting to join
			}
			p.stop()
			delete(t.peers, id)
			delete(t.learned, id)
		}
	}
	for id, a := range addrs {
		if id == t.n.id || a == "" {
			continue
		}
		delete(t.learned, id)
		if _, ok := t.peers[id]; !ok {
			t.startPeerLocked(id, a)
		}
	}
}

// learn records the address a node not in the address book sent from, so
// that this node can answer it while it has no configuration of its own.
func (t *transport) learn(id uint64, addr string) {
	if addr == "" || id == t.n.id || len(t.n.view.Load().addrs) > 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.peers[id]; ok {
		if p.addr == addr {
			return
		}
		p.stop()
		delete(t.peers, id)
	}
	t.learned[id] = addr
	t.startPeerLocked(id, addr)
}

func (t *transport) learnedAddr(id uint64) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.learned[id]
}

func (t *transport) startPeerLocked(id uint64, addr string) {
	ctx, cancel := context.WithCancel(t.ctx)
	p := &peer{t: t, id: id, addr: addr, q: make(chan *pb.Message, peerQueueLen), ctx: ctx, cancel: cancel}
	t.peers[id] = p
	t.wg.Add(1)
	go p.run()
}

// stop ends the peer's goroutine and closes its connection (snapshot sends
// in flight fail).
func (p *peer) stop() {
	p.cancel()
	p.mu.Lock()
	p.closed = true
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
	p.mu.Unlock()
}

func (t *transport) close() {
	t.cancel()
	t.wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.peers {
		p.stop()
	}
}

// send queues m for its peer; snap is the pinned state for a MsgSnap.
func (t *transport) send(m *pb.Message, snap pinnedSnapshot) {
	t.mu.RLock()
	p := t.peers[m.GetTo()]
	t.mu.RUnlock()
	if drop := t.drop.Load(); drop != nil && (*drop)(m) {
		p = nil
	}
	if p == nil {
		snap.close()
		t.n.metrics.messagesDropped.Add(1)
		return
	}
	if m.GetType() == pb.MsgSnap {
		t.wg.Add(1)
		go p.sendSnapshot(m, snap)
		return
	}
	select {
	case p.q <- m:
	default:
		t.n.metrics.messagesDropped.Add(1)
	}
}

func (p *peer) client() (stratov1.RaftServiceClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("peer %d is no longer a member", p.id)
	}
	if p.conn == nil {
		opts := p.t.n.opts.DialOptions
		if len(opts) == 0 {
			opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		}
		// A peer back from an outage hears from the leader within a
		// second, not after gRPC's default backoff of up to 2 minutes.
		conn, err := grpc.NewClient(p.addr, append([]grpc.DialOption{reconnect.DialOption()}, opts...)...)
		if err != nil {
			return nil, err
		}
		p.conn = conn
	}
	return stratov1.NewRaftServiceClient(p.conn), nil
}

func (p *peer) reportUnreachable() {
	select {
	case p.t.n.unreachc <- p.id:
	default:
	}
}

func (p *peer) run() {
	defer p.t.wg.Done()
	ctx := p.ctx
	n := p.t.n
	var (
		stream  stratov1.RaftService_SendClient
		cancel  context.CancelFunc
		backoff = minBackoff
		batch   = &stratov1.RaftBatch{From: n.id}
	)
	defer func() {
		if cancel != nil {
			cancel()
		}
	}()
	// fail drops the stream and what is queued, tells raft, and waits.
	fail := func(err error) {
		if status.Code(err) == codes.FailedPrecondition {
			p.t.n.log.Warn("consensus: peer refuses this node's messages", "peer", p.id, "addr", p.addr, "err", err)
		} else {
			p.t.n.log.Debug("consensus: peer unreachable", "peer", p.id, "addr", p.addr, "err", err)
		}
		if cancel != nil {
			cancel()
		}
		stream, cancel = nil, nil
		p.reportUnreachable()
		for {
			select {
			case <-p.q:
				p.t.n.metrics.messagesDropped.Add(1)
				continue
			default:
			}
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
	for {
		var m *pb.Message
		select {
		case <-ctx.Done():
			return
		case m = <-p.q:
		}
		batch.FromAddr, batch.GroupId = n.addrOf(n.id), n.view.Load().groupID
		if stream == nil {
			var err error
			if stream, cancel, err = p.open(); err != nil {
				fail(err)
				continue
			}
		}
		// Batch what is queued, keeping each gRPC message under
		// sendBatchBytes unless a single raft message is larger.
		batch.Messages = batch.Messages[:0]
		size := 0
		var err error
		for m != nil {
			raw, merr := proto.Marshal(m)
			m = nil
			if merr != nil {
				p.t.n.log.Error("consensus: marshal raft message", "err", merr)
			} else {
				if len(batch.Messages) > 0 && size+len(raw) > sendBatchBytes {
					if err = p.flush(stream, batch); err != nil {
						break
					}
					batch.Messages, size = batch.Messages[:0], 0
				}
				batch.Messages = append(batch.Messages, raw)
				size += len(raw)
			}
			if len(batch.Messages) >= sendBatchMsgs {
				break
			}
			select {
			case m = <-p.q:
			default:
			}
		}
		if err == nil && len(batch.Messages) > 0 {
			err = p.flush(stream, batch)
		}
		if err != nil {
			fail(err)
			continue
		}
		backoff = minBackoff
	}
}

// otherGroup refuses a message from a node of another group (both IDs
// known and different).
func otherGroup(mine, theirs, from uint64) error {
	if mine == 0 || theirs == 0 || mine == theirs {
		return nil
	}
	return status.Errorf(codes.FailedPrecondition,
		"consensus: node %d belongs to another Raft group (%x, this one is %x): was it started without --join?", from, theirs, mine)
}

// removedMsg is the status message of a peer that refuses messages from a
// node removed from the group.
const removedMsg = "consensus: the sender was removed from the group"

func (p *peer) flush(stream stratov1.RaftService_SendClient, batch *stratov1.RaftBatch) error {
	if err := stream.Send(batch); err != nil {
		p.t.n.metrics.messagesDropped.Add(uint64(len(batch.Messages)))
		err = whyEnded(err, stream.CloseAndRecv)
		if st, ok := status.FromError(err); ok && st.Code() == codes.FailedPrecondition && st.Message() == removedMsg {
			select {
			case p.t.n.removedc <- p.id:
			default:
			}
		}
		return err
	}
	p.t.n.metrics.messagesSent.Add(uint64(len(batch.Messages)))
	return nil
}

// whyEnded returns the receiver's status when a send failed with io.EOF
// (the receiver ended the stream), else err.
func whyEnded(err error, closeAndRecv func() (*stratov1.RaftAck, error)) error {
	if errors.Is(err, io.EOF) {
		if _, rerr := closeAndRecv(); rerr != nil {
			return rerr
		}
	}
	return err
}

// open opens a Send stream; cancel ends it.
func (p *peer) open() (stratov1.RaftService_SendClient, context.CancelFunc, error) {
	c, err := p.client()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(p.ctx)
	stream, err := c.Send(ctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return stream, cancel, nil
}

// sendSnapshot streams the state pinned by snap with its MsgSnap, then
// reports the outcome to raft.
func (p *peer) sendSnapshot(m *pb.Message, snap pinnedSnapshot) {
	n := p.t.n
	defer p.t.wg.Done()
	err := p.streamSnapshot(m, snap)
	snap.close()
	st := snapStatus{id: p.id, status: raft.SnapshotFinish}
	if err != nil {
		st.status = raft.SnapshotFailure
		n.metrics.snapshotFails.Add(1)
		n.log.Warn("consensus: snapshot send failed", "peer", p.id, "index", m.GetSnapshot().GetMetadata().GetIndex(), "err", err)
		p.reportUnreachable()
	} else {
		n.metrics.snapshotsSent.Add(1)
		n.log.Info("consensus: snapshot sent", "peer", p.id, "index", m.GetSnapshot().GetMetadata().GetIndex())
	}
	select {
	case n.snapStatusc <- st:
	case <-n.donec:
	}
}

func (p *peer) streamSnapshot(m *pb.Message, pinned pinnedSnapshot) error {
	it := pinned.it
	if it == nil {
		return errors.New("no pinned state for snapshot")
	}
	c, err := p.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stream, err := c.Snapshot(ctx)
	if err != nil {
		return err
	}
	// The snapshot's data goes out as the address book as of its index.
	hdr := proto.Clone(m).(*pb.Message)
	hdr.Snapshot.Data = pinned.book
	raw, err := proto.Marshal(hdr)
	if err != nil {
		return err
	}
	chunk := &stratov1.SnapshotChunk{Message: raw}
	var arena []byte
	total := uint64(0)
	for valid := it.First(); valid; valid = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			return err
		}
		k := it.Key()
		start := len(arena)
		arena = append(arena, k...)
		arena = append(arena, v...)
		chunk.Keys = append(chunk.Keys, arena[start:start+len(k):start+len(k)])
		chunk.Values = append(chunk.Values, arena[start+len(k):len(arena):len(arena)])
		total++
		if len(arena) >= snapshotChunkSize {
			if err := stream.Send(chunk); err != nil {
				return whyEnded(err, stream.CloseAndRecv)
			}
			chunk, arena = &stratov1.SnapshotChunk{}, nil
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	chunk.Total, chunk.Final = total, true
	if err := stream.Send(chunk); err != nil {
		return whyEnded(err, stream.CloseAndRecv)
	}
	_, err = stream.CloseAndRecv()
	return err
}

// RegisterGRPC registers the node's Raft service (its peers' messages and
// snapshots) on s, which is usually the server of the meta API. Call it
// before s.Serve.
func (n *Node) RegisterGRPC(s *grpc.Server) {
	stratov1.RegisterRaftServiceServer(s, &raftService{n: n})
}

type raftService struct {
	stratov1.UnimplementedRaftServiceServer
	n *Node
}

func (s *raftService) Send(stream stratov1.RaftService_SendServer) error {
	n := s.n
	ctx := stream.Context()
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&stratov1.RaftAck{})
		}
		if err != nil {
			return err
		}
		v := n.view.Load()
		if slices.Contains(v.removed, b.GetFrom()) {
			return status.Error(codes.FailedPrecondition, removedMsg)
		}
		if err := otherGroup(v.groupID, b.GetGroupId(), b.GetFrom()); err != nil {
			return err
		}
		n.transport.learn(b.GetFrom(), b.GetFromAddr())
		for _, raw := range b.GetMessages() {
			m := &pb.Message{}
			if err := proto.Unmarshal(raw, m); err != nil {
				return status.Errorf(codes.InvalidArgument, "consensus: bad raft message: %v", err)
			}
			if m.GetTo() != n.id {
				return status.Errorf(codes.InvalidArgument, "consensus: message for %d sent to %d", m.GetTo(), n.id)
			}
			select {
			case n.recvc <- m:
			case <-n.donec:
				return status.Error(codes.Unavailable, ErrClosed.Error())
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

func (s *raftService) Snapshot(stream stratov1.RaftService_SnapshotServer) error {
	n := s.n
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	m := &pb.Message{}
	if err := proto.Unmarshal(first.GetMessage(), m); err != nil || m.GetType() != pb.MsgSnap || m.GetTo() != n.id {
		return status.Errorf(codes.InvalidArgument, "consensus: snapshot stream must start with a MsgSnap for %d", n.id)
	}
	if data := m.GetSnapshot().GetData(); len(data) > 0 {
		ab, err := decodeBook(data)
		if err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
		if err := otherGroup(n.view.Load().groupID, ab.groupID, m.GetFrom()); err != nil {
			return err
		}
	}
	select {
	case <-n.donec:
		return status.Error(codes.Unavailable, ErrClosed.Error())
	default:
	}
	stage, err := newSnapshotStage(n, m)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	in := &incomingSnapshot{msg: m, stage: stage, done: make(chan error, 1)}
	handed := false
	defer func() {
		if !handed {
			stage.discard()
		}
	}()
	start := time.Now()
	if err := receiveSnapshot(stream, first, stage); err != nil {
		return err
	}
	in.received = time.Since(start)
	select {
	case n.snapRecvc <- in:
		handed = true
	case <-n.donec:
		return status.Error(codes.Unavailable, ErrClosed.Error())
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := <-in.done; err != nil {
		return status.Error(codes.Unavailable, fmt.Sprintf("consensus: step snapshot: %v", err))
	}
	return stream.SendAndClose(&stratov1.RaftAck{})
}

// receiveSnapshot stages the pairs of the chunks of stream, first already
// received, until the final one.
func receiveSnapshot(stream stratov1.RaftService_SnapshotServer, first *stratov1.SnapshotChunk, stage *snapshotStage) error {
	chunk := first
	for {
		if err := stage.add(chunk.GetKeys(), chunk.GetValues()); err != nil {
			if errors.Is(err, ErrCorrupt) {
				return status.Error(codes.InvalidArgument, err.Error())
			}
			return status.Error(codes.Internal, err.Error())
		}
		if chunk.GetFinal() {
			break
		}
		var err error
		if chunk, err = stream.Recv(); err != nil {
			return err
		}
	}
	if stage.pairs != chunk.GetTotal() {
		return status.Errorf(codes.InvalidArgument, "consensus: snapshot has %d pairs, sender counted %d", stage.pairs, chunk.GetTotal())
	}
	return stage.finish()
}
