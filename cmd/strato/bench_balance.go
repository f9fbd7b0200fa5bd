package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/balance"
	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/minicluster"
)

func init() { benchCommands = append(benchCommands, newBenchBalanceCmd) }

func newBenchBalanceCmd() *cobra.Command {
	var (
		cfg                              balance.Config
		o                                minicluster.Options
		size, keySize, csize, bw, mx, rb string
		cdir                             benchcluster.Dir
		logLevel                         slog.Level
	)
	cmd := &cobra.Command{
		Use:   "balance [--size 8GiB] [--fill 0.8] [--threshold 0.05] [--bandwidth 100MiB] [--rounds 3]",
		Short: "Add empty datanodes to full ones and measure the container balancer: its move rate against its cap, and what it costs a foreground write",
		Long: `balance starts a local cluster (meta and --datanodes datanodes in this
process on three racks, data under --dir or a temporary directory), each
datanode reporting a disk of --size / --fill bytes. It stops the second
half of the datanodes, writes --size at replication THREE into the first
half (each then --fill full), closes every container and starts the empty
half again: an operator's cluster after adding datanodes.

First the balancer (--threshold, --bandwidth per source) runs with
nothing else running until its sources have sent --rate-bytes, and is
stopped: the move rate (bytes the sources sent, first byte to last)
against the cap and against the disk's copy bound measured in the same
run, with a chart of the rate over time (--chart). Then, for --rounds
rounds in alternating order, it times a TeraGen-style write (--writers
writers, --rows rows of 100 bytes, hsync and close) alone, and while the
balancer moves containers: the cost of balancing at the cap to a
foreground writer, beside its floor on this machine (the disk bytes and
CPU seconds of the write while balancing, at the best disk rate of the
run and on every core). Last, the balancer runs to its end; the spread
before and after is reported, and every key is read back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			for _, p := range []struct {
				s string
				v *int64
			}{{size, &cfg.Size}, {keySize, &cfg.KeySize}, {csize, &o.ContainerSize}, {mx, &cfg.MaxSizePerIteration}, {rb, &cfg.RateBytes}} {
				if *p.v, err = bytesize.Parse(p.s); err != nil {
					return err
				}
			}
			if bw == "none" {
				cfg.Bandwidth = -1
			} else if cfg.Bandwidth, err = bytesize.Parse(bw); err != nil {
				return fmt.Errorf("--bandwidth: a size per second or none: %w", err)
			}
			cfg.EnsureDefaults()
			if err := cfg.Validate(); err != nil {
				return err
			}
			if o.Datanodes < 6 {
				return fmt.Errorf("--datanodes %d: the balance needs at least 6 (3 full, 3 empty)", o.Datanodes)
			}
			var remove func()
			if o.Dir, remove, err = cdir.Make("strato-balance-"); err != nil {
				return err
			}
			defer remove()
			capacity := uint64(cfg.Capacity())
			o.DatanodeFS = minicluster.CappedDisks(capacity)
			o.BlockSize = min(256<<20, o.ContainerSize)
			cfg.BoundDir, cfg.Progress = o.Dir, cmd.ErrOrStderr()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "bench balance: %d datanodes on %d racks, data in %s, containers of %s, disks of %s\n",
				o.Datanodes, o.Racks, o.Dir, csize, bytesize.Format(int64(capacity)))
			return withBenchCluster(cmd, o, logLevel, func(c *minicluster.Cluster) error {
				_, err := balance.Run(cmd.Context(), cfg, c, out)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Datanodes, "datanodes", 6, "datanodes, at least 6: the first half full, the second half empty")
	f.IntVar(&o.Racks, "racks", 3, "racks the datanodes are spread over")
	f.StringVar(&size, "size", "8GiB", "data written at THREE before the empty datanodes join")
	f.StringVar(&keySize, "key-size", "64MiB", "size of each key")
	f.IntVar(&cfg.Threads, "threads", 8, "writer threads")
	f.Float64Var(&cfg.Fill, "fill", 0.8, "the full datanodes' used fraction of their disk")
	f.Float64Var(&cfg.Threshold, "threshold", 0.05, "the balancer's threshold (0.05: within 5 points of the mean)")
	f.StringVar(&bw, "bandwidth", "100MiB", "the balancer's bandwidth per source datanode, bytes/s ('none': no cap)")
	f.BoolVar(&cfg.NoYield, "no-yield", false, "start the balancer with --no-yield: its moves do not give way to the foreground writes")
	f.StringVar(&mx, "max-size-per-iteration", "0", "the balancer's bytes per iteration (0: its default)")
	f.StringVar(&csize, "container-size", "256MiB", "container size (closed containers are what moves)")
	f.IntVar(&cfg.Rounds, "rounds", 3, "foreground rounds, each timing the write alone and while balancing (0: the rate alone)")
	f.StringVar(&rb, "rate-bytes", "0", "bytes the first phase moves with nothing else running (0: half of --size)")
	f.Uint64Var(&cfg.Rows, "rows", 5_000_000, "rows of 100 bytes the foreground write writes")
	f.IntVar(&cfg.Writers, "writers", 2, "foreground writers")
	f.DurationVar(&o.DeadAfter, "dead-after", 6*time.Second, "how long meta waits for a silent datanode")
	addClusterDirFlags(f, &cdir)
	f.StringVar(&cfg.ChartPath, "chart", "balance.png", "PNG chart of the move rate over time ('' for none)")
	f.BoolVar(&cfg.SkipBound, "skip-bound", false, "do not measure the disk's copy bound")
	f.StringVar(&cfg.TracePrefix, "trace", "", "write an execution trace of each foreground write to PREFIX-rN-alone.trace and PREFIX-rN-balancing.trace (go tool trace -pprof=syscall FILE: where it waits)")
	f.DurationVar(&cfg.Interval, "interval", time.Second, "sampling interval of the progress and the chart")
	f.TextVar(&logLevel, "log-level", slog.LevelWarn, "log level of the cluster's servers (debug, info, warn, error)")
	return cmd
}
