// Linearizable read points (ReadBarrier on the leader, FollowerRead on any
// member): batching them into raft ReadIndex requests, waiting for their
// index to be applied, and failing those a follower cannot get.

package consensus

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
)

type readRequest struct {
	done chan error
	// follower: asked through FollowerRead, so it may be served by this
	// node as a follower.
	follower bool
}

// readGroup is one ReadIndex request to raft and the reads it covers.
type readGroup struct {
	reqs  []*readRequest
	start time.Time
	// follower: asked by this node as a follower (forwarded to the
	// leader); it fails at deadline if not granted and applied by then.
	follower bool
	deadline time.Time
	index    uint64 // the read index, once raft granted it
}

func (g *readGroup) answer(err error) {
	for _, r := range g.reqs {
		r.done <- err
	}
}

// readIndexBatch asks raft for one read index covering every waiting
// read: on the leader, every ReadBarrier and FollowerRead; on a follower
// that knows a leader, every FollowerRead (raft forwards the request to the
// leader, which answers with its confirmed commit index), and ReadBarrier's
// are refused.
func (n *Node) readIndexBatch() {
	if len(n.readBuf) == 0 {
		return
	}
	reqs := slices.Clone(n.readBuf)
	clear(n.readBuf)
	n.readBuf = n.readBuf[:0]
	now := time.Now()
	if n.isLeader.Load() {
		n.askReadIndex(&readGroup{reqs: reqs, start: now})
		n.metrics.readIndexes.Add(1)
		return
	}
	err := n.notLeader()
	follow := reqs[:0]
	for _, r := range reqs {
		if r.follower {
			follow = append(follow, r)
		} else {
			r.done <- err
		}
	}
	if len(follow) == 0 {
		return
	}
	g := &readGroup{reqs: follow, start: now, follower: true, deadline: now.Add(n.opts.FollowerReadTimeout)}
	if role, _ := n.role.Load().(raft.StateType); n.leaderID.Load() == 0 || role != raft.StateFollower {
		// A candidate, or a follower with no leader: raft would drop the
		// request.
		n.failReads(g, err)
		return
	}
	n.askReadIndex(g)
	n.metrics.followerReadIndexes.Add(1)
}

func (n *Node) askReadIndex(g *readGroup) {
	n.readSeq++
	n.readsByCtx[n.readSeq] = g
	n.rn.ReadIndex(binary.BigEndian.AppendUint64(nil, n.readSeq))
}

// queueReads files the read indexes raft answered: each batch of reads
// waits until its index is applied (releaseReads).
func (n *Node) queueReads(states []raft.ReadState) {
	for _, rs := range states {
		if len(rs.RequestCtx) != 8 {
			continue
		}
		seq := binary.BigEndian.Uint64(rs.RequestCtx)
		g, ok := n.readsByCtx[seq]
		if !ok {
			continue
		}
		delete(n.readsByCtx, seq)
		g.index = rs.Index
		n.readsWait = append(n.readsWait, g)
	}
}

// releaseReads answers the reads whose index is applied.
func (n *Node) releaseReads() {
	if len(n.readsWait) == 0 {
		return
	}
	applied := n.store.appliedIndex
	var now time.Time
	k := 0
	for _, g := range n.readsWait {
		if g.index > applied {
			n.readsWait[k] = g
			k++
			continue
		}
		g.answer(nil)
		if g.follower {
			n.metrics.followerReads.Add(uint64(len(g.reqs)))
		}
		if o := n.opts.Observers.ReadIndex; o != nil {
			if now.IsZero() {
				now = time.Now()
			}
			o.Observe(now.Sub(g.start).Seconds())
		}
	}
	clear(n.readsWait[k:])
	n.readsWait = n.readsWait[:k]
}

// failReads answers g's reads with err.
func (n *Node) failReads(g *readGroup, err error) {
	if g.follower {
		n.metrics.followerReadFailures.Add(uint64(len(g.reqs)))
	}
	g.answer(err)
}

// failUngrantedReads fails the reads raft has not granted an index for:
// this node stopped leading, or the leader a follower asked changed.
func (n *Node) failUngrantedReads(err error) {
	for seq, g := range n.readsByCtx {
		n.failReads(g, err)
		delete(n.readsByCtx, seq)
	}
}

// tick advances raft's clock and fails the follower reads past their
// deadline.
func (n *Node) tick() {
	n.rn.Tick()
	if len(n.readsByCtx) == 0 && len(n.readsWait) == 0 {
		return
	}
	now := time.Now()
	expired := func(g *readGroup) bool { return g.follower && now.After(g.deadline) }
	var err error
	timeout := func() error {
		if err == nil {
			err = fmt.Errorf("%w (%v): %w", ErrReadTimeout, n.opts.FollowerReadTimeout, n.notLeader())
		}
		return err
	}
	for seq, g := range n.readsByCtx {
		if expired(g) {
			n.failReads(g, timeout())
			delete(n.readsByCtx, seq)
		}
	}
	k := 0
	for _, g := range n.readsWait {
		if expired(g) {
			n.failReads(g, timeout())
			continue
		}
		n.readsWait[k] = g
		k++
	}
	clear(n.readsWait[k:])
	n.readsWait = n.readsWait[:k]
}
