package datanode

import (
	"context"
	"errors"
	"fmt"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
)

// errMovedAway is why a move ends without effect: the container was
// deleted, or its volume changed, while it was copied.
var errMovedAway = errors.New("datanode: container deleted or moved during the move")

// movePiece is the most a move reads and writes at once.
const movePiece = 1 << 20

// moveContainer copies CLOSED container id from its volume to dst and
// serves it from dst once the copy is verified (container.Import checks
// every chunk against its checksums before it commits). It returns the
// volume that still holds the old copy, which the caller deletes once the
// reads that found it have ended. Block deletions wait while the blocks
// are copied (HoldBlocks), as they do for a copy to another datanode; a
// deletion of the container during the move wins, and the copy is
// removed. lim caps the copy's bandwidth (nil: no cap).
func (s *Store) moveContainer(ctx context.Context, id uint64, dst *container.Volume, lim *replication.Limits) (src *container.Volume, bytes int64, err error) {
	c, src, err := s.beginMove(id, dst)
	if err != nil {
		return nil, 0, err
	}
	defer s.endMove(id)
	release := c.HoldBlocks()
	defer release()
	blocks, err := replication.AllBlocks(c)
	if err != nil {
		return nil, 0, err
	}
	im, err := dst.BeginImport(id, c.Layout())
	if err != nil {
		return nil, 0, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = im.Abort()
		}
	}()
	if idx := c.ReplicaIndex(); idx != 0 {
		if err := im.SetReplicaIndex(idx); err != nil {
			return nil, 0, err
		}
	}
	im.Expect(blocks)
	buf := make([]byte, movePiece)
	for _, b := range blocks {
		n, err := s.copyBlock(ctx, c, b, im, lim, buf)
		bytes += n
		if err != nil {
			return nil, bytes, fmt.Errorf("block %d: %w", b.LocalID, err)
		}
	}
	committed = true
	if _, err := im.Commit(blocks, c.Info().BCSID); err != nil {
		return nil, bytes, err
	}
	return src, bytes, s.switchMoved(id, c, src, dst)
}

// beginMove checks that container id can move to dst and marks it as
// importing, which keeps other imports and creations of the ID away until
// endMove.
func (s *Store) beginMove(id uint64, dst *container.Volume) (*container.Container, *container.Volume, error) {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.RLock()
	src, dstFailed := s.where[id], s.failedLocked(dst)
	s.mu.RUnlock()
	switch {
	case src == nil:
		return nil, nil, fmt.Errorf("%w: %d", container.ErrNotFound, id)
	case src == dst:
		return nil, nil, fmt.Errorf("datanode: container %d is on %s already", id, dst.Dir())
	case dstFailed:
		return nil, nil, fmt.Errorf("%w: %s", ErrVolumeFailed, dst.Dir())
	case s.importing[id]:
		return nil, nil, fmt.Errorf("%w: %d (being imported or moved)", container.ErrExists, id)
	}
	c, err := src.Container(id)
	if err != nil {
		return nil, nil, err
	}
	if st := c.State(); st != container.Closed {
		return nil, nil, fmt.Errorf("%w: container %d is %v", replication.ErrNotClosed, id, st)
	}
	if s.importing == nil {
		s.importing = map[uint64]bool{}
	}
	s.importing[id] = true
	return c, src, nil
}

func (s *Store) endMove(id uint64) {
	s.createMu.Lock()
	delete(s.importing, id)
	s.createMu.Unlock()
}

// copyBlock copies block b of c into im, under lim.
func (s *Store) copyBlock(ctx context.Context, c *container.Container, b container.Block, im *container.Import, lim *replication.Limits, buf []byte) (int64, error) {
	ranges, err := replication.FileRanges(c, b)
	if err != nil {
		return 0, err
	}
	var copied int64
	for _, r := range ranges {
		f, err := s.opts.Volume.FS.Open(r.Path)
		if err != nil {
			return copied, err
		}
		for done := int64(0); done < r.Length; {
			k := min(r.Length-done, int64(len(buf)))
			if err := lim.Wait(ctx, k); err != nil {
				_ = f.Close()
				return copied, err
			}
			if n, err := f.ReadAt(buf[:k], r.FileOffset+done); int64(n) < k {
				_ = f.Close()
				return copied, fmt.Errorf("read %s at %d: %d of %d bytes: %w", r.Path, r.FileOffset+done, n, k, err)
			}
			if err := im.WriteAt(b.LocalID, r.ChunkOffset, r.FileOffset+done, buf[:k]); err != nil {
				_ = f.Close()
				return copied, err
			}
			done += k
			copied += k
		}
		if err := f.Close(); err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// switchMoved serves container id from dst, where its copy has just
// committed, unless it was deleted (or its volume failed) meanwhile: then
// the copy goes.
func (s *Store) switchMoved(id uint64, old *container.Container, src, dst *container.Volume) error {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.Lock()
	stale := s.where[id] != src || s.failedLocked(dst)
	if !stale {
		s.where[id] = dst
	}
	s.mu.Unlock()
	if stale {
		_ = dst.Delete(id, true)
		return fmt.Errorf("%w: %d", errMovedAway, id)
	}
	if old.Parity() {
		if c, err := dst.Container(id); err == nil {
			c.SetParity()
		}
	}
	s.opts.Logger.Info("datanode: container moved between volumes", "container", id, "from", src.Dir(), "to", dst.Dir())
	return nil
}

// dropOldCopy deletes the copy of container id that a move left on src,
// unless src serves it again.
func (s *Store) dropOldCopy(id uint64, src *container.Volume) error {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.RLock()
	served := s.where[id] == src
	s.mu.RUnlock()
	if served {
		return nil
	}
	err := src.Delete(id, true)
	if errors.Is(err, container.ErrNotFound) || errors.Is(err, container.ErrClosed) {
		return nil
	}
	return err
}
