package benchcluster

import "os"

// Dir is where a benchmark's own cluster (or meta server) keeps its data.
type Dir struct {
	// Path is the directory, created when missing and never removed.
	// Default: a new temporary directory, removed afterwards.
	Path string
	// Keep keeps the temporary directory.
	Keep bool
}

// Make returns the directory to use and what removes it afterwards:
// nothing for a Path given or with Keep. prefix starts a temporary
// directory's name.
func (d Dir) Make(prefix string) (string, func(), error) {
	if d.Path != "" {
		return d.Path, func() {}, os.MkdirAll(d.Path, 0o755)
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, err
	}
	if d.Keep {
		return dir, func() {}, nil
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
