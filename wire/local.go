package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/strato-io/strato/checksum"
)

// Local reads (docs/wire.md §5.11). A datanode also listens on a local
// socket, named after its data address (LocalSocketName). A client on the
// same host connects to it, speaks this protocol as over TCP (PING, TOKEN,
// ...) and sends READ_LOCAL: the answer names the files that hold the
// range, and the files themselves travel with the response (their
// descriptors, SCM_RIGHTS). The client reads the bytes from the page cache
// and verifies them against the response's checksums: no copy through
// the datanode and no socket between them.

// MaxLocalFiles bounds the files of one READ_LOCAL response.
const MaxLocalFiles = 64

// LocalSocketName is the local socket of the datanode whose data address
// is addr: a Linux abstract socket (no file; its name starts with a NUL
// byte, written "@"), which only processes of the same network namespace
// reach. Two datanodes of one host have different data addresses, and so
// different sockets.
func LocalSocketName(addr string) string { return "@strato-datanode/" + addr }

// ReadLocalRequest asks for the files holding [Offset, Offset+Length) of a
// committed block.
type ReadLocalRequest struct {
	Block  BlockID
	Offset int64
	Length uint32
}

// LocalExtent is a run of the block's bytes: Chunk (its block range and
// checksums) is at FileOffset of the response's file number File.
type LocalExtent struct {
	Chunk      Chunk
	File       uint8
	FileOffset int64
}

// ReadLocalResponse answers a READ_LOCAL: extents tiling the range widened
// to checksum windows, in block order, and the files they are in. Files
// is not in the typed header: a Conn fills it from the descriptors that
// came with the frame (FileCount of them); the receiver closes them.
type ReadLocalResponse struct {
	FileCount uint8
	Extents   []LocalExtent
	Files     []*os.File
}

// Type is TypeReadLocal.
func (*ReadLocalRequest) Type() Type { return TypeReadLocal }

// Type is TypeReadLocal.
func (*ReadLocalResponse) Type() Type     { return TypeReadLocal }
func (*ReadLocalRequest) response() bool  { return false }
func (*ReadLocalResponse) response() bool { return true }

// AppendHeader appends the typed header of a READ_LOCAL request.
func (m *ReadLocalRequest) AppendHeader(dst []byte) []byte {
	return (*ReadChunkRequest)(m).AppendHeader(dst)
}

func (m *ReadLocalRequest) decode(d *decoder) { (*ReadChunkRequest)(m).decode(d) }

func (m *ReadLocalRequest) check(payloadLen uint32) error {
	return (*ReadChunkRequest)(m).checkAs(TypeReadLocal, payloadLen)
}

// AppendHeader appends the typed header of a READ_LOCAL response.
func (m *ReadLocalResponse) AppendHeader(dst []byte) []byte {
	dst = append(dst, m.FileCount)
	dst = appendU32(dst, uint32(len(m.Extents)))
	for _, e := range m.Extents {
		dst = appendChunk(dst, e.Chunk)
		dst = append(dst, e.File)
		dst = appendI64(dst, e.FileOffset)
	}
	return dst
}

func (m *ReadLocalResponse) decode(d *decoder) {
	m.FileCount, m.Extents = decodeExtents(d, TypeReadLocal)
}

func (m *ReadLocalResponse) check(payloadLen uint32) error {
	if err := checkExtents(TypeReadLocal, int(m.FileCount), m.Extents); err != nil {
		return err
	}
	return noPayload(TypeReadLocal, payloadLen)
}

// decodeExtents decodes the file count and extent records that begin the
// responses of type t (READ_LOCAL, READ_LOCAL_PATHS).
func decodeExtents(d *decoder, t Type) (uint8, []LocalExtent) {
	files := d.u8("file count")
	// A record takes at least 30 bytes.
	n := d.records("extent count", 30, t.String()+" response: %d extent records do not fit in the typed header")
	if d.err != nil {
		return 0, nil
	}
	ext := make([]LocalExtent, n)
	for i := range ext {
		ext[i] = LocalExtent{Chunk: d.chunk("extent record"), File: d.u8("extent file"), FileOffset: d.i64("extent file offset")}
	}
	return files, ext
}

