package teragen

import "encoding/binary"

// Sizes of a TeraGen row (TeraInputFormat.KEY_LENGTH, VALUE_LENGTH).
const (
	KeySize   = 10
	ValueSize = 90
	RowSize   = KeySize + ValueSize
)

// Record writes the binary record of row rowID built from the random number
// rand into dst[:RowSize] (GenSort.generateRecord; the layout is in the
// package documentation). It panics if dst is shorter than RowSize.
func Record(dst []byte, rand, rowID Unsigned16) {
	_ = dst[RowSize-1]
	binary.BigEndian.PutUint64(dst[0:8], rand.Hi)
	dst[8] = byte(rand.Lo >> 56)
	dst[9] = byte(rand.Lo >> 48)
	dst[10], dst[11] = 0x00, 0x11
	for i := range 16 {
		dst[12+i] = hexUpper[rowID.Hi>>(60-4*i)&0xf]
		dst[28+i] = hexUpper[rowID.Lo>>(60-4*i)&0xf]
	}
	dst[44], dst[45], dst[46], dst[47] = 0x88, 0x99, 0xAA, 0xBB
	// Hex digits 20–31 are the low 48 bits of rand, most significant first.
	for i := range 12 {
		d := uint32(hexUpper[rand.Lo>>(44-4*i)&0xf])
		binary.LittleEndian.PutUint32(dst[48+4*i:], d*0x01010101)
	}
	dst[96], dst[97], dst[98], dst[99] = 0xCC, 0xDD, 0xEE, 0xFF
}

// GenerateRow writes row rowID (counting from 0) of the TeraGen data set
// into dst[:RowSize]. It costs a SkipAhead; a Generator makes consecutive
// rows for one multiply-add each.
func GenerateRow(dst []byte, rowID uint64) {
	id := Unsigned16{Lo: rowID}
	Record(dst, NextRand(SkipAhead(id)), id)
}

// Generator makes consecutive rows, as one TeraGen map task does. The zero
// value is not ready: use NewGenerator.
type Generator struct {
	rand Unsigned16 // the number the previous row was built from
	row  Unsigned16 // the next row's number
}

// NewGenerator returns a Generator whose first row is firstRow.
func NewGenerator(firstRow uint64) *Generator {
	id := Unsigned16{Lo: firstRow}
	return &Generator{rand: SkipAhead(id), row: id}
}

// Next writes the next row into dst[:RowSize] and advances.
func (g *Generator) Next(dst []byte) {
	g.rand = NextRand(g.rand)
	Record(dst, g.rand, g.row)
	g.row = g.row.Add(Unsigned16{Lo: 1})
}

// Row returns the number of the row Next writes next.
func (g *Generator) Row() uint64 { return g.row.Lo }
