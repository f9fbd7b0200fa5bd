package client

import (
	"context"
	"errors"

	"github.com/strato-io/strato/proto/stratopb"
)

// errNotYet marks the data path while it is being written.
var errNotYet = errors.New("client: key data path not available yet")

// WriteOptions configure a key writer.
type WriteOptions struct {
	// Replication overrides the bucket's.
	Replication stratopb.ReplicationFactor
	// SizeHint is the expected size (0: unknown).
	SizeHint int64
}

// CreateOptions configure a file-system Create.
type CreateOptions struct {
	Overwrite bool // replace an existing file
	Recursive bool // create missing parent directories
	WriteOptions
}

// Writer writes a key: Write, then Hsync/Hflush as needed, then Close,
// which commits it.
type Writer struct{}

// Write buffers p and sends full chunks to the pipeline.
func (w *Writer) Write(p []byte) (int, error) { return 0, errNotYet }

// Hflush makes what was written so far reach every replica and visible to
// new readers.
func (w *Writer) Hflush() error { return errNotYet }

// Hsync is Hflush, and every replica fsyncs.
func (w *Writer) Hsync() error { return errNotYet }

// Close flushes, commits the key, and releases the writer.
func (w *Writer) Close() error { return errNotYet }

// Reader reads a committed key.
type Reader struct{}

// Size is the key's length.
func (r *Reader) Size() int64 { return 0 }

// ReadAt reads len(p) bytes at off.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) { return 0, errNotYet }

// Read reads from the current offset.
func (r *Reader) Read(p []byte) (int, error) { return 0, errNotYet }

// Seek sets the offset of the next Read.
func (r *Reader) Seek(offset int64, whence int) (int64, error) { return 0, errNotYet }

// Close releases the reader.
func (r *Reader) Close() error { return nil }

// CreateKey starts writing a key (OBS or FSO bucket; on FSO the key is a
// path and missing parents are created).
func (c *Client) CreateKey(ctx context.Context, volume, bucket, key string, o WriteOptions) (*Writer, error) {
	return nil, errNotYet
}

// OpenKey opens a committed key for reading.
func (c *Client) OpenKey(ctx context.Context, volume, bucket, key string) (*Reader, error) {
	return nil, errNotYet
}

// Create starts writing a file at /volume/bucket/path.
func (c *Client) Create(ctx context.Context, path string, o CreateOptions) (*Writer, error) {
	return nil, errNotYet
}

// Open opens the file at /volume/bucket/path for reading.
func (c *Client) Open(ctx context.Context, path string) (*Reader, error) {
	return nil, errNotYet
}

type dataConns struct{}

func newDataConns() *dataConns    { return &dataConns{} }
func (d *dataConns) close() error { return nil }
