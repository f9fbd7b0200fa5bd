package container

import (
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

type volume struct{ fs vfs.FS }

func (v *volume) read(path string) ([]byte, error) {
	if _, err := os.Stat(path); err != nil { // line 12
		return nil, err
	}
	return os.ReadFile(path) // line 15
}

func (v *volume) remove(path string) error { return v.fs.Remove(path) }

var mode = os.ModePerm // not a file call
