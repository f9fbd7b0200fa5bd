package wire

import (
	"fmt"

	"github.com/strato-io/strato/checksum"
)

// BlockID names a block: its container and its ID there.
type BlockID struct {
	ContainerID uint64
	LocalID     uint64
}

// String is "containerID/localID".
func (b BlockID) String() string { return fmt.Sprintf("%d/%d", b.ContainerID, b.LocalID) }

// Chunk is a chunk record (docs/wire.md §3.3): a run of a block's bytes with
// the checksums that cover it, windows starting at Offset.
type Chunk struct {
	Offset    int64
	Length    uint32
	Checksums checksum.Data
}

// Message is the typed header of a frame: one of the request and response
// types of this package, or *Error. Messages are plain values; the byte
// slices they hold (checksums) alias the buffer they were decoded from.
type Message interface {
	// Type is the frame type of the message. *Error returns TypeNone: an
	// error frame takes its request's type.
	Type() Type
	// AppendHeader appends the encoded typed header to dst.
	AppendHeader(dst []byte) []byte

	response() bool
	decode(d *decoder)
	// check validates the decoded fields against each other and against
	// the frame's payload length.
	check(payloadLen uint32) error
}

// PingRequest opens a connection: the versions the client speaks.
type PingRequest struct {
	MinVersion, MaxVersion uint8
	// ClientID is free text for the server's logs.
	ClientID string
}

// PingResponse is the version chosen and what the server speaks.
type PingResponse struct {
	Version                uint8
	MinVersion, MaxVersion uint8
	// MaxChunkLen is the largest WriteChunk the server accepts.
	MaxChunkLen uint32
	// ServerID is the datanode's ID.
	ServerID string
}

// WriteChunkRequest writes one chunk; the chunk's bytes are the payload.
type WriteChunkRequest struct {
	Block  BlockID
	Offset int64
	// Length is the chunk's length; it must equal the payload's.
	Length uint32
	// Checksums cover the chunk, windows starting at Offset.
	Checksums checksum.Data
	// Followers are the datanodes the receiver forwards to (host:port);
	// empty when the receiver is a follower or the only replica.
	Followers []string
}

// WriteChunkResponse acknowledges a WriteChunk (on every replica).
type WriteChunkResponse struct{}

// PutBlockRequest commits a block's length.
type PutBlockRequest struct {
	Block  BlockID
	Length int64
	// Final says the block is complete.
	Final bool
	// Sync makes every replica fsync the block before answering.
	Sync      bool
	Followers []string
}

// PutBlockResponse carries the leader's block commit sequence ID.
type PutBlockResponse struct {
	BCSID uint64
}

// WriteCommitRequest writes a chunk, as WriteChunkRequest does, then
// commits the block at the chunk's end, as PutBlockRequest does: a block's
// last chunk and its commit in one round trip (version 3).
type WriteCommitRequest struct {
	Block     BlockID
	Offset    int64
	Length    uint32
	Checksums checksum.Data
	// Final and Sync are PutBlockRequest's.
	Final, Sync bool
	Followers   []string
}

// WriteCommitResponse carries the leader's block commit sequence ID.
type WriteCommitResponse struct {
	BCSID uint64
}

// Write is the request's WRITE_CHUNK part.
func (m *WriteCommitRequest) Write() *WriteChunkRequest {
	return &WriteChunkRequest{Block: m.Block, Offset: m.Offset, Length: m.Length, Checksums: m.Checksums, Followers: m.Followers}
}

// Put is the request's PUT_BLOCK part.
func (m *WriteCommitRequest) Put() *PutBlockRequest {
	return &PutBlockRequest{Block: m.Block, Length: m.Offset + int64(m.Length), Final: m.Final, Sync: m.Sync, Followers: m.Followers}
}

// ReadChunkRequest reads [Offset, Offset+Length) of a committed block.
type ReadChunkRequest struct {
	Block  BlockID
	Offset int64
	Length uint32
}

