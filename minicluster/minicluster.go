// Package minicluster runs a whole strato cluster in one process, as
// Hadoop's MiniDFSCluster and Ozone's MiniOzoneCluster do: a meta server (or
// a group of three) and N datanodes on loopback ports, with their data under
// one directory; or meta alone (Options.MetaOnly).
// `strato dev`, `strato bench teragen` without a target, and the tests that
// need a cluster or a meta server all use it.
//
// Layout under Options.Dir:
//
//	meta/            the meta server's Raft log and state
//	dn1/, dn2/, ...  one data directory per datanode
//	cluster.json     the ports in use, so a restart reuses them
//	tls/             with Options.TLS: the cluster CA and the nodes' certificates
//
// A Cluster is safe for concurrent use; its Stop/Restart methods serialise.
package minicluster

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/jonboulle/clockwork"
	"go.opentelemetry.io/otel/trace"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/datanode/scanner"
	"github.com/strato-io/strato/meta"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

// Options configure a local cluster.
type Options struct {
	// Dir holds every node's data. Required.
	Dir string
	// Datanodes is how many datanodes run. Default: 3, or none with
	// MetaOnly.
	Datanodes int
	// Racks spreads the datanodes over this many racks: datanode i (from
	// 0) is on /rack<i%Racks+1>. Default: 0, every datanode on
	// datanode.DefaultRack.
	Racks int
	// MetaOnly starts meta alone, without datanodes: for the tests of
	// meta's RPCs and of the command line, which need no data path and
	// register stand-in datanodes by RPC when they want some (those do not
	// heartbeat). Meta then keeps its own health timeouts, unless
	// DeadAfter is set, and its own safe mode (over once one datanode
	// registers); WaitReady waits only for a meta leader.
	MetaOnly bool
	// MetaReplicas is how many meta replicas form the Raft group: 1 (the
	// default) or 3.
	MetaReplicas int
	// MetaAddr is meta's gRPC address. Default: the one recorded in Dir by
	// an earlier run, else 127.0.0.1:0 (a free port).
	MetaAddr string
	// HeartbeatInterval of the datanodes. Default: 1s.
	HeartbeatInterval time.Duration
	// DeadAfter is how long meta waits for a silent datanode before it
	// closes its pipelines. Default: 10s (StaleAfter is half of it); meta's
	// own (2m) with MetaOnly.
	DeadAfter time.Duration
	// ContainerSize and BlockSize override meta's defaults (5 GiB, 256 MiB)
	// when set.
	ContainerSize, BlockSize int64
	// ReplicationStreams and ReplicationBandwidth set every datanode's
	// container-copy streams and bandwidth cap (bytes/s; 0: the datanode's
	// defaults, no cap); ReplicationLimit meta's copies in flight per
	// datanode (0: meta's default).
	ReplicationStreams   int
	ReplicationBandwidth int64
	ReplicationLimit     int
	// TickInterval is meta's background work interval (health, block
	// deletion, ...). Default: meta's (1s).
	TickInterval time.Duration
	// TrashInterval and TrashCheckpointInterval are meta's (its
	// Options.TrashInterval, TrashCheckpointInterval): 0 takes meta's
	// defaults (24h, the trash interval), a negative TrashInterval turns
	// the trash off.
	TrashInterval, TrashCheckpointInterval time.Duration
	// TLS runs the cluster with TLS: a CA and a certificate per node are
	// made under Dir/tls (once, reused on restart), meta and the datanodes
	// serve TLS and require each other's certificates, and Client trusts
	// the CA (see CAFile, ClientTLS). Default: false, plaintext.
	TLS bool
	// Auth runs meta with token authentication (meta.Options.Auth
	// "token"): the first start makes the user "admin" and writes its
	// token to the leading replica's meta.AdminTokenFile; Client presents
	// it (see AdminToken). Default: false, no authentication.
	Auth bool
	// S3, when set, runs an S3 gateway too once the cluster is ready
	// (StartS3, S3Endpoint, S3Gateway). Default: none.
	S3 *S3Options
	// Clock is every node's clock (meta.Options.Clock,
	// datanode.Options.Clock): a test gives a clockwork.FakeClock and
	// advances it to make heartbeats, ticks and expiries happen. Default:
	// the real clock.
	Clock clockwork.Clock
	// Logger receives every node's logs. Default: discard.
	Logger *slog.Logger
	// ConfigureMeta, when set, is called with meta replica i's options
	// (0-based) once the cluster has filled them in, at every start of the
	// replica: tests set there what has no field here (Raft ticks, batch
	// sizes, the disk reserve). It must leave Dir, ID, Listen, Peers and
	// Join alone.
	ConfigureMeta func(i int, o *meta.Options)
	// Scan configures every datanode's background scanner
	// (datanode.Options.Scan); Scan.Disable turns it off, as benchmarks
	// comparing its cost do. Default: the datanode's (on, metadata scans
	// every 3 hours, data scans every 7 days at 32 MiB/s per volume).
	Scan scanner.Options
	// DatanodeFS, when set, gives the file system of datanode i's
	// containers (0-based), asked at every start of the datanode: tests
	// pass a crashable in-memory one and restart the datanode on a crash
	// image of it. Default: the real file system.
	DatanodeFS func(i int) vfs.FS
	// ConfigureDatanode, when set, is called with datanode i's options
	// (0-based) once the cluster has filled them in, at every start of the
	// datanode: tests set there what has no field here (several data
	// directories, volume checks). It must leave Meta alone.
	ConfigureDatanode func(i int, o *datanode.Options)
	// TracerProvider, when set, traces every node, the S3 gateway and the
	// clients the cluster makes (their TracerProvider options). Default:
	// nil, no tracing.
	TracerProvider trace.TracerProvider
}

