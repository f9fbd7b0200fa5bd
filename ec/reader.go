package ec

import (
	"errors"
	"fmt"
	"sync"
)

// MemberReader reads bytes [off, off+len(dst)) of member m's block of a
// block group into dst (verified against their checksums: a corrupt range
// is an error, and the member is then treated as lost).
type MemberReader func(m int, off int64, dst []byte) error

// GroupReader reads ranges of one block group of n bytes: from the data
// members while they answer, and, for the cells of a member that fails or
// is known lost, from d others, rebuilding the cells' bytes (a degraded
// read). It reads only the rows of cells it needs, so a small degraded read
// costs d small reads. A member that failed once is not asked again.
//
// A GroupReader is for one goroutine; it calls its MemberReader from
// several at once.
type GroupReader struct {
	cfg  Config
	sc   *StripeCoder
	n    int64
	read MemberReader
	lost []error // per member: why it is lost, or nil
	rows [][]byte
}

// NewGroupReader reads a group of n bytes of coder's config through read.
func NewGroupReader(coder *Coder, n int64, read MemberReader) *GroupReader {
	cfg := coder.Config()
	return &GroupReader{cfg: cfg, sc: coder.NewStripeCoder(), n: n, read: read,
		lost: make([]error, cfg.Members()), rows: make([][]byte, cfg.Members())}
}

// MarkLost makes the reader rebuild member m's cells instead of reading
// them (a datanode known dead).
func (g *GroupReader) MarkLost(m int, why error) {
	if g.lost[m] == nil {
		g.lost[m] = why
	}
}

// Lost lists the members this reader found lost or was told of.
func (g *GroupReader) Lost() []int {
	var ms []int
	for m, err := range g.lost {
		if err != nil {
			ms = append(ms, m)
		}
	}
	return ms
}

// piece is the part of a read that lies in one data cell.
type piece struct {
	member    int
	memberOff int64
	dst       []byte
}

// ReadAt fills dst with the group's bytes at off; the range must lie in
// the group. It returns ErrTooManyLost when a stripe has more than p
// members lost (and never bytes it could not read or rebuild). Every piece
// a member can give is asked for at once, whatever its stripe; then, stripe
// by stripe, the pieces of lost members are rebuilt.
func (g *GroupReader) ReadAt(dst []byte, off int64) error {
	if off < 0 || off+int64(len(dst)) > g.n {
		return fmt.Errorf("ec: read [%d, %d) of a group of %d bytes", off, off+int64(len(dst)), g.n)
	}
	cell := int64(g.cfg.CellSize)
	var pieces []piece
	var stripes []int64 // each piece's
	for pos := 0; pos < len(dst); {
		p := g.cfg.Locate(off + int64(pos))
		k := int(min(int64(len(dst)-pos), cell-p.MemberOff%cell))
		pieces = append(pieces, piece{p.Member, p.MemberOff, dst[pos : pos+k]})
		stripes = append(stripes, p.Stripe)
		pos += k
	}
	failed := make([]error, len(pieces))
	var wg sync.WaitGroup
	for i, pc := range pieces {
		if g.lost[pc.member] != nil {
			failed[i] = g.lost[pc.member]
			continue
		}
		wg.Go(func() { failed[i] = g.read(pc.member, pc.memberOff, pc.dst) })
	}
	wg.Wait()
	for i, pc := range pieces {
		if failed[i] != nil {
			g.MarkLost(pc.member, failed[i])
		}
	}
	for i := 0; i < len(pieces); {
		var missing []piece
		j := i
		for ; j < len(pieces) && stripes[j] == stripes[i]; j++ {
			if failed[j] != nil {
				missing = append(missing, pieces[j])
			}
		}
		if len(missing) > 0 {
			if err := g.rebuild(stripes[i], missing); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

// rebuild rebuilds the pieces of stripe s whose members are lost: the rows
// [r0, r1) of the stripe's cells that cover them are read from d members
// (data members first) and decoded.
func (g *GroupReader) rebuild(s int64, missing []piece) error {
	cfg := g.cfg
	cell := int64(cfg.CellSize)
	base := s * cell // the stripe's offset in every member's block
	r0, r1 := cell, int64(0)
	for _, pc := range missing {
		r0 = min(r0, pc.memberOff-base)
		r1 = max(r1, pc.memberOff-base+int64(len(pc.dst)))
	}
	lens := make([]int, cfg.Members())
	cfg.CellLens(g.n, s, lens)
	for i := range lens {
		lens[i] = int(min(max(int64(lens[i])-r0, 0), r1-r0)) // the rows' part of each cell
	}
	cells := make([][]byte, cfg.Members())
	for {
		// Members with no bytes in these rows count as read (zeros);
		// the others are read until d are there.
		have := 0
		var want []int
		for m := range cfg.Members() {
			switch {
			case lens[m] == 0 || cells[m] != nil:
				have++
			case g.lost[m] == nil:
				want = append(want, m)
			}
		}
		if have >= cfg.Data {
			break
		}
		if have+len(want) < cfg.Data {
			return fmt.Errorf("%w: %s, stripe %d: %d members lost: %w", ErrTooManyLost, cfg, s, len(g.Lost()), g.lostErrors())
		}
		want = want[:cfg.Data-have]
		errs := make([]error, len(want))
		var wg sync.WaitGroup
		for i, m := range want {
			if cap(g.rows[m]) < lens[m] {
				g.rows[m] = make([]byte, cfg.CellSize)
			}
			wg.Go(func() { errs[i] = g.read(m, base+r0, g.rows[m][:lens[m]]) })
		}
		wg.Wait()
		for i, m := range want {
			if errs[i] != nil {
				g.MarkLost(m, errs[i])
			} else {
				cells[m] = g.rows[m][:lens[m]]
			}
		}
	}
	for m := range cells {
		if cells[m] == nil && lens[m] > 0 {
			if cap(g.rows[m]) < cfg.CellSize {
				g.rows[m] = make([]byte, cfg.CellSize)
			}
			cells[m] = g.rows[m][:0]
		}
	}
	if err := g.sc.Reconstruct(cells, lens, true); err != nil {
		return err
	}
	for _, pc := range missing {
		lo := pc.memberOff - base - r0
		copy(pc.dst, cells[pc.member][lo:lo+int64(len(pc.dst))])
	}
	return nil
}

func (g *GroupReader) lostErrors() error {
	var errs []error
	for m, err := range g.lost {
		if err != nil {
			errs = append(errs, fmt.Errorf("member %d: %w", m, err))
		}
	}
	return errors.Join(errs...)
}