// ReadChunkResponse describes the payload of a read: the block's bytes from
// Offset, widened to checksum windows, and the checksums of each piece.
type ReadChunkResponse struct {
	// Offset is the block offset of the payload's first byte.
	Offset int64
	// Chunks tile the payload in order.
	Chunks []Chunk
}

// GetBlockRequest asks for a block's committed state.
type GetBlockRequest struct {
	Block BlockID
}

// GetBlockResponse is a block's committed state. Its chunk records travel
// in the payload (AppendPayload, DecodePayload).
type GetBlockResponse struct {
	Length int64
	BCSID  uint64
	Chunks []Chunk

	count uint32 // decoded from the typed header, until DecodePayload
}

// CloseContainerRequest closes a container on the receiving datanode.
type CloseContainerRequest struct {
	ContainerID uint64
}

// CloseContainerResponse carries the closed container's highest bcsID.
type CloseContainerResponse struct {
	BCSID uint64
}

// Type is TypePing.
func (*PingRequest) Type() Type { return TypePing }

// Type is TypePing.
func (*PingResponse) Type() Type { return TypePing }

// Type is TypeWriteChunk.
func (*WriteChunkRequest) Type() Type { return TypeWriteChunk }

// Type is TypeWriteChunk.
func (*WriteChunkResponse) Type() Type { return TypeWriteChunk }

// Type is TypePutBlock.
func (*PutBlockRequest) Type() Type { return TypePutBlock }

// Type is TypePutBlock.
func (*PutBlockResponse) Type() Type { return TypePutBlock }

// Type is TypeWriteCommit.
func (*WriteCommitRequest) Type() Type { return TypeWriteCommit }

// Type is TypeWriteCommit.
func (*WriteCommitResponse) Type() Type { return TypeWriteCommit }

// Type is TypeReadChunk.
func (*ReadChunkRequest) Type() Type { return TypeReadChunk }

// Type is TypeReadChunk.
func (*ReadChunkResponse) Type() Type { return TypeReadChunk }

// Type is TypeGetBlock.
func (*GetBlockRequest) Type() Type { return TypeGetBlock }

// Type is TypeGetBlock.
func (*GetBlockResponse) Type() Type { return TypeGetBlock }

// Type is TypeCloseContainer.
func (*CloseContainerRequest) Type() Type { return TypeCloseContainer }

// Type is TypeCloseContainer.
func (*CloseContainerResponse) Type() Type { return TypeCloseContainer }

// Type is TypeNone: an error frame takes its request's type.
func (*Error) Type() Type { return TypeNone }

func (*PingRequest) response() bool            { return false }
func (*PingResponse) response() bool           { return true }
func (*WriteChunkRequest) response() bool      { return false }
func (*WriteChunkResponse) response() bool     { return true }
func (*PutBlockRequest) response() bool        { return false }
func (*PutBlockResponse) response() bool       { return true }
func (*WriteCommitRequest) response() bool     { return false }
func (*WriteCommitResponse) response() bool    { return true }
func (*ReadChunkRequest) response() bool       { return false }
func (*ReadChunkResponse) response() bool      { return true }
func (*GetBlockRequest) response() bool        { return false }
func (*GetBlockResponse) response() bool       { return true }
func (*CloseContainerRequest) response() bool  { return false }
func (*CloseContainerResponse) response() bool { return true }
func (*Error) response() bool                  { return true }

// ---- PING ----

// AppendHeader appends the typed header of a PING request.
func (m *PingRequest) AppendHeader(dst []byte) []byte {
	dst = append(dst, m.MinVersion, m.MaxVersion)
	return appendString(dst, m.ClientID)
}

func (m *PingRequest) decode(d *decoder) {
	m.MinVersion, m.MaxVersion = d.u8("minVersion"), d.u8("maxVersion")
	m.ClientID = d.str(MaxIDLen, "client ID")
}

func (m *PingRequest) check(payloadLen uint32) error {
	if m.MinVersion == 0 || m.MinVersion > m.MaxVersion {
		return Errorf(CodeInvalidArgument, "PING: version range [%d, %d] invalid", m.MinVersion, m.MaxVersion)
	}
	return noPayload(TypePing, payloadLen)
}

