package client

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/strato-io/strato/checksum"
	"github.com/strato-io/strato/proto/strato/v1"
	"github.com/strato-io/strato/wire"
)

// FileChecksum is a file's composite CRC, HDFS's COMPOSITE_CRC
// (dfs.checksum.combine.mode): the CRC32C (or CRC32) of all of its bytes.
// It does not depend on block or window sizes, so it equals HDFS's for the
// same bytes, and the Hadoop connector's getFileChecksum.
type FileChecksum struct {
	// Type is CRC32C or CRC32; NONE when the file was written with
	// another checksum type (NONE, SHA256, MD5), which has no composite
	// CRC (the connector returns null).
	Type checksum.Type
	// CRC is the composite CRC (of no bytes, 0, for an empty file).
	CRC uint32
	// BytesPerChecksum is the checksum window the datanodes store.
	BytesPerChecksum uint32
	// Length is the file's length.
	Length int64
}

// Algorithm is the checksum's name as Hadoop's CompositeCrcFileChecksum
// gives it: COMPOSITE-CRC32C, COMPOSITE-CRC32, or NONE.
func (f FileChecksum) Algorithm() string {
	if f.Type == checksum.NONE {
		return "NONE"
	}
	return "COMPOSITE-" + f.Type.String()
}

// Bytes is the checksum's value as Hadoop's getBytes gives it: the CRC,
// big-endian (none for NONE).
func (f FileChecksum) Bytes() []byte {
	if f.Type == checksum.NONE {
		return nil
	}
	return binary.BigEndian.AppendUint32(nil, f.CRC)
}

// FileChecksum returns the composite CRC of the file at
// /volume/bucket/path. As the Hadoop connector does, a replicated file's
// is composed from the window checksums its datanodes store (GET_BLOCK:
// no data is read but the pieces of windows cut by a block's end); an
// erasure coded file's, whose stored windows cover its members rather than
// its bytes, from its bytes, read and verified.
func (c *Client) FileChecksum(ctx context.Context, path string) (FileChecksum, error) {
	r, err := c.Open(ctx, path)
	if err != nil {
		return FileChecksum{}, err
	}
	defer func() { _ = r.Close() }()
	ki := r.Info()
	t, err := checksumType(ki.GetChecksumType())
	if err != nil {
		return FileChecksum{}, err
	}
	fc := FileChecksum{Type: t, BytesPerChecksum: uint32(ki.GetBytesPerChecksum()), Length: ki.GetSize()}
	if fc.BytesPerChecksum == 0 {
		fc.BytesPerChecksum = checksum.DefaultBytesPerChecksum
	}
	if t != checksum.CRC32 && t != checksum.CRC32C {
		fc.Type = checksum.NONE
		return fc, nil
	}
	if ki.GetErasureCoding() != nil {
		fc.CRC, err = crcOfBytes(r, t)
		return fc, err
	}
	var crc uint32
	for _, bl := range ki.GetBlocks() {
		if bl.Length == 0 {
			continue
		}
		bc, err := r.blockCRC(bl, t)
		if err != nil {
			return FileChecksum{}, err
		}
		if crc, err = checksum.CombineCRC(t, crc, bc, bl.Length); err != nil {
			return FileChecksum{}, err
		}
	}
	fc.CRC = crc
	return fc, nil
}

// crcOfBytes reads the rest of r and returns its CRC.
func crcOfBytes(r io.Reader, t checksum.Type) (uint32, error) {
	h := crc32.New(crcTable(t))
	_, err := io.Copy(h, r)
	return h.Sum32(), err
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcTable is the table of a CRC type (CRC32C or CRC32).
func crcTable(t checksum.Type) *crc32.Table {
	if t == checksum.CRC32C {
		return castagnoli
	}
	return crc32.IEEETable
}

// blockCRC returns the CRC of a replicated block's bytes, composed from
// the windows of the first replica that answers GET_BLOCK with windows
// that cover them (a replica behind the others does not).
func (r *Reader) blockCRC(bl *stratov1.BlockLocation, t checksum.Type) (uint32, error) {
	var errs []error
	for _, m := range bl.GetPipeline().GetMembers() {
		conn, err := r.c.data.getFor(r.ctx, m.DataAddr, bl.GetToken())
		if err == nil {
			var gb *wire.GetBlockResponse
			if gb, err = conn.GetBlock(r.ctx, &wire.GetBlockRequest{Block: wireBlock(bl.BlockId)}); err == nil {
				var crc uint32
				if crc, err = r.composeWindows(bl, gb.Chunks, t); err == nil {
					return crc, nil
				}
			}
		}
		if cerr := r.ctx.Err(); cerr != nil {
			return 0, cerr
		}
		errs = append(errs, fmt.Errorf("datanode %s: %w", m.Id, dataErr(err)))
	}
	return 0, fmt.Errorf("no replica of %s/%s/%s block %s gave its checksums: %w", r.key.Volume, r.key.Bucket, r.key.Name,
		wireBlock(bl.BlockId), errors.Join(errs...))
}

// composeWindows composes the CRC of the block's first bl.Length bytes
// from its chunks' windows. A window cut by that end is CRCed from its
// bytes up to it, read (and verified) from the block.
func (r *Reader) composeWindows(bl *stratov1.BlockLocation, chunks []wire.Chunk, t checksum.Type) (uint32, error) {
	var crc uint32
	var pos int64 // what the windows so far cover
	for _, ch := range chunks {
		cs := ch.Checksums
		if cs.Type != t {
			return 0, fmt.Errorf("%w: block %s has %s windows in a %s key", ErrCorruptRead, wireBlock(bl.BlockId), cs.Type, t)
		}
		for i := 0; i < cs.Count(); i++ {
			wo := ch.Offset + int64(i)*int64(cs.BytesPerChecksum)
			if wo >= bl.Length {
				break
			}
			if wo != pos {
				return 0, fmt.Errorf("%w: block %s's windows skip from %d to %d", ErrCorruptRead, wireBlock(bl.BlockId), pos, wo)
			}
			wl := min(int64(cs.BytesPerChecksum), ch.Offset+int64(ch.Length)-wo)
			v := binary.BigEndian.Uint32(cs.At(i))
			if wo+wl > bl.Length {
				wl = bl.Length - wo
				b := make([]byte, wl)
				if err := r.readBlock(bl, wo, b); err != nil {
					return 0, err
				}
				v = crc32.Checksum(b, crcTable(t))
			}
			var err error
			if crc, err = checksum.CombineCRC(t, crc, v, wl); err != nil {
				return 0, err
			}
			pos = wo + wl
		}
	}
	if pos != bl.Length {
		return 0, fmt.Errorf("%w: block %s's windows cover %d of its %d bytes", ErrCorruptRead, wireBlock(bl.BlockId), pos, bl.Length)
	}
	return crc, nil
}