// EnsureDefaults fills in the defaults.
func (o *Options) EnsureDefaults() {
	if o.Datanodes == 0 && !o.MetaOnly {
		o.Datanodes = 3
	}
	if o.MetaReplicas == 0 {
		o.MetaReplicas = 1
	}
	if o.HeartbeatInterval == 0 {
		o.HeartbeatInterval = time.Second
	}
	if o.DeadAfter == 0 && !o.MetaOnly {
		o.DeadAfter = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports invalid options.
func (o *Options) Validate() error {
	switch {
	case o.Dir == "":
		return errors.New("minicluster: no data directory given")
	case o.Racks < 0:
		return fmt.Errorf("minicluster: Racks %d must not be negative", o.Racks)
	case o.MetaOnly && o.Datanodes != 0:
		return fmt.Errorf("minicluster: %d datanodes in a meta-only cluster", o.Datanodes)
	case !o.MetaOnly && o.Datanodes < 1:
		return fmt.Errorf("minicluster: %d datanodes", o.Datanodes)
	case o.MetaReplicas != 1 && o.MetaReplicas != 3:
		return fmt.Errorf("minicluster: %d meta replicas (1 or 3)", o.MetaReplicas)
	}
	return nil
}

// Cluster is a running local cluster.
type Cluster struct {
	opts Options

	mu        sync.Mutex
	metas     []*meta.Server // nil while stopped
	metaAddrs []string
	metaErrs  []chan error
	datanodes []*datanode.Datanode // nil while stopped
	dnAddrs   []string
	clientTLS *tls.Config // nil without Options.TLS
	adminTok  string      // with Options.Auth, once read
	s3        *s3Server   // nil without a gateway
}

// state is what cluster.json records.
type state struct {
	Meta      string   `json:"meta"`            // the first meta replica
	Metas     []string `json:"metas,omitempty"` // every replica, when more than one
	Datanodes []string `json:"datanodes"`
}

// Start starts a cluster (or restarts the one in opts.Dir) and waits until
// it is ready: every datanode registered and safe mode over.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("minicluster: %w", err)
	}
	var st state
	if b, err := os.ReadFile(filepath.Join(opts.Dir, "cluster.json")); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	c := &Cluster{opts: opts, dnAddrs: make([]string, opts.Datanodes),
		datanodes: make([]*datanode.Datanode, opts.Datanodes),
		metas:     make([]*meta.Server, opts.MetaReplicas), metaAddrs: make([]string, opts.MetaReplicas),
		metaErrs: make([]chan error, opts.MetaReplicas)}
	if opts.TLS {
		if err := c.initTLS(); err != nil {
			return nil, err
		}
	}
	if len(st.Metas) == 0 && st.Meta != "" {
		st.Metas = []string{st.Meta}
	}
	for i := range c.metaAddrs {
		c.metaAddrs[i] = "127.0.0.1:0"
		if i < len(st.Metas) && st.Metas[i] != "" {
			c.metaAddrs[i] = st.Metas[i]
		}
	}
	if opts.MetaAddr != "" {
		c.metaAddrs[0] = opts.MetaAddr
	}
	for i := range c.dnAddrs {
		c.dnAddrs[i] = "127.0.0.1:0"
		if i < len(st.Datanodes) && st.Datanodes[i] != "" {
			c.dnAddrs[i] = st.Datanodes[i]
		}
	}
	// Every replica's address must be known before any starts: they are
	// each other's Raft peers.
	lis := make([]net.Listener, len(c.metaAddrs))
	for i, a := range c.metaAddrs {
		l, err := listen(a)
		if err != nil {
			for _, l := range lis[:i] {
				_ = l.Close()
			}
			return nil, err
		}
		lis[i], c.metaAddrs[i] = l, l.Addr().String()
	}
	for i := range c.metas {
		if err := c.startMeta(i, lis[i], false); err != nil {
			for _, l := range lis[i+1:] {
				_ = l.Close()
			}
			_ = c.Close()
			return nil, err
		}
	}
	for i := range c.datanodes {
		if err := c.startDatanode(i); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	if err := c.saveState(); err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.WaitReady(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	if opts.S3 != nil {
		if _, err := c.StartS3(ctx, *opts.S3); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("minicluster: S3 gateway: %w", err)
		}
	}
	return c, nil
}

func (c *Cluster) saveState() error {
	st := state{Meta: c.metaAddrs[0], Datanodes: c.dnAddrs}
	if len(c.metaAddrs) > 1 {
		st.Metas = c.metaAddrs
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.opts.Dir, "cluster.json"), append(b, '\n'), 0o644)
}

