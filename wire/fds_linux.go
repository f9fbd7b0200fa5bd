package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unicode/utf8"
)

// DialLocal connects to the local socket of the datanode whose data
// address is addr (LocalSocketName) and performs the Ping handshake. It
// fails at once when no such datanode runs in this network namespace.
func DialLocal(ctx context.Context, addr string, opts ConnOptions) (*Conn, error) {
	return connect(ctx, "unix", LocalSocketName(addr), addr, opts, func(_ context.Context, nc net.Conn) (net.Conn, error) {
		return &fdConn{UnixConn: nc.(*net.UnixConn)}, nil
	})
}

// ListenLocal listens on the local socket of the datanode whose data
// address is addr.
func ListenLocal(addr string) (net.Listener, error) {
	return net.Listen("unix", LocalSocketName(addr))
}

// fdConn is a client's end of a local socket: its reads keep the file
// descriptors that come with the bytes, for take.
type fdConn struct {
	*net.UnixConn
	oob  []byte
	mu   sync.Mutex
	fds  []*os.File
	done bool
}

// oobLen holds the control message of MaxLocalFiles descriptors.
var oobLen = syscall.CmsgSpace(4 * MaxLocalFiles)

func (c *fdConn) Read(p []byte) (int, error) {
	if c.oob == nil {
		c.oob = make([]byte, oobLen)
	}
	n, oobn, flags, _, err := c.ReadMsgUnix(p, c.oob)
	n = max(n, 0)
	if oobn > 0 {
		files, perr := parseRights(c.oob[:oobn])
		c.mu.Lock()
		if c.done {
			closeFiles(files)
		} else {
			c.fds = append(c.fds, files...)
		}
		c.mu.Unlock()
		if perr != nil && err == nil {
			err = perr
		}
	}
	if flags&syscall.MSG_CTRUNC != 0 && err == nil {
		err = Errorf(CodeProtocol, "local socket: file descriptors cut off (more than %d)", MaxLocalFiles)
	}
	return n, err
}

func (c *fdConn) take(n int) ([]*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.fds) < n {
		return nil, Errorf(CodeProtocol, "READ_LOCAL response names %d files, %d came with it", n, len(c.fds))
	}
	files := append([]*os.File(nil), c.fds[:n]...)
	c.fds = c.fds[n:]
	return files, nil
}

func (c *fdConn) Close() error {
	c.mu.Lock()
	closeFiles(c.fds)
	c.fds, c.done = nil, true
	c.mu.Unlock()
	return c.UnixConn.Close()
}

// parseRights returns the descriptors of SCM_RIGHTS messages as files.
func parseRights(oob []byte) ([]*os.File, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, Errorf(CodeProtocol, "local socket: control message: %v", err)
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue // not SCM_RIGHTS
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "local block file"))
		}
	}
	return files, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// WriteMessageFiles writes a frame carrying m (no payload) with files'
// descriptors attached to its first byte (SCM_RIGHTS): the writer must be
// over a *net.UnixConn. The receiver gets descriptors of its own; the
// caller still owns and closes files.
func (w *Writer) WriteMessageFiles(ctx context.Context, id uint64, m Message, files []*os.File) error {
	uc, ok := w.w.(*net.UnixConn)
	if !ok {
		return errors.New("wire: files sent over a connection that is not a local socket")
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	oob := syscall.UnixRights(fds...)
	return w.write(ctx, func(dst []byte) []byte {
		dst = m.AppendHeader(dst)
		h := frameHeaderFor(w.ProtocolVersion(), id, m, len(dst)-FrameHeaderLen, 0)
		h.Append(dst[:0])
		return dst
	}, nil, 0, nil, func(head []byte) error {
		n, _, err := uc.WriteMsgUnix(head, oob, nil)
		if err == nil && n < len(head) {
			// The descriptors went with the first bytes; the rest follows.
			_, err = uc.Write(head[n:])
		}
		return err
	})
}

// LocalFileOf names the file at name, whose stat(2) is fi, for a
// READ_LOCAL_PATHS response: its absolute path and its device and inode
// numbers. A path the response cannot carry (over MaxLocalPathLen, not
// UTF-8) is an error.
func LocalFileOf(name string, fi os.FileInfo) (LocalFile, error) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return LocalFile{}, fmt.Errorf("wire: %s: no device and inode numbers", name)
	}
	p, err := filepath.Abs(name)
	if err != nil {
		return LocalFile{}, err
	}
	if len(p) > MaxLocalPathLen || !utf8.ValidString(p) {
		return LocalFile{}, fmt.Errorf("wire: path %q cannot be sent", p)
	}
	return LocalFile{Dev: uint64(st.Dev), Ino: st.Ino, Path: p}, nil
}

// openLocalFile opens a file a READ_LOCAL_PATHS response names, read-only,
// and checks that it is that file.
func openLocalFile(lf LocalFile) (*os.File, error) {
	f, err := os.Open(lf.Path)
	if err != nil {
		return nil, notLocal(lf, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, notLocal(lf, err)
	}
	if uint64(st.Dev) != lf.Dev || st.Ino != lf.Ino {
		f.Close()
		return nil, notLocal(lf, fmt.Errorf("device %d inode %d, not the datanode's %d %d", st.Dev, st.Ino, lf.Dev, lf.Ino))
	}
	return f, nil
}
