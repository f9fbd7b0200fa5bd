package datanode

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"

	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/wire"
)

// BeginImport starts importing a CLOSED container copied from another
// datanode (see package replication), on the volume with the most room.
// container.ErrExists if a volume holds the ID or is importing it.
func (s *Store) BeginImport(id uint64, layout container.Layout) (replication.Import, error) {
	s.createMu.Lock()
	defer s.createMu.Unlock()
	if _, err := s.Container(id); err == nil {
		return nil, fmt.Errorf("%w: %d", container.ErrExists, id)
	}
	if s.importing[id] {
		return nil, fmt.Errorf("%w: %d (being imported)", container.ErrExists, id)
	}
	v, err := s.pickVolume()
	if err != nil {
		return nil, err
	}
	im, err := v.BeginImport(id, layout)
	if err != nil {
		return nil, err
	}
	if s.importing == nil {
		s.importing = map[uint64]bool{}
	}
	s.importing[id] = true
	return &storeImport{Import: im, s: s, v: v, id: id}, nil
}

// storeImport registers the container with the Store when it commits.
type storeImport struct {
	*container.Import
	s    *Store
	v    *container.Volume
	id   uint64
	done bool
}

func (im *storeImport) Commit(blocks []container.Block, bcsID uint64) (container.Info, error) {
	info, err := im.Import.Commit(blocks, bcsID)
	s := im.s
	s.createMu.Lock()
	defer s.createMu.Unlock()
	im.finishLocked()
	if err != nil {
		return info, err
	}
	s.mu.Lock()
	if s.failedLocked(im.v) {
		s.mu.Unlock()
		return info, fmt.Errorf("%w: %s, while importing container %d", ErrVolumeFailed, im.v.Dir(), im.id)
	}
	s.where[im.id] = im.v
	delete(s.lost, im.id) // a copy back from another replica
	s.mu.Unlock()
	s.opts.Logger.Debug("datanode: container imported", "container", im.id, "volume", im.v.Dir())
	if s.opts.Created != nil {
		s.opts.Created(im.id)
	}
	return info, nil
}

func (im *storeImport) Abort() error {
	err := im.Import.Abort()
	im.s.createMu.Lock()
	im.finishLocked()
	im.s.createMu.Unlock()
	return err
}

func (im *storeImport) finishLocked() {
	if !im.done {
		im.done = true
		delete(im.s.importing, im.id)
	}
}

// importSession runs an import whose IMPORT_BEGIN the connection just
// read, in the connection's reader goroutine: the frames that follow are
// the import's, read in order and written straight into its files. It
// returns false when the connection must end.
func (c *conn) importSession(ctx context.Context, h wire.FrameHeader, m *wire.ImportBeginRequest) bool {
	// Requests started before the import finish first: the session owns
	// the connection's reader and its answers go out in order.
	c.wg.Wait()
	var err error
	pprof.Do(ctx, replication.ProfileLabels(c.s.opts.ID, replication.RoleImport), func(ctx context.Context) {
		err = replication.Receive(ctx, c.r, c.w, h, m, c.s.store, codeOf, replication.ReceiveOptions{
			Metrics: c.s.opts.Replication, Logger: c.s.log, Remote: c.remote, Foreground: c.s.opts.Foreground,
		})
	})
	if err != nil {
		if !errors.Is(err, replication.ErrSession) {
			c.s.log.Warn("datanode: import session", "remote", c.remote, "err", err)
		}
		return false
	}
	return true
}
