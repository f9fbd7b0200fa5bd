// Package agent is a datanode's link to meta: it registers the datanode,
// heartbeats with its storage report and container reports, and runs the
// commands meta's replies carry (close, create with a replica index,
// delete containers and blocks, push a closed container to another
// datanode, rebuild an erasure coded index) on a command runner apart from
// the heartbeats.
package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/strato-io/strato/metaconn"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Store is what the agent needs from the datanode's containers.
type Store interface {
	// Replicas describes every container held, for a full report.
	Replicas() []*stratov1.ContainerReplica
	// NodeStats sums the capacity and use of the volumes.
	NodeStats() *stratov1.NodeStats
	// CloseContainer closes a container (idempotent).
	CloseContainer(id uint64) error
	// DeleteContainer removes a container and its data (an open one only
	// with force).
	DeleteContainer(id uint64, force bool) error
	// PlaceReplica creates a container if missing and stores the replica
	// index meta placed it with (erasure coded containers; data is the
	// config's data members, 0 when not known).
	PlaceReplica(id uint64, index, data int) error
	// DeleteBlocks removes blocks from a container, in any state; blocks
	// (or a container) already gone are no error.
	DeleteBlocks(containerID uint64, localIDs []uint64) (blocks int, bytes int64, err error)
}

// Options configure a datanode's link to meta.
type Options struct {
	// Meta lists the meta replicas' gRPC addresses. Required.
	Meta []string
	// Details is what the datanode registers as: its ID and data address.
	// Required.
	Details *stratov1.DatanodeDetails
	// HeartbeatInterval is the time between heartbeats. Default: 3s (meta
	// marks a node stale after missing a few, see cluster.Options).
	HeartbeatInterval time.Duration
	// FullReportEvery sends a full container report with every n-th
	// heartbeat (containers that changed state go in the next heartbeat in
	// any case). Default: 10.
	FullReportEvery int
	// ClusterID is the cluster the datanode first registered with ("":
	// none yet); registrations carry it, and meta refuses a datanode of
	// another cluster.
	ClusterID string
	// KeepClusterID, when set, is given the cluster ID of the first
	// registration that tells one, to keep for the next start (the
	// datanode's cluster.id). Default: not kept.
	KeepClusterID func(id string) error
	// Tokens, when set, is given what every registration and heartbeat
	// reply says of block tokens (the datanode's data server checks them).
	Tokens func(*stratov1.BlockTokenKeys)
	// Replication, when its Source is set, runs the copies and rebuilds
	// meta orders. Default: they are refused.
	Replication Replication
	// Scan, when set, queues a scan of a container (ScanContainerCommand)
	// and reports whether it did. Default: such commands are ignored.
	Scan func(id uint64, data bool) bool
	// DiskBalancer, when set, carries out a DiskBalancerCommand (start or
	// stop the disk balancer). Default: such commands are ignored.
	DiskBalancer func(*stratov1.DiskBalancerCommand)
	// TLS, when set, secures the connection to meta and presents the
	// datanode's certificate. Default: nil, plaintext.
	TLS *tls.Config
	// Clock is the time heartbeats run on. Default: the real clock.
	Clock clockwork.Clock
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// EnsureDefaults fills in the defaults.
func (o *Options) EnsureDefaults() {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.HeartbeatInterval <= 0 {
		o.HeartbeatInterval = 3 * time.Second
	}
	if o.FullReportEvery <= 0 {
		o.FullReportEvery = 10
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports missing required options.
func (o *Options) Validate() error {
	switch {
	case len(o.Meta) == 0:
		return errors.New("datanode: no meta address given")
	case o.Details.GetId() == "" || o.Details.GetDataAddr() == "":
		return errors.New("datanode: the agent needs the datanode's ID and data address")
	}
	return nil
}

// Agent registers the datanode with meta, heartbeats, and runs the commands
// that come back. It survives meta restarts and leader changes: a failed
// heartbeat is retried at the next interval, and a meta that no longer
// knows the datanode gets a registration with a full report.
type Agent struct {
	opts  Options
	store Store
	meta  *metaconn.Conn

	mu         sync.Mutex
	registered bool
	beats      int
	changed    map[uint64]bool // containers to report in the next heartbeat
	lastErr    error
	deleteAcks deleteAcks  // deleted-blocks seqs to acknowledge (agent_delete.go)
	repl       *replicator // copies and rebuilds of containers (replicate.go); nil: none
	clusterID  string
	// soon asks run for a heartbeat now; until fastUntil heartbeats come
	// every second (see heartbeatSoon).
	soon      chan struct{}
	fastUntil time.Time
	// cmds holds the commands of meta's replies, a reply each, for the
	// command runner (runCommands): heartbeats do not wait for them.
	cmds    [][]*stratov1.DatanodeCommand
	cmdWake chan struct{}
	// placing is held by the command runner while it creates a container
	// with its replica index, and by reports while they are built: a
	// report never lists the new container before its index is set.
	placing sync.RWMutex
}

// New returns an agent of store; Run starts it.
func New(opts Options, store Store) (*Agent, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var dial []grpc.DialOption
	if opts.TLS != nil {
		dial = append(dial, grpc.WithTransportCredentials(credentials.NewTLS(opts.TLS)))
	}
	mc, err := metaconn.Dial(opts.Meta, nil, dial...)
	if err != nil {
		return nil, err
	}
	a := &Agent{opts: opts, store: store, meta: mc, changed: map[uint64]bool{}, soon: make(chan struct{}, 1),
		cmdWake: make(chan struct{}, 1), clusterID: opts.ClusterID}
	if opts.Replication.Source != nil {
		a.repl = newReplicator(opts.Replication, opts.Details.GetId(), opts.Logger, a.HeartbeatSoon)
	}
	return a, nil
}

// fastBeat is the heartbeat interval for a while after HeartbeatSoon.
const fastBeat = time.Second

// HeartbeatSoon asks for a heartbeat now, and for heartbeats every
// fastBeat during the next few seconds: a container copy that landed or a
// push that ended frees a replication slot, and meta's next copies for it
// go out in heartbeat replies, once its next tick has seen the report.
func (a *Agent) HeartbeatSoon() {
	a.mu.Lock()
	a.fastUntil = a.opts.Clock.Now().Add(3 * fastBeat)
	a.mu.Unlock()
	select {
	case a.soon <- struct{}{}:
	default:
	}
}

// Run heartbeats and runs meta's commands until ctx ends, which also
// aborts the copies and rebuilds under way; it returns once they have
// ended.
func (a *Agent) Run(ctx context.Context) {
	if a.repl != nil {
		a.repl.ctx = ctx
		defer a.repl.wg.Wait()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.runCommands(ctx)
	}()
	defer func() { <-done }()
	t := a.opts.Clock.NewTicker(a.opts.HeartbeatInterval)
	defer t.Stop()
	fast := a.opts.Clock.NewTicker(min(fastBeat, a.opts.HeartbeatInterval))
	defer fast.Stop()
	for {
		if err := a.beat(ctx); err != nil && ctx.Err() == nil {
			a.mu.Lock()
			changedErr := a.lastErr == nil || a.lastErr.Error() != err.Error()
			a.lastErr = err
			a.mu.Unlock()
			if changedErr {
				a.opts.Logger.Warn("datanode: heartbeat failed", "err", err)
			}
		} else if err == nil {
			a.mu.Lock()
			if a.lastErr != nil {
				a.opts.Logger.Info("datanode: meta reachable again")
			}
			a.lastErr = nil
			a.mu.Unlock()
		}
		if !a.wait(ctx, t.Chan(), fast.Chan()) {
			return
		}
	}
}

// wait returns when the next heartbeat is due (false when ctx ends): at
// the regular interval, on HeartbeatSoon, or on a fast tick while
// heartbeats are hurried.
func (a *Agent) wait(ctx context.Context, regular, fast <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-regular:
			return true
		case <-a.soon:
			return true
		case <-fast:
			a.mu.Lock()
			hurry := a.opts.Clock.Now().Before(a.fastUntil)
			a.mu.Unlock()
			if hurry {
				return true
			}
		}
	}
}

// ContainerChanged asks for a container's state in the next heartbeat.
func (a *Agent) ContainerChanged(id uint64) {
	a.mu.Lock()
	a.changed[id] = true
	a.mu.Unlock()
}

// beat sends one heartbeat (registering first when needed) and runs the
// commands of the reply.
func (a *Agent) beat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*a.opts.HeartbeatInterval+5*time.Second)
	defer cancel()
	a.mu.Lock()
	registered := a.registered
	a.beats++
	full := a.beats%a.opts.FullReportEvery == 0
	changed := a.changed
	a.changed = map[uint64]bool{}
	a.mu.Unlock()

	if !registered {
		if err := a.register(ctx); err != nil {
			a.requeue(changed)
			return err
		}
		return nil
	}
	req := &stratov1.HeartbeatRequest{DatanodeId: a.opts.Details.Id, Stats: a.store.NodeStats(),
		DeletedBlocksAcks: a.deleteAcks.take(), FailedCommands: a.repl.takeFailed()}
	if full || len(changed) > 0 {
		req.Report = a.report(full, changed)
	}
	var resp *stratov1.HeartbeatResponse
	err := a.meta.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl metaconn.ClusterStubs) error {
		var err error
		resp, err = cl.Heartbeat(ctx, req)
		return err
	})
	if err != nil {
		a.requeue(changed)
		a.deleteAcks.requeue(req.DeletedBlocksAcks)
		a.repl.requeueFailed(req.FailedCommands)
		return err
	}
	if resp.Reregister {
		a.mu.Lock()
		a.registered = false
		a.mu.Unlock()
		return a.register(ctx)
	}
	if a.opts.Tokens != nil {
		a.opts.Tokens(resp.GetBlockTokens())
	}
	a.queue(resp.Commands)
	return nil
}

