//go:build !linux

package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"os"
)

// errNoLocal: local sockets are Linux abstract sockets.
var errNoLocal = errors.New("wire: local reads need Linux")

// DialLocal fails: local reads need Linux.
func DialLocal(context.Context, string, ConnOptions) (*Conn, error) { return nil, errNoLocal }

// ListenLocal fails: local reads need Linux.
func ListenLocal(string, *tls.Config) (net.Listener, error) { return nil, errNoLocal }

// WriteMessageFiles fails: local reads need Linux.
func (w *Writer) WriteMessageFiles(context.Context, uint64, Message, []*os.File) error {
	return errNoLocal
}

// LocalFileOf fails: local reads need Linux.
func LocalFileOf(string, os.FileInfo) (LocalFile, error) { return LocalFile{}, errNoLocal }

func openLocalFile(lf LocalFile) (*os.File, error) { return nil, notLocal(lf, errNoLocal) }
