package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/meta/topology"
	"github.com/strato-io/strato/telemetry"
)

func init() { extraCommands = append(extraCommands, newMetaCmd) }

func newMetaCmd() *cobra.Command {
	var (
		o               meta.Options
		peers           string
		httpAddr        string
		raftTick        time.Duration
		electionTimeout time.Duration
		followerReads   bool
		diskReserve     string
		auditLog        string
		consoleToken    string
		consoleTokenF   string
		pprof           bool
		topoFile        string
		topoScript      string
		restore         string
		tlsf            tlsFlags
		rc              roleConfig
	)
	cmd := &cobra.Command{
		Use:   "meta --data DIR [--listen 127.0.0.1:9860] [--id N --peers 1=ADDR,2=ADDR,3=ADDR | --id N --join] [--restore BACKUP]",
		Short: "Run the metadata service (namespace and cluster state on Raft)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if peers != "" {
				if o.Join {
					return usagef("--join and --peers exclude each other: a joining replica learns the group from its leader")
				}
				p, err := parsePeers(peers)
				if err != nil {
					return err
				}
				o.Peers = p
				o.ID = idOf(o.ID, rc.from("id"), p)
			}
			o.NoFollowerReads = !followerReads
			if diskReserve != "" {
				n, err := bytesize.Parse(diskReserve)
				if err != nil {
					return usagef("--disk-reserve: %v", err)
				}
				o.DiskReserve = n
				if n == 0 {
					o.DiskReserve = -1
				}
			}
			if err := checkClusterFlags(&o); err != nil {
				return err
			}
			var err error
			if o.Topology, err = topologyOf(topoFile, topoScript); err != nil {
				return err
			}
			if o.TLS, o.PeerTLS, err = tlsf.configs(); err != nil {
				return err
			}
			if o.Auth == meta.AuthToken && o.TLS == nil && !o.AuthWithoutTLS {
				return usagef("--auth token (the default) needs TLS: give --tls-cert, --tls-key and --tls-ca (docs/security.md), " +
					"or --auth none for a cluster without authentication (anyone who reaches it may read and change everything)")
			}
			o.Raft.TickInterval = raftTick
			if o.Raft.ElectionTicks = int(electionTimeout / raftTick); electionTimeout > 0 && o.Raft.ElectionTicks <= 1 {
				return usagef("--election-timeout %v must be more than twice --raft-tick %v", electionTimeout, raftTick)
			}
			o.Logger = rc.log.logger(os.Stderr)
			if consoleToken != "" && rc.from("console-token") == "flag" {
				o.Logger.Warn(argvSecretWarning("console-token", "console-token-file", consoleTokenEnv))
			}
			if consoleToken, err = secretOf(consoleToken, "console-token", consoleTokenF, "console-token-file", consoleTokenEnv); err != nil {
				return err
			}
			if o.TracerProvider, err = rc.startTracing(cmd.Context(), o.Listen, o.Logger); err != nil {
				return err
			}
			reg := telemetry.NewRegistry()
			if err := telemetry.RegisterCertificates(reg, o.TLS); err != nil {
				return err
			}
			grpcMetrics, stopAudit, err := metaTelemetry(&o, reg, auditLog)
			if err != nil {
				return err
			}
			defer stopAudit()
			srv, err := openMeta(o, restore)
			if err != nil {
				return err
			}
			grpcMetrics.Initialize(srv.GRPCServer())
			lis, err := net.Listen("tcp", o.Listen)
			if err != nil {
				_ = srv.Close()
				return err
			}
			o.Logger.Info("meta serving", "listen", lis.Addr().String(), "id", srv.ID(), "data", o.Dir, "join", o.Join, "tls", o.TLS != nil)
			warnAuth(o)
			stopMetrics, _, err := serveMeta(httpAddr, reg, srv, lis.Addr().String(), o.TLS, o.PeerTLS, o.Auth == meta.AuthToken, consoleToken, pprof, o.Logger)
			if err != nil {
				_ = srv.Close()
				return err
			}
			defer stopMetrics()
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(lis) }()
			return waitMeta(cmd.Context(), srv, errc, o.Logger)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "data", "", "data directory (required)")
	f.StringVar(&o.Listen, "listen", "127.0.0.1:9860", "gRPC address (clients, datanodes and Raft peers)")
	f.StringVar(&httpAddr, "http", "", "address of the HTTP endpoint serving the web console, /metrics (Prometheus), /healthz and /readyz, e.g. 127.0.0.1:9861 (HTTPS with meta's certificate when --tls-cert is set; default: none)")
	f.StringVar(&auditLog, "audit-log", "", `file the audit log of mutations is appended to, one JSON line each ("-": stderr; default: none)`)
	f.Uint64Var(&o.ID, "id", 1, "this replica's Raft ID (a key of --peers; default: the key of the one peer whose host is this host's name, alone or before a dot as strato-meta-0 in strato-meta-0.strato-meta:9860, else 1)")
	f.StringVar(&peers, "peers", "", "Raft group a new --data starts with: id=host:port,... (default: this replica alone; later the stored membership wins)")
	f.BoolVar(&o.Join, "join", false, "start a new --data empty and wait to be added to an existing group (strato admin meta add ID ADDR)")
	f.DurationVar(&raftTick, "raft-tick", 100*time.Millisecond, "Raft tick (leader heartbeats go every tick)")
	f.DurationVar(&electionTimeout, "election-timeout", time.Second,
		"time without a leader's heartbeat before a follower campaigns (randomised up to twice that)")
	f.BoolVar(&followerReads, "follower-reads", true,
		"serve the reads clients ask a follower for (clients with follower reads on: strato s3 --meta-follower-reads, strato bench meta --follower-reads), each after a linearizable ReadIndex through the leader (false: a follower sends every call to the leader)")
	f.DurationVar(&o.Cluster.StaleAfter, "stale-after", 30*time.Second,
		"a datanode silent this long is STALE: no new pipelines on it (Ozone's ozone.scm.stale.node.interval, 5m there)")
	f.DurationVar(&o.Cluster.DeadAfter, "dead-after", 2*time.Minute,
		"a datanode silent this long is DEAD: its pipelines close and its containers are copied elsewhere (Ozone's ozone.scm.dead.node.interval, 10m there)")
	addReplicationFlags(f, &o)
	addContainerFlags(f, &o)
	f.StringVar(&diskReserve, "disk-reserve", "100MiB",
		"free space the data directory's filesystem must keep; below it namespace changes are refused until space is freed (0: no check)")
	tlsf.addFlags(f, "replica")
	f.StringVar(&consoleTokenF, "console-token-file", "", "with --auth token and --http: a file holding the token the web console's live charts sample meta with (an administrator's; default $"+consoleTokenEnv+"; none: no charts); visitors sign in with their own")
	f.StringVar(&consoleToken, "console-token", "", "the console's token on the command line, where every user of the host can read it: prefer --console-token-file or $"+consoleTokenEnv)
	addPprofFlag(f, &pprof)
	f.StringVar(&topoFile, "topology-file", "", `file mapping datanodes to racks, one "name rack" per line, the name a datanode ID, host or IP (Hadoop's net.topology.table.file.name); a datanode it does not name keeps its own --rack`)
	f.StringVar(&topoScript, "topology-script", "", "program printing the rack of the datanode host given as its argument, run once per host (Hadoop's net.topology.script.file.name)")
	f.StringVar(&o.Auth, "auth", meta.AuthToken, `client authentication: "token" (every client call carries a token meta issued; the first start writes the administrator's to DATA/admin.token; needs --tls-*; docs/security.md) or "none" (every caller may do everything)`)
	f.BoolVar(&o.AuthWithoutTLS, "auth-without-tls", false, "let --auth token run without TLS: tokens cross the network in the clear and any process can register as a datanode and learn the block-token keys (tests and benchmarks only)")
	f.DurationVar(&o.BlockTokenKeyInterval, "block-token-key-interval", meta.DefaultBlockTokenKeyInterval, "with --auth token: how often meta makes a new key to sign block tokens (docs/security.md, Block tokens)")
	f.DurationVar(&o.BlockTokenLifetime, "block-token-lifetime", meta.DefaultBlockTokenLifetime, "with --auth token: how long a block token is valid")
	f.DurationVar(&o.DelegationTokenMaxLifetime, "delegation-token-max-lifetime", meta.DefaultDelegationTokenMaxLifetime, "with --auth token: how long after its issue a delegation token may be renewed up to")
	f.DurationVar(&o.DelegationTokenRenewInterval, "delegation-token-renew-interval", meta.DefaultDelegationTokenRenewInterval, "with --auth token: how far the issue or a renewal moves a delegation token's expiry")
	addTrashFlags(f, &o)
	addLifecycleFlags(f, &o)
	addMemoryFlags(f, &o)
	addBackupFlags(f, &o, &restore)
	markSecret(f, "console-token")
	_ = cmd.MarkFlagRequired("data")
	rc.attach(cmd, "meta", slog.LevelInfo)
	return cmd
}

