package teragen

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Split is the range of rows one TeraGen map task generates, into the file
// PartName of its index.
type Split struct {
	FirstRow uint64
	Rows     uint64
}

// Splits divides rows among n map tasks exactly as TeraGen's
// RangeInputFormat.getSplits does: task i ends at row
// ceil(rows·(i+1)/n), computed in float64 as Java computes it (so above 2^53
// rows the ends follow float rounding, as Hadoop's do). Tasks may be given no
// rows when rows < n. n < 1 gives no splits.
func Splits(rows uint64, n int) []Split {
	if n < 1 {
		return nil
	}
	splits := make([]Split, n)
	var cur uint64
	for i := range splits {
		goal := uint64(math.Ceil(float64(rows) * float64(i+1) / float64(n)))
		splits[i] = Split{FirstRow: cur, Rows: goal - cur}
		cur = goal
	}
	return splits
}

// PartName is the name of map task i's output file: part-m-00000, ...
func PartName(i int) string { return fmt.Sprintf("part-m-%05d", i) }

// ErrRows is returned by ParseRows for a malformed count.
var ErrRows = errors.New("teragen: bad number of rows")

// ParseRows parses TeraGen's row count: a decimal number, optionally
// followed by k (10^3), m (10^6), b (10^9) or t (10^12). (Hadoop computes
// the t factor in 32-bit int arithmetic, which overflows; here t is 10^12.)
func ParseRows(s string) (uint64, error) {
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k':
			mult = 1e3
		case 'm':
			mult = 1e6
		case 'b':
			mult = 1e9
		case 't':
			mult = 1e12
		}
	}
	num := s
	if mult != 1 {
		num = s[:len(s)-1]
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: %q", ErrRows, s)
	}
	return n * mult, nil
}
