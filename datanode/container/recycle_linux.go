package container

import "golang.org/x/sys/unix"

const renameNoReplaceSupported = true

// renameNoReplace renames src to dst unless dst exists (os.ErrExist then:
// unix.EEXIST matches it).
func renameNoReplace(src, dst string) error {
	return unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, unix.RENAME_NOREPLACE)
}
