// Package checksum computes and verifies the checksums that protect every
// chunk strato stores.
//
// A chunk is covered by one checksum per window of BytesPerChecksum bytes (the
// last window may be short). The checksums of a chunk travel with it as a
// Data value: the type, the window size, and the concatenated fixed-size
// checksum values. Data is stored next to block metadata on datanodes, sent
// on the wire with every chunk, and verified by the reader.
//
// CRC32 (IEEE) and CRC32C (Castagnoli, the default, hardware accelerated) can
// be combined: the CRC of A‖B is CombineCRC(crc(A), crc(B), len(B)). That is
// what composite file checksums are built from.
//
// All functions are safe for concurrent use; Data values are immutable once
// built.
package checksum
