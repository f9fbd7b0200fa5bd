package datanode

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/strato-io/strato/datanode/agent"
	"github.com/strato-io/strato/datanode/container"
	"github.com/strato-io/strato/datanode/replication"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// Options configure a Datanode: its store, its data server and its link to
// meta.
type Options struct {
	// Dirs are the volume directories, one per disk. Required. Each holds
	// a copy of the datanode's identity (datanode.id, cluster.id), so that
	// it survives the loss of any of them.
	Dirs []string
	// Meta lists the meta replicas' gRPC addresses. Required.
	Meta []string
	// HeartbeatInterval, see AgentOptions. Default: 3s.
	HeartbeatInterval time.Duration
	// BufferedIO writes every replica's chunks through the page cache, as
	// HDFS and Ozone datanodes do. By default only what clients send
	// directly does: the pipeline leader's copy, a ONE block, an erasure
	// coded member (readers ask those first, and find a block read soon
	// after its write in memory); followers (chunks forwarded by another
	// datanode, whose PING names it "datanode <ID>") write large aligned chunks
	// (1 MiB and more, what clients send) with O_DIRECT, around the page
	// cache (container.Options.DisableDirectIO): their bytes cost one DMA
	// instead of a copy into the page cache and its writeback, which on a
	// 3-replica pipeline is most of a datanode's CPU (docs/benchmarks.md,
	// TeraGen). Buffered writes start their writeback at once
	// (container.Options.EagerWriteback). On a file system that refuses
	// O_DIRECT (tmpfs), every write is buffered. PutBlock with sync fsyncs
	// either way.
	BufferedIO bool
	// NoWriteCache writes the pipeline leader's copy and a ONE block's
	// around the page cache too (ServerOptions.NoWriteCache): for data not
	// read back soon. Not with BufferedIO.
	NoWriteCache bool
	// ReplicationStreams bounds the closed containers this datanode pushes
	// to others at once (one connection each). Default: 10.
	ReplicationStreams int
	// ReplicationBandwidth caps the bytes per second of those pushes
	// together. Default: 0, no cap.
	ReplicationBandwidth int64
	// TLS, when set, makes the data listener serve TLS with this
	// configuration (certs.ServerConfig). Reads are then copied through
	// memory: sendfile cannot encrypt. Default: nil, plain TCP.
	TLS *tls.Config
	// ClientTLS is the configuration of the datanode's connections to meta
	// and to other datanodes (pipeline followers, replication targets):
	// certs.ClientConfig with this datanode's certificate, which meta
	// requires. Required with TLS. Default: nil, plaintext.
	ClientTLS *tls.Config
	// DisableLocalReads turns off local reads: the local socket
	// (wire.ListenLocal) on which clients of this host are handed the block
	// files to read (docs/wire.md §5.11), and READ_LOCAL_PATHS, which tells
	// them the files' paths (§5.12). With TLS the local socket speaks TLS
	// too, with the data listener's certificate, which clients check as
	// over TCP.
	DisableLocalReads bool
	// Rack is the datanode's network location, a path such as
	// "/dc1/rack1", which meta's placement spreads replicas over
	// (Hadoop's NetworkTopology). Default: DefaultRack.
	Rack string
	// Scan configures the background scanner of CLOSED containers
	// (datanode/scanner): metadata scans every 3 hours, data scans every 7
	// days at 32 MiB/s per volume by default. Its Clock, Logger and
	// Unhealthy are set from the datanode's.
	Scan scanner.Options
	// DiskBalancerGrace is how long the disk balancer keeps the old copy
	// of a container it moved to another volume, for the reads that found
	// it. Default: DefaultDiskBalancerGrace.
	DiskBalancerGrace time.Duration
	// Store and Server tune the parts; their Dirs, ID and Logger are set
	// from the fields above.
	Store  StoreOptions
	Server ServerOptions
	// Clock is the time heartbeats, block tokens' expiry and the
	// replication bandwidth cap run on. Default: the real clock; tests
	// give a clockwork.FakeClock and advance it.
	Clock clockwork.Clock
	// VolumeCheckInterval is the time between health checks of the
	// volumes (a small file written, synced, read back and removed in each
	// directory; health.go), on Clock. A volume that fails one is taken
	// out of service; past Store.FailedVolumesTolerated failed volumes the
	// datanode stops (Done). A request that meets an I/O error checks at
	// once. Default: 1m.
	VolumeCheckInterval time.Duration
	// Logger. Default: slog.Default().
	Logger *slog.Logger
}