// waitMeta waits for the end of a meta replica serving: asked to stop
// (ctx), its server failing (errc), or the replica stopping itself (removed
// from the group: no error).
func waitMeta(ctx context.Context, srv *meta.Server, errc <-chan error, log *slog.Logger) error {
	select {
	case <-ctx.Done():
		log.Info("meta shutting down")
		return srv.Close()
	case err := <-errc:
		_ = srv.Close()
		return err
	case <-srv.Done():
		err := srv.Err()
		_ = srv.Close()
		if errors.Is(err, consensus.ErrRemoved) {
			log.Info("meta replica removed from the group; exiting", "id", srv.ID())
			return nil
		}
		return err
	}
}

// warnAuth logs what a meta replica's authentication settings leave open.
func warnAuth(o meta.Options) {
	if o.Auth == meta.AuthNone {
		o.Logger.Warn("meta: --auth none: clients are not authenticated; anyone who reaches this meta may read and change everything")
	}
	if o.Auth == meta.AuthToken && o.TLS == nil {
		o.Logger.Warn("meta: --auth token without TLS (--auth-without-tls): tokens cross the network in the clear and any process can register as a datanode and learn the block-token keys; for tests only")
	}
}

// addTrashFlags adds meta's trash policy flags (docs/operations.md "Trash").
func addTrashFlags(f *pflag.FlagSet, o *meta.Options) {
	o.TrashInterval = meta.DefaultTrashInterval
	f.Var(trashInterval{&o.TrashInterval}, "trash-interval",
		"how long what strato fs rm and hadoop fs -rm remove stays in the bucket's .Trash before it is deleted (Hadoop's fs.trash.interval; 0: no trash, rm deletes at once)")
	f.DurationVar(&o.TrashCheckpointInterval, "trash-checkpoint-interval", 0,
		"how often every .Trash/USER/Current becomes a checkpoint and expired checkpoints are deleted (Hadoop's fs.trash.checkpoint.interval; 0: --trash-interval)")
}

