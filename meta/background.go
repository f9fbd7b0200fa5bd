// The leader's background work, once a tick.

package meta

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strato-io/strato/meta/cluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// background runs the leader's periodic work until the server closes.
func (s *Server) background() {
	defer s.wg.Done()
	t := s.opts.Clock.NewTicker(s.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.Chan():
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

// proposeInFlight bounds the proposals proposeClusterAll has in flight.
const proposeInFlight = 64

// proposeClusterAll proposes a tick's independent cluster commands (closes,
// state changes), up to proposeInFlight at once so that Raft appends them
// together, one fsync for many, and returns the first error. One at a
// time, a tick with a backlog of closes (a million containers filled in
// minutes) would take one fsync per command.
func (s *Server) proposeClusterAll(ctx context.Context, cmds []*stratov1.ClusterCommand) error {
	if len(cmds) == 1 {
		_, err := s.proposeCluster(ctx, cmds[0])
		return err
	}
	var (
		wg     sync.WaitGroup
		first  error // written by the goroutine that sets failed
		failed atomic.Bool
	)
	sem := make(chan struct{}, proposeInFlight)
	for _, cmd := range cmds {
		sem <- struct{}{}
		if failed.Load() {
			<-sem
			break // not the leader any more, or closing: the rest would fail too
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := s.proposeCluster(ctx, cmd); err != nil {
				if failed.CompareAndSwap(false, true) {
					first = err
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// passShare is the most of the time the replication pass takes when
// Options.ReplicationInterval is left at its default: a pass starts no
// sooner than passShare⁻¹ times the last one's length after it.
const passShare = 10

// replicationInterval is the time between replication passes: the one
// set, or by default every tick, or ten times the last pass's length
// when that is longer (a pass over a million containers on two cores
// takes most of a second; back to back, passes would take a core) and
// the last pass found nothing to repair. A pass that found containers
// short of copies is followed at the next tick: repairs are not spaced.
func (s *Server) replicationInterval() time.Duration {
	if s.opts.ReplicationInterval > 0 {
		return s.opts.ReplicationInterval
	}
	s.replMu.Lock()
	defer s.replMu.Unlock()
	if s.lastRepl.UnderReplicated > 0 || s.lastRepl.Scheduled > 0 || len(s.lastRepl.Missing) > 0 {
		return 0
	}
	return passShare * s.replTook
}

// replicationDue reports whether the leader's replication pass runs at
// this tick, and if so notes that it does: its interval is over, or (the
// default interval) the cluster changed in a way that may leave
// containers short of copies since the last pass began
// (cluster.Manager.RepairGen): a datanode dead is planned for at the next
// tick, not after an idle interval that is ten times a long pass.
func (s *Server) replicationDue(now time.Time) bool {
	gen := s.cl.RepairGen()
	due := now.Sub(s.lastReplAt) >= s.replicationInterval() ||
		(s.opts.ReplicationInterval <= 0 && gen != s.lastReplGen)
	if due {
		s.lastReplAt, s.lastReplGen = now, gen
	}
	return due
}

func (s *Server) tick(ctx context.Context) error {
	now := s.now()
	if err := s.proposeClusterAll(ctx, s.cl.Tick(now)); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	// A new leader acts on the replica map only once the datanodes had time
	// to report (cluster.Options.LeaderSettle).
	settling := s.cl.Settling(now)
	if !settling && !s.cl.InSafeMode() && s.replicationDue(now) {
		start := s.now()
		rep := s.cl.ReplicationWork(now, s.cl.Options().ReplicationLimit)
		took := s.now().Sub(start)
		s.replMu.Lock()
		s.lastRepl, s.replTook = rep, took
		s.replScheduled += uint64(rep.Scheduled)
		s.replDeletes += uint64(rep.Deletes)
		s.replPasses++
		s.replMu.Unlock()
		s.reportMissing(rep.Missing)
		for _, id := range rep.Decommissioned {
			if _, err := s.proposeCluster(ctx, cluster.Decommissioned(now, id)); err != nil {
				return fmt.Errorf("cluster: recording %s decommissioned: %w", id, err)
			}
		}
		for _, cmd := range rep.Propose {
			if _, err := s.proposeCluster(ctx, cmd); err != nil {
				return fmt.Errorf("cluster: the balancer's progress: %w", err)
			}
		}
		for _, id := range rep.InMaintenance {
			if _, err := s.proposeCluster(ctx, cluster.InMaintenance(now, id)); err != nil {
				return fmt.Errorf("cluster: recording %s in maintenance: %w", id, err)
			}
		}
		if rep.Scheduled > 0 || rep.Deletes > 0 || len(rep.Propose) > 0 || len(rep.Decommissioned) > 0 || len(rep.InMaintenance) > 0 {
			s.opts.Logger.Info("replication", "under_replicated", rep.UnderReplicated, "scheduled", rep.Scheduled,
				"mis_replicated", rep.MisReplicated, "balancer_moves", rep.BalancerMoves, "in_flight", rep.InFlight, "deletes", rep.Deletes, "decommissioned", rep.Decommissioned, "in_maintenance", rep.InMaintenance)
		}
	}
	if err := s.namespaceTick(ctx); err != nil {
		return err
	}
	if err := s.sweepDeferredWrites(ctx); err != nil {
		return err
	}
	if err := s.trashTick(ctx); err != nil {
		return err
	}
	if err := s.lifecycleTick(ctx); err != nil {
		return err
	}
	if err := s.rotateBlockTokenKey(ctx); err != nil {
		return err
	}
	if s.opts.Auth == AuthToken && now.Sub(s.dtPurgedAt) >= time.Minute {
		s.dtPurgedAt = now
		if err := s.purgeDelegationTokens(ctx); err != nil {
			return fmt.Errorf("purging expired delegation tokens: %w", err)
		}
	}
	if settling {
		return nil
	}
	return s.deleteBlocksTick(ctx)
}

// reportMissing logs the containers that have no good replica anywhere,
// each once when it becomes so (and once when it has one again): the
// replication pass runs every tick, and an alarm repeated every second
// hides the one that matters. Passes run only outside safe mode and the
// settle period, when the datanodes have had time to report.
func (s *Server) reportMissing(missing []uint64) {
	s.replMu.Lock()
	defer s.replMu.Unlock()
	now := make(map[uint64]bool, len(missing))
	var gone []uint64
	for _, id := range missing {
		now[id] = true
		if !s.missing[id] {
			gone = append(gone, id)
		}
	}
	var back []uint64
	for id := range s.missing {
		if !now[id] {
			back = append(back, id)
		}
	}
	s.missing = now
	if len(gone) > 0 {
		s.opts.Logger.Error("containers with no good replica: their data is unreadable until a holder comes back",
			"containers", firstIDs(gone), "new", len(gone), "total", len(missing))
	}
	if len(back) > 0 {
		slices.Sort(back)
		s.opts.Logger.Info("containers have a good replica again", "containers", firstIDs(back), "count", len(back))
	}
}

// firstIDs is the first 32 IDs of ids, for a log line.
func firstIDs(ids []uint64) []uint64 {
	return ids[:min(len(ids), 32)]
}
