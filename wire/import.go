package wire

// Container import (docs/wire.md §5.7): a datanode pushes one CLOSED
// container to another on a connection dedicated to the transfer.

// ImportBlock is a block of an imported container: its committed state as
// the source's row holds it.
type ImportBlock struct {
	LocalID uint64
	Length  int64
	// BCSID is the commit sequence ID of the block's last PutBlock.
	BCSID uint64
	// Chunks tile [0, Length), in block order.
	Chunks []Chunk
}

// ImportBeginRequest opens the import of a CLOSED container. Its block
// records travel in the payload (AppendPayload, DecodePayload).
type ImportBeginRequest struct {
	ContainerID uint64
	// Layout is the container's on-disk layout: 1 FILE_PER_BLOCK, 2
	// FILE_PER_CHUNK (the files the IMPORT_DATA frames fill).
	Layout uint8
	// BCSID is the container's highest block commit sequence ID.
	BCSID uint64
	// TotalBytes is the number of file bytes the IMPORT_DATA frames will
	// carry: the sum of the blocks' lengths.
	TotalBytes int64
	// Background marks a copy that gives way to the target's clients (a
	// container balancer's move): flags bit 0, a byte sent only when set.
	Background bool
	Blocks     []ImportBlock

	count uint32 // decoded from the typed header, until DecodePayload
}

// ImportBeginResponse accepts an import.
type ImportBeginResponse struct{}

// ImportDataRequest carries bytes of one file of the imported container;
// the bytes are the payload.
type ImportDataRequest struct {
	LocalID uint64
	// ChunkOffset names the file: 0 for the block file of a FILE_PER_BLOCK
	// container, the chunk's offset in the block for FILE_PER_CHUNK.
	ChunkOffset int64
	// FileOffset is where the payload goes in that file.
	FileOffset int64
}

// ImportDataResponse acknowledges an IMPORT_DATA frame.
type ImportDataResponse struct{}

// ImportCommitRequest ends an import: the receiver verifies every block and
// makes the container its own, CLOSED.
type ImportCommitRequest struct {
	ContainerID uint64
}

// ImportCommitResponse reports the committed container's bcsID and size.
type ImportCommitResponse struct {
	BCSID uint64
	Bytes int64
}

// ImportAbortRequest ends an import without keeping anything.
type ImportAbortRequest struct {
	ContainerID uint64
}

// ImportAbortResponse acknowledges an abort.
type ImportAbortResponse struct{}

// Type is TypeImportBegin.
func (*ImportBeginRequest) Type() Type { return TypeImportBegin }

// Type is TypeImportBegin.
func (*ImportBeginResponse) Type() Type { return TypeImportBegin }

// Type is TypeImportData.
func (*ImportDataRequest) Type() Type { return TypeImportData }

// Type is TypeImportData.
func (*ImportDataResponse) Type() Type { return TypeImportData }

// Type is TypeImportCommit.
func (*ImportCommitRequest) Type() Type { return TypeImportCommit }

// Type is TypeImportCommit.
func (*ImportCommitResponse) Type() Type { return TypeImportCommit }

// Type is TypeImportAbort.
func (*ImportAbortRequest) Type() Type { return TypeImportAbort }

// Type is TypeImportAbort.
func (*ImportAbortResponse) Type() Type      { return TypeImportAbort }
func (*ImportBeginRequest) response() bool   { return false }
func (*ImportBeginResponse) response() bool  { return true }
func (*ImportDataRequest) response() bool    { return false }
func (*ImportDataResponse) response() bool   { return true }
func (*ImportCommitRequest) response() bool  { return false }
func (*ImportCommitResponse) response() bool { return true }
func (*ImportAbortRequest) response() bool   { return false }
func (*ImportAbortResponse) response() bool  { return true }

// ---- IMPORT_BEGIN ----

// AppendHeader appends the typed header of an IMPORT_BEGIN request.
func (m *ImportBeginRequest) AppendHeader(dst []byte) []byte {
	dst = appendU64(dst, m.ContainerID)
	dst = append(dst, m.Layout)
	dst = appendU64(dst, m.BCSID)
	dst = appendI64(dst, m.TotalBytes)
	dst = appendU32(dst, uint32(len(m.Blocks)))
	if m.Background {
		// The flags byte is optional: a header without it has none set.
		dst = append(dst, importBackground)
	}
	return dst
}

// importBackground is IMPORT_BEGIN's flag of a background copy.
const importBackground = 1