// DefaultVolumeCheckInterval is the default of Options.VolumeCheckInterval.
const DefaultVolumeCheckInterval = time.Minute

// EnsureDefaults fills unset fields with their defaults and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = 3 * time.Second
	}
	if o.ReplicationStreams == 0 {
		o.ReplicationStreams = replication.DefaultStreams
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Rack == "" {
		o.Rack = DefaultRack
	}
	if o.VolumeCheckInterval == 0 {
		o.VolumeCheckInterval = DefaultVolumeCheckInterval
	}
	return o
}

// DefaultRack is the location of a datanode given none, as in Hadoop.
const DefaultRack = "/default-rack"

// Validate reports the first invalid setting.
func (o *Options) Validate() error {
	switch {
	case len(o.Dirs) == 0:
		return errors.New("datanode: no data directory given")
	case len(o.Meta) == 0:
		return errors.New("datanode: no meta address given")
	case o.HeartbeatInterval < 0:
		return fmt.Errorf("datanode: HeartbeatInterval %v must be positive", o.HeartbeatInterval)
	case o.VolumeCheckInterval < 0:
		return fmt.Errorf("datanode: VolumeCheckInterval %v must be positive", o.VolumeCheckInterval)
	case o.ReplicationStreams < 0 || o.ReplicationBandwidth < 0:
		return fmt.Errorf("datanode: ReplicationStreams %d and ReplicationBandwidth %d must not be negative",
			o.ReplicationStreams, o.ReplicationBandwidth)
	case o.BufferedIO && o.NoWriteCache:
		return errors.New("datanode: BufferedIO and NoWriteCache exclude each other")
	case (o.TLS == nil) != (o.ClientTLS == nil):
		return errors.New("datanode: TLS and ClientTLS go together")
	case o.Rack != "" && (!strings.HasPrefix(o.Rack, "/") || strings.HasSuffix(o.Rack, "/") || strings.ContainsAny(o.Rack, " \t\n")):
		return fmt.Errorf("datanode: rack %q must be a path such as /dc1/rack1", o.Rack)
	}
	return nil
}

// Datanode is a running datanode: a Store, a Server on a listener, and the
// agent that registers and heartbeats with meta.
type Datanode struct {
	id       string
	addr     string
	store    *Store
	server   *Server
	agent    *agent.Agent
	scanner  *scanner.Scanner
	disk     *diskBalancer
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	serveErr chan error
	// tokensFiles, one per volume working at start, exist while meta
	// requires block tokens (blocktoken.go).
	tokensFiles []string
	tokensReq   atomic.Bool
	tokensKnown atomic.Bool

	closeOnce sync.Once
	closeErr  error

	// stopped is closed when the datanode stops on its own: more volumes
	// failed than tolerated; stopErr says why.
	stopped  chan struct{}
	stopOnce sync.Once
	stopErr  error
}