// addLifecycleFlags adds meta's lifecycle flags (docs/s3.md "Lifecycle").
func addLifecycleFlags(f *pflag.FlagSet, o *meta.Options) {
	f.DurationVar(&o.LifecycleInterval, "lifecycle-interval", meta.DefaultLifecycleInterval,
		"how often the leader starts a round that carries out the buckets' S3 lifecycle rules (negative: never)")
	f.DurationVar(&o.LifecycleDay, "lifecycle-day", 24*time.Hour,
		"the length of a lifecycle rule's day: 24h as S3's; shorter only to see rules act in a test")
	f.IntVar(&o.LifecycleOpsPerTick, "lifecycle-ops-per-tick", meta.DefaultLifecycleOpsPerTick,
		"the most deletes a lifecycle round proposes in one background tick (a tick is a second): a round over a big bucket spreads over ticks")
}

// addMemoryFlags adds the bounds of meta's caches (docs/operations.md,
// "Memory").
func addMemoryFlags(f *pflag.FlagSet, o *meta.Options) {
	o.CacheSize, o.MemTableSize = 512<<20, 32<<20
	o.Namespace.DirCacheBytes, o.Namespace.ApplyCacheBytes = namespace.DefaultDirCacheBytes, namespace.DefaultApplyCacheBytes
	o.Raft.LogCacheBytes = 32 << 20
	o.DeferredWriteMemory = meta.DefaultDeferredWriteMemory
	f.Var(byteSize{&o.CacheSize}, "block-cache", "Pebble's block cache: the part of the namespace's database held in memory")
	f.Var(byteSize{&o.MemTableSize}, "memtable-size", "each of Pebble's memtables (three at most in memory)")
	f.Var(byteSize{&o.Namespace.DirCacheBytes}, "dir-cache", "the readers' cache of directory entries and bucket records")
	f.Var(byteSize{&o.Namespace.ApplyCacheBytes}, "apply-cache", "the cache of what applying commands reads most (directory entries, complete directories' names, records)")
	f.Var(byteSize{&o.Raft.LogCacheBytes}, "raft-log-cache", "the recent Raft log entries kept in memory")
	f.Var(sizeOrOff{&o.DeferredWriteMemory}, "deferred-writes", "the leader's table of small writes in flight, each opened and committed in one Raft entry (0: none)")
}

