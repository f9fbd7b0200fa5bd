package rereplicate

import (
	"os"
	"syscall"
)

func openDirect(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_DIRECT, 0o644)
}
