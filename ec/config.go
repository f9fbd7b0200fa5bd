package ec

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Codec is the code of a Config.
type Codec uint8

const (
	// RS is Reed-Solomon: any d of the d+p members rebuild the others.
	RS Codec = iota + 1
	// XOR has one parity member, the XOR of the data members.
	XOR
)

// String is the codec's name in a config string: "rs" or "xor".
func (c Codec) String() string {
	switch c {
	case RS:
		return "rs"
	case XOR:
		return "xor"
	}
	return fmt.Sprintf("codec(%d)", uint8(c))
}

// Limits of a Config. Cells are whole multiples of CellAlign so that they
// are whole checksum windows of every bytes-per-checksum that divides it.
const (
	DefaultCellSize = 1 << 20  // 1 MiB, Ozone's and HDFS's
	CellAlign       = 4 << 10  // cells are multiples of 4 KiB
	MaxCellSize     = 16 << 20 // a cell is one data-protocol write
	MaxData         = 32
	MaxParity       = 16
)

// ErrInvalidConfig: a config string or Config that is not a valid erasure
// code (the wrapping error says why).
var ErrInvalidConfig = errors.New("ec: invalid erasure coding config")

// Config is an erasure coding replication config: codec, data and parity
// members, cell size. The zero Config is invalid ("not erasure coded").
type Config struct {
	Codec    Codec
	Data     int // data members, d
	Parity   int // parity members, p
	CellSize int // bytes
}

// The standard configs, HDFS's and Ozone's, with 1 MiB cells.
var (
	RS32  = Config{Codec: RS, Data: 3, Parity: 2, CellSize: DefaultCellSize}
	RS63  = Config{Codec: RS, Data: 6, Parity: 3, CellSize: DefaultCellSize}
	RS104 = Config{Codec: RS, Data: 10, Parity: 4, CellSize: DefaultCellSize}
	XOR21 = Config{Codec: XOR, Data: 2, Parity: 1, CellSize: DefaultCellSize}
)

// Standard lists RS32, RS63, RS104 and XOR21.
func Standard() []Config { return []Config{RS32, RS63, RS104, XOR21} }

// Parse reads a config string CODEC-DATA-PARITY[-CELL]: the codec (rs or
// xor), the members, and the cell size in KiB with a k suffix (default
// 1024k), case-insensitive: "rs-6-3-1024k", "RS-3-2", "xor-2-1-512k".
func Parse(s string) (Config, error) {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), "-")
	if len(parts) != 3 && len(parts) != 4 {
		return Config{}, fmt.Errorf("%w %q: want CODEC-DATA-PARITY[-CELLk], e.g. rs-6-3-1024k", ErrInvalidConfig, s)
	}
	var c Config
	switch parts[0] {
	case "rs":
		c.Codec = RS
	case "xor":
		c.Codec = XOR
	default:
		return Config{}, fmt.Errorf("%w %q: unknown codec %q (rs or xor)", ErrInvalidConfig, s, parts[0])
	}
	var err error
	if c.Data, err = member(parts[1]); err != nil {
		return Config{}, fmt.Errorf("%w %q: data members: %w", ErrInvalidConfig, s, err)
	}
	if c.Parity, err = member(parts[2]); err != nil {
		return Config{}, fmt.Errorf("%w %q: parity members: %w", ErrInvalidConfig, s, err)
	}
	c.CellSize = DefaultCellSize
	if len(parts) == 4 {
		kib, ok := strings.CutSuffix(parts[3], "k")
		n, err := strconv.Atoi(kib)
		if !ok || err != nil || n <= 0 || kib[0] == '+' {
			return Config{}, fmt.Errorf("%w %q: cell size %q: want KiB with a k suffix, e.g. 1024k", ErrInvalidConfig, s, parts[3])
		}
		if n > MaxCellSize>>10 {
			return Config{}, fmt.Errorf("%w %q: cell size %dk is over %dk", ErrInvalidConfig, s, n, MaxCellSize>>10)
		}
		c.CellSize = n << 10
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("%w (%q)", err, s)
	}
	return c, nil
}

func member(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || n < 0 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return n, nil
}

// String is the config's canonical string, e.g. "rs-6-3-1024k" (Parse
// reads it back).
func (c Config) String() string {
	return fmt.Sprintf("%s-%d-%d-%dk", c.Codec, c.Data, c.Parity, c.CellSize>>10)
}

// IsZero: the zero Config (a key or bucket that is not erasure coded).
func (c Config) IsZero() bool { return c == Config{} }

// Validate says whether c is a usable erasure code.
func (c Config) Validate() error {
	switch c.Codec {
	case RS:
		if c.Parity < 1 || c.Parity > MaxParity {
			return fmt.Errorf("%w %s: rs needs 1 to %d parity members", ErrInvalidConfig, c, MaxParity)
		}
	case XOR:
		if c.Parity != 1 {
			return fmt.Errorf("%w %s: xor has exactly 1 parity member", ErrInvalidConfig, c)
		}
	default:
		return fmt.Errorf("%w: unknown codec %d", ErrInvalidConfig, c.Codec)
	}
	if c.Data < 2 || c.Data > MaxData {
		return fmt.Errorf("%w %s: needs 2 to %d data members (with 1, use replication)", ErrInvalidConfig, c, MaxData)
	}
	if c.CellSize <= 0 || c.CellSize%CellAlign != 0 || c.CellSize > MaxCellSize {
		return fmt.Errorf("%w %s: cell size %d is not a multiple of %d up to %d", ErrInvalidConfig, c, c.CellSize, CellAlign, MaxCellSize)
	}
	return nil
}

// Members is d+p, the datanodes of a block group.
func (c Config) Members() int { return c.Data + c.Parity }
