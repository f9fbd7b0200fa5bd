package main

import (
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/strato-io/strato/bench/chunkwrite"
	"github.com/strato-io/strato/bytesize"
	"github.com/strato-io/strato/checksum"
)

func init() { benchCommands = append(benchCommands, newBenchChunkWriteCmd) }

func newBenchChunkWriteCmd() *cobra.Command {
	var (
		p        chunkwrite.Plan
		size     string
		sumType  string
		interval = p.Options.ProgressInterval
	)
	cmd := &cobra.Command{
		Use:   "chunk-write [flags]",
		Short: "Write chunks straight into a container store: one file per block vs one file per chunk (Ozone freon cmdw)",
		Long: `chunk-write writes -n chunks of -s bytes, -c chunks per block, from -t threads,
into one OPEN container of a fresh volume under --dir, as Ozone's "freon cmdw"
does. -l RAW is the reference: a bare loop of pwrite calls on the same threads
and the same number of files, no checksums, no metadata. --matrix runs the
original grid (1k, 10k, 100k, 1M, 4M × FILE_PER_BLOCK, FILE_PER_CHUNK, RAW, each
followed by a sync). --dd runs dd with direct I/O in the same directory, the
disk's sequential rate the 4 MiB case is compared with.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := &p.Options
			if cmd.Flags().Changed("size") || !p.Matrix {
				s, err := bytesize.Parse(size)
				if err != nil {
					return err
				}
				o.ChunkSize = s
			}
			if sumType != "" {
				t, err := checksum.ParseType(sumType)
				if err != nil {
					return err
				}
				o.Checksum, o.ChecksumSet = t, true
			}
			if p.Matrix && cmd.Flags().Changed("size") {
				p.MatrixSizes = []int64{o.ChunkSize}
			}
			if p.Matrix && cmd.Flags().Changed("layout") {
				p.MatrixLayouts = []string{o.Layout}
			}
			o.ProgressOut = cmd.ErrOrStderr()
			o.Progress = term.IsTerminal(int(os.Stdout.Fd())) && term.IsTerminal(int(os.Stderr.Fd()))
			o.ProgressInterval = interval
			p.Out = cmd.OutOrStdout()
			_, err := p.Run(cmd.Context())
			return err
		},
	}
	f := cmd.Flags()
	f.IntVarP(&p.Options.Chunks, "chunks", "n", 0, "total number of chunks (default 1024; in --matrix, min(100000, 256 MiB / size) per case)")
	f.StringVarP(&size, "size", "s", "4M", "chunk size: 1k, 10k, 4M, ...")
	f.IntVarP(&p.Options.ChunksPerBlock, "chunks-per-block", "c", 16, "chunks per block")
	f.IntVarP(&p.Options.Threads, "threads", "t", 16, "writer threads")
	f.StringVarP(&p.Options.Layout, "layout", "l", chunkwrite.LayoutFilePerBlock, "FILE_PER_BLOCK, FILE_PER_CHUNK or RAW")
	f.StringVar(&p.Options.Dir, "dir", "", "directory for the data (default: the system temporary directory); each run's files are removed afterwards")
	f.BoolVar(&p.Options.Keep, "keep", false, "keep each run's data directory")
	f.StringVar(&sumType, "checksum", "CRC32C", "checksum type: NONE, CRC32, CRC32C, SHA256, MD5")
	f.BoolVar(&p.Options.Sync, "sync", false, "fsync everything at the end, inside the timed run")
	f.BoolVar(&p.Options.NoDirectIO, "no-direct-io", false, "write every chunk through the page cache (the store uses O_DIRECT for aligned chunks of 1 MiB and more)")
	f.BoolVar(&p.Matrix, "matrix", false, "run the original grid: 1k,10k,100k,1M,4M × FILE_PER_BLOCK, FILE_PER_CHUNK, RAW, 16 threads, each followed by a sync")
	f.BoolVar(&p.WithRaw, "with-raw", false, "also run RAW with the same flags and print the ratio")
	f.BoolVar(&p.DD, "dd", false, "also run 'dd if=/dev/zero bs=4M count=N oflag=direct' in --dir, before every round and at the end")
	f.IntVar(&p.DDCount, "dd-count", 1024, "dd's count of 4 MiB blocks")
	f.IntVar(&p.Repeat, "repeat", 1, "run every case this many times (interleaved) and report medians")
	f.DurationVar(&interval, "progress-interval", 5e9, "interval of progress lines when not on a terminal")
	return cmd
}