// queue hands a reply's commands to the command runner. Closing a
// container (an fsync), deleting blocks (unlinking their files) and the
// like can take seconds on a busy disk: run in the heartbeat loop they
// would delay the next heartbeats until meta took the datanode for stale
// and closed its pipelines, as Ozone's and HDFS's datanodes avoid by
// handling commands apart from their heartbeats too.
func (a *Agent) queue(cmds []*stratov1.DatanodeCommand) {
	if len(cmds) == 0 {
		return
	}
	a.mu.Lock()
	a.cmds = append(a.cmds, cmds)
	a.mu.Unlock()
	select {
	case a.cmdWake <- struct{}{}:
	default:
	}
}

// runCommands carries out the queued replies in order, one at a time,
// until ctx ends. A command meta sent again while its first copy waited
// here is idempotent (closes, block deletions) or runs once (copies).
func (a *Agent) runCommands(ctx context.Context) {
	for {
		a.mu.Lock()
		var next []*stratov1.DatanodeCommand
		if len(a.cmds) > 0 {
			next = a.cmds[0]
			a.cmds[0] = nil
			a.cmds = a.cmds[1:]
		}
		a.mu.Unlock()
		if next != nil {
			a.execute(next)
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-a.cmdWake:
		}
	}
}

func (a *Agent) requeue(changed map[uint64]bool) {
	a.mu.Lock()
	for id := range changed {
		a.changed[id] = true
	}
	a.mu.Unlock()
}