// AppendHeader appends the typed header of a PING response.
func (m *PingResponse) AppendHeader(dst []byte) []byte {
	dst = append(dst, m.Version, m.MinVersion, m.MaxVersion)
	dst = appendU32(dst, m.MaxChunkLen)
	return appendString(dst, m.ServerID)
}

func (m *PingResponse) decode(d *decoder) {
	m.Version, m.MinVersion, m.MaxVersion = d.u8("version"), d.u8("minVersion"), d.u8("maxVersion")
	m.MaxChunkLen = d.u32("maxChunkLength")
	m.ServerID = d.str(MaxIDLen, "server ID")
}

func (m *PingResponse) check(payloadLen uint32) error {
	if m.MinVersion == 0 || m.MinVersion > m.MaxVersion || m.Version < m.MinVersion || m.Version > m.MaxVersion {
		return Errorf(CodeInvalidArgument, "PING response: version %d, range [%d, %d] invalid", m.Version, m.MinVersion, m.MaxVersion)
	}
	return noPayload(TypePing, payloadLen)
}

// ---- WRITE_CHUNK ----

// AppendHeader appends the typed header of a WRITE_CHUNK request.
func (m *WriteChunkRequest) AppendHeader(dst []byte) []byte {
	dst = appendBlockID(dst, m.Block)
	dst = appendI64(dst, m.Offset)
	dst = appendU32(dst, m.Length)
	dst = appendSums(dst, m.Checksums)
	return appendFollowers(dst, m.Followers)
}

func (m *WriteChunkRequest) decode(d *decoder) {
	m.Block = d.blockID()
	m.Offset = d.i64("offset")
	m.Length = d.u32("length")
	m.Checksums = d.sums("checksums")
	m.Followers = d.followers()
}

func (m *WriteChunkRequest) check(payloadLen uint32) error {
	return checkChunk(TypeWriteChunk, m.Block, m.Offset, m.Length, m.Checksums, payloadLen)
}

// checkChunk checks the chunk a WRITE_CHUNK or WRITE_COMMIT carries.
func checkChunk(t Type, block BlockID, offset int64, length uint32, sums checksum.Data, payloadLen uint32) error {
	switch {
	case offset < 0 || offset > maxOffset-int64(length):
		return Errorf(CodeInvalidArgument, "%v %v: offset %d invalid", t, block, offset)
	case length == 0 || length > MaxChunkLen:
		return Errorf(CodeInvalidArgument, "%v %v: length %d out of range 1..%d", t, block, length, MaxChunkLen)
	case length != payloadLen:
		return Errorf(CodeInvalidArgument, "%v %v: length %d but payload of %d bytes", t, block, length, payloadLen)
	}
	if err := checkSums(sums, length); err != nil {
		return Errorf(CodeInvalidArgument, "%v %v at %d: %v", t, block, offset, err)
	}
	return nil
}

// AppendHeader appends the typed header of a WRITE_CHUNK response.
func (m *WriteChunkResponse) AppendHeader(dst []byte) []byte { return dst }
func (m *WriteChunkResponse) decode(*decoder)                {}
func (m *WriteChunkResponse) check(payloadLen uint32) error {
	return noPayload(TypeWriteChunk, payloadLen)
}

// ---- PUT_BLOCK ----

// PUT_BLOCK (and WRITE_COMMIT) flag bits.
const (
	putFinal = 1 << 0
	putSync  = 1 << 1
)

func appendPutFlags(dst []byte, final, sync bool) []byte {
	var f byte
	if final {
		f |= putFinal
	}
	if sync {
		f |= putSync
	}
	return append(dst, f)
}

func (d *decoder) putFlags(t Type) (final, sync bool) {
	f := d.u8("flags")
	if f&^(putFinal|putSync) != 0 {
		d.failf("%v: reserved flag bits %#02x set", t, f&^(putFinal|putSync))
	}
	return f&putFinal != 0, f&putSync != 0
}

