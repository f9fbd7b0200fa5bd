package teragen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func u16(t *testing.T, s string) Unsigned16 {
	t.Helper()
	u, err := ParseUnsigned16(s)
	require.NoError(t, err)
	return u
}

func drawU16(t *rapid.T, label string) Unsigned16 {
	return Unsigned16{Hi: rapid.Uint64().Draw(t, label+".hi"), Lo: rapid.Uint64().Draw(t, label+".lo")}
}

var mod128 = new(big.Int).Lsh(big.NewInt(1), 128)

func toBig(u Unsigned16) *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(u.Lo))
}

// TestUnsigned16 checks the arithmetic against math/big.
func TestUnsigned16(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		u, v := drawU16(t, "u"), drawU16(t, "v")
		sum := new(big.Int).Add(toBig(u), toBig(v))
		require.Equal(t, sum.Mod(sum, mod128).String(), toBig(u.Add(v)).String())
		prod := new(big.Int).Mul(toBig(u), toBig(v))
		require.Equal(t, prod.Mod(prod, mod128).String(), toBig(u.Mul(v)).String())

		digits := fmt.Sprintf("%032X", toBig(u))
		raw := toBig(u).FillBytes(make([]byte, 16))
		for i := range 32 {
			require.Equal(t, digits[i], u.HexDigit(i))
		}
		for i := range 16 {
			require.Equal(t, raw[i], u.Byte(i))
		}
		require.Equal(t, toBig(u).Text(16), u.String())
		back, err := ParseUnsigned16(u.String())
		require.NoError(t, err)
		require.Equal(t, u, back)
	})
	for _, bad := range []string{"", "x", "123456789012345678901234567890123", "-1", "0x1"} {
		_, err := ParseUnsigned16(bad)
		require.ErrorIs(t, err, ErrSyntax, bad)
	}
}

// TestPowersMatchRandom16 holds the computed f^(2^i) to entries of
// Random16's genArray, as printed in Hadoop's source.
func TestPowersMatchRandom16(t *testing.T) {
	for i, want := range map[int][2]string{
		0:   {"2360ed051fc65da44385df649fccf645", "4a696d47726179524950202020202001"},
		1:   {"17bce35bdf69743c529ed9eb20e0ae99", "95e0e48262b3edfe04479485c755b646"},
		2:   {"f4dd417327db7a9bd194dfbe42d45771", "882a02c315362b60765f100068b33a1c"},
		9:   {"4a5c31e0654c28aa60474e83bf3f7801", "00be4a36657c98cd204e8c8af7dafe00"},
		63:  {"af85d0c629e6c7de0000000000000001", "7858ca25feb8d4bf8000000000000000"},
		64:  {"5f0ba18c53cd8fbc0000000000000001", "f0b1944bfd71a97f0000000000000000"},
		100: {"3cd8fbc0000000000000000000000001", "d71a97f0000000000000000000000000"},
		126: {"00000000000000000000000000000001", "c0000000000000000000000000000000"},
		127: {"00000000000000000000000000000001", "80000000000000000000000000000000"},
	} {
		require.Equal(t, u16(t, want[0]), powers[i].a, "a[%d]", i)
		require.Equal(t, u16(t, want[1]), powers[i].c, "c[%d]", i)
	}
}

// TestSkipAheadIsStepping: jumping n steps is stepping n times.
func TestSkipAheadIsStepping(t *testing.T) {
	var r Unsigned16
	for n := range uint64(5000) {
		require.Equal(t, r, SkipAhead(Unsigned16{Lo: n}), "n=%d", n)
		r = NextRand(r)
	}
	rapid.Check(t, func(t *rapid.T) {
		n := drawU16(t, "n")
		next := n.Add(Unsigned16{Lo: 1})
		require.Equal(t, NextRand(SkipAhead(n)), SkipAhead(next))
		// f^(m+n)(0) = f^m(f^n(0)), wrapping at the period 2^128.
		m := drawU16(t, "m")
		require.Equal(t, SkipAhead(m.Add(n)), skip(SkipAhead(n), m))
	})
	// The generator has period 2^128: f^(2^127) applied twice is the identity.
	half := Unsigned16{Hi: 1 << 63}
	require.Equal(t, Unsigned16{}, skip(SkipAhead(half), half))
}

// Rows and checksums of `TeraGen -D mapreduce.framework.name=local
// -D mapreduce.job.maps=2 3000` (Hadoop 3.4), and of 2 rows.
var hadoopRows = map[uint64]string{
	0:    "4a696d47726179524950001130303030303030303030303030303030303030303030303030303030303030308899aabb323232323030303032323232303030303232323230303030323232323030303032323232303030303030303031313131ccddeeff",
	1:    "95e0e48262b3edfe0447001130303030303030303030303030303030303030303030303030303030303030318899aabb393939393434343438383838353535354343434337373737353535353535353542424242363636363434343436363636ccddeeff",
	1500: "185bac34ef8cf4170296001130303030303030303030303030303030303030303030303030303030303544438899aabb414141414242424236363636343434343939393946464646454545453535353543434343303030303535353535353535ccddeeff",
	2999: "9e8f263bce0163d7e138001130303030303030303030303030303030303030303030303030303030304242378899aabb464646463535353532323232343434343131313146464646383838384242424236363636383838384343434338383838ccddeeff",
}

