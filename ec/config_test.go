package ec

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Config
	}{
		{"rs-3-2-1024k", RS32},
		{"RS-6-3", RS63},
		{"rs-10-4-1024k", RS104},
		{"xor-2-1-1024k", XOR21},
		{" Xor-2-1 ", XOR21},
		{"rs-6-3-64k", Config{Codec: RS, Data: 6, Parity: 3, CellSize: 64 << 10}},
		{"rs-12-4-4k", Config{Codec: RS, Data: 12, Parity: 4, CellSize: 4 << 10}},
		{"rs-3-2-16384k", Config{Codec: RS, Data: 3, Parity: 2, CellSize: 16 << 20}},
	} {
		got, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
		back, err := Parse(got.String())
		require.NoError(t, err)
		require.Equal(t, got, back)
	}
	require.Equal(t, "rs-6-3-1024k", RS63.String())
	require.Equal(t, "xor-2-1-1024k", XOR21.String())
}

func TestParseRefuses(t *testing.T) {
	for in, why := range map[string]string{
		"":               "want CODEC-DATA-PARITY",
		"THREE":          "want CODEC-DATA-PARITY",
		"rs-3":           "want CODEC-DATA-PARITY",
		"rs-3-2-1024k-x": "want CODEC-DATA-PARITY",
		"lrc-3-2":        `unknown codec "lrc"`,
		"rs-x-2":         "data members",
		"rs-3--2":        "parity members",
		"rs-+3-2":        "data members",
		"rs-1-2":         "2 to 32 data members",
		"rs-33-2":        "2 to 32 data members",
		"rs-3-0":         "1 to 16 parity members",
		"rs-3-17":        "1 to 16 parity members",
		"xor-2-2":        "exactly 1 parity member",
		"rs-3-2-1024":    "KiB with a k suffix",
		"rs-3-2-1m":      "KiB with a k suffix",
		"rs-3-2-0k":      "KiB with a k suffix",
		"rs-3-2-6k":      "not a multiple of 4096",
		"rs-3-2-32768k":  "over 16384k",
	} {
		_, err := Parse(in)
		require.ErrorIs(t, err, ErrInvalidConfig, in)
		require.ErrorContains(t, err, why, in)
	}
	require.Error(t, Config{}.Validate())
	require.True(t, Config{}.IsZero())
	require.False(t, RS32.IsZero())
}

// FuzzParse: what parses prints as a string that parses to the same
// config; nothing panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"rs-3-2-1024k", "xor-2-1", "RS-10-4-4k", "rs-3-2-", "-", "rs-99999999999999999999-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%q: %v is not ErrInvalidConfig", s, err)
			}
			return
		}
		require.NoError(t, c.Validate())
		back, err := Parse(c.String())
		require.NoError(t, err)
		require.Equal(t, c, back)
	})
}

// The API's and meta's form of a config carry it whole; a cell size of 0
// is the default; a codec left unspecified is refused.
func TestProto(t *testing.T) {
	for _, c := range []Config{RS63, RS104, {Codec: XOR, Data: 2, Parity: 1, CellSize: 64 << 10}} {
		got, err := FromProto(ToProto(c))
		if err != nil || got != c {
			t.Fatalf("%v: round trip gives %v, %v", c, got, err)
		}
	}
	p := ToProto(RS63)
	p.CellSize = 0
	if got, err := FromProto(p); err != nil || got.CellSize != DefaultCellSize {
		t.Fatalf("cell size 0: %v, %v", got, err)
	}
	p.Codec = 0
	if _, err := FromProto(p); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("no codec: %v", err)
	}
}
