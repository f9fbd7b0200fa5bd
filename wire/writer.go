package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// Writer writes frames to a stream. It is safe for concurrent use: each
// frame — header, typed header and payload — is written whole under a lock,
// so frames never interleave. After a failed or interrupted write the
// stream may hold a partial frame: every later write fails with the same
// error, and the owner should close the connection.
type Writer struct {
	w        io.Writer
	deadline writeDeadliner
	timeout  time.Duration

	version atomic.Uint32 // of the frames written (SetVersion)

	lock chan struct{} // a mutex that a context can give up on
	buf  []byte        // guarded by lock
	err  error         // guarded by lock: sticky
}

type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

// NewWriter returns a Writer over w. If w is a net.Conn, timeout (when
// positive) bounds the writing of each frame, and payloads go out with
// writev, or sendfile through WriteMessageFunc.
func NewWriter(w io.Writer, timeout time.Duration) *Writer {
	wr := &Writer{w: w, timeout: timeout, lock: make(chan struct{}, 1)}
	wr.deadline, _ = w.(writeDeadliner)
	wr.version.Store(uint32(Version))
	return wr
}

// SetVersion sets the protocol version of the frames written from now on
// (the version a PING chose; Version until then). A frame of a type that
// version lacks (TOKEN in version 1) carries the first version that has it.
func (w *Writer) SetVersion(v uint8) { w.version.Store(uint32(v)) }

// ProtocolVersion returns the version set by SetVersion.
func (w *Writer) ProtocolVersion() uint8 { return uint8(w.version.Load()) }

// ErrWriterBroken is wrapped by the error of a write that failed part-way
// and of every write after it.
var ErrWriterBroken = errors.New("wire: connection unusable after a failed write")

// WriteMessage writes a frame carrying m (not an *Error) and payload. For a
// *GetBlockResponse or an *ImportBeginRequest the payload is its record
// list; pass nil. From version 6 on, a request carries the request ID and
// span of ctx, when it has either (FlagContext).
func (w *Writer) WriteMessage(ctx context.Context, id uint64, m Message, payload []byte) error {
	return w.writeMessage(ctx, id, m, payload, nil)
}

// writeMessage is WriteMessage. With cp, the pass records payload arrived
// in (a pipeline leader's chunk), the payload goes as those records when
// the connection takes them (TLSConn.PassRecords).
func (w *Writer) writeMessage(ctx context.Context, id uint64, m Message, payload []byte, cp *Capture) error {
	if _, ok := m.(*Error); ok {
		return errors.New("wire: WriteMessage of an *Error: use WriteError")
	}
	if g, ok := m.(payloadAppender); ok && payload == nil {
		payload = g.AppendPayload(nil)
	}
	var send func(io.Writer) (int64, error)
	if tc, ok := w.w.(*TLSConn); ok && cp != nil && cp.n == len(payload) && tc.PassRecords() {
		send = func(io.Writer) (int64, error) { return tc.g.writeCaptured(tc.s.Load(), cp) }
	}
	build := func(dst []byte) []byte {
		v := w.ProtocolVersion()
		var flags Flags
		if v >= VersionContext && !m.response() {
			// The request ID and span of the caller (docs/wire.md §2.3).
			if rc := ContextOf(ctx); !rc.Empty() {
				dst = appendContext(dst, rc)
				flags = FlagContext
			}
		}
		dst = m.AppendHeader(dst)
		h := frameHeaderFor(v, id, m, len(dst)-FrameHeaderLen, len(payload))
		h.Flags |= flags
		h.Append(dst[:0])
		return dst
	}
	if send != nil {
		return w.write(ctx, build, nil, int64(len(payload)), send, nil)
	}
	return w.write(ctx, build, payload, 0, nil, nil)
}

