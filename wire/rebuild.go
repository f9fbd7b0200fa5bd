package wire

// Messages between datanodes for erasure coded containers (docs/wire.md
// §5.8): a datanode rebuilding a lost replica index lists the blocks of
// the surviving indexes (LIST_BLOCKS), and a datanode copying an index's
// replica to another says which index the import carries (IMPORT_INDEX).

// MaxListBlocks bounds the blocks a LIST_BLOCKS request asks for.
const MaxListBlocks = 4096

// ListBlocksRequest asks for the committed blocks of a container with
// local IDs above AfterLocalID, in increasing order.
type ListBlocksRequest struct {
	ContainerID  uint64
	AfterLocalID uint64
	// Limit is the most blocks wanted, 1 to MaxListBlocks. The datanode
	// may answer fewer (a response's payload is bounded): More says
	// whether blocks remain.
	Limit uint32
}

// ListBlocksResponse is a page of a container's block records (as
// IMPORT_BEGIN carries them), with the container's layout, bcsID and
// replica index. The records travel in the payload (AppendPayload,
// DecodePayload).
type ListBlocksResponse struct {
	Layout       uint8
	BCSID        uint64
	ReplicaIndex uint8
	// More: blocks with higher local IDs remain (ask again after the last
	// one listed).
	More   bool
	Blocks []ImportBlock

	count uint32 // decoded from the typed header, until DecodePayload
}

// ImportIndexRequest gives the container of the import in progress the
// replica index of an erasure coded container (sent right after
// IMPORT_BEGIN, before any IMPORT_DATA).
type ImportIndexRequest struct {
	ContainerID  uint64
	ReplicaIndex uint8
}

// ImportIndexResponse acknowledges an IMPORT_INDEX.
type ImportIndexResponse struct{}

// Type is TypeListBlocks.
func (*ListBlocksRequest) Type() Type { return TypeListBlocks }

// Type is TypeListBlocks.
func (*ListBlocksResponse) Type() Type { return TypeListBlocks }

// Type is TypeImportIndex.
func (*ImportIndexRequest) Type() Type { return TypeImportIndex }

// Type is TypeImportIndex.
func (*ImportIndexResponse) Type() Type        { return TypeImportIndex }
func (*ListBlocksRequest) response() bool      { return false }
func (*ListBlocksResponse) response() bool     { return true }
func (*ImportIndexRequest) response() bool     { return false }
func (*ImportIndexResponse) response() bool    { return true }
func (m *ImportIndexResponse) decode(*decoder) {}

// ---- LIST_BLOCKS ----

// AppendHeader appends the typed header of a LIST_BLOCKS request.
func (m *ListBlocksRequest) AppendHeader(dst []byte) []byte {
	dst = appendU64(dst, m.ContainerID)
	dst = appendU64(dst, m.AfterLocalID)
	return appendU32(dst, m.Limit)
}

func (m *ListBlocksRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	m.AfterLocalID = d.u64("after local ID")
	m.Limit = d.u32("limit")
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}

func (m *ListBlocksRequest) check(payloadLen uint32) error {
	if m.Limit == 0 || m.Limit > MaxListBlocks {
		return Errorf(CodeInvalidArgument, "LIST_BLOCKS %d: limit %d out of range 1..%d", m.ContainerID, m.Limit, MaxListBlocks)
	}
	return noPayload(TypeListBlocks, payloadLen)
}

// AppendHeader appends the typed header of a LIST_BLOCKS response.
func (m *ListBlocksResponse) AppendHeader(dst []byte) []byte {
	dst = append(dst, m.Layout)
	dst = appendU64(dst, m.BCSID)
	dst = append(dst, m.ReplicaIndex)
	more := uint8(0)
	if m.More {
		more = 1
	}
	dst = append(dst, more)
	return appendU32(dst, uint32(len(m.Blocks)))
}

// AppendPayload appends the block records, the response's payload.
func (m *ListBlocksResponse) AppendPayload(dst []byte) []byte { return appendBlocks(dst, m.Blocks) }

// PayloadLen is the length of the payload AppendPayload appends.
func (m *ListBlocksResponse) PayloadLen() int {
	n := 0
	for _, b := range m.Blocks {
		n += BlockRecordLen(b)
	}
	return n
}

// BlockRecordLen is the encoded length of a block record.
func BlockRecordLen(b ImportBlock) int {
	n := 28
	for _, c := range b.Chunks {
		n += 21 + len(c.Checksums.Sums)
	}
	return n
}

func (m *ListBlocksResponse) decode(d *decoder) {
	m.Layout = d.u8("layout")
	m.BCSID = d.u64("bcsID")
	m.ReplicaIndex = d.u8("replica index")
	more := d.u8("more")
	m.count = d.u32("block count")
	if d.err == nil && more > 1 {
		d.failf("LIST_BLOCKS response: more flag %d", more)
	}
	m.More = more == 1
}

func (m *ListBlocksResponse) check(payloadLen uint32) error {
	switch {
	case m.Layout != 1 && m.Layout != 2:
		return Errorf(CodeInvalidArgument, "LIST_BLOCKS response: unknown layout %d", m.Layout)
	case uint64(m.count)*28 > uint64(payloadLen):
		return Errorf(CodeInvalidArgument, "LIST_BLOCKS response: %d block records do not fit in %d payload bytes", m.count, payloadLen)
	case m.More && m.count == 0:
		return Errorf(CodeInvalidArgument, "LIST_BLOCKS response: more blocks, none listed")
	}
	return nil
}

// DecodePayload decodes the block records from the payload into Blocks
// (their checksums alias p) and checks them as IMPORT_BEGIN's.
func (m *ListBlocksResponse) DecodePayload(p []byte) error {
	d := decoder{b: p}
	m.Blocks = decodeBlocks(&d, m.count, m.BCSID, "LIST_BLOCKS response")
	if err := d.finish(); err != nil {
		m.Blocks = nil
		return err
	}
	m.count = 0
	return nil
}

// ---- IMPORT_INDEX ----

// AppendHeader appends the typed header of an IMPORT_INDEX request.
func (m *ImportIndexRequest) AppendHeader(dst []byte) []byte {
	return append(appendU64(dst, m.ContainerID), m.ReplicaIndex)
}

func (m *ImportIndexRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	m.ReplicaIndex = d.u8("replica index")
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}

func (m *ImportIndexRequest) check(payloadLen uint32) error {
	if m.ReplicaIndex == 0 {
		return Errorf(CodeInvalidArgument, "IMPORT_INDEX %d: replica index 0", m.ContainerID)
	}
	return noPayload(TypeImportIndex, payloadLen)
}

// AppendHeader appends the typed header of an IMPORT_INDEX response.
func (m *ImportIndexResponse) AppendHeader(dst []byte) []byte { return dst }
func (m *ImportIndexResponse) check(payloadLen uint32) error {
	return noPayload(TypeImportIndex, payloadLen)
}

func newRebuildMessage(t Type, response bool) Message {
	switch t {
	case TypeListBlocks:
		if response {
			return &ListBlocksResponse{}
		}
		return &ListBlocksRequest{}
	case TypeImportIndex:
		if response {
			return &ImportIndexResponse{}
		}
		return &ImportIndexRequest{}
	}
	return nil
}
