//go:build !linux

package datanode

import (
	"errors"
	"os"
)

func setDirect(*os.File, bool) error { return errors.ErrUnsupported }
