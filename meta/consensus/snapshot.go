package consensus

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Install steps, named for the fault tests (Options.installHook): every
// pair is staged; the consensus file is written, the ingestion next; the
// ingestion is done.
const (
	stepStaged   = "staged"
	stepIngest   = "ingest"
	stepIngested = "ingested"
)

// installSnapshot installs a snapshot received from the leader. The
// transport staged its pairs in sstables on disk (stage.go); this writes one
// more small sstable that replaces the log by the snapshot's (index, term)
// and holds the applied state, the address book and the hard state (its
// commit at the snapshot's index), and ingests all of them at once,
// excising the whole state range. Pebble makes one ingestion atomic and
// durable, so a crash leaves either the old state with its log and applied
// state or the new ones, never a mix (decision 0095). hs is the
// Ready's hard state, or nil.
func (n *Node) installSnapshot(snap *pb.Snapshot, hs *pb.HardState) error {
	meta := snap.GetMetadata()
	idx, term := meta.GetIndex(), meta.GetTerm()
	st := n.staged
	if st == nil || st.msg.GetSnapshot().GetMetadata().GetIndex() != idx {
		return fmt.Errorf("consensus: raft installs snapshot %d without its data", idx)
	}
	n.staged = nil
	defer st.stage.discard()
	if err := n.hook(stepStaged); err != nil {
		return err
	}
	cs := proto.Clone(meta.GetConfState()).(*pb.ConfState)
	confBytes, err := proto.Marshal(cs)
	if err != nil {
		return err
	}
	ab, err := n.snapshotBook(snap, cs)
	if err != nil {
		return err
	}
	bookBytes := ab.encode()
	// The term and vote go in with the state; the commit is the snapshot's
	// index (committed by definition): entries past it are not durable yet.
	if hs == nil {
		hs = n.store.hard
	}
	hard := &pb.HardState{Term: new(hs.GetTerm()), Vote: new(hs.GetVote()), Commit: new(idx)}
	if err := st.stage.writeConsensus(idx, term, encodeApplied(idx, term, confBytes), bookBytes, hard); err != nil {
		return err
	}
	end, err := n.exciseEnd(st.stage.last)
	if err != nil {
		return err
	}
	if err := n.hook(stepIngest); err != nil {
		return err
	}
	start := time.Now()
	if _, err := n.db.IngestAndExcise(context.Background(), st.stage.paths(), nil, nil,
		pebble.KeyRange{Start: stateStart, End: end}); err != nil {
		return fmt.Errorf("%w: ingest snapshot %d: %w", ErrStorage, idx, err)
	}
	if err := n.hook(stepIngested); err != nil {
		return err
	}
	if err := n.store.commitSnapshotLog(idx, term, cs); err != nil {
		return err
	}
	n.store.setBook(ab)
	n.metrics.snapshotBytesRecv.Add(st.stage.bytes)
	n.metrics.snapshotFilesRecv.Add(uint64(len(st.stage.files)))
	n.metrics.snapshotInstallNanos.Add(int64(st.received + time.Since(start)))
	n.log.Info("consensus: ingested snapshot", "id", n.id, "index", idx, "pairs", st.stage.pairs,
		"bytes", st.stage.bytes, "files", len(st.stage.files), "received", st.received.Round(time.Millisecond),
		"ingest", time.Since(start).Round(time.Millisecond))
	return nil
}

// snapshotBook is the address book a snapshot installs: the one its data
// holds as of its index (an old sender's carries none: the members keep the
// addresses known here).
func (n *Node) snapshotBook(snap *pb.Snapshot, cs *pb.ConfState) (addressBook, error) {
	ab := addressBook{addrs: map[uint64]string{}, removed: n.store.removed}
	if len(snap.GetData()) > 0 {
		var err error
		if ab, err = decodeBook(snap.GetData()); err != nil {
			return addressBook{}, err
		}
	}
	if ab.groupID == 0 {
		ab.groupID = n.store.groupID
	}
	for _, id := range confMembers(cs) {
		if _, ok := ab.addrs[id]; !ok {
			ab.addrs[id] = n.store.book[id]
		}
	}
	return ab, nil
}

// exciseEnd is the end of the span a snapshot replaces: past both the last
// state key here and the snapshot's last key (last), so that the state
// machine's keys at or past stateRangeEnd go too.
func (n *Node) exciseEnd(last []byte) ([]byte, error) {
	it, err := n.db.NewIter(&pebble.IterOptions{LowerBound: stateRangeEnd})
	if err != nil {
		return nil, err
	}
	end := stateRangeEnd
	if it.Last() {
		end = append(append([]byte(nil), it.Key()...), 0)
	}
	if err := it.Close(); err != nil {
		return nil, err
	}
	if last != nil && bytes.Compare(last, end) >= 0 {
		end = append(append([]byte(nil), last...), 0)
	}
	return end, nil
}

// hook runs the fault tests' hook for an install step.
func (n *Node) hook(step string) error {
	if h := n.opts.installHook; h != nil {
		return h(step)
	}
	return nil
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
