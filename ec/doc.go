// Package ec is strato's erasure code: the replication configs of erasure
// coded keys (rs-3-2-1024k, rs-6-3-1024k, rs-10-4-1024k, xor-2-1-1024k),
// the geometry of a striped block group, and the codec that computes parity
// cells and rebuilds lost ones.
//
// # Block groups, stripes and cells
//
// An erasure coded key is stored in block groups, as in Ozone and HDFS 3.
// A block group of a Config with d data and p parity members is d+p blocks,
// one on each member (the block of member i lives in the i-th replica of an
// EC container: replica index i+1 in the cluster's terms). The group's bytes
// are cut into cells of Config.CellSize and dealt round-robin to the data
// members: cell k of the group goes to member k mod d, at offset
// (k div d)·CellSize of its block. The d cells at the same offset of the
// data members are a stripe; the p parity cells of a stripe are computed
// from its data cells and stored at the same offset on the parity members.
//
// A group's last stripe may be short. Its data cells hold only the bytes
// written (a member may hold none of it); for the parity they count as
// padded with zeros to the length of the stripe's first cell, which is also
// the length of its parity cells. Padding is never stored, so a member's
// block length says how many bytes of the group it holds (Config.MemberLen)
// and the group's length is the sum of its data members' lengths.
//
// # The codec
//
// RS codecs are Reed-Solomon over GF(2^8) (polynomial 0x11d) with the parity
// rows of a Cauchy matrix (row i, column j: 1/(i XOR j), i ≥ d), which is
// what ISA-L's gf_gen_cauchy1_matrix and Hadoop's RSRawEncoder ("rs", not
// "rs-legacy") use: the parity of a stripe is byte for byte HDFS's and
// Ozone's. XOR has one parity member, the XOR of the data cells. Both run on
// github.com/klauspost/reedsolomon and its SIMD kernels. The matrix is part
// of the disk format and never changes (TestCauchyMatrixIsFrozen).
//
// Any d of the d+p cells of a stripe rebuild the others (Codec.Reconstruct);
// with fewer the codec returns ErrTooManyLost and leaves what it was given
// untouched: it never makes up bytes. The codec does not detect corrupt
// cells: the chunk checksums the datanodes keep do (a corrupt cell is a lost
// one).
//
// # Concurrency
//
// A Config is a value. A Codec is safe for concurrent use; a StripeEncoder
// holds the padding buffers of one writer and is not.
package ec
