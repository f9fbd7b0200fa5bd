package checksum

import "fmt"

// Reversed polynomials of the two CRC-32 variants, as hash/crc32 uses them.
const (
	polyIEEE       = 0xedb88320
	polyCastagnoli = 0x82f63b78
)

// CombineCRC returns the CRC of the concatenation A‖B given crcA = CRC(A),
// crcB = CRC(B) and lenB = len(B), for t = CRC32 or CRC32C. It runs in
// O(log lenB) time, without the data.
//
// This is zlib's crc32_combine: appending lenB zero bytes to A is a linear
// map on the CRC register, computed by repeated squaring of the one-zero-bit
// operator over GF(2).
func CombineCRC(t Type, crcA, crcB uint32, lenB int64) (uint32, error) {
	var poly uint32
	switch t {
	case CRC32:
		poly = polyIEEE
	case CRC32C:
		poly = polyCastagnoli
	default:
		return 0, fmt.Errorf("%w: CRC combine needs CRC32 or CRC32C, not %s", ErrInvalid, t)
	}
	if lenB <= 0 {
		return crcA, nil
	}
	var even, odd [32]uint32 // operators for 2^k and 2^(k+1) zero bits
	// odd = operator for one zero bit.
	odd[0] = poly
	row := uint32(1)
	for n := 1; n < 32; n++ {
		odd[n] = row
		row <<= 1
	}
	gf2Square(&even, &odd) // two zero bits
	gf2Square(&odd, &even) // four zero bits
	// Apply lenB zero bytes (8*lenB bits) to crcA: the first square below is
	// one byte (eight bits).
	for {
		gf2Square(&even, &odd)
		if lenB&1 != 0 {
			crcA = gf2Times(&even, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
		gf2Square(&odd, &even)
		if lenB&1 != 0 {
			crcA = gf2Times(&odd, crcA)
		}
		lenB >>= 1
		if lenB == 0 {
			break
		}
	}
	return crcA ^ crcB, nil
}

func gf2Times(mat *[32]uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

func gf2Square(square, mat *[32]uint32) {
	for n := 0; n < 32; n++ {
		square[n] = gf2Times(mat, mat[n])
	}
}
