package container

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// dropCached drops [off, off+n) of the file at path from the page cache:
// it waits for the range's writeback (sync_file_range, which by then has
// usually long ended: the range was written a bound's worth of bytes ago),
// then asks the kernel to drop its pages (POSIX_FADV_DONTNEED). Neither
// makes anything durable; a file gone since is skipped.
func dropCached(path string, off, n int64) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
	_ = unix.Fadvise(fd, off, n, unix.FADV_DONTNEED)
	_ = unix.Close(fd)
}

// SetDirectReads turns O_DIRECT on or off for an open file (fcntl
// F_SETFL): on, its reads go between the disk and the caller's buffer,
// around the page cache (CopyDirect). A filesystem without direct I/O
// refuses (EINVAL).
func SetDirectReads(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		fl, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			fl |= unix.O_DIRECT
		} else {
			fl &^= unix.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, fl)
	})
	if err != nil {
		return err
	}
	return serr
}
