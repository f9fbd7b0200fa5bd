// Package teragen generates Hadoop TeraGen's data set, byte for byte.
//
// TeraGen (hadoop-mapreduce-examples, org.apache.hadoop.examples.terasort)
// writes ROWS rows of 100 bytes, split among its map tasks; it is the input
// of TeraSort and the workload of `strato bench teragen`. This package owns
// the parts that decide the bytes, so that a file written by strato can be
// compared with one written by Hadoop:
//
//   - Unsigned16: the 128-bit unsigned arithmetic the generator needs
//     (Hadoop's Unsigned16, gensort's u16).
//   - NextRand and SkipAhead: Random16, the 128-bit linear congruential
//     generator x → a·x + c mod 2^128, and its jump of n steps in at most
//     128 multiply-adds, which lets every map task start at its first row.
//   - Record, GenerateRow and Generator: the row itself (GenSort's binary
//     record, as TeraGen's SortGenMapper emits it): a 10-byte key, then a
//     90-byte value.
//   - Checksum: TeraGen's CHECKSUM counter (the sum of every row's CRC-32).
//   - Splits and PartName: how RangeInputFormat divides the rows among map
//     tasks, and the name of each task's output file.
//
// Row r (counting from 0) is built from the random number f^(r+1)(0), f being
// the generator's step: a map task whose first row is s starts from
// SkipAhead(s) and steps once before each row.
//
//	key    bytes  0–9   the 10 most significant bytes of the random number
//	value  bytes 10–11  00 11
//	             12–43  the row number, 32 upper-case hex digits
//	             44–47  88 99 AA BB
//	             48–95  hex digits 20–31 of the random number, each four times
//	             96–99  CC DD EE FF
//
// Everything here is a pure function of its arguments or of one value's
// state: no I/O, no clock. Values are safe to share; a Generator or a
// Checksum belongs to one goroutine.
//
// The bytes were checked against Hadoop 3.4's own TeraGen run in local mode
// (test/teragen_test.go), which is also where the known values in this
// package's tests come from.
package teragen
