//go:build !linux

package container

import "errors"

const renameNoReplaceSupported = false

func renameNoReplace(string, string) error { return errors.ErrUnsupported }
