package meta

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/meta/topology"
)

// Options configures a meta server.
type Options struct {
	// Dir is the data directory (Raft log and state, one Pebble DB).
	// Required.
	Dir string
	// FS is the filesystem Dir lives on. Default vfs.Default.
	FS vfs.FS
	// ID is this replica's Raft ID. Default 1.
	ID uint64
	// Peers maps every replica's Raft ID to its gRPC address (this one
	// included). It sets the group when Dir is created; after that the
	// membership stored in Dir (kept up to date by membership changes)
	// wins. Default: this replica alone, at Listen.
	Peers map[uint64]string
	// Join makes a new Dir wait to be added to an existing group (strato
	// admin meta add ID ADDR, on the leader) instead of starting a group
	// of its own; it then gets the group's state from the leader. Peers
	// must be unset (or name only this replica).
	Join bool
	// Listen is the gRPC address clients, datanodes and peers use. Default
	// 127.0.0.1:9860.
	Listen string
	// Cluster configures the cluster state (health timeouts, container and
	// block sizes, safe mode).
	Cluster cluster.Options
	// Namespace configures the namespace (open-key expiry, bucket defaults,
	// list limits, caches). Its DefaultBlockSize defaults to
	// Cluster.BlockSize.
	Namespace namespace.Options
	// TickInterval is how often the leader's background work runs (node
	// health, pipeline repair, open-key expiry, reclaiming deleted
	// directories, block deletion). Default 1s.
	TickInterval time.Duration
	// ReplicationInterval is how often the leader's replication pass runs
	// (every closed container judged and copies, rebuilds and deletions
	// planned), at most once a tick. Its work grows with the containers
	// (0.7 s of CPU at 1M on 2 cores, in steps that let heartbeats in;
	// decision 0090). Default: every tick; or, once a pass takes longer
	// than a tenth of a tick and the last found nothing to repair, ten
	// times the last pass's length, so that idle passes take at most a
	// tenth of the time (decision 0099; HDFS: 3 s, Ozone: 5 min).
	ReplicationInterval time.Duration
	// ReclaimBatch bounds the entries one reclaim command removes; the
	// leader runs reclaim commands for at most a fifth of each tick.
	// Default 256.
	ReclaimBatch int
	// DeleteBlocksBatch bounds the blocks of the deleted-blocks table one
	// tick looks at (and so the DeleteBlocksCommands it queues). Default
	// 1000.
	DeleteBlocksBatch int
	// BlockDeletionDelay is how long the blocks of a deleted or
	// overwritten key stay on the datanodes before the leader sends their
	// deletion: a backup of meta younger than this restores without a key
	// whose blocks are gone (docs/operations.md, Backup and restore). The
	// blocks keep their space meanwhile. Default 0 (deleted at once);
	// `strato meta` defaults to 24h.
	BlockDeletionDelay time.Duration
	// Clock is the time the server's decisions read and its periodic work
	// (TickInterval, DiskCheckInterval) runs on: the leader's time in
	// every command it prepares, datanodes' liveness, expiries, block
	// tokens. Raft's ticks and the time budgets of work within a tick are
	// real time. Default: the real clock; tests give a
	// clockwork.FakeClock and advance it.
	Clock clockwork.Clock
	// Topology, when set, maps registering datanodes to racks (a table
	// file or a script, package topology); a datanode it names nothing
	// for keeps the rack it gave itself. Default: nil, every datanode's
	// own.
	Topology topology.Resolver
	// Logger receives the server's logs. Default: slog.Default().
	Logger *slog.Logger
	// CacheSize is the Pebble block cache, in bytes: the namespace lives in
	// Pebble and only this much of it (plus memtables) is held in memory.
	// Default 512 MiB.
	CacheSize int64
	// MemTableSize is each of Pebble's memtables, in bytes (writes stall
	// with two full ones waiting to be flushed). Default 32 MiB.
	MemTableSize int64
	// DeferredWriteMemory bounds, in bytes, the leader's table of deferred
	// writes in flight (meta/deferredwrite.go): a small key written whole
	// opens and commits in one Raft entry while the table has room, and
	// opens as before when it is full. Default DefaultDeferredWriteMemory
	// (16 MiB, some 40,000 writes); negative: no deferred writes.
	DeferredWriteMemory int64
	// DeferredWriteTTL is how long a deferred write's token stays good:
	// later, its commit is refused (the client writes again) and its block
	// is freed. Default DefaultDeferredWriteTTL (10 minutes).
	DeferredWriteTTL time.Duration
	// DiskReserve is the free space the data directory's filesystem must
	// keep: below it, namespace mutations are refused (ResourceExhausted)
	// until space is freed, as HDFS's NameNode does below
	// dfs.namenode.resource.du.reserved. Default 100 MiB; negative
	// disables the check.
	DiskReserve int64
	// DiskCheckInterval is how often the free space is sampled. Default 1s.
	DiskCheckInterval time.Duration
	// UnaryInterceptors run on every unary call, outermost first, and on
	// each call of a batch (BatchService) as on a call of its own:
	// metrics and the audit log (package telemetry). With Auth "token"
	// they run outside the authentication (IdentityFromContext names the
	// caller once their handler has returned). Default: none.
	UnaryInterceptors []grpc.UnaryServerInterceptor
	// GRPCServerOptions are added to the options of the gRPC server (after
	// meta's own): stream interceptors, for example. A unary interceptor
	// given here sees a batch as one call; give those in
	// UnaryInterceptors. Default: none.
	GRPCServerOptions []grpc.ServerOption
	// TracerProvider, when set, makes a span of every NamespaceService and
	// AdminService call, the child of the caller's span (package tracing).
	// Default: nil, no tracing.
	TracerProvider trace.TracerProvider
	// TLS, when set, makes the gRPC server speak TLS with this
	// configuration (certs.ServerConfig): its ClientCAs is the cluster's
	// CA, and DatanodeService and RaftService calls from a peer without a
	// client certificate that CA signed are refused (Unauthenticated).
	// Clients need no certificate. Default: nil, plaintext.
	TLS *tls.Config
	// PeerTLS is the configuration this replica dials the other replicas
	// with (certs.ClientConfig with this replica's certificate: the Raft
	// transport is mutual TLS). Required with TLS. Default: nil.
	PeerTLS *tls.Config
	// Auth is how clients authenticate: AuthNone ("none": they do not;
	// every call is served) or AuthToken ("token": every NamespaceService
	// and AdminService call carries a token meta issued, and cluster
	// administration needs an administrator's; docs/security.md). A
	// cluster started with AuthToken and no user makes the user "admin"
	// and writes its token to Dir/admin.token. Default: AuthNone.
	Auth string
	// AuthWithoutTLS lets Auth "token" run without TLS. Tokens then cross
	// the network in the clear, and DatanodeService, which only TLS
	// certificates protect, lets any process that reaches meta register as
	// a datanode and learn the block-token keys: for tests and benchmarks
	// only. Default: false, AuthToken needs TLS.
	AuthWithoutTLS bool
	// BlockTokenKeyInterval is how often the leader makes a new block
	// token key (with AuthToken; docs/security.md "Block tokens"). Default:
	// 10h (HDFS's key update interval).
	BlockTokenKeyInterval time.Duration
	// BlockTokenLifetime is how long a block token is valid. Default: 10h
	// (HDFS's dfs.block.access.token.lifetime).
	BlockTokenLifetime time.Duration
	// DelegationTokenMaxLifetime is how long after its issue a delegation
	// token may be renewed up to (HDFS's
	// dfs.namenode.delegation.token.max-lifetime). Default: 7 days.
	DelegationTokenMaxLifetime time.Duration
	// DelegationTokenRenewInterval is how far a renewal (and the issue)
	// moves a delegation token's expiry, never past its max date (HDFS's
	// dfs.namenode.delegation.token.renew-interval). Default: 24h.
	DelegationTokenRenewInterval time.Duration
	// TrashInterval is how long what clients remove stays in the trash at
	// least (Hadoop's fs.trash.interval): `strato fs rm` and `hadoop fs
	// -rm` move it into the bucket's .Trash/USER/Current, and checkpoints
	// older than this are deleted. Default DefaultTrashInterval (24h);
	// negative turns the trash off (clients delete at once, as the flag's
	// 0 does).
	TrashInterval time.Duration
	// TrashCheckpointInterval is how often the leader rolls every
	// .Trash/USER/Current into a checkpoint and deletes the expired ones
	// (Hadoop's fs.trash.checkpoint.interval). Default, and at most,
	// TrashInterval.
	TrashCheckpointInterval time.Duration
	// LifecycleInterval is how often the leader starts a round over the
	// buckets' S3 lifecycle rules (lifecycle.go). Default
	// DefaultLifecycleInterval (1h); negative: no rounds (rules are kept
	// and not carried out).
	LifecycleInterval time.Duration
	// LifecycleDay is the length of a lifecycle rule's day. Default, and
	// what S3 means, 24h; shorter only to test rules in seconds (as Ceph's
	// rgw_lc_debug_interval).
	LifecycleDay time.Duration
	// LifecycleOpsPerTick bounds the deletes a lifecycle round proposes in
	// one background tick: a round over a big bucket spreads over ticks.
	// Default DefaultLifecycleOpsPerTick (256 a tick, a tick a second).
	LifecycleOpsPerTick int
	// NoFollowerReads makes a follower refuse (NotLeader) the read RPCs a
	// client asks it to serve (FollowerReadMetadata), as it refuses every
	// other call. Default: false, a follower serves them after a
	// linearizable read point (ReadIndex through the leader), so that
	// clients with follower reads on spread their reads over the replicas
	// (docs/decisions/0087-follower-reads.md).
	NoFollowerReads bool
	// Raft tunes consensus (tick interval, election ticks, log compaction,
	// Pebble options); its ID, Peers, FS, Dir and Logger are set from the
	// fields above. Zero values take consensus's defaults.
	Raft consensus.Options
}

