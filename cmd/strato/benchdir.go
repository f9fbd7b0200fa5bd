package main

import (
	"github.com/spf13/pflag"

	"github.com/strato-io/strato/bench/benchcluster"
)

// addClusterDirFlags adds the --dir and --keep flags every bench that
// starts its own cluster shares.
func addClusterDirFlags(f *pflag.FlagSet, d *benchcluster.Dir) {
	f.StringVar(&d.Path, "dir", "", "directory of the bench's own cluster (default: a temporary one, removed afterwards)")
	f.BoolVar(&d.Keep, "keep", false, "keep the temporary directory")
}
