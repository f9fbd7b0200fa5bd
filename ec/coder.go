package ec

import (
	"errors"
	"fmt"

	"github.com/klauspost/reedsolomon"
)

// ErrTooManyLost: more members of a stripe are lost than its parity can
// rebuild. Nothing was rebuilt.
var ErrTooManyLost = errors.New("ec: too many members lost to rebuild")

// Coder encodes and rebuilds the cells of one Config's stripes. It is safe
// for concurrent use.
type Coder struct {
	cfg Config
	rs  reedsolomon.Encoder
}

// NewCoder returns the coder of a valid config.
func NewCoder(cfg Config) (*Coder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The matrix is part of the disk format (see the package comment).
	opts := []reedsolomon.Option{reedsolomon.WithCauchyMatrix(), reedsolomon.WithAutoGoroutines(cfg.CellSize)}
	if cfg.Codec == XOR {
		opts = []reedsolomon.Option{reedsolomon.WithFastOneParityMatrix(), reedsolomon.WithAutoGoroutines(cfg.CellSize)}
	}
	rs, err := reedsolomon.New(cfg.Data, cfg.Parity, opts...)
	if err != nil {
		return nil, fmt.Errorf("ec: %s: %w", cfg, err)
	}
	return &Coder{cfg: cfg, rs: rs}, nil
}

// Config is the coder's config.
func (c *Coder) Config() Config { return c.cfg }

// Encode computes the parity shards of d+p shards of equal length whose
// first d hold the data; the last p must have that length too.
func (c *Coder) Encode(shards [][]byte) error {
	if err := c.rs.Encode(shards); err != nil {
		return fmt.Errorf("ec: %s: encode: %w", c.cfg, err)
	}
	return nil
}

// Verify says whether the parity shards match the data shards.
func (c *Coder) Verify(shards [][]byte) (bool, error) {
	ok, err := c.rs.Verify(shards)
	if err != nil {
		return false, fmt.Errorf("ec: %s: verify: %w", c.cfg, err)
	}
	return ok, nil
}

// Reconstruct rebuilds the missing shards (nil or empty; an empty one with
// enough capacity receives its bytes) of d+p shards of equal length. With
// fewer than d present it returns ErrTooManyLost and changes nothing.
func (c *Coder) Reconstruct(shards [][]byte) error { return c.reconstruct(shards, false) }

// ReconstructData is Reconstruct for the missing data shards only.
func (c *Coder) ReconstructData(shards [][]byte) error { return c.reconstruct(shards, true) }

func (c *Coder) reconstruct(shards [][]byte, onlyData bool) error {
	if len(shards) != c.cfg.Members() {
		return fmt.Errorf("ec: %s: %d shards, want %d", c.cfg, len(shards), c.cfg.Members())
	}
	lost := 0
	for _, s := range shards {
		if len(s) == 0 {
			lost++
		}
	}
	if lost > c.cfg.Parity {
		return fmt.Errorf("%w: %s, %d of %d members lost, at most %d can be", ErrTooManyLost, c.cfg, lost, c.cfg.Members(), c.cfg.Parity)
	}
	var err error
	if onlyData {
		err = c.rs.ReconstructData(shards)
	} else {
		err = c.rs.Reconstruct(shards)
	}
	if err != nil {
		return fmt.Errorf("ec: %s: reconstruct: %w", c.cfg, err)
	}
	return nil
}

// StripeCoder encodes and rebuilds stripes whose cells have the lengths of
// the block-group layout (a short last stripe's cells are shorter, some
// empty): it pads them with zeros for the code, in buffers of its own. It
// is for one goroutine.
type StripeCoder struct {
	c      *Coder
	pad    [][]byte // per member, CellSize capacity, allocated when needed
	shards [][]byte
}

// NewStripeCoder returns a StripeCoder on c.
func (c *Coder) NewStripeCoder() *StripeCoder {
	return &StripeCoder{c: c, pad: make([][]byte, c.cfg.Members()), shards: make([][]byte, c.cfg.Members())}
}

// padded returns cell as a shard of length n: itself when it has that
// length, else a zero-padded copy in member i's buffer.
func (e *StripeCoder) padded(i int, cell []byte, n int) []byte {
	if len(cell) == n {
		return cell
	}
	if e.pad[i] == nil {
		e.pad[i] = make([]byte, e.c.cfg.CellSize)
	}
	b := e.pad[i][:n]
	k := copy(b, cell)
	clear(b[k:])
	return b
}

// EncodeGroup lays a whole block group's data out as its members' blocks,
// parity computed, stripe by stripe as a writer does: member m's block
// holds Config.MemberLen(len(data), m) bytes. For groups held in memory
// (tests, tools); writers stream stripes through a StripeCoder.
func (c *Coder) EncodeGroup(data []byte) ([][]byte, error) {
	cfg := c.cfg
	sc := c.NewStripeCoder()
	members := make([][]byte, cfg.Members())
	parity := make([][]byte, cfg.Parity)
	var cells [][]byte
	for off := int64(0); off < int64(len(data)); off += cfg.StripeSize() {
		cells = cfg.SplitStripe(data[off:min(int64(len(data)), off+cfg.StripeSize())], cells)
		for i := range parity {
			parity[i] = make([]byte, 0, cfg.CellSize)
		}
		ps, err := sc.Encode(cells, parity)
		if err != nil {
			return nil, err
		}
		for m, cell := range append(cells, ps...) {
			members[m] = append(members[m], cell...)
		}
	}
	return members, nil
}