// checkExtents checks a response of type t naming files files: extents
// that tile a range, each in one of the files.
func checkExtents(t Type, files int, ext []LocalExtent) error {
	if files == 0 || files > MaxLocalFiles {
		return Errorf(CodeInvalidArgument, "%v response with %d files (1..%d)", t, files, MaxLocalFiles)
	}
	if len(ext) == 0 {
		return Errorf(CodeInvalidArgument, "%v response without extent records", t)
	}
	end := ext[0].Chunk.Offset
	for _, e := range ext {
		switch {
		case e.Chunk.Offset != end:
			return Errorf(CodeInvalidArgument, "%v response: extent at %d, want %d", t, e.Chunk.Offset, end)
		case int(e.File) >= files:
			return Errorf(CodeInvalidArgument, "%v response: extent in file %d of %d", t, e.File, files)
		case e.FileOffset < 0 || e.FileOffset > maxOffset-int64(e.Chunk.Length):
			return Errorf(CodeInvalidArgument, "%v response: extent at file offset %d", t, e.FileOffset)
		}
		end += int64(e.Chunk.Length)
	}
	return nil
}

// Offset is where the extents start in the block; End where they end.
func (m *ReadLocalResponse) Offset() int64 { return m.Extents[0].Chunk.Offset }

// End is the block offset after the last extent.
func (m *ReadLocalResponse) End() int64 {
	e := m.Extents[len(m.Extents)-1]
	return e.Chunk.Offset + int64(e.Chunk.Length)
}

// ReadInto reads the extents from their files into p, which must be as
// long as they are together, verifying each piece right after it is read
// (while it is in the CPU's cache) as a Conn verifies a READ_CHUNK payload
// as it arrives. A bad window is an *Error with CodeChecksumMismatch that
// also wraps checksum.ErrMismatch; a file that ends before its extent,
// CodeCorrupt.
func (m *ReadLocalResponse) ReadInto(p []byte) error {
	if int64(len(p)) != m.End()-m.Offset() {
		return fmt.Errorf("wire: READ_LOCAL extents of %d bytes read into %d", m.End()-m.Offset(), len(p))
	}
	v := payloadVerifier{chunks: make([]Chunk, len(m.Extents))}
	for i, e := range m.Extents {
		v.chunks[i] = e.Chunk
	}
	pos := 0
	for _, e := range m.Extents {
		f := m.Files[e.File]
		for done := 0; done < int(e.Chunk.Length); {
			q := p[pos+done : pos+min(int(e.Chunk.Length), done+verifyReadMax)]
			n, err := f.ReadAt(q, e.FileOffset+int64(done))
			if n < len(q) {
				if err == nil || errors.Is(err, io.EOF) {
					return Errorf(CodeCorrupt, "block range [%d, %d): its file ends %d bytes early", e.Chunk.Offset, e.Chunk.Offset+int64(e.Chunk.Length), len(q)-n)
				}
				return fmt.Errorf("wire: reading block range [%d, %d) from its file: %w", e.Chunk.Offset, e.Chunk.Offset+int64(e.Chunk.Length), err)
			}
			done += n
			v.advance(p[:pos+done])
			if v.err != nil {
				return v.err
			}
		}
		pos += int(e.Chunk.Length)
	}
	return nil
}

