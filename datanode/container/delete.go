package container

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// DeleteBlocks removes blocks no key references any more: their rows, in
// one synced batch that also updates the used bytes and block count, then
// their files. It is allowed in every state, CLOSED included: a closed
// container's immutability is about the data of live blocks, and dead blocks
// must give their space back (as in Ozone). A block that is not there is not
// an error (the command is retried until acknowledged, so it may come
// again). It returns how many blocks had a row and how many bytes they held.
// While a copy holds the blocks (HoldBlocks) it deletes nothing and returns
// ErrBusy.
//
// As with DeleteBlock the rows go first, durably; files left by a crash
// right after are orphans that Scan reports.
func (c *Container) DeleteBlocks(localIDs []uint64) (blocks int, bytes int64, err error) {
	if !c.held.TryLock() {
		return 0, 0, fmt.Errorf("%w: container %d", ErrBusy, c.id)
	}
	defer c.held.Unlock()
	ids := slices.Clone(localIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	c.gate.RLock()
	defer c.gate.RUnlock()
	if c.detached != nil {
		return 0, 0, c.detached
	}
	// Lock the blocks in ID order (no other path holds two block locks, so
	// the order only matters among concurrent DeleteBlocks calls).
	locked := make([]*openBlock, 0, len(ids))
	defer func() {
		for _, b := range locked {
			b.mu.Unlock()
		}
	}()
	for _, id := range ids {
		b, err := c.lockBlock(id)
		if err != nil {
			return 0, 0, err
		}
		locked = append(locked, b)
	}

	batch := c.v.db.NewBatch()
	defer func() { _ = batch.Close() }()
	c.commitMu.Lock()
	ctr := c.ctr
	for _, b := range locked {
		if !b.hasRow {
			continue
		}
		ctr.usedBytes -= b.committed
		ctr.blockCount--
		blocks++
		bytes += b.committed
		_ = batch.Delete(blockKey(c.id, b.id), nil)
	}
	if blocks > 0 {
		_ = batch.Set(counterKey(c.id), appendCounterRow(nil, ctr), nil)
		err = c.v.durable(func() error { return batch.Commit(pebble.Sync) })
		if err == nil {
			c.ctr = ctr
		}
	}
	c.commitMu.Unlock()
	if err != nil {
		return 0, 0, ioError("delete blocks", err)
	}

	var errs []error
	for _, b := range locked {
		b.dirty = false
		chunks := b.chunks
		b.hasRow, b.committed = false, 0
		if err := c.evictLocked(b); err != nil {
			errs = append(errs, fmt.Errorf("close block %d: %w", b.id, err))
		}
		switch c.layout {
		case FilePerBlock:
			// Also when the block has no row: a write never committed may
			// have left its file.
			if err := c.v.discardBlockFile(c.blockPath(b.id)); err != nil {
				errs = append(errs, err)
			}
		case FilePerChunk:
			for _, r := range chunks {
				if err := removeIfExists(c.v.fs, c.chunkPath(b.id, r.off)); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return blocks, bytes, ioError("remove files of deleted blocks", err)
	}
	return blocks, bytes, nil
}
