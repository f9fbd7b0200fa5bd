package wire

import (
	"encoding/binary"
	"fmt"
	"net"
	"unicode/utf8"

	"github.com/strato-io/strato/checksum"
)

// decoder reads the fields of a typed header. The first error sticks; every
// later read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = Errorf(CodeInvalidArgument, format, args...)
	}
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b) < n {
		d.failf("typed header ends inside %s", what)
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func (d *decoder) u8(what string) uint8 {
	if p := d.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u16(what string) uint16 {
	if p := d.take(2, what); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if p := d.take(4, what); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if p := d.take(8, what); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) i64(what string) int64 { return int64(d.u64(what)) }

// str reads a string of at most max bytes of valid UTF-8.
func (d *decoder) str(max int, what string) string {
	n := int(d.u16(what))
	p := d.take(n, what)
	if d.err != nil {
		return ""
	}
	if n > max {
		d.failf("%s of %d bytes exceeds %d", what, n, max)
		return ""
	}
	if !utf8.Valid(p) {
		d.failf("%s is not valid UTF-8", what)
		return ""
	}
	return string(p)
}

func (d *decoder) blockID() BlockID {
	b := BlockID{ContainerID: d.u64("container ID"), LocalID: d.u64("local ID")}
	if d.err == nil && b.ContainerID == 0 {
		d.failf("container ID 0")
	}
	return b
}

// sums reads a checksum list. The values alias the decoder's buffer.
func (d *decoder) sums(what string) checksum.Data {
	t := checksum.Type(d.u8(what))
	bpc := d.u32(what)
	n := d.u32(what)
	if d.err != nil {
		return checksum.Data{}
	}
	if !t.Valid() {
		d.failf("%s: unknown checksum type %d", what, t)
		return checksum.Data{}
	}
	if t == checksum.NONE {
		if bpc != 0 || n != 0 {
			d.failf("%s: type NONE with bytesPerChecksum %d and %d values (want 0 and 0)", what, bpc, n)
		}
		return checksum.Data{}
	}
	if bpc == 0 || bpc > MaxBytesPerChecksum {
		d.failf("%s: bytesPerChecksum %d out of range 1..%d", what, bpc, MaxBytesPerChecksum)
		return checksum.Data{}
	}
	size := uint64(t.Size())
	if uint64(n)*size > uint64(len(d.b)) {
		d.failf("%s: %d values of %d bytes do not fit in the typed header", what, n, size)
		return checksum.Data{}
	}
	return checksum.Data{Type: t, BytesPerChecksum: bpc, Sums: d.take(int(uint64(n)*size), what)}
}

// records reads a record count (countName) and checks that that many
// records of at least minSize bytes fit in what is left, a bound on what
// the caller allocates for them; tooMany (a format with the count's %d)
// says otherwise.
func (d *decoder) records(countName string, minSize uint64, tooMany string) uint32 {
	n := d.u32(countName)
	if d.err == nil && uint64(n)*minSize > uint64(len(d.b)) {
		d.failf(tooMany, n)
	}
	return n
}

// chunk reads a chunk record and checks that its checksums cover it.
func (d *decoder) chunk(what string) Chunk {
	c := Chunk{Offset: d.i64(what), Length: d.u32(what)}
	c.Checksums = d.sums(what)
	if d.err != nil {
		return Chunk{}
	}
	if c.Offset < 0 || c.Length == 0 || c.Offset > maxOffset-int64(c.Length) {
		d.failf("%s: range [%d, +%d) invalid", what, c.Offset, c.Length)
		return Chunk{}
	}
	if err := checkSums(c.Checksums, c.Length); err != nil {
		d.failf("%s at %d: %v", what, c.Offset, err)
	}
	return c
}

// maxOffset bounds block offsets so that offset+length never overflows.
const maxOffset = 1<<63 - 1

func (d *decoder) followers() []string {
	n := int(d.u16("follower count"))
	if d.err != nil {
		return nil
	}
	if n > MaxFollowers {
		d.failf("%d followers exceed the limit of %d", n, MaxFollowers)
		return nil
	}
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for range n {
		a := d.str(MaxAddrLen, "follower address")
		if d.err != nil {
			return nil
		}
		if err := checkAddr(a, out); err != nil {
			d.failf("%v", err)
			return nil
		}
		out = append(out, a)
	}
	return out
}

func checkAddr(a string, seen []string) error {
	if a == "" || len(a) > MaxAddrLen {
		return fmt.Errorf("follower address %q: want 1..%d bytes", a, MaxAddrLen)
	}
	if _, _, err := net.SplitHostPort(a); err != nil {
		return fmt.Errorf("follower address %q is not host:port", a)
	}
	for _, s := range seen {
		if s == a {
			return fmt.Errorf("follower %q listed twice", a)
		}
	}
	return nil
}

// finish reports the first error, or trailing bytes.
func (d *decoder) finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.failf("%d trailing bytes in typed header", len(d.b))
	}
	return d.err
}

// checkSums checks that sums covers n bytes exactly.
func checkSums(s checksum.Data, n uint32) error {
	if s.Type == checksum.NONE {
		return nil
	}
	if want := checksum.Windows(int64(n), s.BytesPerChecksum); s.Count() != want {
		return fmt.Errorf("%d bytes need %d checksums of %d bytes, got %d", n, want, s.BytesPerChecksum, s.Count())
	}
	return nil
}

func appendU16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }
func appendU32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }
func appendU64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }
func appendI64(dst []byte, v int64) []byte  { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// appendString appends s, cut to 65535 bytes at a rune boundary.
func appendString(dst []byte, s string) []byte {
	if len(s) > 0xffff {
		i := 0xffff
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	dst = appendU16(dst, uint16(len(s)))
	return append(dst, s...)
}

func appendBlockID(dst []byte, b BlockID) []byte {
	return appendU64(appendU64(dst, b.ContainerID), b.LocalID)
}

// appendSums appends a checksum list; NONE is always written as type 0,
// window 0, no values.
func appendSums(dst []byte, s checksum.Data) []byte {
	if s.Type == checksum.NONE {
		return append(dst, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	dst = append(dst, byte(s.Type))
	dst = appendU32(dst, s.BytesPerChecksum)
	dst = appendU32(dst, uint32(s.Count()))
	return append(dst, s.Sums[:s.Count()*s.Type.Size()]...)
}

func appendChunk(dst []byte, c Chunk) []byte {
	dst = appendI64(dst, c.Offset)
	dst = appendU32(dst, c.Length)
	return appendSums(dst, c.Checksums)
}

func appendFollowers(dst []byte, f []string) []byte {
	dst = appendU16(dst, uint16(len(f)))
	for _, a := range f {
		dst = appendString(dst, a)
	}
	return dst
}