// EnsureDefaults fills unset fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Clock == nil {
		o.Clock = clockwork.NewRealClock()
	}
	if o.ID == 0 {
		o.ID = 1
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:9860"
	}
	if len(o.Peers) == 0 {
		o.Peers = map[uint64]string{o.ID: o.Listen}
	}
	if o.TickInterval == 0 {
		o.TickInterval = time.Second
	}
	if o.ReclaimBatch == 0 {
		o.ReclaimBatch = 256
	}
	if o.DeleteBlocksBatch == 0 {
		o.DeleteBlocksBatch = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.CacheSize == 0 {
		o.CacheSize = 512 << 20
	}
	if o.DiskReserve == 0 {
		o.DiskReserve = 100 << 20
	}
	if o.DiskCheckInterval == 0 {
		o.DiskCheckInterval = time.Second
	}
	if o.BlockTokenKeyInterval == 0 {
		o.BlockTokenKeyInterval = DefaultBlockTokenKeyInterval
	}
	if o.BlockTokenLifetime == 0 {
		o.BlockTokenLifetime = DefaultBlockTokenLifetime
	}
	if o.DelegationTokenMaxLifetime == 0 {
		o.DelegationTokenMaxLifetime = DefaultDelegationTokenMaxLifetime
	}
	if o.DelegationTokenRenewInterval == 0 {
		o.DelegationTokenRenewInterval = DefaultDelegationTokenRenewInterval
	}
	if o.Auth == "" {
		o.Auth = AuthNone
	}
	if o.TrashInterval == 0 {
		o.TrashInterval = DefaultTrashInterval
	}
	if o.TrashCheckpointInterval <= 0 || o.TrashCheckpointInterval > o.TrashInterval {
		o.TrashCheckpointInterval = o.TrashInterval
	}
	if o.MemTableSize <= 0 {
		o.MemTableSize = 32 << 20
	}
	if o.DeferredWriteMemory == 0 {
		o.DeferredWriteMemory = DefaultDeferredWriteMemory
	}
	if o.DeferredWriteTTL <= 0 {
		o.DeferredWriteTTL = DefaultDeferredWriteTTL
	}
	if o.LifecycleInterval == 0 {
		o.LifecycleInterval = DefaultLifecycleInterval
	}
	if o.LifecycleOpsPerTick <= 0 {
		o.LifecycleOpsPerTick = DefaultLifecycleOpsPerTick
	}
	if o.LifecycleDay <= 0 {
		o.LifecycleDay = 24 * time.Hour
	}
	o.Cluster.EnsureDefaults()
	if o.Namespace.DefaultBlockSize == 0 {
		o.Namespace.DefaultBlockSize = o.Cluster.BlockSize
	}
	o.Namespace.EnsureDefaults()
	return o
}

