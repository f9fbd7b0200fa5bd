package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench"
	"github.com/strato-io/strato/bench/teragen"
)

func init() { benchCommands = append(benchCommands, newBenchTeraGenCmd) }

func newBenchTeraGenCmd() *cobra.Command {
	var (
		cfg      bench.TeraGenConfig
		metaAddr string
		localDir string
		buffer   string
	)
	cmd := &cobra.Command{
		Use:   "teragen ROWS PATH [flags]",
		Short: "Hadoop's TeraGen through the file system: per-writer time in write, hsync and close",
		Long: `teragen writes ROWS rows of 100 bytes (10k, 5m, 1b, 1t are accepted) into
PATH/part-m-00000, PATH/part-m-00001, ..., exactly the bytes Hadoop's TeraGen
writes with as many map tasks as --writers. Each writer does what TeraGen's
record writer does: one write call for each key, one for each value, then one
hsync and the close. It prints, per writer, the calls and the time spent in
them (write.call, write.allTime, hsync.call, hsync.allTime, close.call,
close.allTime, in ms), then the rows, bytes, elapsed time, MB/s (10^6 bytes)
and TeraGen's counter line CHECKSUM=<value>. Progress goes to stderr.

--local-dir DIR writes to the local file system, PATH taken under DIR, each
file behind a --local-buffer buffer (0: a write(2) per call); hsync is fsync.
Writing into strato (--meta HOST:PORT, or an in-process cluster when no
target is given) waits for the strato file-system client.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			rows, err := teragen.ParseRows(args[0])
			if err != nil {
				return err
			}
			cfg.Rows, cfg.Path = rows, args[1]
			cfg.Progress = cmd.ErrOrStderr()
			cfg.EnsureDefaults()
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			var fs bench.FileCreator
			switch {
			case localDir != "" && metaAddr != "":
				return errors.New("bench teragen: --local-dir and --meta are exclusive")
			case localDir != "":
				size, err := bench.ParseSize(buffer)
				if err != nil {
					return err
				}
				// TeraGen refuses an output directory that exists.
				out := filepath.Join(localDir, filepath.FromSlash(path.Clean("/"+cfg.Path)))
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("bench teragen: output directory %s already exists", out)
				}
				fs = bench.LocalFiles{Root: localDir, BufferSize: int(size)}
				fmt.Fprintf(cmd.ErrOrStderr(), "bench teragen: %d rows into %s (local), %d writers\n", cfg.Rows, out, cfg.Writers)
			default:
				sfs, closeFS, err := stratoFiles(ctx, metaAddr)
				if err != nil {
					return err
				}
				defer func() { _ = closeFS() }()
				fs = sfs
			}
			_, err = bench.RunTeraGen(ctx, cfg, fs, cmd.OutOrStdout())
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Writers, "writers", 2, "concurrent writers, TeraGen's map tasks (mapreduce.job.maps)")
	f.StringVar(&metaAddr, "meta", "", "address of a running meta server to write through (needs the strato client)")
	f.StringVar(&localDir, "local-dir", "", "write to the local file system under this directory")
	f.StringVar(&buffer, "local-buffer", "64k", "with --local-dir: each file's write buffer (0: unbuffered)")
	f.DurationVar(&cfg.ProgressInterval, "progress-interval", 5e9, "interval of the progress lines on stderr")
	return cmd
}

// errNoStratoClient is returned while strato has no file-system client.
var errNoStratoClient = errors.New("bench teragen: writing into strato needs the strato file-system client, which is not there yet; use --local-dir DIR to write to the local file system")

// stratoFiles returns the FileCreator that writes into strato, and what
// releases it.
//
// TODO(client): the strato file-system client plugs in here. With metaAddr,
// dial that meta server (client.DialMeta) and return a bench.FileCreator
// whose Create opens the key for writing, whose writer's Write buffers and
// streams chunks to the pipeline, Hsync is the client's hsync and Close
// commits the key. With no metaAddr, start the in-process cluster
// (cluster/local: meta and datanodes on loopback, as bench meta runs a meta
// server in-process when standalone) and write into it. Also check there,
// as TeraGen does, that PATH does not exist yet.
func stratoFiles(_ context.Context, _ string) (bench.FileCreator, func() error, error) {
	return nil, nil, errNoStratoClient
}
