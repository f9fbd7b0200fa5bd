package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/keyput"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/minicluster"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func init() { benchCommands = append(benchCommands, newBenchKeyPutCmd) }

func newBenchKeyPutCmd() *cobra.Command {
	var (
		cfg      keyput.Config
		metaAddr string
		size     string
		bucket   string
		cdir     clusterDir
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
			if metaAddr == "" {
				dir, remove, err := cdir.make("strato-ockg-")
				if err != nil {
					return err
				}
				defer remove()
				fmt.Fprintf(cmd.ErrOrStderr(), "bench ockg: starting an in-process cluster (meta + 3 datanodes) in %s\n", dir)
				c, err := minicluster.Start(ctx, minicluster.Options{Dir: dir})
				if err != nil {
					return err
				}
				defer func() { _ = c.Close() }()
				metaAddr = c.MetaAddr()
			}
			cl, err := client.New(client.Options{Meta: []string{metaAddr}})
			if err != nil {
				return err
			}
			defer func() { _ = cl.Close() }()
			if _, err := cl.GetVolume(ctx, p.Volume); errors.Is(err, client.ErrNotFound) {
				if _, err := cl.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: p.Volume}); err != nil {
					return err
				}
			}
			if _, err := cl.GetBucket(ctx, p.Volume, p.Bucket); errors.Is(err, client.ErrNotFound) {
				if _, err := cl.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: p.Volume, Name: p.Bucket}); err != nil {
					return err
				}
			}
			cfg.Progress = cmd.ErrOrStderr()
			_, err = keyput.Run(ctx, cfg, cl, cmd.OutOrStdout())
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
	cdir.addFlags(f)
	return cmd
}
