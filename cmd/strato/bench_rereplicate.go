package main

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bench/rereplicate"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/ec"
	"github.com/strato-io/strato/minicluster"
)

func init() { benchCommands = append(benchCommands, newBenchRereplicateCmd) }

func newBenchRereplicateCmd() *cobra.Command {
	var (
		cfg      rereplicate.Config
		o        minicluster.Options
		size     string
		keySize  string
		csize    string
		bw       string
		cdir     benchcluster.Dir
		logLevel slog.Level
		repl     string
	)
	cmd := &cobra.Command{
		Use:   "rereplicate [--replication THREE|rs-3-2-1024k|...] [--size 4GiB] [--datanodes 4] [--streams 10] [--bandwidth 0]",
		Short: "Lose a datanode of a loaded cluster and measure how fast its containers get three copies back (or their indexes rebuilt)",
		Long: `rereplicate starts a local cluster (meta and --datanodes datanodes in this
process, data under --dir or a temporary directory), puts --size of keys at
replication THREE into it (offline with bench gen, or with --gen=false
through the client), measures the bound (as many concurrent file copies
as the re-replication can run, of the bytes it will copy, on the
datanodes' disk: with direct I/O on both sides, and reading through the
page cache as the sources do, the faster counting; and TCP on loopback),
then stops one datanode and deletes its data. Meta notices the node dead after
--dead-after (the detection, reported apart from the copy) and has the
survivors push copies of its closed containers (--streams per datanode,
--bandwidth bytes/s each) until every container has three healthy copies
again. It prints live progress, a summary (total time, detection and copy
phase, the copy phase's mean and peak GB/s against the bound, per-target
bytes, CPU seconds per GB copied), writes a throughput chart (--chart), and
reads every key back.

With --replication an erasure coding config (rs-3-2-1024k, rs-6-3-1024k,
xor-2-1-1024k, ...), the keys go through the client into a bucket of that
config (--gen is refused), and the lost datanode's index of each container
it held is rebuilt from d other indexes on a datanode holding none of the
container (ReconstructECContainerCommand), until every index is held
again. The cluster needs d+p+1 datanodes (the default for --datanodes:
RS-3-2 6, RS-6-3 10, XOR-2-1 4). The summary gives the rebuild phase's
GB/s (bytes of rebuilt replicas per second, detection apart) against a
bound that charges each rebuilt byte d reads and one write (the disk
bound's streams read d files for each one they write; loopback TCP is
divided by d), the bytes the sources sent, CPU seconds per GB rebuilt (the
whole process, and the targets' rebuilds from the profile), and the code's
encode and decode GB/s on one core, timed after the rebuild
(docs/ec.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if !strings.EqualFold(repl, "THREE") {
				if cfg.EC, err = ec.Parse(repl); err != nil {
					return fmt.Errorf("--replication: THREE or an erasure coding config: %w", err)
				}
				if !cmd.Flags().Changed("gen") {
					cfg.Gen = false
				}
			}
			need := rereplicate.MinDatanodes(cfg.EC)
			if o.Datanodes == 0 {
				o.Datanodes = need
			}
			if o.Datanodes < need {
				return fmt.Errorf("--datanodes %d: %s needs at least %d", o.Datanodes, repl, need)
			}
			if cfg.Size, err = bytesize.Parse(size); err != nil {
				return err
			}
			if cfg.KeySize, err = bytesize.Parse(keySize); err != nil {
				return err
			}
			if o.ContainerSize, err = bytesize.Parse(csize); err != nil {
				return err
			}
			if o.ReplicationBandwidth, err = bytesize.Parse(bw); err != nil {
				return err
			}
			var remove func()
			if o.Dir, remove, err = cdir.Make("strato-rereplicate-"); err != nil {
				return err
			}
			defer remove()
			o.BlockSize = min(256<<20, o.ContainerSize)
			cfg.ContainerSize, cfg.BlockSize = o.ContainerSize, o.BlockSize
			o.ReplicationLimit = o.ReplicationStreams
			cfg.BoundDir, cfg.Streams = o.Dir, o.ReplicationStreams
			cfg.Progress = cmd.ErrOrStderr()
			out := cmd.OutOrStdout()
			redundancy := "THREE"
			if !cfg.EC.IsZero() {
				redundancy = cfg.EC.String()
			}
			fmt.Fprintf(out, "bench rereplicate: %s, %d datanodes, data in %s, containers of %s, %d streams per datanode\n",
				redundancy, o.Datanodes, o.Dir, csize, o.ReplicationStreams)
			return withBenchCluster(cmd, o, logLevel, func(c *minicluster.Cluster) error {
				_, err := rereplicate.Run(cmd.Context(), cfg, c, out)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "size", "4GiB", "data written before the loss")
	f.StringVar(&keySize, "key-size", "64MiB", "size of each key")
	f.IntVar(&cfg.Threads, "threads", 8, "writer threads")
	f.StringVar(&repl, "replication", "THREE", "THREE, or an erasure coding config (rs-3-2-1024k, rs-6-3-1024k, xor-2-1-1024k): the lost indexes are rebuilt")
	f.IntVar(&o.Datanodes, "datanodes", 0, "datanodes (0: the fewest that fit, at least 4 for THREE, d+p+1 erasure coded: every copy or index must fit without the lost one)")
	f.IntVar(&cfg.Victim, "victim", 0, "index of the datanode lost")
	f.IntVar(&o.ReplicationStreams, "streams", 10, "concurrent container copies per datanode")
	f.StringVar(&bw, "bandwidth", "0", "replication bandwidth cap per datanode in bytes/s (0: none)")
	f.StringVar(&csize, "container-size", "1GiB", "container size (closed containers are the unit of copy)")
	f.DurationVar(&o.DeadAfter, "dead-after", 6*time.Second, "how long meta waits for a silent datanode")
	addClusterDirFlags(f, &cdir)
	f.StringVar(&cfg.ChartPath, "chart", "rereplicate.png", "PNG chart of the throughput over time ('' for none)")
	f.BoolVar(&cfg.SkipBound, "skip-bound", false, "do not measure the bound")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the copy to this file (labels: strato.datanode, strato.replication)")
	f.DurationVar(&cfg.Interval, "interval", time.Second, "sampling interval of the progress and the chart")
	f.BoolVar(&cfg.DropCaches, "drop-caches", true, "empty the page cache before the loss (needs root), so that sources read from the disk")
	f.TextVar(&logLevel, "log-level", slog.LevelWarn, "log level of the cluster's servers (debug, info, warn, error)")
	f.BoolVar(&cfg.Gen, "gen", true, "generate the data offline (bench gen) rather than write it through the client (THREE only; erasure coded runs default to false)")
	return cmd
}