// Open opens the datanode's volumes and serves the data protocol on lis
// (whose address is what meta hands to clients), and starts heartbeating.
func Open(opts Options, lis net.Listener) (*Datanode, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	for _, d := range opts.Dirs {
		if err := privateDir(d, opts.Logger); err != nil {
			// The store records its volume as failed.
			opts.Logger.Error("datanode: data directory unusable", "dir", d, "err", err)
		}
	}
	id, err := loadID(opts.Dirs, opts.Logger)
	if err != nil {
		return nil, err
	}
	limits, err := replication.NewLimits(opts.ReplicationStreams, opts.ReplicationBandwidth, opts.Clock)
	if err != nil {
		return nil, err
	}
	so := opts.Store
	so.Dirs, so.Logger, so.Clock = opts.Dirs, opts.Logger, opts.Clock
	so.Volume.DisableDirectIO = opts.BufferedIO
	so.Volume.EagerWriteback = true
	// A container created by a write is reported in the next heartbeat,
	// so that meta knows its replicas (and can take a client's report of a
	// bad one) without waiting for a full report. The agent exists before
	// the server serves the first write.
	var ag *agent.Agent
	created := so.Created
	so.Created = func(id uint64) {
		if created != nil {
			created(id)
		}
		ag.ContainerChanged(id)
		ag.HeartbeatSoon() // a new replica (an import) frees meta's copy slot
	}
	// A failed volume's containers are reported gone in the next
	// heartbeat, which comes at once: meta copies them back from other
	// replicas.
	var d *Datanode
	failed := so.Failed
	so.Failed = func(dir string, lost []uint64) {
		if failed != nil {
			failed(dir, lost)
		}
		for _, id := range lost {
			ag.ContainerChanged(id)
		}
		ag.HeartbeatSoon()
		if err := d.store.Tolerable(); err != nil {
			d.stop(err)
		}
	}
	store, err := OpenStore(so)
	if err != nil {
		return nil, err
	}
	for _, v := range store.Stats().Volumes {
		if v.State == VolumeFailed {
			opts.Logger.Warn("datanode: starting without a failed volume", "volume", v.Dir, "reason", v.Reason)
		}
	}
	addr := lis.Addr().String()
	host, _, _ := net.SplitHostPort(addr)
	home := store.homeDirs()
	clusterID, err := readClusterID(home)
	if err != nil {
		_ = store.Close()
		return nil, err
	}
	if clusterID != "" {
		// A copy in every volume (a datanode of before kept it in the
		// first only).
		if err := keepClusterID(home, clusterID); err != nil {
			_ = store.Close()
			return nil, err
		}
	}
	sv := opts.Server
	sv.ID, sv.Logger, sv.Clock = id, opts.Logger, opts.Clock
	sv.NoWriteCache = sv.NoWriteCache || opts.NoWriteCache
	sv.Forward.Conn.TLS = opts.ClientTLS
	if sv.Replication == nil {
		sv.Replication = &replication.Metrics{}
	}
	localReads := !opts.DisableLocalReads && store.osFiles()
	sv.LocalReads = localReads
	d = &Datanode{id: id, addr: addr, store: store, server: NewServer(store, sv), serveErr: make(chan error, 1),
		stopped: make(chan struct{})}
	// A replica the scanner finds damaged is reported at once: meta copies
	// a good one elsewhere and deletes it.
	sco := opts.Scan
	sco.Clock, sco.Logger = opts.Clock, opts.Logger
	sco.Unhealthy = func(id uint64) {
		ag.ContainerChanged(id)
		ag.HeartbeatSoon()
	}
	if d.scanner, err = scanner.New(sco, store); err != nil {
		_ = d.server.Close()
		_ = store.Close()
		return nil, err
	}
	d.disk = newDiskBalancer(store, opts.Clock, opts.Logger, opts.DiskBalancerGrace)
	d.findTokensFiles(home)
	ag, err = agent.New(agent.Options{
		Meta:              opts.Meta,
		Details:           &stratov1.DatanodeDetails{Id: id, DataAddr: addr, Hostname: host, Rack: opts.Rack},
		HeartbeatInterval: opts.HeartbeatInterval,
		ClusterID:         clusterID,
		KeepClusterID:     func(id string) error { return keepClusterID(store.homeDirs(), id) },
		Tokens:            d.setBlockTokens,
		Replication: agent.Replication{Source: store, Importer: store, FS: store.opts.Volume.FS, Limits: limits,
			Metrics: sv.Replication, TLS: opts.ClientTLS, Clock: opts.Clock,
			Foreground: d.server.opts.Foreground},
		Scan:         d.scanner.Request,
		DiskBalancer: d.disk.command,
		TLS:          opts.ClientTLS,
		Clock:        opts.Clock,
		Logger:       opts.Logger,
	}, storeReports{store, d.scanner, d.disk})
	if err != nil {
		_ = d.server.Close()
		_ = store.Close()
		return nil, err
	}
	d.agent = ag
	if opts.TLS != nil {
		lis = wire.NewTLSListener(lis, opts.TLS)
	}
	go func() { d.serveErr <- d.server.Serve(lis) }()
	if localReads {
		d.serveLocal(addr, opts.TLS, opts.Logger)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	d.wg.Add(2)
	go func() {
		defer d.wg.Done()
		ag.Run(ctx)
	}()
	go func() {
		defer d.wg.Done()
		d.checkVolumes(ctx, opts.Clock, opts.VolumeCheckInterval)
	}()
	d.scanner.Start()
	opts.Logger.Info("datanode started", "id", id, "addr", addr, "volumes", len(opts.Dirs))
	return d, nil
}

// serveLocal serves the data protocol on the local socket of addr too,
// for READ_LOCAL, with TLS when cfg is set (the data listener's: clients
// check the same certificate as over TCP). Without it (another process
// holds the name, or no Linux) clients of this host read over TCP like
// the others.
func (d *Datanode) serveLocal(addr string, cfg *tls.Config, log *slog.Logger) {
	l, err := wire.ListenLocal(addr, cfg)
	if err != nil {
		log.Warn("datanode: no local reads", "err", err)
		return
	}
	go func() {
		if err := d.server.Serve(l); err != nil && !errors.Is(err, ErrServerClosed) {
			log.Warn("datanode: local socket", "err", err)
		}
	}()
}

// DataDirMode is the mode of a datanode's data directories, set on every
// start (HDFS's dfs.datanode.data.dir.perm, 700 by default): the block
// files in them are the datanode's user's to read, and a local reader of
// another user reads over TCP.
const DataDirMode = 0o700

// privateDir makes dir, or sets its mode to DataDirMode. A directory the
// datanode's user does not own (a volume's mount point owned by root, as
// Kubernetes' fsGroup makes them) keeps its mode, with a warning.
func privateDir(dir string, log *slog.Logger) error {
	if err := os.MkdirAll(dir, DataDirMode); err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	if err := os.Chmod(dir, DataDirMode); err != nil {
		log.Warn("datanode: cannot make the data directory private: other local users may read its block files", "dir", dir, "err", err)
	}
	return nil
}

// loadID reads the datanode's identity from the first of dirs (made by
// privateDir) that holds one, choosing one on first start, and keeps a
// copy in every directory lacking it, so that the identity survives the
// loss of any disk. A datanode of before kept it in the first directory
// alone: when that one cannot be read and no other holds an identity, the
// start is refused, since a new identity would make a new datanode.
func loadID(dirs []string, log *slog.Logger) (string, error) {
	var id string
	var missing []string
	var unreadable error // the first directory's
	for i, dir := range dirs {
		p := filepath.Join(dir, "datanode.id")
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
			missing = append(missing, p)
		case err != nil:
			log.Warn("datanode: cannot read the identity of a data directory", "file", p, "err", err)
			if i == 0 {
				unreadable = err
			}
		case strings.TrimSpace(string(b)) == "":
			return "", fmt.Errorf("datanode: %s is empty", p)
		case id == "":
			id = strings.TrimSpace(string(b))
		case strings.TrimSpace(string(b)) != id:
			return "", fmt.Errorf("datanode: %s holds identity %s, another data directory %s: data directories of two datanodes",
				p, strings.TrimSpace(string(b)), id)
		}
	}
	if id == "" {
		if unreadable != nil {
			return "", fmt.Errorf("datanode: no datanode.id in the other data directories, and the first is unreadable: %w", unreadable)
		}
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = "dn-" + hex.EncodeToString(b[:])
	}
	kept := len(dirs) - len(missing)
	for _, p := range missing {
		if err := writeFileAtomic(p, []byte(id+"\n")); err != nil {
			log.Warn("datanode: cannot keep a copy of the identity", "file", p, "err", err)
			continue
		}
		kept++
	}
	if kept == 0 {
		return "", fmt.Errorf("datanode: no data directory takes datanode.id")
	}
	return id, nil
}