// AppendPayload appends the block records, the request's payload.
func (m *ImportBeginRequest) AppendPayload(dst []byte) []byte {
	return appendBlocks(dst, m.Blocks)
}

func (m *ImportBeginRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	m.Layout = d.u8("layout")
	m.BCSID = d.u64("bcsID")
	m.TotalBytes = d.i64("total bytes")
	m.count = d.u32("block count")
	if d.err == nil && len(d.b) > 0 {
		flags := d.u8("flags")
		if flags&^importBackground != 0 {
			d.failf("unknown IMPORT_BEGIN flags %#x", flags)
		}
		m.Background = flags&importBackground != 0
	}
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}

func (m *ImportBeginRequest) check(payloadLen uint32) error {
	switch {
	case m.Layout != 1 && m.Layout != 2:
		return Errorf(CodeInvalidArgument, "IMPORT_BEGIN %d: unknown layout %d", m.ContainerID, m.Layout)
	case m.TotalBytes < 0:
		return Errorf(CodeInvalidArgument, "IMPORT_BEGIN %d: negative total bytes %d", m.ContainerID, m.TotalBytes)
	case uint64(m.count)*28 > uint64(payloadLen):
		// A block record takes at least 28 bytes.
		return Errorf(CodeInvalidArgument, "IMPORT_BEGIN %d: %d block records do not fit in %d payload bytes", m.ContainerID, m.count, payloadLen)
	}
	return nil
}

// DecodePayload decodes the block records from the payload into Blocks
// (their checksums alias p) and checks them: local IDs strictly
// increasing, chunks tiling each block, lengths adding up to TotalBytes.
func (m *ImportBeginRequest) DecodePayload(p []byte) error {
	d := decoder{b: p}
	m.Blocks = decodeBlocks(&d, m.count, m.BCSID, "IMPORT_BEGIN")
	var total int64
	for _, b := range m.Blocks {
		total += b.Length
	}
	if d.err == nil && total != m.TotalBytes {
		d.failf("IMPORT_BEGIN: blocks hold %d bytes, total bytes is %d", total, m.TotalBytes)
	}
	if err := d.finish(); err != nil {
		m.Blocks = nil
		return err
	}
	m.count = 0
	return nil
}

// appendBlocks appends block records (docs/wire.md §5.7).
func appendBlocks(dst []byte, blocks []ImportBlock) []byte {
	for _, b := range blocks {
		dst = appendU64(dst, b.LocalID)
		dst = appendI64(dst, b.Length)
		dst = appendU64(dst, b.BCSID)
		dst = appendU32(dst, uint32(len(b.Chunks)))
		for _, c := range b.Chunks {
			dst = appendChunk(dst, c)
		}
	}
	return dst
}

// decodeBlocks decodes n block records and checks them: local IDs
// strictly increasing, bcsIDs at most maxBCSID, chunks tiling each block.
// On error d.err is set and the result is partial.
func decodeBlocks(d *decoder, n uint32, maxBCSID uint64, what string) []ImportBlock {
	blocks := make([]ImportBlock, n)
	for i := range blocks {
		b := ImportBlock{LocalID: d.u64("local ID"), Length: d.i64("block length"), BCSID: d.u64("block bcsID")}
		n := d.records("chunk count", 21, what+": %d chunk records do not fit in the payload")
		if d.err != nil {
			break
		}
		if i > 0 && b.LocalID <= blocks[i-1].LocalID {
			d.failf("%s: block %d follows block %d", what, b.LocalID, blocks[i-1].LocalID)
			break
		}
		if b.BCSID > maxBCSID {
			d.failf("%s: block %d has bcsID %d above the container's %d", what, b.LocalID, b.BCSID, maxBCSID)
			break
		}
		b.Chunks = make([]Chunk, n)
		end := int64(0)
		for j := range b.Chunks {
			c := d.chunk("chunk record")
			if d.err == nil && c.Offset != end {
				d.failf("%s: block %d: chunk at %d, want %d", what, b.LocalID, c.Offset, end)
			}
			end += int64(c.Length)
			b.Chunks[j] = c
		}
		if d.err == nil && end != b.Length {
			d.failf("%s: block %d: chunks cover %d bytes, length is %d", what, b.LocalID, end, b.Length)
		}
		if d.err != nil {
			break
		}
		blocks[i] = b
	}
	return blocks
}

