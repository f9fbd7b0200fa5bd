package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bench/teragen"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/client"
)

func init() { benchCommands = append(benchCommands, newBenchTeraGenCmd) }

func newBenchTeraGenCmd() *cobra.Command {
	var (
		cfg         teragen.Config
		metaAddr    string
		localDir    string
		buffer      string
		readBack    string
		readSum     bool
		cdir        benchcluster.Dir
		useTLS      bool
		useAuth     bool
		noCache     bool
		writeCache  int64
		readProfile string
		repl        string
		nodes       int
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

ROWS is the total, split among the writers as TeraGen splits it among its
map tasks: to compare with a benchmark whose writers each write 1 GB (the
HDFS anchor's), give 10m rows per writer (20m with --writers 2).

--local-dir DIR writes to the local file system, PATH taken under DIR, each
file behind a --local-buffer buffer (0: a write(2) per call); hsync is fsync.
Otherwise the files go into strato: PATH is /volume/bucket/dir, through the
meta server at --meta HOST:PORT, or into an in-process cluster (meta and 3
datanodes on loopback, in a temporary directory) when no target is given.
Replication is the bucket's (THREE by default), checksums CRC32C.`,
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
			var fs teragen.FileCreator
			switch {
			case localDir != "" && metaAddr != "":
				return errors.New("bench teragen: --local-dir and --meta are exclusive")
			case localDir != "":
				size, err := bytesize.Parse(buffer)
				if err != nil {
					return err
				}
				// TeraGen refuses an output directory that exists.
				out := filepath.Join(localDir, filepath.FromSlash(path.Clean("/"+cfg.Path)))
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("bench teragen: output directory %s already exists", out)
				}
				fs = teragen.LocalFiles{Root: localDir, BufferSize: int(size)}
				fmt.Fprintf(cmd.ErrOrStderr(), "bench teragen: %d rows into %s (local), %d writers\n", cfg.Rows, out, cfg.Writers)
			default:
				var wo client.WriteOptions
				if repl != "" {
					var err error
					if wo.Replication, wo.ErasureCoding, err = client.ParseReplication(repl); err != nil {
						return err
					}
				}
				conn, err := stratoOutput(ctx, benchcluster.Options{Bench: "teragen", Meta: metaAddr, Dir: cdir, Log: cmd.ErrOrStderr(),
					TLS: useTLS, Auth: useAuth, NoWriteCache: noCache, WriteCacheBytes: writeCache, Datanodes: nodes}, cfg.Path)
				if err != nil {
					return err
				}
				defer func() { _ = conn.Close() }()
				fs = teragen.ClientFiles{Client: conn.Client, Write: wo}
			}
			res, err := teragen.Run(ctx, cfg, fs, cmd.OutOrStdout())
			if err != nil || readBack == "" {
				return err
			}
			rb, err := bytesize.Parse(readBack)
			if err != nil {
				return err
			}
			opener, ok := fs.(teragen.FileOpener)
			if !ok {
				return errors.New("bench teragen: this target cannot read back")
			}
			stopProfile, err := startCPUProfile(readProfile)
			if err != nil {
				return err
			}
			read, err := teragen.Read(ctx, cfg.Path, cfg.Writers, int(rb), readSum, opener, cmd.OutOrStdout())
			stopProfile()
			if err != nil {
				return err
			}
			if readSum && !cfg.NoChecksum && read.Checksum != res.Checksum {
				return fmt.Errorf("bench teragen: read back CHECKSUM=%d, written CHECKSUM=%d", read.Checksum.Counter(), res.Checksum.Counter())
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Writers, "writers", 2, "concurrent writers, TeraGen's map tasks (mapreduce.job.maps)")
	f.StringVar(&metaAddr, "meta", "", "address of a running meta server to write through (default: an in-process cluster)")
	addClusterDirFlags(f, &cdir)
	f.BoolVar(&useTLS, "tls", false, "run the in-process cluster with TLS (docs/security.md)")
	f.StringVar(&readProfile, "read-cpuprofile", "", "write a CPU profile of the read-back (the whole process: with an in-process cluster, its datanodes too) to this file")
	f.BoolVar(&useAuth, "auth", false, "run the in-process cluster with token authentication and block tokens (docs/security.md)")
	f.IntVar(&nodes, "datanodes", 3, "datanodes of the in-process cluster")
	f.Var(boundSize{&writeCache}, "write-cache", "run the in-process cluster's datanodes with --write-cache: at most this much of each one's page-cache writes left in the page cache")
	f.BoolVar(&noCache, "no-write-cache", false, "run the in-process cluster's datanodes with --no-write-cache: every replica written around the page cache, the pipeline leader's too")
	f.StringVar(&repl, "replication", "", "the files' replication: ONE, THREE or an erasure coding config such as rs-3-2-1024k (default: the bucket's; erasure coded files have no hsync: the writers skip it)")
	f.StringVar(&localDir, "local-dir", "", "write to the local file system under this directory")
	f.StringVar(&buffer, "local-buffer", "64k", "with --local-dir: each file's write buffer (0: unbuffered)")
	f.StringVar(&readBack, "read-back", "", "then read every file back, one reader each, in read calls of this size (e.g. 1MiB)")
	f.BoolVar(&readSum, "read-back-checksum", true, "recompute TeraGen's CHECKSUM from the rows read back (off: read only, as the HDFS anchor's read-back does; the client verifies every chunk's CRC32C either way)")
	f.DurationVar(&cfg.ProgressInterval, "progress-interval", 5e9, "interval of the progress lines on stderr")
	f.BoolVar(&cfg.NoChecksum, "no-checksum", false, "do not compute TeraGen's CHECKSUM while writing (a CRC-32 of every row, which TeraGen's map tasks compute; off for comparisons with a writer that computes nothing, as the HDFS anchor's)")
	return cmd
}

// stratoOutput connects to the strato o names and readies the output
// directory out (/volume/bucket/dir): the volume and bucket are created when
// missing and, as TeraGen does, an output directory that exists is refused.
// Meta must answer these calls soon: an address nothing listens on is an
// error, not a wait.
func stratoOutput(ctx context.Context, o benchcluster.Options, out string) (*benchcluster.Conn, error) {
	p, err := client.ParsePath(out, true)
	if err != nil {
		return nil, fmt.Errorf("bench teragen: PATH must be /volume/bucket/dir: %w", err)
	}
	conn, err := benchcluster.Connect(ctx, o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fail := func(err error) (*benchcluster.Conn, error) {
		_ = conn.Close()
		return nil, err
	}
	if err := conn.EnsureBucket(ctx, p.Volume, p.Bucket); err != nil {
		return fail(fmt.Errorf("bench teragen: meta at %s: %w", conn.Meta, err))
	}
	if _, err := conn.Client.Stat(ctx, out); err == nil {
		return fail(fmt.Errorf("bench teragen: output directory %s already exists", out))
	} else if !errors.Is(err, client.ErrNotFound) {
		return fail(fmt.Errorf("bench teragen: meta at %s: %w", conn.Meta, err))
	}
	return conn, nil
}
