//go:build !linux

package rereplicate

import (
	"errors"
	"os"
)

func openDirect(string, int) (*os.File, error) { return nil, errors.ErrUnsupported }
