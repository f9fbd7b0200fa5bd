package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/minicluster"
	"github.com/strato-io/strato/telemetry"
)

func init() { extraCommands = append(extraCommands, newDevCmd) }

func newDevCmd() *cobra.Command {
	var (
		o        minicluster.Options
		verbose  bool
		pprof    bool
		s3Addr   string
		s3Access string
		httpAddr string
		scan     scanFlags
		rc       roleConfig
		mo       meta.Options // what the meta flags of dev set
		noCache  bool
		// writeCache: every datanode's --write-cache.
		writeCache int64
	)
	cmd := &cobra.Command{
		Use:   "dev [--data ./strato-data] [--datanodes 3]",
		Short: "Run a complete local cluster in one process: meta and datanodes on loopback",
		Long: `dev starts meta and --datanodes datanodes in this process, on 127.0.0.1,
with their data under --data (meta/, dn1/, dn2/, ...). It prints the
endpoints and a ready line, runs until Ctrl-C or SIGTERM, and stops cleanly;
started again on the same directory, it finds all its data (and its ports)
again. Use the other commands against it: strato sh, strato fs, strato admin
(their --meta default is 127.0.0.1:9860, dev's default meta address).

By default the cluster is unauthenticated and unencrypted. With --secure,
meta and the datanodes speak TLS with certificates of a cluster CA made
under --data/tls (once; reused on restart), and the CLI needs that CA:
--tls-ca or STRATO_TLS_CA, as printed; and meta requires a token of every
client (--auth token): dev prints the administrator's, made on the first
start (docs/security.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if verbose && rc.from("log-level") == "default" {
				rc.log.level = logLevel(slog.LevelInfo)
			}
			o.Logger = rc.log.logger(os.Stderr)
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "strato dev: starting %d meta replica(s) and %d datanodes under %s\n", max(o.MetaReplicas, 1), o.Datanodes, o.Dir)
			reg := telemetry.NewRegistry()
			initialize := func(*grpc.Server) {}
			if httpAddr != "" {
				// The first meta replica is watched: per-RPC metrics,
				// Raft histograms (kept across its restarts).
				mo := meta.Options{}
				gm, _, err := metaTelemetry(&mo, reg, "")
				if err != nil {
					return err
				}
				initialize = gm.Initialize
				o.ConfigureMeta = func(i int, o *meta.Options) {
					if i == 0 {
						o.UnaryInterceptors, o.GRPCServerOptions, o.Raft.Observers = mo.UnaryInterceptors, mo.GRPCServerOptions, mo.Raft.Observers
					}
				}
			}
			setDevMetaOptions(&o, mo)
			if noCache || writeCache > 0 {
				o.ConfigureDatanode = func(_ int, do *datanode.Options) {
					do.NoWriteCache, do.Store.Volume.WriteCacheBytes = noCache, writeCache
				}
			}
			o.Auth = o.TLS
			var err error
			if o.Scan, err = scan.options(); err != nil {
				return err
			}
			if o.TracerProvider, err = rc.startTracing(cmd.Context(), "dev", o.Logger); err != nil {
				return err
			}
			c, err := minicluster.Start(cmd.Context(), o)
			if err != nil {
				return err
			}
			token, err := c.AdminToken()
			if err != nil {
				_ = c.Close()
				return err
			}
			initialize(c.MetaServer(0).GRPCServer())
			// A console that cannot listen (another dev holds the port)
			// leaves the cluster running without it.
			httpTLS, err := c.MetaServerTLS(0)
			if err != nil {
				_ = c.Close()
				return err
			}
			stopHTTP, bound, err := serveMeta(httpAddr, reg, c.MetaServer(0), c.MetaAddrs()[0], httpTLS, c.ClientTLS(), o.Auth, token, pprof, o.Logger)
			httpAddr = bound
			if err != nil {
				fmt.Fprintf(out, "strato dev: no console: %v\n", err)
				stopHTTP, httpAddr = func() {}, ""
			}
			defer stopHTTP()
			printDevNodes(out, c, o.Dir)
			if s3Addr != "" {
				access, closeAccess, err := openAccessLog(s3Access, out)
				if err != nil {
					_ = c.Close()
					return err
				}
				defer closeAccess()
				startDevS3(cmd.Context(), out, c, s3Addr, token, access)
			}
			if httpAddr != "" {
				fmt.Fprintf(out, "  console   %s%s/   (metrics /metrics, health /healthz, /readyz)\n", httpScheme(httpTLS), httpAddr)
			}
			try := "strato sh volume create vol1 && strato sh bucket create /vol1/bucket1 && strato fs put FILE /vol1/bucket1/FILE"
			if o.TLS {
				ca, _ := filepath.Abs(c.CAFile())
				fmt.Fprintf(out, "  tls       meta and datanodes speak TLS; cluster CA %s\n", ca)
				fmt.Fprintf(out, "            for the CLI: export %s=%s   (or --tls-ca %s)\n", tlsCAEnv, ca, ca)
				fmt.Fprintf(out, "  auth      meta requires a token; administrator %s, token %s   (meta wrote it to %s in its data directory)\n",
					meta.AdminUser, token, meta.AdminTokenFile)
				fmt.Fprintf(out, "            for the CLI: strato login --tls-ca %s --token %s   (or export %s=...)\n", ca, token, client.TokenEnv)
				try = "export " + tlsCAEnv + "=" + ca + "; strato login --token " + token + "; " + try
			} else {
				fmt.Fprintf(out, "  security  none: the cluster is unauthenticated and unencrypted (the dev default; --secure turns on TLS and tokens)\n")
			}
			fmt.Fprintf(out, "strato dev: ready; try: %s  (Ctrl-C to stop)\n", try)
			<-cmd.Context().Done()
			fmt.Fprintln(out, "strato dev: stopping")
			if err := c.Close(); err != nil {
				return err
			}
			fmt.Fprintln(out, "strato dev: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "data", "./strato-data", "directory of every node's data")
	f.IntVar(&o.Datanodes, "datanodes", 3, "number of datanodes")
	f.IntVar(&o.Racks, "racks", 0, "spread the datanodes over this many racks, /rack1 to /rackN (default: all on /default-rack)")
	f.IntVar(&o.MetaReplicas, "meta-replicas", 1, "meta replicas: 1, or 3 for a Raft group that survives the loss of one")
	f.StringVar(&o.MetaAddr, "meta-addr", "127.0.0.1:9860", "meta's gRPC address")
	f.StringVar(&s3Addr, "s3-addr", "127.0.0.1:9878", `address of an S3 gateway with the development key (see docs/s3.md; "": none)`)
	f.StringVar(&s3Access, "s3-access-log", "off", `where that gateway's access log goes, as strato s3 --access-log: a file (appended to), "-" for standard output, or "off"`)
	f.StringVar(&httpAddr, "http", "127.0.0.1:9880", `address of the web console and of the first meta replica's /metrics, /healthz and /readyz ("": none)`)
	f.BoolVar(&o.TLS, "secure", false, "TLS between every node and for clients, with a cluster CA made under --data/tls; the S3 gateway and the console (with /metrics) serve HTTPS")
	f.DurationVar(&mo.DelegationTokenRenewInterval, "delegation-token-renew-interval", meta.DefaultDelegationTokenRenewInterval,
		"with --secure: how far the issue or a renewal moves a delegation token's expiry (as strato meta's; a short one shows YARN renewing a job's token)")
	f.BoolVar(&noCache, "no-write-cache", false, "run every datanode as strato datanode --no-write-cache: every replica written around the page cache (decision 0107)")
	f.Var(boundSize{&writeCache}, "write-cache", "run every datanode as strato datanode --write-cache: at most this much of its page-cache writes left in the page cache (default 0: no bound)")
	addLifecycleFlags(f, &mo)
	addPprofFlag(f, &pprof)
	scan.add(f)
	f.BoolVarP(&verbose, "verbose", "v", false, "log every node's info messages to stderr (--log-level info)")
	rc.attach(cmd, "dev", slog.LevelWarn)
	return cmd
}

// printDevNodes prints the address and data directory of each of c's
// nodes, under dir.
func printDevNodes(out io.Writer, c *minicluster.Cluster, dir string) {
	abs, _ := filepath.Abs(dir)
	for i, a := range c.MetaAddrs() {
		sub := "meta"
		if i > 0 {
			sub = fmt.Sprintf("meta%d", i+1)
		}
		fmt.Fprintf(out, "  meta      %s   (data %s)\n", a, filepath.Join(abs, sub))
	}
	for i, a := range c.DatanodeAddrs() {
		fmt.Fprintf(out, "  datanode  %s   (data %s, id %s)\n", a, c.DatanodeDir(i), c.Datanode(i).ID())
	}
}

// setDevMetaOptions gives every meta replica of o what dev's meta flags
// set in mo: the delegation token renew interval (0: meta's default) and
// the lifecycle rounds.
func setDevMetaOptions(o *minicluster.Options, mo meta.Options) {
	withMetaOptions(o, func(m *meta.Options) {
		if d := mo.DelegationTokenRenewInterval; d > 0 {
			m.DelegationTokenRenewInterval = d
		}
		m.LifecycleInterval, m.LifecycleDay, m.LifecycleOpsPerTick = mo.LifecycleInterval, mo.LifecycleDay, mo.LifecycleOpsPerTick
	})
}

// withMetaOptions has every meta replica of o configured by set too.
func withMetaOptions(o *minicluster.Options, set func(*meta.Options)) {
	configure := o.ConfigureMeta
	o.ConfigureMeta = func(i int, mo *meta.Options) {
		if configure != nil {
			configure(i, mo)
		}
		set(mo)
	}
}
