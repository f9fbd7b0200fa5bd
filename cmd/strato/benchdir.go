package main

import (
	"os"

	"github.com/spf13/pflag"
)

// clusterDir is the --dir and --keep flags every bench that starts its own
// cluster (or meta server) shares.
type clusterDir struct {
	dir  string
	keep bool
}

func (d *clusterDir) addFlags(f *pflag.FlagSet) {
	f.StringVar(&d.dir, "dir", "", "directory of the bench's own cluster (default: a temporary one, removed afterwards)")
	f.BoolVar(&d.keep, "keep", false, "keep the temporary directory")
}

// make returns the directory to use and what removes it afterwards: nothing
// for a --dir given or with --keep.
func (d *clusterDir) make(prefix string) (string, func(), error) {
	if d.dir != "" {
		return d.dir, func() {}, os.MkdirAll(d.dir, 0o755)
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if d.keep {
		return dir, func() {}, nil
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
