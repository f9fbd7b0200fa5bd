package wire

import (
	"encoding/binary"
	"strconv"
)

// Protocol constants (docs/wire.md §2, §4).
const (
	// Magic opens every frame: ASCII "STRW".
	Magic uint32 = 0x53545257
	// Version is the protocol version of frames sent before a PING chose
	// one (and of the frames AppendFrame makes, but TOKEN's): version 1.
	Version uint8 = 1
	// VersionToken is the first version with TOKEN (block tokens).
	VersionToken uint8 = 2
	// VersionWriteCommit is the first version with WRITE_COMMIT (a chunk
	// written and its block committed in one request).
	VersionWriteCommit uint8 = 3
	// VersionReadLocal is the first version with READ_LOCAL (a block's
	// files passed to a client on the same host).
	VersionReadLocal uint8 = 4
	// VersionReadLocalPaths is the first version with READ_LOCAL_PATHS (the
	// paths of a block's files, for a client on the same host that cannot
	// receive descriptors).
	VersionReadLocalPaths uint8 = 5
	// MinVersion and MaxVersion bound the versions this package speaks.
	MinVersion uint8 = 1
	MaxVersion uint8 = 6

	// FrameHeaderLen is the size of the fixed frame header.
	FrameHeaderLen = 24
	// MaxHeaderLen bounds a frame's typed header.
	MaxHeaderLen = 1 << 20
	// MaxRequestPayload bounds the payload of a request frame.
	MaxRequestPayload = 32 << 20
	// MaxResponsePayload bounds the payload of a response frame (a read is
	// widened to checksum windows, so it may exceed MaxReadLen).
	MaxResponsePayload = 64 << 20
	// MaxChunkLen bounds a WriteChunk.
	MaxChunkLen = 32 << 20
	// MaxReadLen bounds the length asked by a ReadChunk.
	MaxReadLen = 32 << 20
	// MaxBytesPerChecksum bounds the checksum window on the wire.
	MaxBytesPerChecksum = 16 << 20
	// MaxFollowers bounds the follower list of a pipelined request.
	MaxFollowers = 15
	// MaxAddrLen bounds a follower address.
	MaxAddrLen = 255
	// MaxIDLen bounds the client and server IDs of a Ping.
	MaxIDLen = 255
)

// Type is a frame's message type.
type Type uint8

// Message types. The numeric values are part of the protocol.
const (
	// TypeNone is only used by error frames answering a frame whose header
	// could not be read.
	TypeNone           Type = 0
	TypePing           Type = 1
	TypeWriteChunk     Type = 2
	TypePutBlock       Type = 3
	TypeReadChunk      Type = 4
	TypeGetBlock       Type = 5
	TypeCloseContainer Type = 6
	// Container import, between datanodes (docs/wire.md §5.7).
	TypeImportBegin  Type = 7
	TypeImportData   Type = 8
	TypeImportCommit Type = 9
	TypeImportAbort  Type = 10
	// Between datanodes too: a rebuilding datanode lists a source's blocks
	// (LIST_BLOCKS); an import names the replica index it carries
	// (IMPORT_INDEX). See docs/wire.md §5.8.
	TypeListBlocks  Type = 11
	TypeImportIndex Type = 12
	// TypeToken presents a block token (version 2, docs/wire.md §5.9).
	TypeToken Type = 13
	// TypeWriteCommit writes a block's last chunk and commits the block
	// (version 3, docs/wire.md §5.10).
	TypeWriteCommit Type = 14
	// TypeReadLocal asks, over a datanode's local socket, for the files
	// holding a range of a block (version 4, docs/wire.md §5.11).
	TypeReadLocal Type = 15
	// TypeReadLocalPaths asks, from the datanode's host, for the paths of
	// the files holding a range of a block (version 5, docs/wire.md §5.12).
	TypeReadLocalPaths Type = 16
)

