package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/s3load"
	"github.com/strato-io/strato/bytesize"
)

func init() { benchCommands = append(benchCommands, newBenchS3Cmd) }

func newBenchS3Cmd() *cobra.Command {
	var (
		cfg  s3load.Config
		size string
	)
	cmd := &cobra.Command{
		Use:   "s3 [--endpoint URL] [--op put|get|head|list|listversions|delete|mixed] [--size 1MiB] [-c 16] [--duration 30s | --count N]",
		Short: "A warp-like load generator for any S3 endpoint: ops/s, MB/s and latency percentiles",
		Long: `s3 runs --op on objects of --size with -c concurrent clients against an S3
endpoint (strato's gateway or any other) for --duration, or --count
operations, and prints ops/s, MB/s (10^6 bytes) and latency percentiles per
operation. get, head, list, listversions, delete and mixed first upload
--objects objects (untimed), each --versions times (a versioned bucket keeps
them all: listversions lists objects x versions); mixed is warp's mix (45%
GET, 30% HEAD, 15% PUT, 10% DELETE). list and listversions list everything
under the prefix per operation (ListObjectsV2, ListObjectVersions).
Keys come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; the objects are
deleted at the end unless --keep (with --versioning, which turns versioning
on in the bucket first, every version of them). With --server-pid, the server process's
CPU time per GB moved and its peak RSS are reported too. The last lines
("summary op=... key=value ...") are for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := bytesize.Parse(size)
			if err != nil {
				return err
			}
			cfg.Size = n
			cfg.AccessKey, cfg.Secret = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
			if cfg.AccessKey == "" || cfg.Secret == "" {
				return errors.New("bench s3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (strato dev's: strato-dev, strato-dev-secret)")
			}
			cfg.Progress = cmd.ErrOrStderr()
			res, err := s3load.Run(cmd.Context(), cfg, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			for _, o := range res.Ops {
				if o.Errors > 0 {
					return errors.New("bench s3: some operations failed (see the report)")
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	def := os.Getenv("AWS_ENDPOINT_URL")
	if def == "" {
		def = "http://127.0.0.1:9878"
	}
	f.StringVar(&cfg.Endpoint, "endpoint", def, "the S3 endpoint (default: $AWS_ENDPOINT_URL, else strato dev's gateway)")
	f.StringVar(&cfg.Region, "region", "us-east-1", "the region requests are signed for")
	f.StringVar(&cfg.Bucket, "bucket", "bench-s3", "bucket of the objects (created if missing)")
	f.StringVar(&cfg.Prefix, "prefix", "", "key prefix (default: s3load-<unix time>/)")
	f.StringVar(&cfg.Op, "op", "put", "put, get, head, list, listversions, delete or mixed")
	f.StringVarP(&size, "size", "s", "1MiB", "object size (e.g. 1KiB, 1MiB, 64MiB)")
	f.IntVarP(&cfg.Concurrency, "concurrency", "c", 16, "concurrent clients")
	f.DurationVarP(&cfg.Duration, "duration", "d", 0, "length of the timed phase (default 30s unless --count)")
	f.IntVarP(&cfg.Count, "count", "n", 0, "number of operations instead of a duration")
	f.IntVar(&cfg.Objects, "objects", 0, "objects uploaded first for get/head/list/delete/mixed (default: 1 GiB of them, between -c and 2500)")
	f.IntVar(&cfg.FillConcurrency, "fill-clients", 0, "concurrent clients uploading the --objects first (default: -c)")
	f.IntVar(&cfg.Versions, "versions", 1, "times each of the --objects is put first (the versions of a versioned bucket)")
	f.BoolVar(&cfg.Keep, "keep", false, "leave the objects in place")
	f.BoolVar(&cfg.Versioning, "versioning", false, "turn versioning on in the bucket first (the cleanup then deletes every version)")
	f.IntVar(&cfg.ServerPID, "server-pid", 0, "the server's process ID, to report its CPU time per GB and peak RSS")
	return cmd
}