// AppendHeader appends the typed header of a PUT_BLOCK request.
func (m *PutBlockRequest) AppendHeader(dst []byte) []byte {
	dst = appendBlockID(dst, m.Block)
	dst = appendI64(dst, m.Length)
	dst = appendPutFlags(dst, m.Final, m.Sync)
	return appendFollowers(dst, m.Followers)
}

func (m *PutBlockRequest) decode(d *decoder) {
	m.Block = d.blockID()
	m.Length = d.i64("length")
	m.Final, m.Sync = d.putFlags(TypePutBlock)
	m.Followers = d.followers()
}

func (m *PutBlockRequest) check(payloadLen uint32) error {
	if m.Length < 0 {
		return Errorf(CodeInvalidArgument, "PUT_BLOCK %v: negative length %d", m.Block, m.Length)
	}
	return noPayload(TypePutBlock, payloadLen)
}

// AppendHeader appends the typed header of a PUT_BLOCK response.
func (m *PutBlockResponse) AppendHeader(dst []byte) []byte { return appendU64(dst, m.BCSID) }
func (m *PutBlockResponse) decode(d *decoder)              { m.BCSID = d.u64("bcsID") }
func (m *PutBlockResponse) check(payloadLen uint32) error  { return noPayload(TypePutBlock, payloadLen) }

// ---- WRITE_COMMIT ----

// AppendHeader appends the typed header of a WRITE_COMMIT request.
func (m *WriteCommitRequest) AppendHeader(dst []byte) []byte {
	dst = appendBlockID(dst, m.Block)
	dst = appendI64(dst, m.Offset)
	dst = appendU32(dst, m.Length)
	dst = appendSums(dst, m.Checksums)
	dst = appendPutFlags(dst, m.Final, m.Sync)
	return appendFollowers(dst, m.Followers)
}

func (m *WriteCommitRequest) decode(d *decoder) {
	m.Block = d.blockID()
	m.Offset = d.i64("offset")
	m.Length = d.u32("length")
	m.Checksums = d.sums("checksums")
	m.Final, m.Sync = d.putFlags(TypeWriteCommit)
	m.Followers = d.followers()
}

func (m *WriteCommitRequest) check(payloadLen uint32) error {
	return checkChunk(TypeWriteCommit, m.Block, m.Offset, m.Length, m.Checksums, payloadLen)
}

// AppendHeader appends the typed header of a WRITE_COMMIT response.
func (m *WriteCommitResponse) AppendHeader(dst []byte) []byte { return appendU64(dst, m.BCSID) }
func (m *WriteCommitResponse) decode(d *decoder)              { m.BCSID = d.u64("bcsID") }
func (m *WriteCommitResponse) check(payloadLen uint32) error {
	return noPayload(TypeWriteCommit, payloadLen)
}

// ---- READ_CHUNK ----

// AppendHeader appends the typed header of a READ_CHUNK request.
func (m *ReadChunkRequest) AppendHeader(dst []byte) []byte {
	dst = appendBlockID(dst, m.Block)
	dst = appendI64(dst, m.Offset)
	return appendU32(dst, m.Length)
}

func (m *ReadChunkRequest) decode(d *decoder) {
	m.Block = d.blockID()
	m.Offset = d.i64("offset")
	m.Length = d.u32("length")
}

func (m *ReadChunkRequest) check(payloadLen uint32) error {
	return m.checkAs(TypeReadChunk, payloadLen)
}

// checkAs checks a request laid out as READ_CHUNK's, of type t (READ_CHUNK,
// READ_LOCAL or READ_LOCAL_PATHS).
func (m *ReadChunkRequest) checkAs(t Type, payloadLen uint32) error {
	switch {
	case m.Offset < 0 || m.Offset > maxOffset-int64(m.Length):
		return Errorf(CodeInvalidArgument, "%v %v: offset %d invalid", t, m.Block, m.Offset)
	case m.Length == 0 || m.Length > MaxReadLen:
		return Errorf(CodeInvalidArgument, "%v %v: length %d out of range 1..%d", t, m.Block, m.Length, MaxReadLen)
	}
	return noPayload(t, payloadLen)
}

