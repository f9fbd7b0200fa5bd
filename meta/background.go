// The leader's background work, once a tick.

package meta

import (
	"context"
	"fmt"
	"time"
)

// background runs the leader's periodic work until the server closes.
func (s *Server) background() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		if !s.leading() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*s.opts.TickInterval)
		if err := s.tick(ctx); err != nil && !s.closed.Load() {
			s.opts.Logger.Warn("background work", "err", err)
		}
		cancel()
	}
}

func (s *Server) tick(ctx context.Context) error {
	now := s.now()
	for _, cmd := range s.cl.Tick(now) {
		if _, err := s.proposeCluster(ctx, cmd); err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
	}
	// A new leader acts on the replica map only once the datanodes had time
	// to report (cluster.Options.LeaderSettle).
	settling := s.cl.Settling(now)
	if !settling && !s.cl.SafeMode().InSafeMode {
		rep := s.cl.ReplicationWork(now, s.cl.Options().ReplicationLimit)
		s.replMu.Lock()
		prevMissing := len(s.lastRepl.Missing)
		s.lastRepl = rep
		s.replScheduled += uint64(rep.Scheduled)
		s.replDeletes += uint64(rep.Deletes)
		s.replMu.Unlock()
		if len(rep.Missing) > 0 && len(rep.Missing) != prevMissing {
			s.opts.Logger.Error("containers with no good replica", "count", len(rep.Missing), "first", rep.Missing[0])
		}
		if rep.Scheduled > 0 || rep.Deletes > 0 || len(rep.Decommissioned) > 0 {
			s.opts.Logger.Info("replication", "under_replicated", rep.UnderReplicated, "scheduled", rep.Scheduled,
				"in_flight", rep.InFlight, "deletes", rep.Deletes, "decommissioned", rep.Decommissioned)
		}
	}
	if err := s.namespaceTick(ctx); err != nil {
		return err
	}
	if settling {
		return nil
	}
	return s.deleteBlocksTick(ctx)
}