// SplitStripe cuts a stripe's data (at most StripeSize bytes) into its d
// data cells, slices of data (empty past its end).
func (c Config) SplitStripe(data []byte, cells [][]byte) [][]byte {
	cells = cells[:0]
	for i := range c.Data {
		lo := min(i*c.CellSize, len(data))
		hi := min(lo+c.CellSize, len(data))
		cells = append(cells, data[lo:hi])
	}
	return cells
}

// Encode computes a stripe's parity cells. data are its d data cells (each
// at most CellSize, none longer than the first; only a group's last stripe
// has short or empty cells); parity are p buffers of capacity CellSize or
// more. The parity cells returned are parity[i][:len(data[0])].
func (e *StripeCoder) Encode(data [][]byte, parity [][]byte) ([][]byte, error) {
	cfg := e.c.cfg
	if len(data) != cfg.Data || len(parity) != cfg.Parity {
		return nil, fmt.Errorf("ec: %s: encode: %d data and %d parity cells, want %d and %d", cfg, len(data), len(parity), cfg.Data, cfg.Parity)
	}
	n := len(data[0])
	if n > cfg.CellSize {
		return nil, fmt.Errorf("ec: %s: encode: cell of %d bytes is over the cell size", cfg, n)
	}
	for i, d := range data {
		if len(d) > n {
			return nil, fmt.Errorf("ec: %s: encode: data cell %d (%d bytes) is longer than the first (%d)", cfg, i, len(d), n)
		}
		e.shards[i] = e.padded(i, d, n)
	}
	for j, p := range parity {
		if cap(p) < n {
			return nil, fmt.Errorf("ec: %s: encode: parity buffer %d holds %d bytes, want %d", cfg, j, cap(p), n)
		}
		parity[j] = p[:n]
		e.shards[cfg.Data+j] = parity[j]
	}
	if n == 0 {
		return parity, nil
	}
	defer clear(e.shards)
	return parity, e.c.Encode(e.shards)
}

// Reconstruct rebuilds a stripe's lost cells. cells has d+p entries and
// lens their lengths in the layout (Config.CellLens): a cell that was read
// holds lens[i] bytes; a lost one is empty, nil or a buffer of capacity
// CellSize or more that receives the rebuilt bytes (else they are
// allocated). A cell of length 0 is never lost. With onlyData, only lost
// data cells are rebuilt. With more than p lost it returns ErrTooManyLost
// and changes nothing.
func (e *StripeCoder) Reconstruct(cells [][]byte, lens []int, onlyData bool) error {
	cfg := e.c.cfg
	if len(cells) != cfg.Members() || len(lens) != cfg.Members() {
		return fmt.Errorf("ec: %s: reconstruct: %d cells and %d lengths, want %d", cfg, len(cells), len(lens), cfg.Members())
	}
	n := lens[0]
	lost := 0
	for i, cell := range cells {
		switch {
		case lens[i] == 0:
		case len(cell) == 0:
			lost++
		case len(cell) != lens[i]:
			return fmt.Errorf("ec: %s: reconstruct: cell %d holds %d bytes, want %d", cfg, i, len(cell), lens[i])
		}
	}
	if lost == 0 {
		return nil
	}
	if lost > cfg.Parity {
		return fmt.Errorf("%w: %s, %d of %d cells of a stripe lost, at most %d can be", ErrTooManyLost, cfg, lost, cfg.Members(), cfg.Parity)
	}
	defer clear(e.shards)
	for i, cell := range cells {
		switch {
		case len(cell) > 0 || lens[i] == 0:
			e.shards[i] = e.padded(i, cell, n)
		case i < cfg.Data && lens[i] < n:
			// Rebuilt into the padding buffer, then copied out: the
			// code yields the zeros past the cell's end too.
			if e.pad[i] == nil {
				e.pad[i] = make([]byte, cfg.CellSize)
			}
			e.shards[i] = e.pad[i][:0]
		default:
			e.shards[i] = cell[:0]
		}
	}
	var err error
	if onlyData {
		err = e.c.ReconstructData(e.shards)
	} else {
		err = e.c.Reconstruct(e.shards)
	}
	if err != nil {
		return err
	}
	for i, cell := range cells {
		if len(cell) > 0 || lens[i] == 0 || onlyData && i >= cfg.Data {
			continue
		}
		got := e.shards[i][:lens[i]]
		if cap(cell) >= lens[i] {
			cells[i] = cell[:lens[i]]
			if &cells[i][0] != &got[0] {
				copy(cells[i], got)
			}
		} else {
			cells[i] = append([]byte(nil), got...)
		}
	}
	return nil
}
