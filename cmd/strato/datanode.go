package main

import (
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/datanode"
	"github.com/strato-io/strato/telemetry"
)

func init() { extraCommands = append(extraCommands, newDatanodeServerCmd) }

func newDatanodeServerCmd() *cobra.Command {
	var (
		o        datanode.Options
		listen   string
		metas    string
		httpAddr string
		pprof    bool
		tlsf     tlsFlags
		scan     scanFlags
		rc       roleConfig
	)
	cmd := &cobra.Command{
		Use:   "datanode --data DIR [--data DIR2 ...] --meta ADDR [--listen 127.0.0.1:9870]",
		Short: "Run a datanode: containers on its disks, the data protocol, heartbeats to meta",
		Long: `datanode stores containers on its --data directories (one per disk), serves
the data protocol (docs/wire.md) on --listen, registers with meta and
heartbeats to it, and runs the commands meta sends back. Its identity is
chosen on first start and kept in every data directory (datanode.id).
A data directory that fails (at start, or a health check or an I/O error
while running) is taken out of service and meta copies its containers
back from other replicas; past --failed-volumes-tolerated failed
directories, or with none working, the datanode stops (exit status 1).
SIGTERM stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Meta = strings.Split(metas, ",")
			var err error
			if o.Scan, err = scan.options(); err != nil {
				return err
			}
			if o.TLS, o.ClientTLS, err = tlsf.configs(); err != nil {
				return err
			}
			o.Logger = rc.log.logger(os.Stderr)
			if o.Server.TracerProvider, err = rc.startTracing(cmd.Context(), listen, o.Logger); err != nil {
				return err
			}
			reg := telemetry.NewRegistry()
			if err := telemetry.RegisterCertificates(reg, o.TLS); err != nil {
				return err
			}
			o.Server.Observe = telemetry.NewDataMetrics(reg).Observe
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			dn, err := datanode.Open(o, lis)
			if err != nil {
				_ = lis.Close()
				return err
			}
			o.Logger.Info("datanode serving", "id", dn.ID(), "listen", dn.Addr(), "meta", metas, "tls", o.TLS != nil)
			telemetry.RegisterDatanode(reg, dn)
			stopMetrics, _, err := serveHTTP(httpAddr, telemetry.Endpoint{Registry: reg, Ready: telemetry.DatanodeReady(dn), Pprof: pprof, Logger: o.Logger})
			if err != nil {
				_ = dn.Close()
				return err
			}
			defer stopMetrics()
			select {
			case <-cmd.Context().Done():
			case <-dn.Done():
				_ = dn.Close()
				return dn.Err()
			}
			o.Logger.Info("datanode shutting down")
			return dn.Close()
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Dirs, "data", nil, "a data directory (repeat for each disk; required)")
	f.StringVar(&metas, "meta", "127.0.0.1:9860", "meta replicas' gRPC addresses, comma-separated")
	f.StringVar(&listen, "listen", "127.0.0.1:9870", "address of the data protocol")
	f.StringVar(&o.Rack, "rack", "/default-rack", "this datanode's network location, a path such as /dc1/rack1: meta spreads replicas over racks")
	f.StringVar(&httpAddr, "http", "", "address of the HTTP endpoint serving /metrics (Prometheus), /healthz and /readyz, e.g. 127.0.0.1:9871 (default: none)")
	addPprofFlag(f, &pprof)
	f.BoolVar(&o.BufferedIO, "buffered-io", false, "write every chunk through the page cache, as HDFS does (default: the pipeline leader's through it, the followers' chunks of 1 MiB and more with O_DIRECT; see --no-write-cache)")
	f.BoolVar(&o.NoWriteCache, "no-write-cache", false, "write the pipeline leader's replica (and a ONE block's) around the page cache too: for data not read back soon, whose reads then come from the disk (default: the leader's replica through the page cache, its followers' around it)")
	f.Var(boundSize{&o.Store.Volume.WriteCacheBytes}, "write-cache", "leave at most this much of each data directory's page-cache writes (the pipeline leader's replica, a ONE block's) in the page cache, the oldest dropped as new ones come (default 0: no bound, the kernel decides)")
	f.BoolVar(&o.DisableLocalReads, "no-local-reads", false, "do not hand block files (or their paths) to readers on this host (docs/wire.md §5.11, §5.12): every read goes over TCP")
	f.IntVar(&o.ReplicationStreams, "replication-streams", 0, "closed containers pushed to other datanodes at once (default 10)")
	f.Int64Var(&o.ReplicationBandwidth, "replication-bandwidth", 0, "cap in bytes/s on those pushes together (0: none)")
	f.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", 0, "time between heartbeats (default 3s)")
	scan.add(f)
	f.IntVar(&o.Store.FailedVolumesTolerated, "failed-volumes-tolerated", datanode.AnyFailedVolumes,
		"data directories that may fail before the datanode stops (-1: any, as long as one works)")
	f.DurationVar(&o.VolumeCheckInterval, "volume-check-interval", 0, "time between health checks of the data directories (default 1m)")
	tlsf.addFlags(f, "datanode")
	_ = cmd.MarkFlagRequired("data")
	rc.attach(cmd, "datanode", slog.LevelInfo)
	return cmd
}
