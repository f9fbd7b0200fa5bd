package main

import (
	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/appends"
	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
)

func init() { benchCommands = append(benchCommands, newBenchAppendCmd) }

func newBenchAppendCmd() *cobra.Command {
	var (
		cfg            appends.Config
		metaAddr, path string
		base, size     string
		cdir           benchcluster.Dir
	)
	cmd := &cobra.Command{
		Use:   "append [--base 1GiB] [--size 1MiB] [--count 100] [--path /vol1/append/f] [--meta ADDR]",
		Short: "The latency of appending to a closed file: open, write, close, one append at a time",
		Long: `append writes a file of --base bytes at --path (its bucket created if
missing), then --count times opens it with append, writes --size bytes and closes
it, and prints the latency of each whole append (p50, p99, ...). Without --meta
it runs against an in-process cluster (meta and three datanodes on loopback in a
temporary directory).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.BaseSize, err = bytesize.Parse(base); err != nil {
				return err
			}
			if cfg.Size, err = bytesize.Parse(size); err != nil {
				return err
			}
			p, err := client.ParsePath(path, true)
			if err != nil || p.Key == "" {
				return usagef("--path must be /volume/bucket/file")
			}
			cfg.Path, cfg.Progress = p.String(), cmd.ErrOrStderr()
			ctx := cmd.Context()
			conn, err := benchcluster.Connect(ctx, benchcluster.Options{Bench: "append", Meta: metaAddr, Dir: cdir, Log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			defer func() { _ = conn.Close() }()
			if err := conn.EnsureBucket(ctx, p.Volume, p.Bucket); err != nil {
				return err
			}
			_, err = appends.Run(ctx, cfg, conn.Client, cmd.OutOrStdout())
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&base, "base", "1GiB", "size of the closed file appended to")
	f.StringVarP(&size, "size", "s", "1MiB", "bytes each append writes")
	f.IntVarP(&cfg.Count, "count", "n", 100, "appends timed")
	f.StringVar(&path, "path", "/vol1/append/f", "the file: /volume/bucket/path")
	f.StringVar(&metaAddr, "meta", "", "meta address (default: an in-process cluster)")
	addClusterDirFlags(f, &cdir)
	return cmd
}
