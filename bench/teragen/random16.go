package teragen

// Random16's step f(x) = a·x + c mod 2^128 (rand16.c by Chris Nyberg, as
// Hadoop's Random16 has it): a from L'Ecuyer's tables of LCGs with good
// lattice structure, c odd.
var (
	stepA = Unsigned16{Hi: 0x2360ed051fc65da4, Lo: 0x4385df649fccf645}
	stepC = Unsigned16{Hi: 0x4a696d4772617952, Lo: 0x4950202020202001}
)

// affine is the map x → a·x + c mod 2^128.
type affine struct{ a, c Unsigned16 }

func (f affine) apply(x Unsigned16) Unsigned16 { return x.Mul(f.a).Add(f.c) }

// powers[i] is f^(2^i), f applied 2^i times. Random16 writes the table out
// as constants (genArray); it is computed here by squaring, and the tests
// hold it to entries of the published table.
var powers = func() (p [128]affine) {
	p[0] = affine{stepA, stepC}
	for i := 1; i < len(p); i++ {
		// f(f(x)) = a·(a·x + c) + c = a²·x + (a·c + c)
		f := p[i-1]
		p[i] = affine{a: f.a.Mul(f.a), c: f.apply(f.c)}
	}
	return p
}()

// NextRand returns the generator's next number after r (Random16.nextRand).
func NextRand(r Unsigned16) Unsigned16 { return powers[0].apply(r) }

// SkipAhead returns f^n(0), the number n steps from a seed of 0, in one
// multiply-add per set bit of n (Random16.skipAhead). The numbers of a
// TeraGen task whose first row is s follow SkipAhead(s).
func SkipAhead(n Unsigned16) Unsigned16 { return skip(Unsigned16{}, n) }

// skip returns f^n(x).
func skip(x, n Unsigned16) Unsigned16 {
	r := x
	for i := 0; n.Lo != 0; i++ {
		if n.Lo&1 != 0 {
			r = powers[i].apply(r)
		}
		n.Lo >>= 1
	}
	for i := 64; n.Hi != 0; i++ {
		if n.Hi&1 != 0 {
			r = powers[i].apply(r)
		}
		n.Hi >>= 1
	}
	return r
}
