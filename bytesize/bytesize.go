// Package bytesize parses and prints byte counts, the one way every flag,
// table and report of strato does: binary units (a k is 1024 bytes) with
// the suffixes Ozone's and Hadoop's tools take.
package bytesize

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by Parse's errors.
var ErrSyntax = errors.New("bytesize: not a size (a number of bytes with an optional k, M, G, T, P or E suffix, e.g. 10GB, 4MiB, 1.5g)")

// Parse parses a byte count with an optional suffix, in any case, with or
// without "B", "iB" and a space before it: "1048576", "512k", "4M",
// "4 MiB", "10GB", "1TiB", "1.5g". Every suffix is a power of 1024; a
// fraction is rounded down to whole bytes.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(t, "b")
	t = strings.TrimSuffix(t, "i")
	shift := 0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("kmgtpe", t[n-1]); i >= 0 {
			shift = 10 * (i + 1)
			t = t[:n-1]
		}
	}
	t = strings.TrimSpace(t)
	bad := fmt.Errorf("%w: %q", ErrSyntax, s)
	if t == "" {
		return 0, bad
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n < 0 || (shift > 0 && n > math.MaxInt64>>shift) {
			return 0, bad
		}
		return n << shift, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, bad
	}
	v := f * float64(int64(1)<<shift)
	if v >= math.MaxInt64 {
		return 0, bad
	}
	return int64(v), nil
}

// Format prints n for people: "0 B", "812 B", "1.5 GiB" (one decimal, none
// when it is 0).
func Format(n int64) string {
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(n)
	i := -1
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := strconv.FormatFloat(v, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// Exact prints n in the shortest exact form Parse reads back, as freon
// names its sizes: 1024 → "1k", 4194304 → "4M", 1000 → "1000".
func Exact(n int64) string {
	for _, u := range []struct {
		shift int
		s     string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "k"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}