func (a *Agent) register(ctx context.Context) error {
	a.mu.Lock()
	cid := a.clusterID
	a.mu.Unlock()
	req := &stratov1.RegisterRequest{Details: a.opts.Details, Stats: a.store.NodeStats(), Report: a.report(true, nil), ClusterId: cid}
	var resp *stratov1.RegisterResponse
	err := a.meta.Do(ctx, func(ctx context.Context, _ stratov1.NamespaceServiceClient, cl metaconn.ClusterStubs) error {
		var err error
		resp, err = cl.Register(ctx, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	if cid == "" && resp.GetClusterId() != "" {
		if a.opts.KeepClusterID != nil {
			if err := a.opts.KeepClusterID(resp.GetClusterId()); err != nil {
				return fmt.Errorf("register: keep the cluster ID: %w", err)
			}
		}
		a.mu.Lock()
		a.clusterID = resp.GetClusterId()
		a.mu.Unlock()
		a.opts.Logger.Info("datanode: joined cluster", "cluster_id", resp.GetClusterId())
	}
	if a.opts.Tokens != nil {
		a.opts.Tokens(resp.GetBlockTokens())
	}
	a.mu.Lock()
	a.registered = true
	a.mu.Unlock()
	a.opts.Logger.Info("datanode: registered with meta", "id", a.opts.Details.Id, "containers", len(req.Report.Replicas))
	return nil
}

// report builds a full report, or an incremental one of the changed
// containers (those no longer held are listed as deleted).
func (a *Agent) report(full bool, changed map[uint64]bool) *stratov1.ContainerReport {
	a.placing.RLock()
	all := a.store.Replicas()
	a.placing.RUnlock()
	if full {
		return &stratov1.ContainerReport{Full: true, Replicas: all}
	}
	r := &stratov1.ContainerReport{}
	for _, rep := range all {
		if changed[rep.ContainerId] {
			r.Replicas = append(r.Replicas, rep)
			delete(changed, rep.ContainerId)
		}
	}
	for id := range changed {
		r.Deleted = append(r.Deleted, id)
	}
	return r
}

// execute runs the commands of one of meta's replies. Failures are
// logged: meta sends the command again if the container's state does not
// change. The deleted-block seqs of the reply are acknowledged once all
// of its commands have run (deleteAcks).
func (a *Agent) execute(cmds []*stratov1.DatanodeCommand) {
	acks := map[uint64]bool{}
	defer func() {
		for seq, ok := range acks {
			a.deleteAcks.done(seq, ok)
		}
	}()
	for _, c := range cmds {
		switch cmd := c.Cmd.(type) {
		case *stratov1.DatanodeCommand_CloseContainer:
			id := cmd.CloseContainer.ContainerId
			if err := a.store.CloseContainer(id); err != nil {
				a.opts.Logger.Warn("datanode: close container", "container", id, "err", err)
				continue
			}
			a.ContainerChanged(id)
		case *stratov1.DatanodeCommand_CreateContainer:
			// Containers are created by the first write to them; an
			// erasure coded one also learns its replica index here.
			if idx := cmd.CreateContainer.ReplicaIndex; idx != 0 {
				id := cmd.CreateContainer.ContainerId
				data := int(cmd.CreateContainer.GetPipeline().GetErasureCoding().GetData())
				a.placing.Lock()
				err := a.store.PlaceReplica(id, int(idx), data)
				a.placing.Unlock()
				if err != nil {
					a.opts.Logger.Warn("datanode: create container", "container", id, "replica_index", idx, "err", err)
					continue
				}
				a.ContainerChanged(id)
			}
		case *stratov1.DatanodeCommand_ReplicateContainer:
			a.replicate(c.Id, cmd.ReplicateContainer)
		case *stratov1.DatanodeCommand_ReconstructEcContainer:
			a.reconstruct(c.Id, cmd.ReconstructEcContainer)
		case *stratov1.DatanodeCommand_DeleteContainer:
			a.deleteContainer(c.Id, cmd.DeleteContainer)
		case *stratov1.DatanodeCommand_DeleteBlocks:
			ok := a.deleteBlocks(c.Id, cmd.DeleteBlocks)
			if prev, seen := acks[cmd.DeleteBlocks.Seq]; !seen || prev {
				acks[cmd.DeleteBlocks.Seq] = ok
			}
		case *stratov1.DatanodeCommand_ScanContainer:
			id := cmd.ScanContainer.ContainerId
			if a.opts.Scan == nil || !a.opts.Scan(id, cmd.ScanContainer.Data) {
				a.opts.Logger.Info("datanode: scan not queued (no CLOSED replica here, or scanner off)", "container", id)
			}
		case *stratov1.DatanodeCommand_DiskBalancer:
			if a.opts.DiskBalancer == nil {
				a.opts.Logger.Info("datanode: disk balancer command ignored")
				continue
			}
			a.opts.DiskBalancer(cmd.DiskBalancer)
		default:
			a.opts.Logger.Debug("datanode: command not handled", "command", fmt.Sprintf("%T", c.Cmd))
		}
	}
}

// Registered reports whether the datanode is registered with meta's
// leader (it has joined the cluster, and its last heartbeat did not ask it
// to register again).
func (a *Agent) Registered() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.registered
}

// Close closes the connections to meta (after Run has returned).
func (a *Agent) Close() error { return a.meta.Close() }
