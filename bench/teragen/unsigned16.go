package teragen

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
)

// Unsigned16 is a 128-bit unsigned integer, Hi holding the most significant
// 64 bits. Arithmetic wraps modulo 2^128, as Hadoop's Unsigned16 does.
type Unsigned16 struct {
	Hi, Lo uint64
}

// Add returns u + v mod 2^128.
func (u Unsigned16) Add(v Unsigned16) Unsigned16 {
	lo, carry := bits.Add64(u.Lo, v.Lo, 0)
	hi, _ := bits.Add64(u.Hi, v.Hi, carry)
	return Unsigned16{Hi: hi, Lo: lo}
}

// Mul returns u × v mod 2^128.
func (u Unsigned16) Mul(v Unsigned16) Unsigned16 {
	hi, lo := bits.Mul64(u.Lo, v.Lo)
	hi += u.Hi*v.Lo + u.Lo*v.Hi
	return Unsigned16{Hi: hi, Lo: lo}
}

// Byte returns byte i, 0 being the most significant, 15 the least.
func (u Unsigned16) Byte(i int) byte {
	if i < 8 {
		return byte(u.Hi >> (56 - 8*i))
	}
	return byte(u.Lo >> (120 - 8*i))
}

const hexUpper = "0123456789ABCDEF"

// HexDigit returns hex digit i as an upper-case ASCII character, 0 being
// the most significant of the 32 digits (Unsigned16.getHexDigit).
func (u Unsigned16) HexDigit(i int) byte {
	b := u.Byte(i / 2)
	if i%2 == 0 {
		b >>= 4
	}
	return hexUpper[b&0xf]
}

// String formats u as Hadoop's Unsigned16.toString does: lower-case hex
// without leading zeros ("0" for zero). TeraValidate and TeraSum print
// their checksums this way.
func (u Unsigned16) String() string {
	if u.Hi == 0 {
		return strconv.FormatUint(u.Lo, 16)
	}
	return fmt.Sprintf("%x%016x", u.Hi, u.Lo)
}

// ErrSyntax is returned for a string that is not an Unsigned16.
var ErrSyntax = errors.New("teragen: not a 128-bit hexadecimal number")

// ParseUnsigned16 parses up to 32 hex digits, as the Unsigned16(String)
// constructor does.
func ParseUnsigned16(s string) (Unsigned16, error) {
	if s == "" || len(s) > 32 {
		return Unsigned16{}, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	split := max(len(s)-16, 0)
	var u Unsigned16
	var err error
	if split > 0 {
		if u.Hi, err = strconv.ParseUint(s[:split], 16, 64); err != nil {
			return Unsigned16{}, fmt.Errorf("%w: %q", ErrSyntax, s)
		}
	}
	if u.Lo, err = strconv.ParseUint(s[split:], 16, 64); err != nil {
		return Unsigned16{}, fmt.Errorf("%w: %q", ErrSyntax, s)
	}
	return u, nil
}
