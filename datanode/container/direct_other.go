//go:build !linux

package container

import (
	"errors"
	"os"
)

func openDirect(string) (*os.File, error) { return nil, errors.ErrUnsupported }

const directIOSupported = false

func startWriteback(uintptr, int64, int64) {}

// SetDirectReads: no direct I/O on this platform.
func SetDirectReads(*os.File, bool) error { return errors.ErrUnsupported }

func dropCached(string, int64, int64) {}