// listen listens on addr, waiting a little for a port a previous run (or a
// node just stopped) still holds.
func listen(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var l net.Listener
		if l, err = net.Listen("tcp", addr); err == nil {
			return l, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("minicluster: listen on %s: %w", addr, err)
}

// MetaDir is replica i's directory: meta/ for a single replica (and the
// first of a group), meta2/, meta3/ for the others.
func (c *Cluster) MetaDir(i int) string {
	if i == 0 {
		return filepath.Join(c.opts.Dir, "meta")
	}
	return filepath.Join(c.opts.Dir, fmt.Sprintf("meta%d", i+1))
}

// startMeta starts meta replica i serving on lis (whose address is
// c.metaAddrs[i]); join starts a new one that waits to be added.
func (c *Cluster) startMeta(i int, lis net.Listener, join bool) error {
	o := meta.Options{
		Dir:    c.MetaDir(i),
		ID:     uint64(i + 1),
		Listen: c.metaAddrs[i],
		Logger: c.opts.Logger.With("node", fmt.Sprintf("meta%d", i+1)),
		Join:   join,
		Clock:  c.opts.Clock,
	}
	if len(c.metaAddrs) > 1 && !join {
		o.Peers = map[uint64]string{}
		for j, a := range c.metaAddrs {
			o.Peers[uint64(j+1)] = a
		}
	}
	// A test cluster's meta starts often and writes little: memtables
	// smaller than a server's, so that it holds less in memory and the
	// spare log beside its logs is 9 MiB of zeros (walfs), not 33.
	// ConfigureMeta may set others.
	o.MemTableSize = 8 << 20
	o.TickInterval = c.opts.TickInterval
	o.TrashInterval = c.opts.TrashInterval
	o.TrashCheckpointInterval = c.opts.TrashCheckpointInterval
	if c.opts.DeadAfter > 0 {
		o.Cluster.DeadAfter = c.opts.DeadAfter
		o.Cluster.StaleAfter = c.opts.DeadAfter / 2
		// A new leader waits for three heartbeats (each datanode
		// registers again with its full report) before it acts on the
		// replica map.
		o.Cluster.LeaderSettle = min(3*c.opts.HeartbeatInterval, o.Cluster.StaleAfter)
	}
	o.Cluster.SafeModeMinDatanodes = c.opts.Datanodes // 0 (MetaOnly): meta's default
	o.Cluster.ReplicationLimit = c.opts.ReplicationLimit
	if c.opts.ContainerSize > 0 {
		o.Cluster.ContainerSize = c.opts.ContainerSize
	}
	if c.opts.BlockSize > 0 {
		o.Cluster.BlockSize = c.opts.BlockSize
	}
	if c.opts.TLS {
		var err error
		if o.TLS, o.PeerTLS, err = c.nodeTLS(fmt.Sprintf("meta%d", i+1)); err != nil {
			_ = lis.Close()
			return err
		}
	}
	if c.opts.Auth {
		o.Auth = meta.AuthToken
		o.AuthWithoutTLS = !c.opts.TLS
	}
	o.TracerProvider = c.opts.TracerProvider
	if c.opts.ConfigureMeta != nil {
		c.opts.ConfigureMeta(i, &o)
	}
	srv, err := meta.Open(o)
	if err != nil {
		_ = lis.Close()
		return err
	}
	c.metas[i] = srv
	c.metaErrs[i] = make(chan error, 1)
	go func(errc chan error) { errc <- srv.Serve(lis) }(c.metaErrs[i])
	return nil
}

func (c *Cluster) startDatanode(i int) error {
	lis, err := listen(c.dnAddrs[i])
	if err != nil {
		return err
	}
	c.dnAddrs[i] = lis.Addr().String()
	var store datanode.StoreOptions
	if c.opts.DatanodeFS != nil {
		store.Volume.FS = c.opts.DatanodeFS(i)
	}
	var serverTLS, clientTLS *tls.Config
	if c.opts.TLS {
		if serverTLS, clientTLS, err = c.nodeTLS(fmt.Sprintf("dn%d", i+1)); err != nil {
			_ = lis.Close()
			return err
		}
	}
	o := datanode.Options{
		TLS:                  serverTLS,
		ClientTLS:            clientTLS,
		Store:                store,
		Dirs:                 []string{filepath.Join(c.opts.Dir, fmt.Sprintf("dn%d", i+1))},
		Rack:                 c.opts.rack(i),
		Meta:                 slices.Clone(c.metaAddrs),
		HeartbeatInterval:    c.opts.HeartbeatInterval,
		ReplicationStreams:   c.opts.ReplicationStreams,
		ReplicationBandwidth: c.opts.ReplicationBandwidth,
		Scan:                 c.opts.Scan,
		Clock:                c.opts.Clock,
		Logger:               c.opts.Logger.With("node", fmt.Sprintf("dn%d", i+1)),
	}
	o.Server.TracerProvider = c.opts.TracerProvider
	if c.opts.ConfigureDatanode != nil {
		c.opts.ConfigureDatanode(i, &o)
	}
	dn, err := datanode.Open(o, lis)
	if err != nil {
		_ = lis.Close()
		return err
	}
	c.datanodes[i] = dn
	return nil
}

// WaitReady waits until every running datanode is registered and healthy
// and meta is out of safe mode; with MetaOnly, until meta has a leader that
// answers.
func (c *Cluster) WaitReady(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	defer func() { _ = cl.Close() }()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		want := c.runningDatanodes()
		ready := func() bool {
			sm, err := client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.SafeModeStatus, error) {
				return cc.GetSafeMode(ctx, &stratov1.GetSafeModeRequest{})
			})
			return err == nil && (c.opts.MetaOnly || (!sm.InSafeMode && int(sm.HealthyDatanodes) >= want))
		}()
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("minicluster: cluster not ready: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) runningDatanodes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, dn := range c.datanodes {
		if dn != nil {
			n++
		}
	}
	return n
}

