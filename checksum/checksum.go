package checksum

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Type is a checksum algorithm.
type Type uint8

// The checksum types. The numeric values are part of the on-disk and wire
// formats: never renumber them.
const (
	NONE   Type = 0
	CRC32  Type = 1
	CRC32C Type = 2
	SHA256 Type = 3
	MD5    Type = 4
)

// DefaultType is the checksum type used when none is configured.
const DefaultType = CRC32C

// DefaultBytesPerChecksum is the window size used when none is configured.
const DefaultBytesPerChecksum = 16 << 10

// MaxBytesPerChecksum bounds the window size (one window per chunk at most
// for the largest chunk strato accepts).
const MaxBytesPerChecksum = 64 << 20

var (
	// ErrMismatch is returned (wrapped in a *MismatchError) when data does
	// not match its checksums.
	ErrMismatch = errors.New("checksum: mismatch")
	// ErrInvalid is returned for malformed checksum data: an unknown type, a
	// bad window size, or a count of values that does not cover the data.
	ErrInvalid = errors.New("checksum: invalid")
)

var (
	ieeeTable       = crc32.MakeTable(crc32.IEEE)
	castagnoliTable = crc32.MakeTable(crc32.Castagnoli)
)

var typeNames = [...]string{NONE: "NONE", CRC32: "CRC32", CRC32C: "CRC32C", SHA256: "SHA256", MD5: "MD5"}

// String returns the type's name, as accepted by ParseType.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// ParseType parses a type name, case-insensitively.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if strings.EqualFold(s, n) {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown checksum type %q (want one of %s)", ErrInvalid, s, strings.Join(typeNames[:], ", "))
}

// Size is the length in bytes of one checksum value of this type.
func (t Type) Size() int {
	switch t {
	case CRC32, CRC32C:
		return 4
	case SHA256:
		return sha256.Size
	case MD5:
		return md5.Size
	default:
		return 0
	}
}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return int(t) < len(typeNames) }

// Data is the list of checksums that covers a run of bytes starting at a
// window boundary.
type Data struct {
	Type             Type
	BytesPerChecksum uint32
	// Sums holds the checksum values back to back, Type.Size() bytes each.
	Sums []byte
}

// Count returns the number of checksum values in d.
func (d Data) Count() int {
	if sz := d.Type.Size(); sz > 0 {
		return len(d.Sums) / sz
	}
	return 0
}

// At returns the i-th checksum value.
func (d Data) At(i int) []byte {
	sz := d.Type.Size()
	return d.Sums[i*sz : (i+1)*sz]
}

// Windows returns how many windows of bpc bytes cover n bytes.
func Windows(n int64, bpc uint32) int {
	if bpc == 0 || n <= 0 {
		return 0
	}
	return int((n + int64(bpc) - 1) / int64(bpc))
}

// Validate checks the type and window size of d.
func (d Data) Validate() error {
	if !d.Type.Valid() {
		return fmt.Errorf("%w: unknown checksum type %d", ErrInvalid, d.Type)
	}
	if d.Type == NONE {
		return nil
	}
	if d.BytesPerChecksum == 0 || d.BytesPerChecksum > MaxBytesPerChecksum {
		return fmt.Errorf("%w: bytes per checksum %d out of range (1..%d)", ErrInvalid, d.BytesPerChecksum, MaxBytesPerChecksum)
	}
	if len(d.Sums)%d.Type.Size() != 0 {
		return fmt.Errorf("%w: %d checksum bytes is not a multiple of %d", ErrInvalid, len(d.Sums), d.Type.Size())
	}
	return nil
}

// Compute returns the checksums of data, one per window of bpc bytes.
func Compute(t Type, bpc uint32, data []byte) Data {
	return Data{Type: t, BytesPerChecksum: bpc, Sums: AppendSums(nil, t, bpc, data)}
}

// AppendSums appends the checksums of data, one per window of bpc bytes, to
// dst and returns the extended slice.
func AppendSums(dst []byte, t Type, bpc uint32, data []byte) []byte {
	if t == NONE || len(data) == 0 {
		return dst
	}
	n := Windows(int64(len(data)), bpc)
	sz := t.Size()
	if cap(dst)-len(dst) < n*sz {
		grown := make([]byte, len(dst), len(dst)+n*sz)
		copy(grown, dst)
		dst = grown
	}
	for off := 0; off < len(data); off += int(bpc) {
		end := min(off+int(bpc), len(data))
		dst = appendSum(dst, t, data[off:end])
	}
	return dst
}

func appendSum(dst []byte, t Type, w []byte) []byte {
	switch t {
	case CRC32:
		return binary.BigEndian.AppendUint32(dst, crc32.Update(0, ieeeTable, w))
	case CRC32C:
		return binary.BigEndian.AppendUint32(dst, crc32.Update(0, castagnoliTable, w))
	case SHA256:
		s := sha256.Sum256(w)
		return append(dst, s[:]...)
	case MD5:
		s := md5.Sum(w)
		return append(dst, s[:]...)
	}
	return dst
}

// MismatchError names the first window whose data does not match its
// checksum. It wraps ErrMismatch.
type MismatchError struct {
	// Offset and Length give the bad window, relative to the start of the
	// run the checksums cover (the chunk, for chunk checksums).
	Offset, Length int64
	Want, Got      []byte
}

// Error says where the checksums disagree and what each side holds.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("checksum: mismatch in bytes [%d, %d): want %x, got %x", e.Offset, e.Offset+e.Length, e.Want, e.Got)
}

// Unwrap returns ErrMismatch, for errors.Is.
func (e *MismatchError) Unwrap() error { return ErrMismatch }

// Verify checks data against d. The data starts at byte offset off of the run
// that d covers; off must be a multiple of d.BytesPerChecksum, and data must
// end on a window boundary or at the end of the run (a short last window).
// d must hold at least the checksums of the windows that data spans, starting
// with window 0 of the run.
//
// On a mismatch the error is a *MismatchError for the first bad window.
func Verify(d Data, off int64, data []byte) error {
	if d.Type == NONE {
		return nil
	}
	if err := d.Validate(); err != nil {
		return err
	}
	bpc := int64(d.BytesPerChecksum)
	if off < 0 || off%bpc != 0 {
		return fmt.Errorf("%w: offset %d is not a multiple of bytes per checksum %d", ErrInvalid, off, bpc)
	}
	first := int(off / bpc)
	n := Windows(int64(len(data)), d.BytesPerChecksum)
	if first+n > d.Count() {
		return fmt.Errorf("%w: %d checksums cover bytes [0, %d), need [%d, %d)", ErrInvalid, d.Count(), int64(d.Count())*bpc, off, off+int64(len(data)))
	}
	var scratch [sha256.Size]byte
	for i := 0; i < n; i++ {
		lo := int64(i) * bpc
		hi := min(lo+bpc, int64(len(data)))
		got := appendSum(scratch[:0], d.Type, data[lo:hi])
		want := d.At(first + i)
		if string(got) != string(want) {
			return &MismatchError{Offset: off + lo, Length: hi - lo, Want: append([]byte(nil), want...), Got: append([]byte(nil), got...)}
		}
	}
	return nil
}

// Slice returns the checksums of windows [from, to) of d.
func (d Data) Slice(from, to int) Data {
	sz := d.Type.Size()
	return Data{Type: d.Type, BytesPerChecksum: d.BytesPerChecksum, Sums: d.Sums[from*sz : to*sz]}
}
