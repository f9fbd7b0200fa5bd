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

// startWriteback asks the kernel to start writing [off, off+n) of the file
// back to disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE).
// Errors are ignored: it is only advice; fsync stays the durability point.
func startWriteback(fd uintptr, off, n int64) {
	_ = syscall.SyncFileRange(int(fd), off, n, 2 /* SYNC_FILE_RANGE_WRITE */)
}