var typeNames = [...]string{
	TypeNone:           "NONE",
	TypePing:           "PING",
	TypeWriteChunk:     "WRITE_CHUNK",
	TypePutBlock:       "PUT_BLOCK",
	TypeReadChunk:      "READ_CHUNK",
	TypeGetBlock:       "GET_BLOCK",
	TypeCloseContainer: "CLOSE_CONTAINER",
	TypeImportBegin:    "IMPORT_BEGIN",
	TypeImportData:     "IMPORT_DATA",
	TypeImportCommit:   "IMPORT_COMMIT",
	TypeImportAbort:    "IMPORT_ABORT",
	TypeListBlocks:     "LIST_BLOCKS",
	TypeImportIndex:    "IMPORT_INDEX",
	TypeToken:          "TOKEN",
	TypeWriteCommit:    "WRITE_COMMIT",
	TypeReadLocal:      "READ_LOCAL",
	TypeReadLocalPaths: "READ_LOCAL_PATHS",
}

// String is the type's name in docs/wire.md (WRITE_CHUNK, ...), or TYPE_n
// for an unknown one.
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "TYPE_" + strconv.Itoa(int(t))
}

// Known reports whether t is a message type of this package, in any
// version (TypeNone is not).
func (t Type) Known() bool { return t >= TypePing && int(t) < len(typeNames) }

// KnownIn reports whether t is a message type of protocol version v.
func (t Type) KnownIn(v uint8) bool {
	return t.Known() && v >= t.minVersion()
}

// minVersion is the first version that has message type t.
func (t Type) minVersion() uint8 {
	switch t {
	case TypeToken:
		return VersionToken
	case TypeWriteCommit:
		return VersionWriteCommit
	case TypeReadLocal:
		return VersionReadLocal
	case TypeReadLocalPaths:
		return VersionReadLocalPaths
	}
	return Version
}

// Flags are a frame's flag bits.
type Flags uint16

const (
	// FlagResponse marks a response.
	FlagResponse Flags = 1 << 0
	// FlagError marks an error response (always with FlagResponse).
	FlagError Flags = 1 << 1

	knownFlags = FlagResponse | FlagError | FlagContext
)

// FrameHeader is the fixed 24-byte header of every frame.
type FrameHeader struct {
	Version    uint8
	Type       Type
	Flags      Flags
	RequestID  uint64
	HeaderLen  uint32
	PayloadLen uint32
}

// IsResponse reports whether the frame is a response.
func (h FrameHeader) IsResponse() bool { return h.Flags&FlagResponse != 0 }

// IsError reports whether the frame is an error response.
func (h FrameHeader) IsError() bool { return h.Flags&FlagError != 0 }

// Append appends the encoded header to dst.
func (h FrameHeader) Append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, Magic)
	dst = append(dst, h.Version, byte(h.Type))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Flags))
	dst = binary.BigEndian.AppendUint64(dst, h.RequestID)
	dst = binary.BigEndian.AppendUint32(dst, h.HeaderLen)
	return binary.BigEndian.AppendUint32(dst, h.PayloadLen)
}

// ParseFrameHeader decodes and checks a frame header (b holds at least
// FrameHeaderLen bytes). Violations are *Error with CodeProtocol: the
// stream can no longer be trusted. The header is returned even then, with
// its request ID when the magic was right, so that the error can name it.
// Limits are checked for the direction the flags give; Reader also checks
// that the direction is the one it expects.
func ParseFrameHeader(b []byte) (FrameHeader, error) {
	if len(b) < FrameHeaderLen {
		return FrameHeader{}, Errorf(CodeProtocol, "frame header of %d bytes, want %d", len(b), FrameHeaderLen)
	}
	if m := binary.BigEndian.Uint32(b); m != Magic {
		return FrameHeader{}, Errorf(CodeProtocol, "bad magic %#08x (want %#08x)", m, Magic)
	}
	h := FrameHeader{
		Version:    b[4],
		Type:       Type(b[5]),
		Flags:      Flags(binary.BigEndian.Uint16(b[6:])),
		RequestID:  binary.BigEndian.Uint64(b[8:]),
		HeaderLen:  binary.BigEndian.Uint32(b[16:]),
		PayloadLen: binary.BigEndian.Uint32(b[20:]),
	}
	maxPayload := uint32(MaxRequestPayload)
	if h.IsResponse() {
		maxPayload = MaxResponsePayload
	}
	switch {
	case h.Flags&^knownFlags != 0:
		return h, Errorf(CodeProtocol, "reserved flag bits %#04x set", uint16(h.Flags&^knownFlags))
	case h.IsError() && !h.IsResponse():
		return h, Errorf(CodeProtocol, "ERROR flag without RESPONSE")
	case h.Flags&FlagContext != 0 && (h.IsResponse() || h.Version < VersionContext):
		return h, Errorf(CodeProtocol, "CONTEXT flag on a response or before version %d", VersionContext)
	case h.HeaderLen > MaxHeaderLen:
		return h, Errorf(CodeProtocol, "typed header of %d bytes exceeds the limit of %d", h.HeaderLen, MaxHeaderLen)
	case h.PayloadLen > maxPayload:
		return h, Errorf(CodeProtocol, "payload of %d bytes exceeds the limit of %d", h.PayloadLen, maxPayload)
	}
	return h, nil
}

