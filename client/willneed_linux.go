package client

import (
	"os"

	"golang.org/x/sys/unix"
)

// willNeed asks the kernel to start reading [off, off+n) of f into the
// page cache (posix_fadvise WILLNEED); only a hint.
func willNeed(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_WILLNEED)
}
