package consensus

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// writeSnapshot completes the batch that installs a snapshot received from
// the leader. The transport staged it as a range deletion of the state
// range followed by the snapshot's pairs; this adds the deletion of the few
// state keys past the range deletion's end that the snapshot does not hold,
// the replacement of the log by the snapshot's (index, term), and the
// applied state. It is one batch, committed with sync, so a crash leaves
// either the old state and log or the new ones.
func (n *Node) writeSnapshot(snap *pb.Snapshot) (*pebble.Batch, error) {
	meta := snap.GetMetadata()
	idx, term := meta.GetIndex(), meta.GetTerm()
	st := n.staged
	if st == nil || st.msg.GetSnapshot().GetMetadata().GetIndex() != idx {
		return nil, fmt.Errorf("consensus: raft installs snapshot %d without its data", idx)
	}
	n.staged = nil
	b := st.batch
	fail := func(err error) (*pebble.Batch, error) {
		_ = b.Close()
		return nil, err
	}
	it, err := n.db.NewIter(&pebble.IterOptions{LowerBound: stateRangeEnd})
	if err != nil {
		return fail(err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		if _, ok := st.highKeys[string(it.Key())]; ok {
			continue
		}
		if err := b.Delete(it.Key(), nil); err != nil {
			_ = it.Close()
			return fail(err)
		}
	}
	if err := it.Close(); err != nil {
		return fail(err)
	}
	if err := n.store.writeSnapshotLog(b, idx, term); err != nil {
		return fail(err)
	}
	cs := proto.Clone(meta.GetConfState()).(*pb.ConfState)
	// The snapshot's data is the address book as of its index (an old
	// sender's carries none: the members keep the addresses known here).
	ab := addressBook{addrs: map[uint64]string{}, removed: n.store.removed}
	if len(snap.GetData()) > 0 {
		var err error
		if ab, err = decodeBook(snap.GetData()); err != nil {
			return fail(err)
		}
	}
	if ab.groupID == 0 {
		ab.groupID = n.store.groupID
	}
	book := ab.addrs
	for _, id := range confMembers(cs) {
		if _, ok := book[id]; !ok {
			book[id] = n.store.book[id]
		}
	}
	if err := n.store.commitSnapshotLog(idx, term, cs); err != nil {
		return fail(err)
	}
	n.store.setBook(ab)
	if err := b.Set(keyApplied, encodeApplied(idx, term, n.store.confBytes), nil); err != nil {
		return fail(err)
	}
	if err := b.Set(keyMembers, n.store.bookBytes, nil); err != nil {
		return fail(err)
	}
	return b, nil
}

// afterSnapshot runs once a snapshot is durable.
func (n *Node) afterSnapshot(snap *pb.Snapshot) error {
	meta := snap.GetMetadata()
	idx := meta.GetIndex()
	n.store.appliedIndex, n.store.appliedTerm = idx, meta.GetTerm()
	n.lastCompact = idx
	n.metrics.snapshotsApplied.Add(1)
	n.log.Info("consensus: installed snapshot", "id", n.id, "index", idx, "term", meta.GetTerm())
	// Proposals made here as leader may or may not be inside the snapshot.
	n.failProposals(n.pending[n.pendingHead:], ErrResultUnknown)
	n.pending, n.pendingHead = n.pending[:0], 0
	if n.confWait != nil {
		n.confWait.done <- ErrResultUnknown
		n.confWait = nil
	}
	if n.confPending <= idx {
		n.confPending = 0
	}
	n.releaseReads()
	if r, ok := n.sm.(Restorer); ok {
		if err := r.Restore(n.db, idx); err != nil {
			return fmt.Errorf("consensus: restore state machine at %d: %w", idx, err)
		}
	}
	return n.afterConfChange()
}

// validStateKey reports whether k belongs to the state machine's range.
func validStateKey(k []byte) bool { return len(k) > 0 && k[0] != keyPrefix }

// newStagedSnapshot starts the batch that will install a snapshot: the
// state range's deletion comes first so that the pairs, added after it,
// win.
func newStagedSnapshot(db *pebble.DB, m *pb.Message) (*incomingSnapshot, error) {
	b := db.NewBatch()
	if err := b.DeleteRange(stateStart, stateRangeEnd, nil); err != nil {
		_ = b.Close()
		return nil, err
	}
	return &incomingSnapshot{msg: m, batch: b, highKeys: map[string]struct{}{}, done: make(chan error, 1)}, nil
}

// stageSnapshotChunk adds a chunk's pairs to in, checking that keys are
// state keys in strictly increasing order after prev; it returns the last
// key.
func stageSnapshotChunk(in *incomingSnapshot, keys, values [][]byte, prev []byte) ([]byte, error) {
	b := in.batch
	if len(keys) != len(values) {
		return nil, fmt.Errorf("%w: snapshot chunk has %d keys and %d values", ErrCorrupt, len(keys), len(values))
	}
	for i, k := range keys {
		if !validStateKey(k) || (prev != nil && bytes.Compare(prev, k) >= 0) {
			return nil, fmt.Errorf("%w: snapshot key %x out of order or outside the state range", ErrCorrupt, k)
		}
		if err := b.Set(k, values[i], nil); err != nil {
			return nil, err
		}
		if bytes.Compare(k, stateRangeEnd) >= 0 {
			in.highKeys[string(k)] = struct{}{}
		}
		prev = k
	}
	return prev, nil
}
