package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// DirectAlign is the alignment direct I/O needs of a buffer's start, and
// of a read's offset and length.
const DirectAlign = directIOAlign

// DirectPiece is the most a copy of cold data (a rebuild's read, a push)
// reads at once with CopyDirect: the pieces the copy bound of bench
// rereplicate reads and an import writes.
const DirectPiece = 4 << 20

// AlignedBuffer returns n bytes that start at a multiple of DirectAlign.
func AlignedBuffer(n int) []byte {
	b := make([]byte, n+DirectAlign)
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) & (DirectAlign - 1))
	if off != 0 {
		off = DirectAlign - off
	}
	return b[off : off+n : off+n]
}

// CopyDirect writes [off, off+n) of f, whose reads are direct
// (SetDirectReads), to w: each piece is read into buf from the DirectAlign
// boundaries around it and written from there. buf must be AlignedBuffer's
// and a multiple of DirectAlign long; its length is the most read at once.
// A copy reads each byte from the disk once and leaves nothing in the page
// cache: for bytes read once, as a rebuild or a copy of a cold container
// does.
func CopyDirect(w io.Writer, f *os.File, off, n int64, buf []byte) (int64, error) {
	if len(buf) < DirectAlign || len(buf)%DirectAlign != 0 || uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%DirectAlign != 0 {
		return 0, fmt.Errorf("container: CopyDirect's buffer of %d bytes is not aligned to %d", len(buf), DirectAlign)
	}
	var sent int64
	for pos, end := off, off+n; pos < end; {
		at := pos &^ (DirectAlign - 1)
		want := min(int64(len(buf)), (end+DirectAlign-1)&^(DirectAlign-1)-at)
		got, err := f.ReadAt(buf[:want], at)
		upto := min(at+int64(got), end)
		if upto <= pos || (upto < end && got < int(want)) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: %s ends %d bytes early", ErrCorrupt, f.Name(), end-max(upto, pos))
			}
			return sent, err
		}
		k, err := w.Write(buf[pos-at : upto-at])
		sent += int64(k)
		if err != nil {
			return sent, err
		}
		pos = upto
	}
	return sent, nil
}
