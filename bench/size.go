package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize parses a byte count with an optional binary suffix, as freon's
// size flags take them: "1024", "1k", "10K", "4M", "4MiB", "1g", "1GB".
// Suffixes are powers of 1024.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "ib"), "b")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)>>shift {
		return 0, fmt.Errorf("bench: bad size %q (want a number with an optional k, M, G or T suffix)", s)
	}
	return v << shift, nil
}

// FormatSize prints n bytes in the shortest exact form ParseSize accepts
// back: 1024 → "1k", 4194304 → "4M", 1000 → "1000".
func FormatSize(n int64) string {
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