// Validate reports the first invalid setting.
func (o *Options) Validate() error {
	if o.Dir == "" {
		return fmt.Errorf("meta: a data directory is required")
	}
	if _, ok := o.Peers[o.ID]; !ok {
		return fmt.Errorf("meta: this replica's ID %d is not among the peers %v", o.ID, o.Peers)
	}
	if o.BlockDeletionDelay < 0 {
		return fmt.Errorf("meta: BlockDeletionDelay %v is negative", o.BlockDeletionDelay)
	}
	if o.ReplicationInterval < 0 {
		return fmt.Errorf("meta: ReplicationInterval %v must not be negative", o.ReplicationInterval)
	}
	if o.TickInterval <= 0 || o.ReclaimBatch < 1 || o.DeleteBlocksBatch < 1 {
		return fmt.Errorf("meta: TickInterval (%v), ReclaimBatch (%d) and DeleteBlocksBatch (%d) must be positive",
			o.TickInterval, o.ReclaimBatch, o.DeleteBlocksBatch)
	}
	if o.TLS != nil && o.TLS.ClientCAs == nil {
		return errors.New("meta: TLS needs the cluster CA (ClientCAs) to verify datanodes and peers")
	}
	if (o.TLS == nil) != (o.PeerTLS == nil) {
		return errors.New("meta: TLS and PeerTLS go together")
	}
	if o.BlockTokenKeyInterval < 0 || o.BlockTokenLifetime < 0 {
		return fmt.Errorf("meta: negative block token interval %v or lifetime %v", o.BlockTokenKeyInterval, o.BlockTokenLifetime)
	}
	if o.DelegationTokenMaxLifetime < 0 || o.DelegationTokenRenewInterval < 0 {
		return fmt.Errorf("meta: negative delegation token max lifetime %v or renew interval %v", o.DelegationTokenMaxLifetime, o.DelegationTokenRenewInterval)
	}
	if o.Auth != AuthNone && o.Auth != AuthToken {
		return fmt.Errorf("meta: auth %q (want %q or %q)", o.Auth, AuthNone, AuthToken)
	}
	if o.Auth == AuthToken && o.TLS == nil && !o.AuthWithoutTLS {
		return errors.New("meta: auth token needs TLS: without it tokens cross the network in the clear, and any process " +
			"that reaches meta can register as a datanode and learn the block-token keys (AuthWithoutTLS, for tests)")
	}
	if err := o.Namespace.Validate(); err != nil {
		return err
	}
	return o.Cluster.Validate()
}

// BenchOptions are the options of the meta server that `strato bench meta`
// runs in its own process: a single voter on dir, with containers the size
// of one block so that each allocated block is its own container (the
// blockReport and replication benchmarks count containers where Hadoop
// counts blocks).
func BenchOptions(dir string) Options {
	return Options{
		Dir:    dir,
		Listen: "127.0.0.1:0",
		Cluster: cluster.Options{
			ContainerSize: 16 << 20,
			BlockSize:     16 << 20,
		},
	}
}