// Meta is the meta replica that leads (the only one of a single-voter
// group); nil when none does.
func (c *Cluster) Meta() *meta.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.metas) == 1 {
		return c.metas[0]
	}
	for _, m := range c.metas {
		if m != nil && m.Metrics().Leader {
			return m
		}
	}
	return nil
}

// MetaServer returns meta replica i (nil while it is stopped).
func (c *Cluster) MetaServer(i int) *meta.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metas[i]
}

// MetaAddr is the first meta replica's gRPC address.
func (c *Cluster) MetaAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metaAddrs[0]
}

// MetaAddrs are every meta replica's gRPC addresses.
func (c *Cluster) MetaAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.metaAddrs)
}

// DatanodeAddrs are the datanodes' data addresses.
func (c *Cluster) DatanodeAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.dnAddrs...)
}

// Datanode returns datanode i (nil while it is stopped).
func (c *Cluster) Datanode(i int) *datanode.Datanode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.datanodes[i]
}

// Options are the options the cluster runs with, defaults filled in.
func (c *Cluster) Options() Options { return c.opts }

// DatanodeDir is datanode i's data directory.
func (c *Cluster) DatanodeDir(i int) string {
	return filepath.Join(c.opts.Dir, fmt.Sprintf("dn%d", i+1))
}

// Client returns a new client of the cluster (the caller closes it); with
// Options.Auth it presents the administrator's token.
func (c *Cluster) Client() (*client.Client, error) {
	tok, err := c.AdminToken()
	if err != nil {
		return nil, err
	}
	return c.ClientWithToken(tok)
}

// ClientWithToken returns a new client of the cluster that presents tok
// ("": none).
func (c *Cluster) ClientWithToken(tok string) (*client.Client, error) {
	// Not the environment's or the user's token file when tok is "".
	return client.New(client.Options{Meta: c.MetaAddrs(), TLS: c.ClientTLS(), Logger: c.opts.Logger.With("node", "client"),
		Token: tok, NoToken: tok == "", TracerProvider: c.opts.TracerProvider})
}

