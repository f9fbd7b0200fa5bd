package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bench/snapbench"
)

func init() { benchCommands = append(benchCommands, newBenchSnapshotCmd) }

func newBenchSnapshotCmd() *cobra.Command {
	o := snapbench.Options{}
	var dir benchcluster.Dir
	var prof string
	cmd := &cobra.Command{
		Use:   "snapshot [--keys 1000000] [--snapshots 10] [--changes 10000]",
		Short: "Bucket snapshots: create time in a big bucket, the create rate beside snapshots, snapdiff time",
		Long: `snapshot runs a meta server in this process (its data in --dir, or a
temporary directory) and fills two FSO buckets with --keys files each.
It takes --snapshots snapshots of the first, timing each; then makes
--creates files a round in each bucket for --rounds rounds, alternating
which goes first, and compares the median create rates (with snapshots
against without); then takes a snapshot, makes --changes changes to the
first bucket (a quarter each of new files, overwrites, renames and
deletes) and times snapdiff from that snapshot to now and to a snapshot
taken after them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Keys < o.Changes || o.Snapshots < 1 || o.Rounds < 1 || o.Creates < 1 {
				return usagef("--keys must be at least --changes, and --snapshots, --rounds and --creates at least 1")
			}
			o.Out, o.Progress = cmd.OutOrStdout(), cmd.ErrOrStderr()
			d, remove, err := dir.Make("strato-bench-snapshot-")
			if err != nil {
				return err
			}
			defer remove()
			srv, err := benchcluster.StartMeta(cmd.Context(), d, slog.New(slog.NewTextHandler(o.Progress, &slog.HandlerOptions{Level: slog.LevelWarn})))
			if err != nil {
				return err
			}
			defer func() { _ = srv.Close() }()
			stopProfile, err := startCPUProfile(prof)
			if err != nil {
				return err
			}
			defer stopProfile()
			res, err := snapbench.Run(cmd.Context(), o, srv)
			if err != nil {
				return err
			}
			res.Print(o.Out, o)
			if rss := measure.PeakRSS(); rss > 0 {
				cmd.Printf("Peak RSS: %.1f MiB\n", float64(rss)/(1<<20))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Keys, "keys", 1_000_000, "files in each bucket before anything is measured")
	f.IntVar(&o.Threads, "threads", 16, "concurrent clients")
	f.IntVar(&o.Snapshots, "snapshots", 10, "snapshots of the first bucket")
	f.IntVar(&o.Changes, "changes", 10_000, "changes snapdiff reports")
	f.IntVar(&o.Creates, "creates", 50_000, "files a create round makes")
	f.IntVar(&o.Rounds, "rounds", 3, "create rounds in each bucket")
	addClusterDirFlags(f, &dir)
	f.StringVar(&prof, "cpuprofile", "", "write a CPU profile of the run to this file")
	return cmd
}
