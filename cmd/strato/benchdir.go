package main

import (
	"os"
	"runtime/pprof"

	"github.com/spf13/pflag"

	"github.com/strato-io/strato/bench/benchcluster"
)

// addClusterDirFlags adds the --dir and --keep flags every bench that
// starts its own cluster shares.
func addClusterDirFlags(f *pflag.FlagSet, d *benchcluster.Dir) {
	f.StringVar(&d.Path, "dir", "", "directory of the bench's own cluster (default: a temporary one, removed afterwards)")
	f.BoolVar(&d.Keep, "keep", false, "keep the temporary directory")
}

// startCPUProfile writes a CPU profile of the process to path until the
// returned function is called; nothing when path is "".
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
