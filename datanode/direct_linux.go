package datanode

import (
	"os"

	"golang.org/x/sys/unix"
)

// setDirect turns O_DIRECT on or off for an open file's reads (fcntl
// F_SETFL): on, they go between the disk and the caller's buffer, around
// the page cache. A filesystem without direct I/O refuses (EINVAL).
func setDirect(f *os.File, on bool) error {
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
