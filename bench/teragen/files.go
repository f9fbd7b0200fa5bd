package teragen

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/strato-io/strato/client"
)

// FileCreator is the file system a benchmark writes into: strato through
// its client (ClientFiles), the local disk (LocalFiles), later HDFS. Create may be called
// from several goroutines at once; each FileWriter it returns is used by one.
type FileCreator interface {
	// Create creates the file at path, a slash-separated path in the file
	// system's namespace, with any missing parent directories, replacing a
	// file that is there (Hadoop's FileSystem.create), and opens it for
	// writing.
	Create(ctx context.Context, path string) (FileWriter, error)
}

// FileWriter is a file open for writing, with the calls of Hadoop's
// FSDataOutputStream that TeraGen's record writer makes.
type FileWriter interface {
	io.Writer
	// Hsync makes everything written so far durable.
	Hsync() error
	// Close finishes the file. It is called once, also after an error.
	Close() error
}

// FileOpener opens files for reading: the read-back side of FileCreator.
type FileOpener interface {
	Open(ctx context.Context, path string) (io.ReadCloser, error)
}

// LocalFiles is a FileCreator over the local file system: the file
// system's root is the directory Root, Hsync is fsync.
type LocalFiles struct {
	Root string
	// BufferSize, if positive, puts a buffer of that many bytes in front of
	// each file, as Hadoop's clients buffer (io.file.buffer.size; a DFS
	// packet is 64 KiB); Hsync and Close flush it. 0: every Write is a
	// write(2).
	BufferSize int
}

// Create implements FileCreator. A path cannot leave Root: ".." stops at
// the root, as it does at "/".
func (l LocalFiles) Create(_ context.Context, name string) (FileWriter, error) {
	local := filepath.Join(l.Root, filepath.FromSlash(path.Clean("/"+name)))
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(local)
	if err != nil {
		return nil, err
	}
	lf := &localFile{f: f}
	if l.BufferSize > 0 {
		lf.buf = bufio.NewWriterSize(f, l.BufferSize)
	}
	return lf, nil
}

type localFile struct {
	f   *os.File
	buf *bufio.Writer // nil: unbuffered
}

func (l *localFile) Write(p []byte) (int, error) {
	if l.buf != nil {
		return l.buf.Write(p)
	}
	return l.f.Write(p)
}

func (l *localFile) flush() error {
	if l.buf == nil {
		return nil
	}
	return l.buf.Flush()
}

func (l *localFile) Hsync() error {
	if err := l.flush(); err != nil {
		return err
	}
	return l.f.Sync()
}

func (l *localFile) Close() error {
	err := l.flush()
	return errors.Join(err, l.f.Close())
}

// Open opens a file written through LocalFiles.
func (l LocalFiles) Open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(l.Root, filepath.FromSlash(path.Clean("/"+name))))
}

// ClientFiles is a FileCreator and FileOpener over strato's client: paths
// are /volume/bucket/dir/file, parents are created as needed.
type ClientFiles struct {
	Client *client.Client
	// Write gives the files a replication or erasure coding of their own
	// (default: the bucket's).
	Write client.WriteOptions
}

// Create implements FileCreator. An erasure coded file has no hsync
// (docs/ec.md): its Hsync does nothing, as Hadoop's striped output stream's.
func (s ClientFiles) Create(ctx context.Context, path string) (FileWriter, error) {
	w, err := s.Client.Create(ctx, path, client.CreateOptions{Recursive: true, WriteOptions: s.Write})
	if err != nil {
		return nil, err
	}
	if s.Write.ErasureCoding != nil {
		return noHsync{w}, nil
	}
	return w, nil
}

// noHsync is an erasure coded file's writer.
type noHsync struct{ *client.Writer }

func (noHsync) Hsync() error { return nil }

// Open implements FileOpener.
func (s ClientFiles) Open(ctx context.Context, path string) (io.ReadCloser, error) {
	return s.Client.Open(ctx, path)
}
