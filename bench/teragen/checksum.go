package teragen

import "hash/crc32"

// Checksum is TeraGen's checksum of a set of rows: the sum, modulo 2^128,
// of each row's CRC-32 (IEEE, Hadoop's PureJavaCrc32). Row order does not
// matter, so the checksums of the parts of a data set add up to the whole's.
// The zero value is the checksum of no rows.
type Checksum struct {
	Sum Unsigned16
}

// AddRow adds one row (all RowSize bytes of it).
func (c *Checksum) AddRow(row []byte) {
	c.Sum = c.Sum.Add(Unsigned16{Lo: uint64(crc32.ChecksumIEEE(row))})
}

// Merge adds the rows counted by o.
func (c *Checksum) Merge(o Checksum) { c.Sum = c.Sum.Add(o.Sum) }

// Counter is the value of TeraGen's CHECKSUM counter: each map task adds
// the low 64 bits of its sum to a Java long, so the job's counter is the
// low 64 bits of the whole sum, read as signed. Hadoop prints it in
// decimal, as "CHECKSUM=<Counter>" in the job's counters.
func (c Checksum) Counter() int64 { return int64(c.Sum.Lo) }

// String is the whole 128-bit sum in hex, as TeraValidate prints its
// "checksum" and GenSort -c prints its sum.
func (c Checksum) String() string { return c.Sum.String() }