// AppendHeader appends the typed header of an IMPORT_BEGIN response.
func (m *ImportBeginResponse) AppendHeader(dst []byte) []byte { return dst }
func (m *ImportBeginResponse) decode(*decoder)                {}
func (m *ImportBeginResponse) check(payloadLen uint32) error {
	return noPayload(TypeImportBegin, payloadLen)
}

// ---- IMPORT_DATA ----

// AppendHeader appends the typed header of an IMPORT_DATA request.
func (m *ImportDataRequest) AppendHeader(dst []byte) []byte {
	dst = appendU64(dst, m.LocalID)
	dst = appendI64(dst, m.ChunkOffset)
	return appendI64(dst, m.FileOffset)
}

func (m *ImportDataRequest) decode(d *decoder) {
	m.LocalID = d.u64("local ID")
	m.ChunkOffset = d.i64("chunk offset")
	m.FileOffset = d.i64("file offset")
}

func (m *ImportDataRequest) check(payloadLen uint32) error {
	switch {
	case m.ChunkOffset < 0:
		return Errorf(CodeInvalidArgument, "IMPORT_DATA block %d: negative chunk offset %d", m.LocalID, m.ChunkOffset)
	case m.FileOffset < 0 || m.FileOffset > maxOffset-int64(payloadLen):
		return Errorf(CodeInvalidArgument, "IMPORT_DATA block %d: file offset %d invalid", m.LocalID, m.FileOffset)
	case payloadLen == 0:
		return Errorf(CodeInvalidArgument, "IMPORT_DATA block %d: empty payload", m.LocalID)
	}
	return nil
}

// AppendHeader appends the typed header of an IMPORT_DATA response.
func (m *ImportDataResponse) AppendHeader(dst []byte) []byte { return dst }
func (m *ImportDataResponse) decode(*decoder)                {}
func (m *ImportDataResponse) check(payloadLen uint32) error {
	return noPayload(TypeImportData, payloadLen)
}

// ---- IMPORT_COMMIT, IMPORT_ABORT ----

// AppendHeader appends the typed header of an IMPORT_COMMIT request.
func (m *ImportCommitRequest) AppendHeader(dst []byte) []byte { return appendU64(dst, m.ContainerID) }
func (m *ImportCommitRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}
func (m *ImportCommitRequest) check(payloadLen uint32) error {
	return noPayload(TypeImportCommit, payloadLen)
}

// AppendHeader appends the typed header of an IMPORT_COMMIT response.
func (m *ImportCommitResponse) AppendHeader(dst []byte) []byte {
	return appendI64(appendU64(dst, m.BCSID), m.Bytes)
}
func (m *ImportCommitResponse) decode(d *decoder) {
	m.BCSID = d.u64("bcsID")
	m.Bytes = d.i64("bytes")
}
func (m *ImportCommitResponse) check(payloadLen uint32) error {
	if m.Bytes < 0 {
		return Errorf(CodeInvalidArgument, "IMPORT_COMMIT response: negative bytes %d", m.Bytes)
	}
	return noPayload(TypeImportCommit, payloadLen)
}

// AppendHeader appends the typed header of an IMPORT_ABORT request.
func (m *ImportAbortRequest) AppendHeader(dst []byte) []byte { return appendU64(dst, m.ContainerID) }
func (m *ImportAbortRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}
func (m *ImportAbortRequest) check(payloadLen uint32) error {
	return noPayload(TypeImportAbort, payloadLen)
}

// AppendHeader appends the typed header of an IMPORT_ABORT response.
func (m *ImportAbortResponse) AppendHeader(dst []byte) []byte { return dst }
func (m *ImportAbortResponse) decode(*decoder)                {}
func (m *ImportAbortResponse) check(payloadLen uint32) error {
	return noPayload(TypeImportAbort, payloadLen)
}

func newImportMessage(t Type, response bool) Message {
	switch t {
	case TypeImportBegin:
		if response {
			return &ImportBeginResponse{}
		}
		return &ImportBeginRequest{}
	case TypeImportData:
		if response {
			return &ImportDataResponse{}
		}
		return &ImportDataRequest{}
	case TypeImportCommit:
		if response {
			return &ImportCommitResponse{}
		}
		return &ImportCommitRequest{}
	case TypeImportAbort:
		if response {
			return &ImportAbortResponse{}
		}
		return &ImportAbortRequest{}
	}
	return newRebuildMessage(t, response)
}