// Frame is a whole decoded frame.
type Frame struct {
	Header FrameHeader
	// Msg is the typed header: a request, a response or *Error.
	Msg Message
	// Context is a request's context (FlagContext), empty when none.
	Context RequestContext
	// Payload aliases the decoded buffer.
	Payload []byte
}

// frameHeaderFor returns the frame header of message m (not an *Error) in
// version v (raised to the first version that has m's type).
func frameHeaderFor(v uint8, id uint64, m Message, headerLen, payloadLen int) FrameHeader {
	v = max(v, m.Type().minVersion())
	h := FrameHeader{Version: v, Type: m.Type(), RequestID: id, HeaderLen: uint32(headerLen), PayloadLen: uint32(payloadLen)}
	if m.response() {
		h.Flags = FlagResponse
	}
	return h
}

// AppendFrame appends a whole frame carrying m and payload to dst. For a
// *GetBlockResponse or an *ImportBeginRequest the payload is its record
// list and the payload argument must be nil. m must not be an *Error (see AppendErrorFrame).
func AppendFrame(dst []byte, id uint64, m Message, payload []byte) []byte {
	if g, ok := m.(payloadAppender); ok && payload == nil {
		payload = g.AppendPayload(nil)
	}
	start := len(dst)
	dst = append(dst, make([]byte, FrameHeaderLen)...)
	dst = m.AppendHeader(dst)
	h := frameHeaderFor(Version, id, m, len(dst)-start-FrameHeaderLen, len(payload))
	h.Append(dst[start:start])
	return append(dst, payload...)
}

// AppendErrorFrame appends an error frame answering request id of type t.
func AppendErrorFrame(dst []byte, t Type, id uint64, e *Error) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, FrameHeaderLen)...)
	dst = e.AppendHeader(dst)
	h := FrameHeader{Version: Version, Type: t, Flags: FlagResponse | FlagError, RequestID: id, HeaderLen: uint32(len(dst) - start - FrameHeaderLen)}
	h.Append(dst[start:start])
	return dst
}

// DecodeFrame decodes one whole frame that fills b exactly. Errors are
// *Error values as ParseFrameHeader and DecodeMessage return them.
func DecodeFrame(b []byte) (Frame, error) {
	h, err := ParseFrameHeader(b)
	if err != nil {
		return Frame{Header: h}, err
	}
	if want := FrameHeaderLen + int(h.HeaderLen) + int(h.PayloadLen); len(b) != want {
		return Frame{Header: h}, Errorf(CodeProtocol, "frame of %d bytes, header says %d", len(b), want)
	}
	typed := b[FrameHeaderLen : FrameHeaderLen+int(h.HeaderLen)]
	rc, m, err := decodeMessage(h, typed)
	if err != nil {
		return Frame{Header: h}, err
	}
	f := Frame{Header: h, Msg: m, Context: rc, Payload: b[FrameHeaderLen+int(h.HeaderLen):]}
	if g, ok := m.(payloadDecoder); ok {
		if err := g.DecodePayload(f.Payload); err != nil {
			return Frame{Header: h}, err
		}
	}
	return f, nil
}

// payloadAppender is a message whose payload is records it encodes itself
// (GetBlockResponse, ImportBeginRequest).
type payloadAppender interface{ AppendPayload(dst []byte) []byte }

// payloadDecoder is a message whose payload is records it decodes itself.
type payloadDecoder interface{ DecodePayload(p []byte) error }
