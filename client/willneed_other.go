//go:build !linux

package client

import "os"

// willNeed: no read-ahead hint here.
func willNeed(*os.File, int64, int64) {}