// keepClusterID writes the cluster ID in every one of dirs; it fails only
// if none took it.
func keepClusterID(dirs []string, id string) error {
	var errs []error
	for _, dir := range dirs {
		if err := writeFileAtomic(filepath.Join(dir, "cluster.id"), []byte(id+"\n")); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(dirs) {
		return errors.Join(errs...)
	}
	return nil
}

// writeFileAtomic writes path through a temporary file and a rename, both
// fsynced (the file, then its directory), so that a power loss leaves the
// old file or the new one, never an empty one.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	err := func() error {
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		d, err := os.Open(filepath.Dir(path))
		if err != nil {
			return err
		}
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		return err
	}()
	if err != nil {
		return fmt.Errorf("datanode: %w", err)
	}
	return nil
}

// ID is the datanode's identity.
func (d *Datanode) ID() string { return d.id }

// Addr is the data protocol's address.
func (d *Datanode) Addr() string { return d.addr }

// ServerMetrics is a snapshot of the data server's counters.
func (d *Datanode) ServerMetrics() ServerMetrics { return d.server.Metrics() }

// Registered reports whether the datanode is registered with meta's
// leader (it has joined the cluster, and its last heartbeat did not ask it
// to register again).
func (d *Datanode) Registered() bool { return d.agent.Registered() }

