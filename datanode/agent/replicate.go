package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"runtime/pprof"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Replication is what the copies and rebuilds meta orders run with.
type Replication struct {
	// Source gives the closed containers pushed to other datanodes.
	Source replication.Source
	// Importer takes the replicas rebuilt here.
	Importer replication.Importer
	// FS is the file system of Source's containers.
	FS vfs.FS
	// Limits bounds the streams and bandwidth of copies and rebuilds
	// together. Default: none.
	Limits *replication.Limits
	// Metrics counts the copies. Default: not counted.
	Metrics *replication.Metrics
	// TLS secures the connections to other datanodes. Default: plain TCP.
	TLS *tls.Config
	// Clock paces the balancer's pushes (nil: the real clock).
	Clock clockwork.Clock
	// Foreground is when the datanode last served a client: background
	// pushes (ReplicateContainerCommand.background) give way to them.
	// Default: nil, they do not.
	Foreground *replication.Foreground
}

// replicator runs the pushes and rebuilds meta orders, in the background:
// a push can take minutes (5 GiB under a bandwidth cap) and must not hold
// up heartbeats.
type replicator struct {
	Replication
	ctx   context.Context // Run's: ends when the datanode closes, aborting pushes
	wg    sync.WaitGroup  // the pushes and rebuilds under way: Run waits for them
	id    string
	log   *slog.Logger
	ended func() // after each push: its stream is free for the next

	mu      sync.Mutex
	running map[uint64]bool // containers being pushed
	// pace caps the pushes that carry a bandwidth (the balancer's moves)
	// together, at paceRate bytes a second: made again when a command
	// brings another rate.
	pace     *replication.Limits
	paceRate int64
	failed   []*stratov1.CommandFailure
}

func newReplicator(r Replication, id string, log *slog.Logger, ended func()) *replicator {
	return &replicator{Replication: r, id: id, log: log, ended: ended, running: map[uint64]bool{}}
}

// paceOf is the shared cap of pushes at bandwidth bytes a second (nil:
// none).
func (r *replicator) paceOf(bandwidth int64) *replication.Limits {
	if bandwidth <= 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pace == nil || r.paceRate != bandwidth {
		l, err := replication.NewLimits(1, bandwidth, r.Clock)
		if err != nil {
			return nil
		}
		r.pace, r.paceRate = l, bandwidth
	}
	return r.pace
}

// fail records a push that failed, for the next heartbeat to report.
func (r *replicator) fail(cmdID, container uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(r.failed, &stratov1.CommandFailure{CommandId: cmdID, ContainerId: container, Reason: err.Error()})
}

// takeFailed returns the failures not yet reported and forgets them.
func (r *replicator) takeFailed() []*stratov1.CommandFailure {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.failed
	r.failed = nil
	return out
}

// requeueFailed keeps failures a failed heartbeat did not deliver.
func (r *replicator) requeueFailed(fs []*stratov1.CommandFailure) {
	if r == nil || len(fs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = append(fs, r.failed...)
}

// replicate pushes a closed container to another datanode (meta's
// ReplicateContainerCommand). The push waits for one of the datanode's
// replication streams. Meta sees the new replica in the target's next
// heartbeat (its store's Created hook marks it); a push that fails is
// reported in this datanode's next heartbeat, and meta plans the copy
// again at once (it also sends it again if it never hears back).
func (a *Agent) replicate(cmdID uint64, cmd *stratov1.ReplicateContainerCommand) {
	r := a.repl
	id, target := cmd.ContainerId, cmd.GetTarget().GetDataAddr()
	if r == nil {
		a.opts.Logger.Warn("datanode: container replication is not set up", "command", cmdID, "container", id)
		return
	}
	if target == "" {
		a.opts.Logger.Warn("datanode: replicate container: no target address", "command", cmdID, "container", id)
		r.fail(cmdID, id, errors.New("no target address"))
		return
	}
	started := r.runOnce(id, func() {
		var (
			st  replication.Stats
			err error
		)
		// The labels let a CPU profile of a process running several
		// datanodes (strato dev, bench rereplicate) tell a source's cost.
		opts := replication.Options{
			Limits: r.Limits, Metrics: r.Metrics, FS: r.FS, TLS: r.TLS, ClientID: "datanode " + r.id, Logger: r.log,
			Token: cmd.GetToken(), Pace: r.paceOf(cmd.GetBandwidth()),
		}
		if cmd.GetBackground() {
			opts.Foreground = r.Foreground
		}
		pprof.Do(r.ctx, replication.ProfileLabels(r.id, replication.RolePush), func(ctx context.Context) {
			st, err = replication.Push(ctx, r.Source, id, target, opts)
		})
		if err != nil {
			r.log.Warn("datanode: replicate container failed", "command", cmdID, "container", id, "target", target, "err", err)
			r.fail(cmdID, id, err)
			return
		}
		mbps := 0.0
		if s := st.Elapsed.Seconds(); s > 0 {
			mbps = float64(st.Bytes) / s / 1e6
		}
		r.log.Info("datanode: container replicated", "command", cmdID, "container", id, "target", target,
			"blocks", st.Blocks, "bytes", st.Bytes, "waited", st.Waited, "elapsed", st.Elapsed, "MB/s", mbps)
	})
	if !started {
		a.opts.Logger.Debug("datanode: replicate container: already being pushed", "command", cmdID, "container", id)
	}
}

// runOnce runs fn in the background unless a copy or rebuild of container
// id is under way (a command repeated before it ended): then it returns
// false and does nothing.
func (r *replicator) runOnce(id uint64, fn func()) bool {
	r.mu.Lock()
	if r.running[id] {
		r.mu.Unlock()
		return false
	}
	r.running[id] = true
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			delete(r.running, id)
			r.mu.Unlock()
			if r.ended != nil {
				r.ended()
			}
		}()
		fn()
	}()
	return true
}

// reconstruct rebuilds a lost replica index of an erasure coded container
// on this datanode (meta's ReconstructECContainerCommand, replication.Reconstruct),
// in the background and within the datanode's replication streams. The
// new replica reaches meta in the next heartbeat (the store's Created
// hook); a failure is reported in the next heartbeat, and meta plans the
// rebuild again.
func (a *Agent) reconstruct(cmdID uint64, cmd *stratov1.ReconstructECContainerCommand) {
	r := a.repl
	id := cmd.ContainerId
	if r == nil {
		a.opts.Logger.Warn("datanode: container reconstruction is not set up", "command", cmdID, "container", id)
		return
	}
	started := r.runOnce(id, func() {
		var (
			st  replication.ReconstructStats
			err error
		)
		pprof.Do(r.ctx, replication.ProfileLabels(r.id, replication.RoleImport), func(ctx context.Context) {
			st, err = replication.Reconstruct(ctx, cmd, replication.ReconstructOptions{Store: r.Importer, Limits: r.Limits, TLS: r.TLS,
				ClientID: "datanode " + r.id, Token: cmd.GetToken(), Logger: r.log})
		})
		if err != nil {
			r.log.Warn("datanode: reconstruct container failed", "command", cmdID, "container", id,
				"replica_index", cmd.ReplicaIndex, "err", err)
			r.fail(cmdID, id, err)
			return
		}
		r.log.Info("datanode: container index rebuilt", "command", cmdID, "container", id, "replica_index", cmd.ReplicaIndex,
			"blocks", st.Blocks, "bytes", st.Bytes, "seconds", st.Elapsed.Seconds())
	})
	if !started {
		a.opts.Logger.Debug("datanode: reconstruct container: already running", "command", cmdID, "container", id)
	}
}