// AppendHeader appends the typed header of a READ_CHUNK response.
func (m *ReadChunkResponse) AppendHeader(dst []byte) []byte {
	dst = appendI64(dst, m.Offset)
	dst = appendU32(dst, uint32(len(m.Chunks)))
	for _, c := range m.Chunks {
		dst = appendChunk(dst, c)
	}
	return dst
}

func (m *ReadChunkResponse) decode(d *decoder) {
	m.Offset = d.i64("offset")
	// A record takes at least 21 bytes.
	n := d.records("chunk count", 21, "READ_CHUNK response: %d chunk records do not fit in the typed header")
	if d.err != nil {
		return
	}
	m.Chunks = make([]Chunk, n)
	for i := range m.Chunks {
		m.Chunks[i] = d.chunk("chunk record")
	}
}

func (m *ReadChunkResponse) check(payloadLen uint32) error {
	if len(m.Chunks) == 0 {
		return Errorf(CodeInvalidArgument, "READ_CHUNK response without chunk records")
	}
	if m.Offset < 0 {
		return Errorf(CodeInvalidArgument, "READ_CHUNK response: negative offset %d", m.Offset)
	}
	end := m.Offset
	for _, c := range m.Chunks {
		if c.Offset != end {
			return Errorf(CodeInvalidArgument, "READ_CHUNK response: chunk record at %d, want %d", c.Offset, end)
		}
		end += int64(c.Length)
	}
	if end-m.Offset != int64(payloadLen) {
		return Errorf(CodeInvalidArgument, "READ_CHUNK response: records cover %d bytes, payload has %d", end-m.Offset, payloadLen)
	}
	return nil
}

// Verify checks payload against the checksums of the records. The error
// is an *Error with CodeChecksumMismatch (wrapping the first bad window's
// offset in the block) or CodeInvalidArgument for a payload of the wrong
// length.
func (m *ReadChunkResponse) Verify(payload []byte) error {
	pos := 0
	for _, c := range m.Chunks {
		if len(payload)-pos < int(c.Length) {
			return Errorf(CodeInvalidArgument, "READ_CHUNK payload of %d bytes shorter than its records", len(payload))
		}
		if err := checksum.Verify(c.Checksums, 0, payload[pos:pos+int(c.Length)]); err != nil {
			return Errorf(CodeChecksumMismatch, "block range [%d, %d): %v", c.Offset, c.Offset+int64(c.Length), err)
		}
		pos += int(c.Length)
	}
	if pos != len(payload) {
		return Errorf(CodeInvalidArgument, "READ_CHUNK payload of %d bytes, records cover %d", len(payload), pos)
	}
	return nil
}

// Range returns the bytes [offset, offset+length) of the block from the
// payload of this response (the range asked for, without the widening).
// It panics if the payload does not hold them.
func (m *ReadChunkResponse) Range(payload []byte, offset int64, length int) []byte {
	i := offset - m.Offset
	return payload[i : i+int64(length)]
}

// ---- GET_BLOCK ----

// AppendHeader appends the typed header of a GET_BLOCK request.
func (m *GetBlockRequest) AppendHeader(dst []byte) []byte { return appendBlockID(dst, m.Block) }
func (m *GetBlockRequest) decode(d *decoder)              { m.Block = d.blockID() }
func (m *GetBlockRequest) check(payloadLen uint32) error  { return noPayload(TypeGetBlock, payloadLen) }

// AppendHeader appends the typed header of a GET_BLOCK response.
func (m *GetBlockResponse) AppendHeader(dst []byte) []byte {
	dst = appendI64(dst, m.Length)
	dst = appendU64(dst, m.BCSID)
	return appendU32(dst, uint32(len(m.Chunks)))
}

// AppendPayload appends the chunk records, the response's payload.
func (m *GetBlockResponse) AppendPayload(dst []byte) []byte {
	for _, c := range m.Chunks {
		dst = appendChunk(dst, c)
	}
	return dst
}

