package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"time"
)

// Reader reads frames from a stream: requests on a datanode, responses on a
// client. It is not safe for concurrent use; one goroutine owns it.
//
// Next reads a frame's header and typed header; the payload is then read
// with ReadPayload or skipped with Discard (Next skips whatever is left).
type Reader struct {
	br        *bufio.Reader
	deadline  readDeadliner
	responses bool
	hdr       [FrameHeaderLen]byte
	remaining int64          // unread payload bytes of the current frame
	rc        RequestContext // the current frame's (FlagContext)

	idleTimeout, frameTimeout time.Duration
}

type readDeadliner interface{ SetReadDeadline(time.Time) error }

// readBufferSize is the Reader's buffer: big enough for the headers of
// many small frames per read; payloads larger than it bypass it.
const readBufferSize = 64 << 10

// NewRequestReader returns a Reader of request frames (a datanode's side):
// response frames are protocol errors.
func NewRequestReader(r io.Reader) *Reader { return newReader(r, false) }

// NewResponseReader returns a Reader of response frames (a client's side):
// request frames are protocol errors.
func NewResponseReader(r io.Reader) *Reader { return newReader(r, true) }

func newReader(r io.Reader, responses bool) *Reader {
	rd := &Reader{br: bufio.NewReaderSize(r, readBufferSize), responses: responses}
	rd.deadline, _ = r.(readDeadliner)
	return rd
}

// SetTimeouts sets, for a reader over a net.Conn, how long Next waits for a
// frame to start (idle; 0 waits forever) and how long the rest of a frame,
// payload included, may take once its header began arriving (frame; 0 means
// no limit).
func (r *Reader) SetTimeouts(idle, frame time.Duration) {
	r.idleTimeout, r.frameTimeout = idle, frame
}

func (r *Reader) setDeadline(d time.Duration) {
	if r.deadline == nil {
		return
	}
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	_ = r.deadline.SetReadDeadline(t)
}

// Next reads the next frame's header and typed header.
//
// Errors:
//   - io.EOF when the stream ends cleanly between frames; any other error
//     from the stream (io.ErrUnexpectedEOF mid-frame, timeouts) as is;
//   - an *Error with CodeProtocol for a frame-level violation: the stream
//     can no longer be trusted, the caller answers (if it is a datanode)
//     and closes. The returned header names the request when it could be
//     read;
//   - an *Error with another code (unsupported version or type, malformed
//     typed header): the header is returned, the payload is still unread,
//     and the caller may answer and go on.
func (r *Reader) Next() (FrameHeader, Message, error) {
	if r.remaining > 0 {
		if err := r.Discard(); err != nil {
			return FrameHeader{}, nil, err
		}
	}
	if r.br.Buffered() == 0 {
		r.setDeadline(r.idleTimeout)
	}
	if _, err := io.ReadFull(r.br, r.hdr[:1]); err != nil {
		return FrameHeader{}, nil, err
	}
	r.setDeadline(r.frameTimeout)
	if _, err := io.ReadFull(r.br, r.hdr[1:]); err != nil {
		return FrameHeader{}, nil, unexpected(err)
	}
	h, err := ParseFrameHeader(r.hdr[:])
	if err != nil {
		return h, nil, err
	}
	if h.IsResponse() != r.responses {
		if r.responses {
			return h, nil, Errorf(CodeProtocol, "request frame (type %v) where a response was expected", h.Type)
		}
		return h, nil, Errorf(CodeProtocol, "response frame (type %v) sent to a server", h.Type)
	}
	var typed []byte
	if h.HeaderLen > 0 {
		// A fresh buffer per frame: the decoded message aliases it and
		// may outlive the next call.
		typed = make([]byte, h.HeaderLen)
		if _, err := io.ReadFull(r.br, typed); err != nil {
			return h, nil, unexpected(err)
		}
	}
	r.remaining = int64(h.PayloadLen)
	rc, m, err := decodeMessage(h, typed)
	r.rc = rc
	if err != nil {
		return h, nil, err
	}
	return h, m, nil
}

// Context returns the request context of the frame Next read last (empty
// when it had none: docs/wire.md §2.3).
func (r *Reader) Context() RequestContext { return r.rc }

// RefreshFrameTimeout restarts the frame timeout of the current frame: a
// receiver that waited (for memory, say) between the headers and the
// payload calls it, so that its own wait is not charged to the sender.
func (r *Reader) RefreshFrameTimeout() { r.setDeadline(r.frameTimeout) }

// ReadPayload reads the current frame's payload into p, which must be
// exactly as long as what is left of it.
func (r *Reader) ReadPayload(p []byte) error {
	if int64(len(p)) != r.remaining {
		return fmt.Errorf("wire: ReadPayload of %d bytes, %d left in the frame", len(p), r.remaining)
	}
	n, err := io.ReadFull(r.br, p)
	r.remaining -= int64(n)
	return unexpected(err)
}

// ReadPayloadSome reads into p the bytes of the current frame's payload
// that have arrived, at least one and at most len(p), which must not exceed
// what is left of it.
func (r *Reader) ReadPayloadSome(p []byte) (int, error) {
	if int64(len(p)) > r.remaining {
		return 0, fmt.Errorf("wire: ReadPayloadSome of %d bytes, %d left in the frame", len(p), r.remaining)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.br.Read(p)
	r.remaining -= int64(n)
	if n > 0 {
		return n, nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return 0, unexpected(err)
}

// Discard skips what is left of the current frame's payload.
func (r *Reader) Discard() error {
	n, err := r.br.Discard(int(r.remaining))
	r.remaining -= int64(n)
	return unexpected(err)
}

// Remaining returns how many payload bytes of the current frame are unread.
func (r *Reader) Remaining() int64 { return r.remaining }

// unexpected turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
