package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
)

func init() { benchCommands = append(benchCommands, newBenchKeyPutCmd) }

func newBenchKeyPutCmd() *cobra.Command {
	var (
		cfg      keyput.Config
		metaAddr string
		size     string
		bucket   string
		cdir     benchcluster.Dir
	)
	cmd := &cobra.Command{
		Use:     "ockg [--keys 100] [--size 10MiB] [--threads 10] [--bucket /vol/bucket] [--meta ADDR]",
		Aliases: []string{"key-put"},
		Short:   "Ozone freon's ockg: N keys of a fixed size put by T threads through the client",
		Long: `ockg (Ozone client key generator) writes --keys keys of --size bytes with
--threads threads through the strato client into --bucket (created if
missing; replication THREE, CRC32C by default), and prints the keys, bytes,
time, MB/s (10^6 bytes) and the key latency. Without --meta it runs against an
in-process cluster (meta and 3 datanodes on loopback in a temporary
directory).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bytesize.Parse(size)
			if err != nil {
				return err
			}
			cfg.Size = n
			p, err := client.ParsePath(bucket, true)
			if err != nil || p.Key != "" {
				return errors.New("bench ockg: --bucket must be /volume/bucket")
			}
			cfg.Volume, cfg.Bucket = p.Volume, p.Bucket
			ctx := cmd.Context()
			conn, err := benchcluster.Connect(ctx, benchcluster.Options{Bench: "ockg", Meta: metaAddr, Dir: cdir, Log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			defer func() { _ = conn.Close() }()
			if err := conn.EnsureBucket(ctx, p.Volume, p.Bucket); err != nil {
				return err
			}
			cfg.Progress = cmd.ErrOrStderr()
			_, err = keyput.Run(ctx, cfg, conn.Client, cmd.OutOrStdout())
			return err
		},
	}
	f := cmd.Flags()
	f.IntVarP(&cfg.Keys, "keys", "n", 100, "number of keys")
	f.StringVarP(&size, "size", "s", "10MiB", "size of each key")
	f.IntVarP(&cfg.Threads, "threads", "t", 10, "concurrent writers")
	f.StringVar(&bucket, "bucket", "/vol1/ockg", "/volume/bucket to write into")
	f.StringVar(&cfg.Prefix, "prefix", "", "key name prefix (default: ockg-<unix time>)")
	f.StringVar(&metaAddr, "meta", "", "meta address (default: an in-process cluster)")
	addClusterDirFlags(f, &cdir)
	return cmd
}
