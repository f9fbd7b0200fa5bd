package wire

import (
	"context"
	"crypto/tls"
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
// With opts.TLS it first runs a TLS handshake on the socket, as Dial does
// over TCP (the server name defaults to addr's host): a process that holds
// the socket's name without the datanode's certificate fails it. The
// descriptors of READ_LOCAL responses come beside the encrypted frames.
func DialLocal(ctx context.Context, addr string, opts ConnOptions) (*Conn, error) {
	return connect(ctx, "unix", LocalSocketName(addr), addr, opts, func(ctx context.Context, nc net.Conn) (net.Conn, error) {
		fc := &fdConn{UnixConn: nc.(*net.UnixConn)}
		if opts.TLS != nil {
			return tlsClient(ctx, fc, addr, opts.TLS)
		}
		return fc, nil
	})
}

// ListenLocal listens on the local socket of the datanode whose data
// address is addr. With cfg, its connections speak TLS (NewTLSListener),
// and a Writer on one still sends descriptors (WriteMessageFiles).
func ListenLocal(addr string, cfg *tls.Config) (net.Listener, error) {
	l, err := net.Listen("unix", LocalSocketName(addr))
	if err != nil || cfg == nil {
		return l, err
	}
	return NewTLSListener(fdSendListener{l}, cfg), nil
}

// fdSendListener's connections are fdSendConns.
type fdSendListener struct{ net.Listener }

func (l fdSendListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &fdSendConn{UnixConn: nc.(*net.UnixConn)}, nil
}

// fdSendConn is a datanode's end of a local socket under TLS (under the
// gatherConn under the tls.Conn): the descriptors attached go with the
// first bytes of its next write, which is the gathered records of the
// frame being written (WriteMessageFiles).
type fdSendConn struct {
	*net.UnixConn
	mu  sync.Mutex
	oob []byte // SCM_RIGHTS for the next write; nil: none
}

func (c *fdSendConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.oob == nil || len(p) == 0 {
		return c.UnixConn.Write(p)
	}
	oob := c.oob
	// Tried once: what fails here fails the frame, and with it the
	// Writer; the descriptors never go with later bytes.
	c.oob = nil
	return writeRights(c.UnixConn, p, oob)
}

// writeRights writes p on uc with oob (SCM_RIGHTS) attached to its first
// bytes.
func writeRights(uc *net.UnixConn, p, oob []byte) (int, error) {
	n, _, err := uc.WriteMsgUnix(p, oob, nil)
	if err == nil && n < len(p) {
		// The descriptors went with the first bytes; the rest follows.
		var k int
		k, err = uc.Write(p[n:])
		n += k
	}
	return n, err
}

// attach makes the next write carry oob (nil: none), and reports whether
// what it replaces was left, carried by no write.
func (c *fdSendConn) attach(oob []byte) (left bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	left = c.oob != nil
	c.oob = oob
	return left
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
// over a local socket, a *net.UnixConn, or a TLS connection on one that
// ListenLocal accepted, where they go with the first byte of the frame's
// records. The receiver gets descriptors of its own; the caller still owns
// and closes files.
func (w *Writer) WriteMessageFiles(ctx context.Context, id uint64, m Message, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	send, err := w.withRights(syscall.UnixRights(fds...))
	if err != nil {
		return err
	}
	return w.write(ctx, func(dst []byte) []byte {
		dst = m.AppendHeader(dst)
		h := frameHeaderFor(w.ProtocolVersion(), id, m, len(dst)-FrameHeaderLen, 0)
		h.Append(dst[:0])
		return dst
	}, nil, 0, nil, send)
}

// withRights returns how the Writer writes a frame's bytes with oob (an
// SCM_RIGHTS control message) attached to the first of them. It is called
// under the Writer's lock, with the frame's records gathered when under
// TLS: the descriptors are attached to the connection under the TLS one
// for the one write that sends the frame (Flush), and taken back before the
// lock is released, so that they never go with another frame's bytes.
func (w *Writer) withRights(oob []byte) (func([]byte) error, error) {
	switch c := w.w.(type) {
	case *net.UnixConn:
		return func(head []byte) error {
			_, err := writeRights(c, head, oob)
			return err
		}, nil
	case *TLSConn:
		if fc, ok := c.g.Conn.(*fdSendConn); ok {
			return func(head []byte) error {
				fc.attach(oob)
				_, err := c.Write(head)
				if err == nil {
					err = c.Flush()
				}
				if fc.attach(nil) && err == nil {
					err = errors.New("wire: a frame with files was written without them")
				}
				return err
			}, nil
		}
	}
	return nil, errors.New("wire: files sent over a connection that is not a local socket")
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
