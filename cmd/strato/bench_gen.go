package main

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/gen"
	"github.com/strato-io/strato/bytesize"
)

func init() { benchCommands = append(benchCommands, newBenchGenCmd) }

func newBenchGenCmd() *cobra.Command {
	var (
		dir, size, csize, bsize, bucket string
		cfg                             gen.Config
	)
	cmd := &cobra.Command{
		Use:   "gen --data DIR --size 20GiB",
		Short: "Generate closed containers and keys offline into a stopped local cluster (Ozone freon cgdn/cgscm/cgom)",
		Long: `gen writes --size of data (per copy, replication THREE) straight into the
directories of a stopped local cluster (one strato dev has run in --data and
is stopped): closed containers of --container-size with real block files
and valid CRC32C checksums on three datanodes each (round-robin), their
records in meta, and one key per block in --bucket (gen/<container>-<n>).
Start strato dev on the directory again afterwards: the datanodes report the
containers and every key is readable.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.Size, err = bytesize.Parse(size); err != nil {
				return err
			}
			if cfg.ContainerSize, err = bytesize.Parse(csize); err != nil {
				return err
			}
			if cfg.BlockSize, err = bytesize.Parse(bsize); err != nil {
				return err
			}
			p := strings.Trim(bucket, "/")
			vol, bkt, ok := strings.Cut(p, "/")
			if !ok || vol == "" || bkt == "" || strings.Contains(bkt, "/") {
				return errors.New("bench gen: --bucket must be /volume/bucket")
			}
			cfg.Volume, cfg.Bucket = vol, bkt
			dev, err := gen.OpenDev(dir, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn})))
			if err != nil {
				return err
			}
			cfg.Datanodes = dev.Datanodes
			cfg.Progress = cmd.ErrOrStderr()
			_, err = gen.Run(cmd.Context(), cfg, dev.Meta, cmd.OutOrStdout())
			return errors.Join(err, dev.Close())
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "data", "./strato-data", "the stopped strato dev directory")
	f.StringVar(&size, "size", "4GiB", "data to generate (per copy)")
	f.StringVar(&csize, "container-size", "1GiB", "size of each container")
	f.StringVar(&bsize, "block-size", "256MiB", "size of each block and key")
	f.StringVar(&bucket, "bucket", "/vol1/gen", "/volume/bucket of the keys")
	return cmd
}
