package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Local reads by path (docs/wire.md §5.12). A client that cannot receive
// descriptors (a JVM) asks, on a connection from the datanode's host, for
// the paths of the files that hold a range, opens them itself, and checks
// that each is the file the datanode meant (its device and inode numbers)
// before reading and verifying it as a READ_LOCAL's.

// MaxLocalPathLen bounds a path of a READ_LOCAL_PATHS response (Linux's
// PATH_MAX less its NUL).
const MaxLocalPathLen = 4095

// ErrNotLocal is wrapped by the errors of opening a READ_LOCAL_PATHS
// response's files when they are not this process's to read (another host
// or mount namespace, another user, a file replaced): the read goes over
// TCP, and the replica is not at fault.
var ErrNotLocal = errors.New("wire: block files not readable here")

// ReadLocalPathsRequest asks for the paths of the files holding
// [Offset, Offset+Length) of a committed block.
type ReadLocalPathsRequest struct {
	Block  BlockID
	Offset int64
	Length uint32
}

// LocalFile names a file of a READ_LOCAL_PATHS response: its absolute path
// on the datanode's host, and the device and inode numbers (stat(2)'s
// st_dev and st_ino) that identify it there.
type LocalFile struct {
	Dev, Ino uint64
	Path     string
}

// ReadLocalPathsResponse answers a READ_LOCAL_PATHS: READ_LOCAL's extents,
// and the files they index by path instead of by descriptor.
type ReadLocalPathsResponse struct {
	Extents []LocalExtent
	Files   []LocalFile
}

// Type is TypeReadLocalPaths.
func (*ReadLocalPathsRequest) Type() Type { return TypeReadLocalPaths }

// Type is TypeReadLocalPaths.
func (*ReadLocalPathsResponse) Type() Type     { return TypeReadLocalPaths }
func (*ReadLocalPathsRequest) response() bool  { return false }
func (*ReadLocalPathsResponse) response() bool { return true }

// AppendHeader appends the typed header of a READ_LOCAL_PATHS request.
func (m *ReadLocalPathsRequest) AppendHeader(dst []byte) []byte {
	return (*ReadChunkRequest)(m).AppendHeader(dst)
}

func (m *ReadLocalPathsRequest) decode(d *decoder) { (*ReadChunkRequest)(m).decode(d) }

func (m *ReadLocalPathsRequest) check(payloadLen uint32) error {
	return (*ReadChunkRequest)(m).checkAs(TypeReadLocalPaths, payloadLen)
}

// asLocal is the response's READ_LOCAL part: its extents and file count.
func (m *ReadLocalPathsResponse) asLocal() *ReadLocalResponse {
	return &ReadLocalResponse{FileCount: uint8(len(m.Files)), Extents: m.Extents}
}

// AppendHeader appends the typed header of a READ_LOCAL_PATHS response.
func (m *ReadLocalPathsResponse) AppendHeader(dst []byte) []byte {
	dst = m.asLocal().AppendHeader(dst)
	for _, f := range m.Files {
		dst = appendU64(dst, f.Dev)
		dst = appendU64(dst, f.Ino)
		dst = appendString(dst, f.Path)
	}
	return dst
}

func (m *ReadLocalPathsResponse) decode(d *decoder) {
	var n uint8
	n, m.Extents = decodeExtents(d, TypeReadLocalPaths)
	if d.err != nil {
		return
	}
	m.Files = make([]LocalFile, n)
	for i := range m.Files {
		m.Files[i] = LocalFile{Dev: d.u64("file dev"), Ino: d.u64("file inode"), Path: d.str(MaxLocalPathLen, "file path")}
	}
}

func (m *ReadLocalPathsResponse) check(payloadLen uint32) error {
	if err := checkExtents(TypeReadLocalPaths, len(m.Files), m.Extents); err != nil {
		return err
	}
	for _, f := range m.Files {
		if !strings.HasPrefix(f.Path, "/") || strings.IndexByte(f.Path, 0) >= 0 {
			return Errorf(CodeInvalidArgument, "READ_LOCAL_PATHS response: file path %q is not absolute", f.Path)
		}
	}
	return noPayload(TypeReadLocalPaths, payloadLen)
}

// Open opens the response's files and checks that each is the one the
// datanode named. It returns them as a READ_LOCAL response, to be read
// (ReadInto) and closed (Close) as one. An error wrapping ErrNotLocal
// means the files are not readable here.
func (m *ReadLocalPathsResponse) Open() (*ReadLocalResponse, error) {
	r := m.asLocal()
	r.Files = make([]*os.File, 0, len(m.Files))
	for _, lf := range m.Files {
		f, err := openLocalFile(lf)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.Files = append(r.Files, f)
	}
	return r, nil
}

// ReadLocalPaths asks for the paths of the files of a range of a block.
func (c *Conn) ReadLocalPaths(ctx context.Context, req *ReadLocalPathsRequest) (*ReadLocalPathsResponse, error) {
	if c.Version() < VersionReadLocalPaths {
		return nil, Errorf(CodeUnsupportedType, "READ_LOCAL_PATHS: %s speaks version %d", c.addr, c.Version())
	}
	m, _, err := c.Do(ctx, req, nil, nil)
	if err != nil {
		return nil, err
	}
	return m.(*ReadLocalPathsResponse), nil
}

// notLocal wraps an error of opening a named file in ErrNotLocal.
func notLocal(lf LocalFile, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrNotLocal, lf.Path, err)
}