// ReplicationMetrics returns a snapshot of the datanode's replication
// counters: containers it pushed to others and imported from them, and
// the time its background copies gave way to clients.
func (d *Datanode) ReplicationMetrics() replication.MetricsSnapshot {
	m := d.server.opts.Replication.Snapshot()
	m.GaveWay = d.server.opts.Foreground.Waited()
	return m
}

// Store is the datanode's containers.
func (d *Datanode) Store() *Store { return d.store }

// Close stops heartbeating and serving, then closes the store.
func (d *Datanode) Close() error {
	d.closeOnce.Do(func() {
		d.cancel()
		d.wg.Wait()
		d.scanner.Stop()
		d.disk.close()
		errs := []error{d.server.Close()}
		if err := <-d.serveErr; err != nil && !errors.Is(err, ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
		errs = append(errs, d.agent.Close(), d.store.Close())
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// storeReports adapts a Store to what the agent reports.
type storeReports struct {
	s    *Store
	scan *scanner.Scanner
	disk *diskBalancer
}

func (r storeReports) Replicas() []*stratov1.ContainerReplica {
	infos := r.s.Containers()
	out := make([]*stratov1.ContainerReplica, 0, len(infos))
	for _, in := range infos {
		out = append(out, &stratov1.ContainerReplica{ContainerId: in.ID, State: replicaState(in.State),
			UsedBytes: in.UsedBytes, BlockCount: in.BlockCount, BcsId: in.BCSID, ReplicaIndex: int32(in.ReplicaIndex)})
	}
	return out
}

func replicaState(s container.State) stratov1.ContainerState {
	switch s {
	case container.Open:
		return stratov1.ContainerState_CONTAINER_OPEN
	case container.Closing:
		return stratov1.ContainerState_CONTAINER_CLOSING
	case container.Closed:
		return stratov1.ContainerState_CONTAINER_CLOSED
	case container.Unhealthy:
		return stratov1.ContainerState_CONTAINER_UNHEALTHY
	}
	return stratov1.ContainerState_CONTAINER_STATE_UNSPECIFIED
}

func (r storeReports) NodeStats() *stratov1.NodeStats {
	st := r.s.Stats()
	ns := &stratov1.NodeStats{Capacity: st.Capacity, Used: st.Used, Remaining: st.Available, Volumes: int32(len(st.Volumes)),
		Scan: scanStats(r.scan.Metrics()), FailedVolumes: int32(st.FailedVolumes), DiskBalancer: r.disk.stats()}
	for _, v := range st.Volumes {
		vs := &stratov1.VolumeStats{Dir: v.Dir, Capacity: v.Capacity, Used: v.Used, Remaining: v.Available,
			Containers: int32(v.Containers), OpenContainers: int32(v.OpenContainers), State: stratov1.VolumeState_VOLUME_HEALTHY}
		if v.State == VolumeFailed {
			vs.State, vs.Failure, vs.FailedUnixMs = stratov1.VolumeState_VOLUME_FAILED, v.Reason, v.FailedAt.UnixMilli()
		}
		ns.VolumeStats = append(ns.VolumeStats, vs)
	}
	return ns
}

func (r storeReports) CloseContainer(id uint64) error { return r.s.CloseContainer(id) }

func (r storeReports) PlaceReplica(id uint64, index, data int) error {
	return r.s.PlaceReplica(id, index, data)
}

func (r storeReports) DeleteContainer(id uint64, force bool) error {
	return r.s.DeleteContainer(id, force)
}

func (r storeReports) DeleteBlocks(id uint64, localIDs []uint64) (int, int64, error) {
	return r.s.DeleteBlocks(id, localIDs)
}

// readClusterID reads the cluster ID kept in the first of dirs that has
// one ("" when none has).
func readClusterID(dirs []string) (string, error) {
	var errs []error
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, "cluster.id"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	}
	if len(errs) > 0 {
		return "", fmt.Errorf("datanode: %w", errors.Join(errs...))
	}
	return "", nil
}

// checkVolumes checks the volumes every interval on clock until ctx ends
// (a volume that fails reaches StoreOptions.Failed, set by Open).
func (d *Datanode) checkVolumes(ctx context.Context, clock clockwork.Clock, interval time.Duration) {
	t := clock.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.Chan():
			_ = d.store.CheckVolumes()
		}
	}
}

// stop stops the datanode on its own for err (too many failed volumes):
// it logs why, closes Done and closes the datanode.
func (d *Datanode) stop(err error) {
	d.stopOnce.Do(func() {
		d.server.log.Error("datanode: stopping", "err", err)
		d.stopErr = err
		close(d.stopped)
		go func() { _ = d.Close() }()
	})
}

// Done is closed when the datanode stops on its own, because more volumes
// failed than StoreOptions.FailedVolumesTolerated (or all of them); Err
// then says why. The owner exits, and an operator replaces the disks.
func (d *Datanode) Done() <-chan struct{} { return d.stopped }

// Err is why the datanode stopped on its own (ErrVolumesFailed), once Done
// is closed; nil before.
func (d *Datanode) Err() error {
	select {
	case <-d.stopped:
		return d.stopErr
	default:
		return nil
	}
}

// findTokensFiles notes where the marker that meta requires block tokens
// is kept (every home directory), and makes the server require them until
// meta says otherwise when any has it.
func (d *Datanode) findTokensFiles(home []string) {
	required := false
	for _, dir := range home {
		f := filepath.Join(dir, blockTokensFile)
		d.tokensFiles = append(d.tokensFiles, f)
		if _, err := os.Stat(f); err == nil {
			required = true
		}
	}
	if required {
		d.server.requireBlockTokensUntilHeard()
	}
}