func (m *GetBlockResponse) decode(d *decoder) {
	m.Length = d.i64("length")
	m.BCSID = d.u64("bcsID")
	m.count = d.u32("chunk count")
}

func (m *GetBlockResponse) check(payloadLen uint32) error {
	if m.Length < 0 {
		return Errorf(CodeInvalidArgument, "GET_BLOCK response: negative length %d", m.Length)
	}
	if uint64(m.count)*21 > uint64(payloadLen) {
		return Errorf(CodeInvalidArgument, "GET_BLOCK response: %d chunk records do not fit in %d payload bytes", m.count, payloadLen)
	}
	return nil
}

// DecodePayload decodes the chunk records from the payload into Chunks
// (their checksums alias p) and checks that they tile [0, Length).
func (m *GetBlockResponse) DecodePayload(p []byte) error {
	d := decoder{b: p}
	m.Chunks = make([]Chunk, m.count)
	end := int64(0)
	for i := range m.Chunks {
		c := d.chunk("chunk record")
		if d.err == nil && c.Offset != end {
			d.failf("GET_BLOCK response: chunk at %d, want %d", c.Offset, end)
		}
		end += int64(c.Length)
		m.Chunks[i] = c
	}
	if d.err == nil && end != m.Length {
		d.failf("GET_BLOCK response: chunks cover %d bytes, length is %d", end, m.Length)
	}
	if err := d.finish(); err != nil {
		m.Chunks = nil
		return err
	}
	m.count = 0
	return nil
}

// ---- CLOSE_CONTAINER ----

// AppendHeader appends the typed header of a CLOSE_CONTAINER request.
func (m *CloseContainerRequest) AppendHeader(dst []byte) []byte { return appendU64(dst, m.ContainerID) }
func (m *CloseContainerRequest) decode(d *decoder) {
	m.ContainerID = d.u64("container ID")
	if d.err == nil && m.ContainerID == 0 {
		d.failf("container ID 0")
	}
}
func (m *CloseContainerRequest) check(payloadLen uint32) error {
	return noPayload(TypeCloseContainer, payloadLen)
}

// AppendHeader appends the typed header of a CLOSE_CONTAINER response.
func (m *CloseContainerResponse) AppendHeader(dst []byte) []byte { return appendU64(dst, m.BCSID) }
func (m *CloseContainerResponse) decode(d *decoder)              { m.BCSID = d.u64("bcsID") }
func (m *CloseContainerResponse) check(payloadLen uint32) error {
	return noPayload(TypeCloseContainer, payloadLen)
}

// ---- errors ----

// AppendHeader appends the error's typed header.
func (e *Error) AppendHeader(dst []byte) []byte {
	dst = appendU16(dst, uint16(e.Code))
	dst = appendString(dst, e.Message)
	dst = appendU16(dst, uint16(len(e.Failed)))
	for _, f := range e.Failed {
		dst = appendString(dst, f.Addr)
		dst = appendU16(dst, uint16(f.Code))
	}
	return dst
}

func (e *Error) decode(d *decoder) {
	e.Code = Code(d.u16("code"))
	e.Message = d.str(0xffff, "message")
	n := int(d.u16("failed count"))
	if d.err == nil && n > MaxFollowers {
		d.failf("%d failed followers exceed the limit of %d", n, MaxFollowers)
	}
	if d.err != nil || n == 0 {
		return
	}
	e.Failed = make([]FailedNode, n)
	for i := range e.Failed {
		e.Failed[i] = FailedNode{Addr: d.str(MaxAddrLen, "failed follower address"), Code: Code(d.u16("failed follower code"))}
	}
}

func (e *Error) check(payloadLen uint32) error {
	if e.Code == 0 {
		return Errorf(CodeInvalidArgument, "error response with code 0")
	}
	for _, f := range e.Failed {
		if f.Code == 0 {
			return Errorf(CodeInvalidArgument, "failed follower %q with code 0", f.Addr)
		}
	}
	if payloadLen != 0 {
		return Errorf(CodeInvalidArgument, "error response with a payload of %d bytes", payloadLen)
	}
	return nil
}

