package meta

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Block deletion, the driver: every tick the leader reads a bounded batch of
// the deleted-blocks table (Options.DeleteBlocksBatch blocks), resuming
// where the previous tick stopped so that entries waiting for a datanode do
// not hold back the rest, and hands it to the cluster manager, which queues
// DeleteBlocksCommands for the replica holders and says which entries are
// done (cluster.Manager.DeleteBlocks, TakeDeleted). Done entries are purged
// through Raft.

// Entries are in the order of their seq, which the leader assigns in the
// order it deletes: with Options.BlockDeletionDelay the scan stops at the
// first entry deleted less than the delay ago, and the later ones wait
// too (a new leader's clock running behind only delays them more).

// tooYoung reports whether an entry deleted at deletedMs waits for
// Options.BlockDeletionDelay still.
func (s *Server) tooYoung(now time.Time, deletedMs int64) bool {
	d := s.opts.BlockDeletionDelay
	return d > 0 && now.Sub(time.UnixMilli(deletedMs)) < d
}

// blockDeletion is the driver's state on the leader.
type blockDeletion struct {
	mu     sync.Mutex
	cursor uint64 // the scan resumes after this seq
	stats  BlockDeletionStats
}

// BlockDeletionStats counts the leader's block deletion work since it
// started.
type BlockDeletionStats struct {
	// Commands and Blocks count the DeleteBlocksCommands queued and the
	// block IDs they carried (resends included).
	Commands, Blocks uint64
	// Purged counts the deleted-blocks entries purged.
	Purged uint64
	// InFlight is the entries sent and not yet acknowledged by every
	// replica holder.
	InFlight int
}

// BlockDeletionStats returns the block deletion counters.
func (s *Server) BlockDeletionStats() BlockDeletionStats {
	s.blockDel.mu.Lock()
	st := s.blockDel.stats
	s.blockDel.mu.Unlock()
	st.InFlight = s.cl.PendingDeletions()
	return st
}

// DeletedBlocksBacklog counts the entries of the deleted-blocks table and
// the blocks they list (the whole table: for tests and operators).
func (s *Server) DeletedBlocksBacklog(ctx context.Context) (entries, blocks int, err error) {
	if err := s.readBarrier(ctx); err != nil {
		return 0, 0, err
	}
	rd := s.ns.Reader(s.db)
	for after := uint64(0); ; {
		page, err := rd.DeletedBlocks(after, 1000)
		if err != nil {
			return 0, 0, err
		}
		for _, e := range page {
			entries++
			blocks += len(e.Blocks)
			after = e.Seq
		}
		if len(page) < 1000 {
			return entries, blocks, nil
		}
	}
}

// deleteBlocksTick runs one round of block deletion (see above). Nothing is
// sent in safe mode: the replica map is not complete yet, and a holder not
// yet reported would keep its dead blocks.
func (s *Server) deleteBlocksTick(ctx context.Context) error {
	if s.cl.InSafeMode() {
		return nil
	}
	const page = 100
	now := s.now()
	rd := s.ns.Reader(s.db)
	d := &s.blockDel
	d.mu.Lock()
	cursor := d.cursor
	d.mu.Unlock()
	var purge []uint64
	var cmds, blocks, scanned int
	for scanned < s.opts.DeleteBlocksBatch {
		entries, err := rd.DeletedBlocks(cursor, page)
		if err != nil {
			return fmt.Errorf("reading deleted blocks: %w", err)
		}
		n, young := 0, false
		for n < len(entries) && scanned < s.opts.DeleteBlocksBatch {
			if s.tooYoung(now, entries[n].DeletedAtUnixMs) {
				young = true
				break
			}
			scanned += len(entries[n].Blocks)
			n++
		}
		if n > 0 {
			plan := s.cl.DeleteBlocks(now, entries[:n])
			purge = append(purge, plan.Purge...)
			cmds += plan.Commands
			blocks += plan.Blocks
			cursor = entries[n-1].Seq
		}
		if young || (len(entries) < page && n == len(entries)) {
			// The end of the table, or of the entries old enough to go:
			// start over next time.
			cursor = 0
			break
		}
	}
	purge = append(purge, s.cl.TakeDeleted()...)
	slices.Sort(purge)
	purge = slices.Compact(purge)
	d.mu.Lock()
	d.cursor = cursor
	d.stats.Commands += uint64(cmds)
	d.stats.Blocks += uint64(blocks)
	d.mu.Unlock()
	for len(purge) > 0 {
		batch := purge[:min(len(purge), 1000)]
		purge = purge[len(batch):]
		if _, err := s.proposeNamespace(ctx, s.ns.PreparePurge(now, batch)); err != nil {
			// The entries are sent again and acknowledged again: deleting a
			// block that is gone is a success.
			return fmt.Errorf("purging deleted blocks: %w", err)
		}
		d.mu.Lock()
		d.stats.Purged += uint64(len(batch))
		d.mu.Unlock()
	}
	if cmds > 0 {
		s.opts.Logger.Debug("block deletion", "commands", cmds, "blocks", blocks, "scanned", scanned)
	}
	return nil
}
