// Applying committed entries: the state machine's batch, the applied index
// in the same batch, and answering the proposers and readers waiting.

package consensus

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// apply applies committed entries in one indexed batch, records the applied
// index in it, compacts the log when due, and answers local proposers.
func (n *Node) apply(ents []*pb.Entry) error {
	a, err := n.applyEntries(ents)
	if err != nil {
		a.discard()
		return err
	}
	return n.publishApplied(a)
}

// appliedBatch is what applyEntries made of a run of entries: their writes
// and the applied index, in a batch not yet committed, and the log
// compaction due with them.
type appliedBatch struct {
	b           *pebble.Batch
	applied     int
	compactTo   uint64
	compactTerm uint64
}

func (a *appliedBatch) discard() {
	if a != nil && a.b != nil {
		_ = a.b.Close()
		a.b = nil
	}
}

// applyEntries runs the StateMachine over ents into one indexed batch,
// without committing it: nothing shows in the DB, and nobody is answered,
// until publishApplied. It returns nil when every entry was applied before.
func (n *Node) applyEntries(ents []*pb.Entry) (*appliedBatch, error) {
	if len(ents) == 0 || ents[len(ents)-1].GetIndex() <= n.store.appliedIndex {
		return nil, nil
	}
	if o := n.opts.Observers.Apply; o != nil {
		start := time.Now()
		defer func() { o.Observe(time.Since(start).Seconds()) }()
	}
	s := n.store
	a := &appliedBatch{b: n.db.NewIndexedBatch()}
	b := a.b
	for _, e := range ents {
		idx := e.GetIndex()
		if idx <= s.appliedIndex {
			continue
		}
		switch e.GetType() {
		case pb.EntryNormal:
			if len(e.Data) >= proposalHeaderLen {
				seq := binary.BigEndian.Uint64(e.Data)
				res, err := n.sm.Apply(idx, e.Data[proposalHeaderLen:], b)
				n.resolve(e.GetTerm(), seq, res, err)
			} else {
				n.resolve(e.GetTerm(), 0, nil, nil)
			}
		case pb.EntryConfChange:
			var cc pb.ConfChange
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return a, fmt.Errorf("%w: conf change at %d: %w", ErrCorrupt, idx, err)
			}
			if err := n.applyConfChange(idx, e.GetTerm(), cc.AsV2(), b); err != nil {
				return a, err
			}
			n.resolve(e.GetTerm(), 0, nil, nil)
		case pb.EntryConfChangeV2:
			var cc pb.ConfChangeV2
			if err := proto.Unmarshal(e.Data, &cc); err != nil {
				return a, fmt.Errorf("%w: conf change at %d: %w", ErrCorrupt, idx, err)
			}
			if err := n.applyConfChange(idx, e.GetTerm(), &cc, b); err != nil {
				return a, err
			}
			n.resolve(e.GetTerm(), 0, nil, nil)
		}
		n.dropConfWait(idx, e.GetTerm())
		s.appliedIndex, s.appliedTerm = idx, e.GetTerm()
		a.applied++
	}
	if err := b.Set(keyApplied, encodeApplied(s.appliedIndex, s.appliedTerm, s.confBytes), nil); err != nil {
		return a, err
	}
	if s.appliedIndex-n.lastCompact >= n.opts.CompactEvery && s.appliedIndex > n.opts.KeepEntries {
		compactTo := s.appliedIndex - n.opts.KeepEntries
		if compactTo > s.truncIndex {
			term, err := s.Term(compactTo)
			if err != nil {
				return a, err
			}
			if err := s.writeCompaction(b, compactTo, term); err != nil {
				return a, err
			}
			a.compactTo, a.compactTerm = compactTo, term
		}
	}
	return a, nil
}

// publishApplied commits what applyEntries made, then answers the local
// proposers and the reads waiting for it.
func (n *Node) publishApplied(a *appliedBatch) error {
	if a == nil {
		return nil
	}
	defer a.discard()
	s := n.store
	if err := a.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("consensus: apply: %w", err)
	}
	if c, ok := n.sm.(Committer); ok {
		c.Committed()
	}
	if a.compactTo > 0 {
		s.commitCompaction(a.compactTo, a.compactTerm)
		n.lastCompact = s.appliedIndex
		n.metrics.compactions.Add(1)
	}
	n.metrics.applyBatches.Add(1)
	n.metrics.entriesApplied.Add(uint64(a.applied))
	n.answered += uint64(len(n.replies))
	for i, p := range n.replies {
		p.done <- struct{}{}
		n.replies[i] = nil
	}
	n.replies = n.replies[:0]
	n.releaseReads()
	if n.confChanged {
		return n.afterConfChange()
	}
	return nil
}

// resolve matches an applied entry (term, seq) against the local proposals
// waiting in log order. Proposals of an older term, or of the same term and
// an older sequence, can no longer be applied: raft's log holds one term's
// entries in proposal order and never an older term after a newer one.
func (n *Node) resolve(term, seq uint64, res any, err error) {
	for n.pendingHead < len(n.pending) {
		p := n.pending[n.pendingHead]
		if p.term > term || (p.term == term && p.seq > seq) {
			return
		}
		n.pending[n.pendingHead] = nil
		n.pendingHead++
		if p.term == term && p.seq == seq {
			p.result, p.err = res, err
		} else {
			p.err = ErrProposalDropped
			if !n.isLeader.Load() {
				p.err = fmt.Errorf("%w: %w", ErrProposalDropped, n.notLeader())
			}
		}
		n.replies = append(n.replies, p)
		if n.pendingHead == len(n.pending) {
			n.pending, n.pendingHead = n.pending[:0], 0
		} else if n.pendingHead > 1024 && n.pendingHead > len(n.pending)/2 {
			k := copy(n.pending, n.pending[n.pendingHead:])
			clear(n.pending[k:])
			n.pending, n.pendingHead = n.pending[:k], 0
		}
		if p.term == term && p.seq == seq {
			return
		}
	}
}