// byteSize is a flag of a size in bytes ("64MiB", "1G", "4096").
type byteSize struct{ p *int64 }

func (b byteSize) String() string {
	if b.p == nil {
		return "0"
	}
	return bytesize.Exact(*b.p)
}

func (b byteSize) Set(s string) error {
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	if n <= 0 {
		return fmt.Errorf("%q: a size must be positive", s)
	}
	*b.p = n
	return nil
}

func (b byteSize) Type() string { return "size" }

// boundSize is a byteSize that takes 0 too: a bound whose 0 means none.
type boundSize struct{ p *int64 }

func (b boundSize) String() string { return byteSize(b).String() }

func (b boundSize) Set(s string) error {
	n, err := bytesize.Parse(s)
	if err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("%q: a size must not be negative", s)
	}
	*b.p = n
	return nil
}

func (b boundSize) Type() string { return "size" }

// sizeOrOff is a byteSize whose 0 turns the feature off, which meta.Options
// spells as a negative size (0 there is the default).
type sizeOrOff struct{ p *int64 }

func (b sizeOrOff) String() string {
	if b.p == nil || *b.p < 0 {
		return "0"
	}
	return bytesize.Exact(*b.p)
}

func (b sizeOrOff) Set(s string) error {
	n, err := bytesize.Parse(s)
	switch {
	case err != nil:
		return err
	case n < 0:
		return fmt.Errorf("%q: a size cannot be negative", s)
	case n == 0:
		n = -1
	}
	*b.p = n
	return nil
}

func (b sizeOrOff) Type() string { return "size" }

// trashInterval is --trash-interval: a duration whose 0 turns the trash
// off, which meta.Options spells as a negative TrashInterval (0 there is
// the default).
type trashInterval struct{ d *time.Duration }

func (t trashInterval) String() string {
	if t.d == nil || *t.d < 0 {
		return "0s"
	}
	return t.d.String()
}

func (t trashInterval) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("%v is negative (0: no trash)", d)
	}
	if d == 0 {
		d = -1
	}
	*t.d = d
	return nil
}

func (t trashInterval) Type() string { return "duration" }

// addBackupFlags adds the flags of restore and of what makes a backup safe
// to restore.
func addBackupFlags(f *pflag.FlagSet, o *meta.Options, restore *string) {
	f.StringVar(restore, "restore", "", "a backup directory (strato admin meta backup) to initialise the new, empty --data from: a new group of --peers (or this replica alone), each restored from the same backup, with the backup's state and cluster ID; refused if --data holds anything")
	f.DurationVar(&o.BlockDeletionDelay, "block-deletion-delay", 24*time.Hour,
		"how long the blocks of a deleted or overwritten key stay on the datanodes before meta deletes them: a meta backup younger than this restores without keys whose blocks are gone; the blocks keep their space meanwhile (0: delete at once)")
}

// openMeta opens the replica, first initialising its data directory from
// the backup in restore if one is given.
func openMeta(o meta.Options, restore string) (*meta.Server, error) {
	if restore != "" {
		if o.Join {
			return nil, usagef("--restore and --join exclude each other: a restored replica starts a new group")
		}
		m, err := meta.Restore(o, restore)
		if err != nil {
			return nil, err
		}
		o.Logger.Info("meta: new data directory restored from a backup; start without --restore from now on",
			"backup", restore, "cluster_id", m.ClusterID, "index", m.AppliedIndex, "taken", m.Created, "from_replica", m.ReplicaID)
	}
	return meta.Open(o)
}

