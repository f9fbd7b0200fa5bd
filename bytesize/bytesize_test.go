package bytesize

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{
		"0": 0, "1024": 1024, "1k": 1 << 10, "10K": 10 << 10, "4M": 4 << 20, "4MiB": 4 << 20, "4 MiB": 4 << 20,
		"4mb": 4 << 20, "1g": 1 << 30, "1GB": 1 << 30, "1.5g": 3 << 29, "1TiB": 1 << 40, "2P": 2 << 50, " 7 ": 7,
		"0.5k": 512, "1e": 1 << 60,
	} {
		got, err := Parse(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "k", "-1", "-1k", "1x", "abc", "8e", "9223372036854775807k", "NaN", "inf", "1.5.2M", "99999999999T"} {
		_, err := Parse(s)
		require.ErrorIs(t, err, ErrSyntax, s)
	}
}

func TestFormat(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 812: "812 B", 1024: "1 KiB", 1536: "1.5 KiB", 3 << 29: "1.5 GiB", -2048: "-2 KiB"} {
		require.Equal(t, want, Format(n))
	}
	for n, want := range map[int64]string{1: "1", 1024: "1k", 100 << 10: "100k", 4 << 20: "4M", 1000: "1000", 1 << 30: "1G", 3 << 29: "1536M"} {
		require.Equal(t, want, Exact(n))
		back, err := Parse(want)
		require.NoError(t, err)
		require.Equal(t, n, back)
	}
	// Format's output parses back to about the same count.
	for _, n := range []int64{1 << 20, 5 << 30, 1234567} {
		back, err := Parse(Format(n))
		require.NoError(t, err)
		require.InDelta(t, float64(n), float64(back), float64(n)/20)
	}
}
