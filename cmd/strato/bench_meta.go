package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/bench/measure"
	"github.com/strato-io/strato/bench/nnbench"
	"github.com/strato-io/strato/certs"
	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/meta"
	"github.com/strato-io/strato/metaconn"
)

func init() { benchCommands = append(benchCommands, newBenchMetaCmd) }

const benchMetaUsage = `strato bench meta: Hadoop's NNThroughputBenchmark for strato's metadata service.

Usage: strato bench meta -op OP [options]

  -op all <other ops options> |
  -op create [-threads T] [-files N] [-filesPerDir P] [-close] |
  -op mkdirs [-threads T] [-dirs N] [-dirsPerDir P] |
  -op open|delete|fileStatus|rename|list [-threads T] [-files N] [-filesPerDir P] [-useExisting] [-offset K] |
  -op blockReport [-datanodes T] [-reports N] [-blocksPerReport B] [-blocksPerFile F] |
  -op replication [-datanodes T] [-nodesToDecommission D] [-nodeReplicationLimit C] [-totalBlocks B] [-replication R] |
  -op clean
  general: [-keepResults] [--meta HOST:PORT[,HOST:PORT...]] [--follower-reads] [--batch N] [--dir DIR] [--keep] [--volume V] [--bucket B]
           [--cpuprofile FILE] [--trace FILE] [--no-deferred-create] [--tls-ca FILE] [--token TOKEN]

create -close asks for a deferrable open (no size hint): the leader checks
it and answers with a create token, and the close commits the token, so
that a create and its close are one Raft entry; --no-deferred-create opens
every file through Raft (two entries). Without -close, every file is opened
through Raft and left open, as HDFS leaves it under construction.

-useExisting runs an op on files already there (a kept --dir): those
of the create op, or those an earlier -useExisting op took (open,
fileStatus, rename, delete and list, one after the other, on one big
namespace). -offset K starts at the K-th file of the name sequence, so
that delete and rename can each take a range of their own.

Without --meta, a meta server runs inside the benchmark and is called
directly (standalone); its data goes to --dir (default: a temporary
directory, removed afterwards unless --keep). With --meta, a running server is driven
over gRPC (remote), with TLS when --tls-ca names the cluster's CA and a
token for a meta that authenticates clients; the replication op needs
standalone mode. --meta may list every replica of a group: calls go to its
leader (following redirects), and with --follower-reads the reads (open's
LookupKey, fileStatus's GetFileStatus) go to every replica in turn, each
served linearizably by a follower (strato meta --follower-reads), to
compare the read ops/s of a group with and without follower reads.
Remote reads go as every client of meta sends them: while --batch N (2)
of them are in flight to a replica, those made meanwhile wait and go
together as one call (BatchService); --batch 0 sends each alone.
`

func newBenchMetaCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "meta -op OP [options]",
		Short:              "Metadata throughput: Hadoop's NNThroughputBenchmark (create, mkdirs, open, delete, fileStatus, rename, blockReport, replication)",
		DisableFlagParsing: true, // Hadoop's single-dash options (-op, -threads, ...)
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBenchMeta(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runBenchMeta(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o nnbench.Options
	fs := flag.NewFlagSet("strato bench meta", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchMetaUsage) }
	fs.StringVar(&o.Op, "op", "", "operation")
	fs.IntVar(&o.Threads, "threads", 0, "")
	fs.IntVar(&o.Files, "files", 0, "")
	fs.IntVar(&o.FilesPerDir, "filesPerDir", 0, "")
	fs.IntVar(&o.Dirs, "dirs", 0, "")
	fs.IntVar(&o.DirsPerDir, "dirsPerDir", 0, "")
	fs.BoolVar(&o.Close, "close", false, "")
	fs.BoolVar(&o.UseExisting, "useExisting", false, "")
	fs.Int64Var(&o.Offset, "offset", 0, "")
	fs.BoolVar(&o.KeepResults, "keepResults", false, "")
	fs.IntVar(&o.Datanodes, "datanodes", 0, "")
	fs.IntVar(&o.Reports, "reports", 0, "")
	fs.IntVar(&o.BlocksPerReport, "blocksPerReport", 0, "")
	fs.IntVar(&o.BlocksPerFile, "blocksPerFile", 0, "")
	fs.IntVar(&o.NodesToDecommission, "nodesToDecommission", 0, "")
	fs.IntVar(&o.NodeReplicationLimit, "nodeReplicationLimit", 0, "")
	fs.IntVar(&o.TotalBlocks, "totalBlocks", 0, "")
	fs.IntVar(&o.Replication, "replication", 0, "")
	metaAddr := fs.String("meta", "", "address of a running meta server, or of every replica of a group, comma-separated (remote mode)")
	followerReads := fs.Bool("follower-reads", false, "remote: spread the reads over every replica --meta lists (follower reads)")
	batch := fs.Int("batch", metaconn.DefaultBatchInFlight, "remote: calls in flight to a replica before the calls made meanwhile go together as one batch (0: every call alone)")
	dataDir := fs.String("dir", "", "standalone: meta's data directory (default: a temporary one, removed afterwards)")
	fs.StringVar(dataDir, "data", "", "the same as --dir")
	keep := fs.Bool("keep", false, "standalone: keep the temporary directory")
	volume := fs.String("volume", "bench", "volume of the benchmark's bucket")
	bucket := fs.String("bucket", "nnbench", "the benchmark's FSO bucket")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := fs.String("trace", "", "write a runtime execution trace of the run to this file (go tool trace)")
	noDefer := fs.Bool("no-deferred-create", false, "open every created file through Raft (create and close: two entries)")
	tlsCA := fs.String("tls-ca", "", "remote: the cluster CA's certificate: call meta over TLS ($"+tlsCAEnv+" replaces the default, none)")
	token := fs.String("token", "", "remote: the token to present to a meta with --auth token (default $"+client.TokenEnv+", then the login file)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usagef("%s", err.Error())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.Op == "" {
		fs.Usage()
		return fmt.Errorf("-op is required")
	}
	// blockReport's -datanodes is its thread count, as in Hadoop.
	if o.Op == "blockReport" && o.Datanodes == 0 && o.Threads != 0 {
		o.Datanodes = o.Threads
	}
	o.Out = stdout
	o.Progress = stderr
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return err
	}

	var (
		target     *nnbench.ServiceTarget
		srv        *meta.Server
		standalone = *metaAddr == ""
	)
	if standalone {
		dir, remove, err := benchcluster.Dir{Path: *dataDir, Keep: *keep}.Make("strato-bench-meta-")
		if err != nil {
			return err
		}
		defer remove()
		if srv, err = benchcluster.StartMeta(ctx, dir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))); err != nil {
			return err
		}
		defer func() { _ = srv.Close() }()
		target = &nnbench.ServiceTarget{NS: srv, Datanodes: srv, Admin: srv, Volume: *volume, Bucket: *bucket}
		fmt.Fprintf(stderr, "bench meta: standalone meta in %s\n", dir)
	} else {
		creds := insecure.NewCredentials()
		if *tlsCA == "" {
			*tlsCA = os.Getenv(tlsCAEnv)
		}
		if *tlsCA != "" {
			cfg, err := certs.ClientConfig(*tlsCA, "", "")
			if err != nil {
				return fmt.Errorf("-tls-ca: %w", err)
			}
			creds = credentials.NewTLS(cfg)
		}
		dial := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
		tok, err := client.FindToken(*token)
		if err != nil {
			return err
		}
		if tok != "" {
			dial = append(dial, grpc.WithPerRPCCredentials(client.TokenCredentials(tok)))
		}
		conn, err := metaconn.Dial(strings.Split(*metaAddr, ","), nil, dial...)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		conn.SetFollowerReads(*followerReads)
		conn.SetBatching(*batch)
		defer func() {
			if batches, calls := conn.BatchStats(); batches > 0 {
				fmt.Fprintf(stdout, "Batches: %d carried %d calls (%.1f a batch)\n", batches, calls, float64(calls)/float64(batches))
			}
			if *followerReads {
				served, fallbacks := conn.FollowerReadStats()
				fmt.Fprintf(stdout, "Follower reads: %d served by a replica other than the leader, %d fell back to the leader\n", served, fallbacks)
			}
		}()
		target = nnbench.NewRemote(conn, *volume, *bucket)
		fmt.Fprintf(stderr, "bench meta: remote meta at %s (follower reads: %v)\n", *metaAddr, *followerReads)
	}
	target.NoDeferredCreate = *noDefer
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startTrace(*traceFile)
	if err != nil {
		return err
	}
	defer stopTrace()
	if err := target.Setup(ctx, o.Replication); err != nil {
		return err
	}
	_, err = nnbench.Run(ctx, o, target, standalone)
	if srv != nil {
		m := srv.Node().Metrics()
		fmt.Fprintf(stdout, "Raft: %d proposals in %d log appends (%.1f per append), %d fsyncs\n",
			m.Proposals, m.LogAppends, float64(m.Proposals)/float64(max(m.LogAppends, 1)), m.Fsyncs)
	}
	if rss := measure.PeakRSS(); rss > 0 {
		fmt.Fprintf(stdout, "Peak RSS: %.1f MiB\n", float64(rss)/(1<<20))
	}
	return err
}