// addReplicationFlags adds the flags of meta's replication manager.
func addReplicationFlags(f *pflag.FlagSet, o *meta.Options) {
	f.DurationVar(&o.ReplicationInterval, "replication-interval", 0,
		"time between the replication passes that judge every closed container (at most one a tick; a pass over 1M containers takes about 0.7 s of CPU; HDFS 3s, Ozone 5m) (default: every tick; after a pass that found nothing to repair, ten times its length when that is longer: idle passes take at most a tenth of the time; a datanode or replica lost runs one at the next tick)")
	f.IntVar(&o.Cluster.MaintenanceMinReplicas, "maintenance-min-replicas", 2,
		"good copies every replicated container keeps on in-service datanodes while a holder is in maintenance (capped by its replication; Ozone's hdds.scm.replication.maintenance.replica.minimum)")
}

// addContainerFlags adds the sizes of containers and blocks.
func addContainerFlags(f *pflag.FlagSet, o *meta.Options) {
	o.Cluster.ContainerSize, o.Cluster.BlockSize = 5<<30, 256<<20
	f.Var(byteSize{&o.Cluster.ContainerSize}, "container-size",
		"the size a container grows to before it is closed (Ozone's ozone.scm.container.size, also 5GB)")
	f.Var(byteSize{&o.Cluster.BlockSize}, "block-size",
		"the space a block allocation reserves in its container, and files' default block size (Ozone's ozone.scm.block.size, HDFS's dfs.blocksize; at most --container-size)")
}

// checkClusterFlags refuses the cluster manager's settings that cannot
// work together.
func checkClusterFlags(o *meta.Options) error {
	if o.Cluster.BlockSize > o.Cluster.ContainerSize {
		return usagef("--block-size %s is larger than --container-size %s: a container holds whole blocks",
			bytesize.Format(o.Cluster.BlockSize), bytesize.Format(o.Cluster.ContainerSize))
	}
	if o.Cluster.MaintenanceMinReplicas < 1 {
		return usagef("--maintenance-min-replicas %d: at least 1", o.Cluster.MaintenanceMinReplicas)
	}
	return nil
}

// parsePeers parses "1=host:port,2=host:port".
func parsePeers(s string) (map[uint64]string, error) {
	out := map[uint64]string{}
	for _, part := range strings.Split(s, ",") {
		id, addr, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("--peers: %q is not id=host:port with a positive id", part)
		}
		if _, dup := out[n]; dup {
			return nil, fmt.Errorf("--peers: id %d listed twice", n)
		}
		out[n] = addr
	}
	return out, nil
}

// idOf is the Raft ID of a replica whose --id is id, from source (see
// roleConfig.from): without --id from anywhere, that of its own host in
// peers when exactly one names it.
func idOf(id uint64, source string, peers map[uint64]string) uint64 {
	if source != "default" {
		return id
	}
	host, _ := os.Hostname()
	if found, ok := peerOfHost(peers, host); ok {
		return found
	}
	return id
}

// peerOfHost is the ID of the one peer whose address names host: its
// host part is host, or host followed by a dot and a domain (a
// StatefulSet pod strato-meta-0 is strato-meta-0.strato-meta). It is not
// found when host is empty or several peers name it.
func peerOfHost(peers map[uint64]string, host string) (uint64, bool) {
	if host == "" {
		return 0, false
	}
	var found []uint64
	for id, addr := range peers {
		h, _, err := net.SplitHostPort(addr)
		if err != nil {
			h = addr
		}
		if h == host || strings.HasPrefix(h, host+".") {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		return 0, false
	}
	return found[0], true
}

// topologyOf is the rack mapping of --topology-file or --topology-script
// (nil: none).
func topologyOf(file, script string) (topology.Resolver, error) {
	switch {
	case file != "" && script != "":
		return nil, usagef("--topology-file and --topology-script exclude each other")
	case script != "":
		if _, err := os.Stat(script); err != nil {
			return nil, usagef("--topology-script: %v", err)
		}
		return topology.NewScript(script, 0), nil
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, usagef("--topology-file: %v", err)
		}
		defer f.Close()
		t, err := topology.ParseTable(f)
		if err != nil {
			return nil, usagef("--topology-file %s: %v", file, err)
		}
		return t, nil
	}
	return nil, nil
}
