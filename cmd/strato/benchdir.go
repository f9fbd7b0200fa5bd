package main

import (
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/strato-io/strato/bench/benchcluster"
	"github.com/strato-io/strato/minicluster"
)

// addClusterDirFlags adds the --dir and --keep flags every bench that
// starts its own cluster shares.
func addClusterDirFlags(f *pflag.FlagSet, d *benchcluster.Dir) {
	f.StringVar(&d.Path, "dir", "", "directory of the bench's own cluster (default: a temporary one, removed afterwards)")
	f.BoolVar(&d.Keep, "keep", false, "keep the temporary directory")
}

// startCPUProfile writes a CPU profile to path from now until stop ("":
// none).
func startCPUProfile(path string) (stop func(), err error) {
	return startFileProfile(path, pprof.StartCPUProfile, pprof.StopCPUProfile)
}

// startTrace writes a runtime execution trace (go tool trace) to path from
// now until stop ("": none).
func startTrace(path string) (stop func(), err error) {
	return startFileProfile(path, trace.Start, trace.Stop)
}

// startFileProfile runs a profile that start begins writing to path and
// end stops, until the returned stop ("": none).
func startFileProfile(path string, start func(io.Writer) error, end func()) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { end(); _ = f.Close() }, nil
}

// startMutexProfile samples contended mutexes (one in rate) from now until
// stop, which writes their profile to path ("": none).
func startMutexProfile(path string, rate int) (stop func() error) {
	if path == "" {
		return func() error { return nil }
	}
	runtime.SetMutexProfileFraction(rate)
	return func() error {
		runtime.SetMutexProfileFraction(0)
		return writeProfile(path, "mutex")
	}
}

// writeHeapProfile writes the heap in use, after a collection, to path
// ("": none).
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	runtime.GC()
	return writeProfile(path, "heap")
}

// writeProfile writes the runtime profile called name to path.
func writeProfile(path, name string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// withBenchCluster starts the in-process cluster of a bench that makes
// its own, its servers logging at level to stderr, runs fn on it, and
// stops it.
func withBenchCluster(cmd *cobra.Command, o minicluster.Options, level slog.Level, fn func(*minicluster.Cluster) error) error {
	o.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	c, err := minicluster.Start(cmd.Context(), o)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	return fn(c)
}