func noPayload(t Type, n uint32) error {
	if n != 0 {
		return Errorf(CodeInvalidArgument, "%v frame with a payload of %d bytes (want none)", t, n)
	}
	return nil
}

// newMessage returns an empty message for a frame's type and direction.
func newMessage(t Type, response, isErr bool) Message {
	if isErr {
		return &Error{}
	}
	switch t {
	case TypePing:
		if response {
			return &PingResponse{}
		}
		return &PingRequest{}
	case TypeWriteChunk:
		if response {
			return &WriteChunkResponse{}
		}
		return &WriteChunkRequest{}
	case TypePutBlock:
		if response {
			return &PutBlockResponse{}
		}
		return &PutBlockRequest{}
	case TypeReadChunk:
		if response {
			return &ReadChunkResponse{}
		}
		return &ReadChunkRequest{}
	case TypeGetBlock:
		if response {
			return &GetBlockResponse{}
		}
		return &GetBlockRequest{}
	case TypeCloseContainer:
		if response {
			return &CloseContainerResponse{}
		}
		return &CloseContainerRequest{}
	case TypeToken:
		if response {
			return &TokenResponse{}
		}
		return &TokenRequest{}
	case TypeWriteCommit:
		if response {
			return &WriteCommitResponse{}
		}
		return &WriteCommitRequest{}
	case TypeReadLocal:
		if response {
			return &ReadLocalResponse{}
		}
		return &ReadLocalRequest{}
	case TypeReadLocalPaths:
		if response {
			return &ReadLocalPathsResponse{}
		}
		return &ReadLocalPathsRequest{}
	}
	return newImportMessage(t, response)
}

// DecodeMessage decodes the typed header of a frame whose header h was
// parsed by ParseFrameHeader. The message's byte slices alias typed.
// Errors are *Error: CodeUnsupportedVersion, CodeUnsupportedType or
// CodeInvalidArgument. The frame's boundaries are sound in every case: the
// receiver can skip the payload and go on.
//
// The chunk records of a GetBlockResponse are in the payload: see
// GetBlockResponse.DecodePayload.
func DecodeMessage(h FrameHeader, typed []byte) (Message, error) {
	_, m, err := decodeMessage(h, typed)
	return m, err
}

// decodeMessage is DecodeMessage that returns the request's context too
// (FlagContext, version 6).
func decodeMessage(h FrameHeader, typed []byte) (RequestContext, Message, error) {
	if len(typed) != int(h.HeaderLen) {
		return RequestContext{}, nil, Errorf(CodeInvalidArgument, "typed header of %d bytes, frame header says %d", len(typed), h.HeaderLen)
	}
	rc, typed, err := splitContext(h, typed)
	if err != nil {
		return RequestContext{}, nil, err
	}
	m, err := decodeTyped(h, typed)
	return rc, m, err
}

// decodeTyped decodes the message of a typed header (its request context
// split off).
func decodeTyped(h FrameHeader, typed []byte) (Message, error) {
	// PING and error frames are the same in every version.
	if h.Type != TypePing && !h.IsError() && (h.Version < MinVersion || h.Version > MaxVersion) {
		return nil, Errorf(CodeUnsupportedVersion, "version %d (this side speaks %d..%d)", h.Version, MinVersion, MaxVersion)
	}
	if !h.IsError() && !h.Type.KnownIn(h.Version) {
		if h.Type.Known() {
			return nil, Errorf(CodeUnsupportedType, "message type %v is not in version %d", h.Type, h.Version)
		}
		return nil, Errorf(CodeUnsupportedType, "message type %d", h.Type)
	}
	m := newMessage(h.Type, h.IsResponse(), h.IsError())
	d := decoder{b: typed}
	m.decode(&d)
	if err := d.finish(); err != nil {
		return nil, err
	}
	if err := m.check(h.PayloadLen); err != nil {
		return nil, err
	}
	return m, nil
}
