package measure

import "unsafe"

// AlignedBuffer returns n bytes at a 4096-aligned address, as a datanode's
// receive buffers are, so that they can be written with O_DIRECT.
func AlignedBuffer(n int) []byte {
	const align = 4096
	buf := make([]byte, n+align)
	skip := (align - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%align)) % align
	return buf[skip : skip+n : skip+n]
}