// AdminToken returns, with Options.Auth, the token of the administrator
// meta made when the cluster was created (read from the replica's
// meta.AdminTokenFile, waiting for it for up to a minute); "" without.
func (c *Cluster) AdminToken() (string, error) {
	if !c.opts.Auth {
		return "", nil
	}
	c.mu.Lock()
	tok := c.adminTok
	n := len(c.metas)
	c.mu.Unlock()
	if tok != "" {
		return tok, nil
	}
	deadline := time.Now().Add(time.Minute)
	for {
		for i := range n {
			b, err := os.ReadFile(filepath.Join(c.MetaDir(i), meta.AdminTokenFile))
			if err == nil && len(b) > 0 {
				tok = strings.TrimSpace(string(b))
				c.mu.Lock()
				c.adminTok = tok
				c.mu.Unlock()
				return tok, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("minicluster: no %s in any meta directory after a minute", meta.AdminTokenFile)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// StopDatanode stops datanode i as a crash would look to its peers: its
// connections drop at once.
func (c *Cluster) StopDatanode(i int) error {
	c.mu.Lock()
	dn := c.datanodes[i]
	c.datanodes[i] = nil
	c.mu.Unlock()
	if dn == nil {
		return nil
	}
	return dn.Close()
}

// StartDatanode starts datanode i again on its directory and address.
func (c *Cluster) StartDatanode(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.datanodes[i] != nil {
		return nil
	}
	return c.startDatanode(i)
}

// RestartMeta stops meta replica 0 and starts it again on the same
// directory and address, as after a crash of a single-voter meta.
func (c *Cluster) RestartMeta() error {
	if err := c.StopMeta(0); err != nil {
		return err
	}
	return c.StartMeta(0)
}

// StopMeta stops meta replica i.
func (c *Cluster) StopMeta(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metas[i] == nil {
		return nil
	}
	err := c.metas[i].Close()
	serveErr := <-c.metaErrs[i]
	c.metas[i] = nil
	return errors.Join(err, serveErr)
}

// StartMeta starts meta replica i again on its directory and address.
func (c *Cluster) StartMeta(i int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.metas[i] != nil {
		return nil
	}
	lis, err := listen(c.metaAddrs[i])
	if err != nil {
		return err
	}
	return c.startMeta(i, lis, false)
}

// StartNewMeta starts a new meta replica (the next index, ID index+1, in
// its own directory and on a new port) with Join: it waits until the group
// adds it (the AddMetaMember RPC, strato admin meta add). It returns the
// new replica's index. The cluster's state file does not record it: for
// tests of membership changes.
func (c *Cluster) StartNewMeta() (int, error) {
	lis, err := listen("127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := len(c.metas)
	c.metas = append(c.metas, nil)
	c.metaErrs = append(c.metaErrs, nil)
	c.metaAddrs = append(c.metaAddrs, lis.Addr().String())
	return i, c.startMeta(i, lis, true)
}

// AddMetaReplica starts a new meta replica (StartNewMeta) and adds it to
// the group through the leader's AddMetaMember RPC: it catches up as a
// learner, then votes. It returns the new replica's index.
func (c *Cluster) AddMetaReplica(ctx context.Context) (int, error) {
	i, err := c.StartNewMeta()
	if err != nil {
		return 0, err
	}
	addr := c.MetaAddrs()[i]
	cl, err := c.Client()
	if err != nil {
		return 0, err
	}
	defer func() { _ = cl.Close() }()
	_, err = client.Cluster(ctx, cl, func(ctx context.Context, cc client.ClusterStubs) (*stratov1.MetaMembersResponse, error) {
		return cc.AddMetaMember(ctx, &stratov1.AddMetaMemberRequest{Id: uint64(i + 1), Addr: addr})
	})
	return i, err
}

// Close stops every node.
func (c *Cluster) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.s3 != nil {
		c.s3.close()
		c.s3 = nil
	}
	var errs []error
	for i, dn := range c.datanodes {
		if dn != nil {
			errs = append(errs, dn.Close())
			c.datanodes[i] = nil
		}
	}
	for i, m := range c.metas {
		if m != nil {
			errs = append(errs, m.Close(), <-c.metaErrs[i])
			c.metas[i] = nil
		}
	}
	return errors.Join(errs...)
}

// rack is datanode i's location (Racks).
func (o *Options) rack(i int) string {
	if o.Racks <= 0 {
		return ""
	}
	return fmt.Sprintf("/rack%d", i%o.Racks+1)
}