// WriteError writes an error frame answering request id of type t.
func (w *Writer) WriteError(ctx context.Context, t Type, id uint64, e *Error) error {
	v := w.ProtocolVersion()
	return w.write(ctx, func(dst []byte) []byte {
		dst = AppendErrorFrame(dst[:0], t, id, e)
		dst[4] = v
		return dst
	}, nil, 0, nil, nil)
}

// WriteMessageFunc writes a frame carrying m with a payload of n bytes that
// send writes to the underlying writer, which is the raw connection: a
// datanode passes a function that does io.Copy(w, io.LimitReader(file, k))
// after a seek, which the kernel serves with sendfile on a *net.TCPConn.
// send must write exactly n bytes and return how many it wrote; otherwise
// the frame is broken and so is the Writer.
func (w *Writer) WriteMessageFunc(ctx context.Context, id uint64, m Message, n int64, send func(io.Writer) (int64, error)) error {
	if n < 0 || n > MaxResponsePayload {
		return fmt.Errorf("wire: payload of %d bytes", n)
	}
	return w.write(ctx, func(dst []byte) []byte {
		dst = m.AppendHeader(dst)
		h := frameHeaderFor(w.ProtocolVersion(), id, m, len(dst)-FrameHeaderLen, int(n))
		h.Append(dst[:0])
		return dst
	}, nil, n, send, nil)
}

// write builds the headers with build (which appends after FrameHeaderLen
// reserved bytes it fills in), then writes them with payload or send, or
// (a frame without payload) with head when it is not nil.
func (w *Writer) write(ctx context.Context, build func([]byte) []byte, payload []byte, n int64, send func(io.Writer) (int64, error), head func([]byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case w.lock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-w.lock }()
	if w.err != nil {
		return w.err
	}
	if cap(w.buf) < 512 {
		w.buf = make([]byte, 0, 512)
	}
	w.buf = build(w.buf[:FrameHeaderLen])
	if int64(len(w.buf)-FrameHeaderLen) > MaxHeaderLen {
		// Nothing was written: the connection is still sound.
		return Errorf(CodeTooLarge, "typed header of %d bytes exceeds the limit of %d", len(w.buf)-FrameHeaderLen, MaxHeaderLen)
	}

	var (
		stop    func() bool
		stopped chan struct{}
	)
	if w.deadline != nil {
		var t time.Time
		if w.timeout > 0 {
			t = time.Now().Add(w.timeout)
		}
		_ = w.deadline.SetWriteDeadline(t)
		if ctx.Done() != nil {
			stopped = make(chan struct{})
			stop = context.AfterFunc(ctx, func() {
				// Interrupt the write in progress.
				_ = w.deadline.SetWriteDeadline(time.Unix(1, 0))
				close(stopped)
			})
		}
	}

	g, _ := w.w.(gatherer)
	if g != nil {
		g.Gather()
	}
	var err error
	switch {
	case send != nil:
		if _, err = w.w.Write(w.buf); err == nil {
			var sent int64
			sent, err = send(w.w)
			if err == nil && sent != n {
				err = fmt.Errorf("wire: payload of %d bytes declared, %d sent", n, sent)
			}
		}
	case len(payload) > 0:
		bufs := net.Buffers{w.buf, payload}
		_, err = bufs.WriteTo(w.w)
	case head != nil:
		err = head(w.buf)
	default:
		_, err = w.w.Write(w.buf)
	}
	if g != nil {
		if ferr := g.Flush(); err == nil {
			err = ferr
		}
	}

	if stop != nil && !stop() {
		// The context fired: its deadline may have cut the write short.
		<-stopped
		if err == nil {
			// The write completed first; the deadline in the past must
			// not fail the next one.
			_ = w.deadline.SetWriteDeadline(time.Time{})
		} else {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
	}
	if err != nil {
		w.err = fmt.Errorf("%w: %w", ErrWriterBroken, err)
		return w.err
	}
	if cap(w.buf) > 64<<10 {
		w.buf = nil // do not pin a large buffer after a huge header
	}
	return nil
}
