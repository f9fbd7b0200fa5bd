package checksum

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var allTypes = []Type{NONE, CRC32, CRC32C, SHA256, MD5}

func TestParseType(t *testing.T) {
	for _, ty := range allTypes {
		got, err := ParseType(ty.String())
		require.NoError(t, err)
		require.Equal(t, ty, got)
	}
	got, err := ParseType("crc32c")
	require.NoError(t, err)
	require.Equal(t, CRC32C, got)
	_, err = ParseType("adler")
	require.ErrorIs(t, err, ErrInvalid)
	require.Contains(t, err.Error(), "adler")
}

// naive computes one checksum the obvious way, as an oracle.
func naive(t Type, w []byte) []byte {
	switch t {
	case CRC32:
		return binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(w))
	case CRC32C:
		return binary.BigEndian.AppendUint32(nil, crc32.Checksum(w, crc32.MakeTable(crc32.Castagnoli)))
	case SHA256:
		s := sha256.Sum256(w)
		return s[:]
	case MD5:
		s := md5.Sum(w)
		return s[:]
	}
	return nil
}

func TestComputeMatchesOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := rapid.SampledFrom(allTypes).Draw(t, "type")
		bpc := uint32(rapid.IntRange(1, 300).Draw(t, "bpc"))
		data := rapid.SliceOfN(rapid.Byte(), 0, 2000).Draw(t, "data")
		d := Compute(ty, bpc, data)
		var want []byte
		for off := 0; off < len(data); off += int(bpc) {
			want = append(want, naive(ty, data[off:min(off+int(bpc), len(data))])...)
		}
		require.Equal(t, want, nilIfEmpty(d.Sums))
		if ty != NONE {
			require.Equal(t, Windows(int64(len(data)), bpc), d.Count())
		}
		require.NoError(t, Verify(d, 0, data))
	})
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func TestVerifyRangeAndFirstBadWindow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := rapid.SampledFrom(allTypes[1:]).Draw(t, "type")
		bpc := uint32(rapid.IntRange(1, 64).Draw(t, "bpc"))
		data := rapid.SliceOfN(rapid.Byte(), 1, 1000).Draw(t, "data")
		d := Compute(ty, bpc, data)
		n := d.Count()
		// Any window-aligned sub-range verifies.
		from := rapid.IntRange(0, n-1).Draw(t, "from")
		to := rapid.IntRange(from+1, n).Draw(t, "to")
		lo, hi := from*int(bpc), min(to*int(bpc), len(data))
		require.NoError(t, Verify(d, int64(lo), data[lo:hi]))

		// Corrupt bytes; the error names the first corrupted window.
		bad := append([]byte(nil), data...)
		first := rapid.IntRange(0, len(bad)-1).Draw(t, "first")
		bad[first] ^= 1 + byte(rapid.IntRange(0, 254).Draw(t, "flip"))
		if second := rapid.IntRange(first, len(bad)-1).Draw(t, "second"); second != first {
			bad[second] ^= 0x80
		}
		err := Verify(d, 0, bad)
		var me *MismatchError
		require.True(t, errors.As(err, &me), "got %v", err)
		require.ErrorIs(t, err, ErrMismatch)
		w := int64(first) / int64(bpc) * int64(bpc)
		require.Equal(t, w, me.Offset)
		require.Equal(t, min(int64(bpc), int64(len(data))-w), me.Length)
	})
}

func TestVerifyRejectsBadShapes(t *testing.T) {
	data := make([]byte, 100)
	d := Compute(CRC32C, 16, data)
	require.ErrorIs(t, Verify(d, 3, data[3:]), ErrInvalid, "unaligned offset")
	require.ErrorIs(t, Verify(d.Slice(0, 2), 0, data), ErrInvalid, "too few checksums")
	require.ErrorIs(t, Verify(Data{Type: CRC32C, BytesPerChecksum: 0, Sums: d.Sums}, 0, data), ErrInvalid)
	require.ErrorIs(t, Verify(Data{Type: 9, BytesPerChecksum: 16}, 0, data), ErrInvalid)
	require.ErrorIs(t, Verify(Data{Type: CRC32C, BytesPerChecksum: 16, Sums: d.Sums[:5]}, 0, data), ErrInvalid)
	require.NoError(t, Verify(Data{Type: NONE}, 0, data))
}

func TestCombineCRC(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := rapid.SampledFrom([]Type{CRC32, CRC32C}).Draw(t, "type")
		a := rapid.SliceOfN(rapid.Byte(), 0, 500).Draw(t, "a")
		b := rapid.SliceOfN(rapid.Byte(), 0, 5000).Draw(t, "b")
		crc := func(p []byte) uint32 { return binary.BigEndian.Uint32(naive(ty, p)) }
		got, err := CombineCRC(ty, crc(a), crc(b), int64(len(b)))
		require.NoError(t, err)
		require.Equal(t, crc(append(append([]byte(nil), a...), b...)), got)
	})
	_, err := CombineCRC(SHA256, 1, 2, 3)
	require.ErrorIs(t, err, ErrInvalid)
}

func BenchmarkCompute(b *testing.B) {
	data := make([]byte, 4<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, ty := range allTypes {
		b.Run(fmt.Sprintf("%s/4MiB/bpc=16KiB", ty), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			dst := make([]byte, 0, 256*sha256.Size)
			for b.Loop() {
				dst = AppendSums(dst[:0], ty, DefaultBytesPerChecksum, data)
			}
		})
	}
	b.Run("CRC32C/1KiB", func(b *testing.B) {
		b.SetBytes(1024)
		dst := make([]byte, 0, 4)
		for b.Loop() {
			dst = AppendSums(dst[:0], CRC32C, DefaultBytesPerChecksum, data[:1024])
		}
	})
}

func BenchmarkVerifyCRC32C(b *testing.B) {
	data := make([]byte, 4<<20)
	d := Compute(CRC32C, DefaultBytesPerChecksum, data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := Verify(d, 0, data); err != nil {
			b.Fatal(err)
		}
	}
}
