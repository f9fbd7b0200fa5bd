package container

import (
	"os"
	"syscall"
)

// openDirect opens path for writes that bypass the page cache (O_DIRECT),
// creating it if needed.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_DIRECT|syscall.O_CLOEXEC, 0o644)
}

const directIOSupported = true
