// The node's goroutine: it owns the raft.RawNode, batches proposals and
// reads, ticks, and hands each Ready to handleReady (ready.go).

package consensus

import (
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

type proposal struct {
	cmd    []byte
	term   uint64
	seq    uint64
	result any
	err    error
	done   chan struct{}
}

var proposalPool = sync.Pool{New: func() any { return &proposal{done: make(chan struct{}, 1)} }}

type snapStatus struct {
	id     uint64
	status raft.SnapshotStatus
}

// run is the raft goroutine: it owns the RawNode, the log store and the
// state machine.
func (n *Node) run() {
	ticker := time.NewTicker(n.opts.TickInterval)
	defer ticker.Stop()
	err := guard(func() error { return n.loop(ticker.C) })
	if err != nil && !errors.Is(err, ErrRemoved) {
		n.log.Error("consensus: raft goroutine stopped", "err", err)
	}
	n.loopErr = err
	n.shutdown()
	close(n.donec)
}

func (n *Node) loop(tick <-chan time.Time) error {
	for {
		if !n.rn.HasReady() && len(n.propBuf) == 0 && len(n.readBuf) == 0 {
			select {
			case <-n.stopc:
				return nil
			case <-tick:
				n.tick()
			case p := <-n.propc:
				n.propBuf = append(n.propBuf, p)
			case m := <-n.recvc:
				n.step(m)
			case r := <-n.readc:
				n.readBuf = append(n.readBuf, r)
			case s := <-n.snapRecvc:
				n.stepSnapshot(s)
			case st := <-n.snapStatusc:
				n.rn.ReportSnapshot(st.id, st.status)
			case id := <-n.unreachc:
				n.rn.ReportUnreachable(id)
			case f := <-n.opc:
				f()
			case from := <-n.removedc:
				return n.stopRemoved(from)
			}
		}
		select {
		case <-n.stopc:
			return nil
		default:
		}
		n.drain(tick)
		// First let raft hand out what it already has, committed entries in
		// particular: their proposers, once answered, propose again in time
		// to join the next log append instead of waiting a whole fsync.
		for n.rn.HasReady() {
			if err := n.handleReady(); err != nil {
				return err
			}
		}
		if n.answered != n.answeredAtPropose {
			n.linger(int(n.answered - n.answeredAtPropose))
			n.answeredAtPropose = n.answered
		}
		n.proposeBatch()
		n.readIndexBatch()
		if n.rn.HasReady() {
			if err := n.handleReady(); err != nil {
				return err
			}
		}
	}
}

// drain takes, without blocking, everything already waiting for the raft
// goroutine, so that one Ready (one fsync) covers it all.
func (n *Node) drain(tick <-chan time.Time) {
	for range 4096 {
		select {
		case m := <-n.recvc:
			n.step(m)
			continue
		default:
		}
		break
	}
	n.drainProposals()
	for {
		select {
		case r := <-n.readc:
			n.readBuf = append(n.readBuf, r)
			continue
		case <-tick:
			n.tick()
			continue
		case s := <-n.snapRecvc:
			n.stepSnapshot(s)
			continue
		case st := <-n.snapStatusc:
			n.rn.ReportSnapshot(st.id, st.status)
			continue
		case id := <-n.unreachc:
			n.rn.ReportUnreachable(id)
			continue
		case f := <-n.opc:
			f()
			continue
		default:
		}
		return
	}
}

// linger gives the proposers just answered a moment to propose again, so
// that their next writes join this log append (Options.ProposalLinger):
// until as many proposals wait as were answered, or the linger is over.
func (n *Node) linger(answered int) {
	runtime.Gosched()
	n.drainProposals()
	if n.opts.ProposalLinger <= 0 || !n.isLeader.Load() {
		return
	}
	want := min(answered, n.opts.MaxProposalBatch)
	deadline := time.Now().Add(n.opts.ProposalLinger)
	for len(n.propBuf) < want && time.Now().Before(deadline) {
		runtime.Gosched()
		n.drainProposals()
	}
}

func (n *Node) drainProposals() {
	for len(n.propBuf) < n.opts.MaxProposalBatch {
		select {
		case p := <-n.propc:
			n.propBuf = append(n.propBuf, p)
			continue
		default:
		}
		return
	}
}

func (n *Node) step(m *pb.Message) {
	n.metrics.messagesRecv.Add(1)
	if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		n.log.Debug("consensus: step", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
}

func (n *Node) stepSnapshot(s *incomingSnapshot) {
	if n.staged != nil {
		n.staged.stage.discard()
	}
	n.staged = s
	n.metrics.messagesRecv.Add(1)
	s.done <- n.rn.Step(s.msg)
}

// proposeBatch hands every waiting proposal to raft as one MsgProp.
func (n *Node) proposeBatch() {
	batch := n.propBuf
	if len(batch) == 0 {
		return
	}
	n.propBuf = n.propBuf[:0]
	st := n.rn.BasicStatus()
	if st.RaftState != raft.StateLeader {
		n.failProposals(batch, n.notLeader())
		return
	}
	size := 0
	for _, p := range batch {
		size += proposalHeaderLen + len(p.cmd)
	}
	buf := make([]byte, 0, size)
	ents := make([]*pb.Entry, len(batch))
	entBuf := make([]pb.Entry, len(batch))
	for i, p := range batch {
		n.seq++
		p.term, p.seq = st.GetTerm(), n.seq
		start := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, p.seq)
		buf = append(buf, p.cmd...)
		p.cmd = nil
		entBuf[i].Data = buf[start:len(buf):len(buf)]
		ents[i] = &entBuf[i]
	}
	err := n.rn.Step(&pb.Message{Type: pb.MsgProp.Enum(), From: new(n.id), Entries: ents})
	if err != nil {
		if errors.Is(err, raft.ErrProposalDropped) {
			err = ErrProposalDropped
		}
		n.failProposals(batch, err)
		return
	}
	n.pending = append(n.pending, batch...)
	n.metrics.proposals.Add(uint64(len(batch)))
	if o := n.opts.Observers.ProposalBatch; o != nil {
		o.Observe(float64(len(batch)))
	}
}

func (n *Node) failProposals(ps []*proposal, err error) {
	for i, p := range ps {
		p.cmd, p.err = nil, err
		p.done <- struct{}{}
		ps[i] = nil
	}
}

// shutdown fails everything still waiting on the raft goroutine.
func (n *Node) shutdown() {
	err := n.closedErr()
	n.failProposals(n.propBuf, err)
	n.failProposals(n.pending[n.pendingHead:], err)
	n.failProposals(n.replies, err)
	for _, r := range n.readBuf {
		r.done <- err
	}
	for _, g := range n.readsByCtx {
		g.answer(err)
	}
	for _, g := range n.readsWait {
		g.answer(err)
	}
	if n.staged != nil {
		n.staged.stage.discard()
		n.staged = nil
	}
	if n.confWait != nil {
		n.confWait.done <- err
		n.confWait = nil
	}
	n.store.closeSnapshots()
	_ = n.logBatch.Close()
}
