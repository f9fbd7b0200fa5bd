package ec

// StripeSize is the data bytes of a full stripe: d cells.
func (c Config) StripeSize() int64 { return int64(c.Data) * int64(c.CellSize) }

// Position is where a byte of a block group is stored.
type Position struct {
	Stripe    int64 // the stripe holding it
	Member    int   // the data member holding it, 0 ≤ Member < d
	MemberOff int64 // its offset in that member's block
}

// Locate maps an offset in a block group's data to the data member and the
// offset in its block that hold it.
func (c Config) Locate(off int64) Position {
	cell := int64(c.CellSize)
	k := off / cell // the group's k-th cell
	return Position{Stripe: k / int64(c.Data), Member: int(k % int64(c.Data)), MemberOff: (k/int64(c.Data))*cell + off%cell}
}

// GroupOffset is Locate's inverse: the group offset of a data member's byte.
func (c Config) GroupOffset(member int, memberOff int64) int64 {
	cell := int64(c.CellSize)
	stripe := memberOff / cell
	return stripe*c.StripeSize() + int64(member)*cell + memberOff%cell
}

// Stripes is how many stripes a group of n data bytes has (the last one
// possibly short).
func (c Config) Stripes(n int64) int64 { return (n + c.StripeSize() - 1) / c.StripeSize() }

// MemberLen is the length of member m's block in a group of n data bytes:
// a data member's share of the bytes, a parity member's the length of
// member 0's (the first cell of every stripe is its longest).
func (c Config) MemberLen(n int64, m int) int64 {
	cell := int64(c.CellSize)
	full, rem := n/c.StripeSize(), n%c.StripeSize()
	if m >= c.Data {
		m = 0
	}
	return full*cell + min(max(rem-int64(m)*cell, 0), cell)
}

// GroupLen is the data bytes of a group whose data members hold the given
// lengths (lens[:d]; parity lengths, if present, are not used).
func (c Config) GroupLen(lens []int64) int64 {
	var n int64
	for _, l := range lens[:c.Data] {
		n += l
	}
	return n
}

// CellLens fills lens (d+p entries) with the lengths of stripe s's cells in
// a group of n data bytes, and returns the stripe's cell length (its first
// cell's, its parity cells'; 0 past the group's end). A data cell past the
// group's bytes has length 0.
func (c Config) CellLens(n, s int64, lens []int) int {
	cell := int64(c.CellSize)
	rem := n - s*c.StripeSize()
	for i := range c.Data {
		lens[i] = int(min(max(rem-int64(i)*cell, 0), cell))
	}
	for i := c.Data; i < c.Members(); i++ {
		lens[i] = lens[0]
	}
	return lens[0]
}

// ReplicaIndex is the replica index of member m in its EC container: m+1
// (0 is a replicated container's).
func ReplicaIndex(m int) int { return m + 1 }

// MemberOf is the member of replica index i (ReplicaIndex's inverse).
func MemberOf(index int) int { return index - 1 }