const (
	hadoopPart0Sha256     = "ff53052ad5d79537657c173df762d5b9dca4eedcd3cfb74fbc76d55485333f0b"
	hadoopPart1Sha256     = "cef89f053ca373282e9190a05fb5ee57c6be0bd035df195cd1efce3e5f6e7195"
	hadoopChecksum3000    = 6457293275287
	hadoopChecksum2       = 5322152945
	hadoopRowsForChecksum = 3000
)

func TestKnownRows(t *testing.T) {
	row := make([]byte, RowSize)
	for id, want := range hadoopRows {
		GenerateRow(row, id)
		require.Equal(t, want, hex.EncodeToString(row), "row %d", id)
	}
	GenerateRow(row, 0)
	require.Equal(t, "JimGrayRIP", string(row[:KeySize]), "f(0) = c, whose top bytes spell it")

	var total Checksum
	for i, s := range Splits(hadoopRowsForChecksum, 2) {
		h := sha256.New()
		g := NewGenerator(s.FirstRow)
		for range s.Rows {
			g.Next(row)
			h.Write(row)
			total.AddRow(row)
		}
		require.Equal(t, []string{hadoopPart0Sha256, hadoopPart1Sha256}[i], hex.EncodeToString(h.Sum(nil)), PartName(i))
	}
	require.Equal(t, int64(hadoopChecksum3000), total.Counter())

	var two Checksum
	for id := range uint64(2) {
		GenerateRow(row, id)
		two.AddRow(row)
	}
	require.Equal(t, int64(hadoopChecksum2), two.Counter())
}

func TestGeneratorIsGenerateRow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		first := rapid.Uint64Max(math.MaxUint64-3).Draw(t, "first")
		g := NewGenerator(first)
		got, want := make([]byte, RowSize), make([]byte, RowSize)
		for i := range uint64(3) {
			require.Equal(t, first+i, g.Row())
			g.Next(got)
			GenerateRow(want, first+i)
			require.Equal(t, want, got)
		}
	})
	// Row numbers past 2^64 (GenSort's 128-bit record numbers) carry into Hi.
	g := &Generator{rand: SkipAhead(Unsigned16{Lo: math.MaxUint64}), row: Unsigned16{Lo: math.MaxUint64}}
	row := make([]byte, RowSize)
	g.Next(row)
	g.Next(row)
	require.Equal(t, "00000000000000010000000000000000", string(row[12:44]))
}

func TestChecksum(t *testing.T) {
	var a, b Checksum
	row := make([]byte, RowSize)
	for id := range uint64(10) {
		GenerateRow(row, id)
		if id%2 == 0 {
			a.AddRow(row)
		} else {
			b.AddRow(row)
		}
	}
	var all Checksum
	all.Merge(b)
	all.Merge(a)
	a.Merge(b)
	require.Equal(t, a, all)
	// The counter is a Java long: the low 64 bits, signed.
	c := Checksum{Sum: Unsigned16{Hi: 3, Lo: 1<<63 + 5}}
	require.Equal(t, int64(math.MinInt64+5), c.Counter())
	require.Equal(t, "38000000000000005", c.String())
}

func TestSplits(t *testing.T) {
	require.Equal(t, []Split{{0, 1668}, {1668, 1668}, {3336, 1667}}, Splits(5003, 3))
	require.Equal(t, []Split{{0, 1}, {1, 1}, {2, 0}}, Splits(2, 3))
	require.Equal(t, []Split{{0, 0}, {0, 0}}, Splits(0, 2))
	require.Nil(t, Splits(10, 0))
	require.Equal(t, "part-m-00007", PartName(7))
	require.Equal(t, "part-m-123456", PartName(123456))
	// Below 2^53 the float computation is the exact ceiling.
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 1000).Draw(t, "n")
		rows := rapid.Uint64Range(0, (1<<53)/uint64(n)).Draw(t, "rows")
		splits := Splits(rows, n)
		require.Len(t, splits, n)
		var next uint64
		for i, s := range splits {
			require.Equal(t, next, s.FirstRow)
			end := (rows*uint64(i+1) + uint64(n) - 1) / uint64(n)
			require.Equal(t, end, s.FirstRow+s.Rows, "split %d", i)
			next = end
		}
		require.Equal(t, rows, next)
	})
}

func TestParseRows(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "3000": 3000, "10k": 10_000, "10m": 10_000_000, "2b": 2e9, "1t": 1e12} {
		got, err := ParseRows(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "k", "-1", "+1", "1K", "1.5m", "1x", "9223372036854775808", "9223373t"} {
		_, err := ParseRows(bad)
		require.ErrorIs(t, err, ErrRows, bad)
	}
}

// BenchmarkGenerator is the cost of a row as a TeraGen writer makes it:
// the next random number, the record, and its CRC-32 into the checksum.
func BenchmarkGenerator(b *testing.B) {
	g := NewGenerator(0)
	row := make([]byte, RowSize)
	var c Checksum
	b.SetBytes(RowSize)
	for b.Loop() {
		g.Next(row)
		c.AddRow(row)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGeneratorNoChecksum is the row alone.
func BenchmarkGeneratorNoChecksum(b *testing.B) {
	g := NewGenerator(0)
	row := make([]byte, RowSize)
	b.SetBytes(RowSize)
	for b.Loop() {
		g.Next(row)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGenerateRow is a row at a random position (a SkipAhead each).
func BenchmarkGenerateRow(b *testing.B) {
	row := make([]byte, RowSize)
	id := uint64(0x9e3779b97f4a7c15)
	for b.Loop() {
		GenerateRow(row, id)
		id = id*6364136223846793005 + 1
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
