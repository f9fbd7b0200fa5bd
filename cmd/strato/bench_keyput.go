package main

import (
	"errors"
	"fmt"

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
		repl     string
		nodes    int
		readBack bool
		degraded bool
		useTLS   bool
	)
	cmd := &cobra.Command{
		Use:     "ockg [--keys 100] [--size 10MiB] [--threads 10] [--bucket /vol/bucket] [--meta ADDR]",
		Aliases: []string{"key-put"},
		Short:   "Ozone freon's ockg: N keys of a fixed size put by T threads through the client",
		Long: `ockg (Ozone client key generator) writes --keys keys of --size bytes with
--threads threads through the strato client into --bucket (created if
missing; replication THREE, CRC32C by default), and prints the keys, bytes,
time, MB/s (10^6 bytes) and the key latency. Without --meta it runs against an
in-process cluster (meta and --datanodes datanodes on loopback in a temporary
directory).

--replication gives the keys their own: ONE, THREE or an erasure coding
config (rs-3-2-1024k needs 5 datanodes, rs-6-3-1024k 9). --read-back then
reads every key back with the same threads and checks it; --degraded-read
(in-process cluster only) stops the first datanode and reads them all again
(replicas fail over; erasure coded groups rebuild the lost member's cells).`,
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
			if repl != "" {
				if cfg.Replication, cfg.ErasureCoding, err = client.ParseReplication(repl); err != nil {
					return err
				}
			}
			if degraded && metaAddr != "" {
				return errors.New("bench ockg: --degraded-read stops a datanode of the in-process cluster: not with --meta")
			}
			ctx := cmd.Context()
			conn, err := benchcluster.Connect(ctx, benchcluster.Options{Bench: "ockg", Meta: metaAddr, Dir: cdir,
				Log: cmd.ErrOrStderr(), Datanodes: nodes, TLS: useTLS})
			if err != nil {
				return err
			}
			defer func() { _ = conn.Close() }()
			if err := conn.EnsureBucket(ctx, p.Volume, p.Bucket); err != nil {
				return err
			}
			cfg.Progress = cmd.ErrOrStderr()
			cfg.EnsureDefaults() // one prefix for the writes and the reads
			out := cmd.OutOrStdout()
			if _, err := keyput.Run(ctx, cfg, conn.Client, out); err != nil {
				return err
			}
			if readBack || degraded {
				if _, err := keyput.ReadBack(ctx, cfg, conn.Client, "Read back", out); err != nil {
					return err
				}
			}
			if degraded {
				id := conn.Cluster.Datanode(0).ID()
				if err := conn.Cluster.StopDatanode(0); err != nil {
					return err
				}
				if _, err := keyput.ReadBack(ctx, cfg, conn.Client, "Degraded read", out); err != nil {
					return fmt.Errorf("with datanode %s stopped: %w", id, err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVarP(&cfg.Keys, "keys", "n", 100, "number of keys")
	f.StringVarP(&size, "size", "s", "10MiB", "size of each key")
	f.IntVarP(&cfg.Threads, "threads", "t", 10, "concurrent writers")
	f.StringVar(&bucket, "bucket", "/vol1/ockg", "/volume/bucket to write into")
	f.StringVar(&cfg.Prefix, "prefix", "", "key name prefix (default: ockg-<unix time>)")
	f.StringVar(&metaAddr, "meta", "", "meta address (default: an in-process cluster)")
	f.StringVar(&repl, "replication", "", "the keys' replication: ONE, THREE or an erasure coding config such as rs-3-2-1024k (default: the bucket's)")
	f.IntVar(&nodes, "datanodes", 3, "datanodes of the in-process cluster")
	f.BoolVar(&readBack, "read-back", false, "then read every key back and check it")
	f.BoolVar(&degraded, "degraded-read", false, "then stop a datanode of the in-process cluster and read every key again")
	f.BoolVar(&useTLS, "tls", false, "run the in-process cluster with TLS (docs/security.md)")
	addClusterDirFlags(f, &cdir)
	return cmd
}
