// Package pagecache tells which of a file's pages the kernel holds in its
// page cache, and drops them: what tests of reads that must not fill the
// cache (direct I/O) look at.
package pagecache

import (
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Resident counts the pages of the file at path that are in the page
// cache (mincore of a read-only mapping).
func Resident(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer func() { _ = unix.Munmap(m) }()
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(m))), uintptr(len(m)), uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
		return 0, e
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, nil
}

// Evict writes the file's dirty pages back and asks the kernel to drop
// all of its pages from the cache (FADV_DONTNEED).
func Evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return err
	}
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
