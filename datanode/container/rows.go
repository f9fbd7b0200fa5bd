package container

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/strato-io/strato/checksum"
)

// Keys of the volume database. Every key starts with the container ID
// (8 bytes, big-endian), so a container's rows are one contiguous range:
//
//	<cid> 'B' <localID>   block row
//	<cid> 'M'             counter row: bcsID, used bytes, block count
const (
	tagBlock   = 'B'
	tagCounter = 'M'
	rowVersion = 1
)

func containerPrefix(cid uint64) []byte { return binary.BigEndian.AppendUint64(nil, cid) }

// containerBounds returns [lower, upper) of all rows of cid.
func containerBounds(cid uint64) (lo, hi []byte) {
	lo = containerPrefix(cid)
	if cid == ^uint64(0) {
		return lo, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	return lo, containerPrefix(cid + 1)
}

func blockKey(cid, localID uint64) []byte {
	k := make([]byte, 0, 17)
	k = binary.BigEndian.AppendUint64(k, cid)
	k = append(k, tagBlock)
	return binary.BigEndian.AppendUint64(k, localID)
}

func counterKey(cid uint64) []byte { return append(containerPrefix(cid), tagCounter) }

// Chunk is one committed chunk of a block.
type Chunk struct {
	// Offset is the chunk's offset in the block.
	Offset int64
	// Length is the chunk's length in bytes.
	Length int64
	// Checksums cover the chunk, windows starting at Offset.
	Checksums checksum.Data
}

// Block is the committed state of a block: its row in the database.
type Block struct {
	LocalID uint64
	// Length is the committed length; Chunks tile [0, Length).
	Length int64
	// BCSID is the container's bcsID assigned by the PutBlock that
	// committed this state.
	BCSID  uint64
	Chunks []Chunk
}

func appendBlockRow(dst []byte, b *Block) []byte {
	dst = append(dst, rowVersion)
	dst = binary.AppendUvarint(dst, uint64(b.Length))
	dst = binary.AppendUvarint(dst, b.BCSID)
	dst = binary.AppendUvarint(dst, uint64(len(b.Chunks)))
	for _, c := range b.Chunks {
		dst = binary.AppendUvarint(dst, uint64(c.Offset))
		dst = binary.AppendUvarint(dst, uint64(c.Length))
		dst = append(dst, byte(c.Checksums.Type))
		dst = binary.AppendUvarint(dst, uint64(c.Checksums.BytesPerChecksum))
		dst = binary.AppendUvarint(dst, uint64(len(c.Checksums.Sums)))
		dst = append(dst, c.Checksums.Sums...)
	}
	return dst
}

type rowReader struct {
	b   []byte
	err error
}

func (r *rowReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: truncated row", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *rowReader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: truncated row", ErrCorrupt)
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// decodeBlockRow decodes a block row; the result does not alias row.
func decodeBlockRow(localID uint64, row []byte) (Block, error) {
	if len(row) == 0 || row[0] != rowVersion {
		return Block{}, fmt.Errorf("%w: block %d: unknown row version", ErrCorrupt, localID)
	}
	r := rowReader{b: append([]byte(nil), row[1:]...)}
	b := Block{LocalID: localID}
	b.Length = int64(r.uvarint())
	b.BCSID = r.uvarint()
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		return Block{}, fmt.Errorf("%w: block %d: bad chunk count", ErrCorrupt, localID)
	}
	b.Chunks = make([]Chunk, 0, n)
	var end int64
	for i := uint64(0); i < n && r.err == nil; i++ {
		var c Chunk
		c.Offset = int64(r.uvarint())
		c.Length = int64(r.uvarint())
		t := r.bytes(1)
		if r.err != nil {
			break
		}
		c.Checksums.Type = checksum.Type(t[0])
		c.Checksums.BytesPerChecksum = uint32(r.uvarint())
		c.Checksums.Sums = r.bytes(r.uvarint())
		if c.Offset != end || c.Length <= 0 {
			return Block{}, fmt.Errorf("%w: block %d: chunk %d at [%d, %d) does not follow %d", ErrCorrupt, localID, i, c.Offset, c.Offset+c.Length, end)
		}
		end += c.Length
		b.Chunks = append(b.Chunks, c)
	}
	if r.err != nil {
		return Block{}, fmt.Errorf("block %d: %w", localID, r.err)
	}
	if end != b.Length {
		return Block{}, fmt.Errorf("%w: block %d: chunks end at %d, length %d", ErrCorrupt, localID, end, b.Length)
	}
	return b, nil
}

// counters is the counter row of a container.
type counters struct {
	bcsID      uint64
	usedBytes  int64
	blockCount int64
}

func appendCounterRow(dst []byte, c counters) []byte {
	dst = append(dst, rowVersion)
	dst = binary.AppendUvarint(dst, c.bcsID)
	dst = binary.AppendUvarint(dst, uint64(c.usedBytes))
	return binary.AppendUvarint(dst, uint64(c.blockCount))
}

func decodeCounterRow(row []byte) (counters, error) {
	if len(row) == 0 || row[0] != rowVersion {
		return counters{}, fmt.Errorf("%w: unknown counter row version", ErrCorrupt)
	}
	r := rowReader{b: row[1:]}
	c := counters{bcsID: r.uvarint(), usedBytes: int64(r.uvarint()), blockCount: int64(r.uvarint())}
	return c, r.err
}

// ParseID parses a container ID from its directory name: decimal digits
// only, no sign, no leading zero, not 0. Anything else (".", "..", "a/b",
// "-1", "007") is refused with ErrInvalidID, so that a name can never
// address a path outside the volume.
func ParseID(s string) (uint64, error) {
	if s == "" || len(s) > 20 || s[0] == '0' {
		return 0, fmt.Errorf("%w: %q", ErrInvalidID, s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %q", ErrInvalidID, s)
		}
	}
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrInvalidID, s)
	}
	return id, nil
}
