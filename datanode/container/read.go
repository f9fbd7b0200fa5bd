package container

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2"

	"github.com/strato-io/strato/checksum"
)

// GetBlock returns the committed state of a block.
func (c *Container) GetBlock(localID uint64) (Block, error) {
	row, closer, err := c.v.db.Get(blockKey(c.id, localID))
	if errors.Is(err, pebble.ErrNotFound) {
		return Block{}, fmt.Errorf("%w: block %d of container %d", ErrBlockNotFound, localID, c.id)
	}
	if err != nil {
		return Block{}, ioError(fmt.Sprintf("read block %d", localID), err)
	}
	defer closer.Close()
	return decodeBlockRow(localID, row)
}

// ListBlocks returns up to limit committed blocks with local IDs greater
// than after, in increasing order (pass 0 to start, then the last ID seen).
// Fewer than limit blocks means the end was reached.
func (c *Container) ListBlocks(after uint64, limit int) ([]Block, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: limit %d", ErrInvalid, limit)
	}
	var out []Block
	err := c.eachBlock(after, func(b Block) bool {
		out = append(out, b)
		return len(out) < limit
	})
	return out, err
}

// eachBlock calls f for each committed block with a local ID above after
// until f returns false. Rows that do not decode are reported as errors.
func (c *Container) eachBlock(after uint64, f func(Block) bool) error {
	lo := blockKey(c.id, after)
	hi := append(containerPrefix(c.id), tagBlock+1)
	it, err := c.v.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return ioError("list blocks", err)
	}
	defer func() { _ = it.Close() }()
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != 17 {
			return fmt.Errorf("%w: block key %x", ErrCorrupt, k)
		}
		id := beUint64(k[9:])
		if id == after {
			continue
		}
		b, err := decodeBlockRow(id, it.Value())
		if err != nil {
			return err
		}
		if !f(b) {
			return nil
		}
	}
	if err := it.Error(); err != nil {
		return ioError("list blocks", err)
	}
	return nil
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, x := range b[:8] {
		v = v<<8 | uint64(x)
	}
	return v
}

// Extent is a piece of a block's committed bytes as stored on disk: a range
// of one file with the checksums that cover it. A read path can send
// [FileOffset, FileOffset+Length) of Path straight to a socket.
type Extent struct {
	// Path is the file holding the bytes.
	Path string
	// FileOffset is where the extent starts in Path.
	FileOffset int64
	// BlockOffset is where it starts in the block.
	BlockOffset int64
	Length      int64
	// Checksums cover the extent, windows starting at BlockOffset.
	Checksums checksum.Data
}

// Extents maps [offset, offset+length) of a committed block to file ranges.
// The ranges are widened to checksum window boundaries so that each can be
// verified on its own; they are contiguous and in block order.
func (c *Container) Extents(localID uint64, offset, length int64) ([]Extent, error) {
	b, err := c.GetBlock(localID)
	if err != nil {
		return nil, err
	}
	return c.extents(&b, offset, length)
}

func (c *Container) extents(b *Block, offset, length int64) ([]Extent, error) {
	if offset < 0 || length <= 0 || offset > b.Length-length {
		return nil, fmt.Errorf("%w: range [%d, %d) outside block %d of length %d", ErrInvalid, offset, offset+length, b.LocalID, b.Length)
	}
	var out []Extent
	end := offset + length
	for _, ch := range b.Chunks {
		if ch.Offset+ch.Length <= offset || ch.Offset >= end {
			continue
		}
		from, to := max(offset, ch.Offset)-ch.Offset, min(end, ch.Offset+ch.Length)-ch.Offset
		sums := ch.Checksums
		if sums.Type != checksum.NONE {
			bpc := int64(sums.BytesPerChecksum)
			from = from / bpc * bpc
			to = min((to+bpc-1)/bpc*bpc, ch.Length)
			sums = sums.Slice(int(from/bpc), checksum.Windows(to, sums.BytesPerChecksum))
		}
		e := Extent{BlockOffset: ch.Offset + from, Length: to - from, Checksums: sums}
		switch c.layout {
		case FilePerBlock:
			e.Path, e.FileOffset = c.blockPath(b.LocalID), e.BlockOffset
		case FilePerChunk:
			e.Path, e.FileOffset = c.chunkPath(b.LocalID, ch.Offset), from
		}
		out = append(out, e)
	}
	return out, nil
}

// ReadResult is what ReadChunk returns: the bytes of the committed block
// from Offset, widened to checksum windows around the range asked for, and
// the extents (with their checksums) they came from.
type ReadResult struct {
	// Offset is the block offset of Data[0]; at most the offset asked for.
	Offset  int64
	Data    []byte
	Extents []Extent
}

// Bytes returns the bytes of [offset, offset+length) from r.
func (r *ReadResult) Bytes(offset, length int64) []byte {
	return r.Data[offset-r.Offset : offset-r.Offset+length]
}

// Verify checks the data against the checksums; the error wraps
// checksum.ErrMismatch on a mismatch.
func (r *ReadResult) Verify() error {
	for _, e := range r.Extents {
		if err := checksum.Verify(e.Checksums, 0, r.Data[e.BlockOffset-r.Offset:][:e.Length]); err != nil {
			return fmt.Errorf("%w: block range [%d, %d): %w", ErrChecksum, e.BlockOffset, e.BlockOffset+e.Length, err)
		}
	}
	return nil
}

// ReadChunk reads [offset, offset+length) of a committed block. It does not
// verify the data: the reader does, with ReadResult.Verify. A file shorter
// than the committed length (lost in a crash) is ErrCorrupt.
func (c *Container) ReadChunk(localID uint64, offset, length int64) (ReadResult, error) {
	b, err := c.GetBlock(localID)
	if err != nil {
		return ReadResult{}, err
	}
	ext, err := c.extents(&b, offset, length)
	if err != nil {
		return ReadResult{}, err
	}
	first, last := ext[0], ext[len(ext)-1]
	r := ReadResult{Offset: first.BlockOffset, Extents: ext}
	r.Data = make([]byte, last.BlockOffset+last.Length-first.BlockOffset)
	for _, e := range ext {
		if err := c.readExtent(localID, e, r.Data[e.BlockOffset-r.Offset:][:e.Length]); err != nil {
			return ReadResult{}, err
		}
	}
	return r, nil
}

func (c *Container) readExtent(localID uint64, e Extent, dst []byte) error {
	f, err := c.v.fs.Open(e.Path)
	if err != nil {
		if isNotExist(err) {
			return fmt.Errorf("%w: block %d: file %s is missing", ErrCorrupt, localID, c.v.fs.PathBase(e.Path))
		}
		return ioError(fmt.Sprintf("open block %d", localID), err)
	}
	defer f.Close()
	n, err := f.ReadAt(dst, e.FileOffset)
	if n == len(dst) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: block %d: file %s ends before %d", ErrCorrupt, localID, c.v.fs.PathBase(e.Path), e.FileOffset+e.Length)
	}
	return ioError(fmt.Sprintf("read block %d", localID), err)
}

// readRange reads a chunk's bytes whatever their commit state (used to
// compare a retried chunk).
func (c *Container) readRange(localID uint64, off int64, dst []byte, ch Chunk) error {
	e := Extent{BlockOffset: off, Length: int64(len(dst))}
	switch c.layout {
	case FilePerBlock:
		e.Path, e.FileOffset = c.blockPath(localID), off
	case FilePerChunk:
		e.Path, e.FileOffset = c.chunkPath(localID, ch.Offset), off-ch.Offset
	}
	return c.readExtent(localID, e, dst)
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