// WriteRange writes the block's bytes [from, to), which the extents must
// cover, to w through buf: each piece of at most len(buf) bytes (whole
// checksum windows; buf grows to one window if it is smaller) is read from
// its file, verified, and written while it is still in the CPU's cache.
// A reader that copies a range straight to a socket so moves each byte
// through one small buffer instead of a chunk-sized one per read in
// flight, which on a busy host comes back from memory cold. Only verified
// bytes are written: n counts them, and an error after some were written
// (a bad window, a short file, w's) leaves the first n in w. Bad windows
// and short files are reported as ReadInto reports them.
func (m *ReadLocalResponse) WriteRange(w io.Writer, from, to int64, buf []byte) (int64, error) {
	if from < m.Offset() || to > m.End() || from > to {
		return 0, fmt.Errorf("wire: READ_LOCAL extents cover [%d, %d), asked to write [%d, %d)", m.Offset(), m.End(), from, to)
	}
	var n int64
	if from == to {
		return 0, nil
	}
	for _, e := range m.Extents {
		c := e.Chunk
		cEnd := c.Offset + int64(c.Length)
		if cEnd <= from || c.Offset >= to {
			continue
		}
		bpc := int64(c.Length)
		if c.Checksums.Type != checksum.NONE && c.Checksums.BytesPerChecksum > 0 {
			bpc = int64(c.Checksums.BytesPerChecksum)
		}
		step := int64(len(buf)) / bpc * bpc
		if step == 0 {
			buf = make([]byte, bpc)
			step = bpc
		}
		// From the window holding from to the window end at or after to.
		at := (max(from, c.Offset) - c.Offset) / bpc * bpc
		for at < int64(c.Length) && c.Offset+at < to {
			q := buf[:min(step, int64(c.Length)-at)]
			k, err := m.Files[e.File].ReadAt(q, e.FileOffset+at)
			if k < len(q) {
				if err == nil || errors.Is(err, io.EOF) {
					return n, Errorf(CodeCorrupt, "block range [%d, %d): its file ends %d bytes early", c.Offset, cEnd, len(q)-k)
				}
				return n, fmt.Errorf("wire: reading block range [%d, %d) from its file: %w", c.Offset, cEnd, err)
			}
			if err := checksum.Verify(c.Checksums, at, q); err != nil {
				return n, &verifyError{e: Errorf(CodeChecksumMismatch, "block range [%d, %d): %v", c.Offset, cEnd, err), cause: err}
			}
			lo := max(from, c.Offset+at) - (c.Offset + at)
			hi := min(to, c.Offset+at+int64(len(q))) - (c.Offset + at)
			k, err = w.Write(q[lo:hi])
			n += int64(k)
			if err != nil {
				return n, err
			}
			at += int64(len(q))
		}
	}
	return n, nil
}

// Close closes the files.
func (m *ReadLocalResponse) Close() {
	for _, f := range m.Files {
		_ = f.Close()
	}
	m.Files = nil
}

// fdSource is a connection that receives file descriptors with its bytes
// (a local socket's, fds_linux.go): take returns the next n, in the order
// they arrived.
type fdSource interface {
	take(n int) ([]*os.File, error)
}

// ReadLocal asks for the files of a range of a block, on a connection to a
// datanode's local socket (DialLocal). The caller reads the extents from
// resp.Files, verifies them against their checksums, and closes the files
// (resp.Close).
func (c *Conn) ReadLocal(ctx context.Context, req *ReadLocalRequest) (*ReadLocalResponse, error) {
	if c.fds == nil {
		return nil, fmt.Errorf("wire: READ_LOCAL on %s: not a local socket", c.addr)
	}
	if c.Version() < VersionReadLocal {
		return nil, Errorf(CodeUnsupportedType, "READ_LOCAL: %s speaks version %d", c.addr, c.Version())
	}
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*ReadLocalResponse), nil
}

// takeFiles gives a READ_LOCAL response the files that came with it.
func (c *Conn) takeFiles(m *ReadLocalResponse) error {
	if c.fds == nil {
		return Errorf(CodeProtocol, "READ_LOCAL response on a connection that carries no files")
	}
	files, err := c.fds.take(int(m.FileCount))
	if err != nil {
		return err
	}
	m.Files = files
	return nil
}
