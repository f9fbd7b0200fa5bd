package meta

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/proto/strato/v1"
)

// The disk reserve, after HDFS's NameNode resource checker
// (dfs.namenode.resource.du.reserved): while the filesystem holding the
// data directory has less than Options.DiskReserve free, the server
// refuses namespace mutations (ResourceExhausted) and keeps serving reads,
// heartbeats and its own background work. A database that runs out of
// space mid-write cannot be trusted any further (Pebble stops the process
// when it cannot start a new WAL), so the refusal comes first, with room
// left for what is in flight. Each replica watches its own disk; the
// leader's decides.

// checkDisk samples the data directory's free space.
func (s *Server) checkDisk() {
	if s.opts.DiskReserve <= 0 {
		return
	}
	du, err := s.opts.FS.GetDiskUsage(s.opts.Dir)
	if err != nil {
		// An in-memory or virtual filesystem: nothing to watch.
		return
	}
	avail := int64(min(du.AvailBytes, 1<<62))
	s.diskAvail.Store(avail)
	low := avail < s.opts.DiskReserve
	if s.diskLow.Swap(low) != low {
		if low {
			s.opts.Logger.Error("meta: data directory low on space: refusing namespace changes",
				"dir", s.opts.Dir, "free_bytes", avail, "reserve_bytes", s.opts.DiskReserve)
		} else {
			s.opts.Logger.Info("meta: data directory has space again: accepting namespace changes",
				"dir", s.opts.Dir, "free_bytes", avail)
		}
	}
}

// watchDisk runs checkDisk every Options.DiskCheckInterval until the
// server closes.
func (s *Server) watchDisk() {
	defer s.wg.Done()
	t := s.opts.Clock.NewTicker(s.opts.DiskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.Chan():
			s.checkDisk()
		}
	}
}

// diskWritable refuses a mutation while the data directory is under its
// reserve.
func (s *Server) diskWritable() error {
	if !s.diskLow.Load() {
		return nil
	}
	return withReason(status.New(codes.ResourceExhausted, fmt.Sprintf(
		"meta: the data directory %s has %d MiB free, under the reserve of %d MiB: namespace changes are refused until space is freed",
		s.opts.Dir, s.diskAvail.Load()>>20, s.opts.DiskReserve>>20)), stratov1.ErrorReason_DISK_FULL.String()).Err()
}
