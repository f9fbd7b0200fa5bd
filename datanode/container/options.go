package container

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Layout is how a container stores the chunks of a block on disk. The numeric
// values are stored in descriptors: never renumber them.
type Layout uint8

const (
	// FilePerBlock stores each block in one file, chunks at their offsets.
	FilePerBlock Layout = 1
	// FilePerChunk stores each chunk in a file of its own.
	FilePerChunk Layout = 2
)

var layoutNames = map[Layout]string{FilePerBlock: "FILE_PER_BLOCK", FilePerChunk: "FILE_PER_CHUNK"}

// String is the layout's name in container reports and docs/wire.md
// (FILE_PER_BLOCK, FILE_PER_CHUNK).
func (l Layout) String() string {
	if n, ok := layoutNames[l]; ok {
		return n
	}
	return fmt.Sprintf("Layout(%d)", uint8(l))
}

// Valid reports whether l is a known layout.
func (l Layout) Valid() bool { _, ok := layoutNames[l]; return ok }

// ParseLayout parses a layout name (FILE_PER_BLOCK, FILE_PER_CHUNK),
// case-insensitively.
func ParseLayout(s string) (Layout, error) {
	for l, n := range layoutNames {
		if strings.EqualFold(s, n) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown layout %q (want FILE_PER_BLOCK or FILE_PER_CHUNK)", ErrInvalid, s)
}

// Options configure a Volume. The zero value is usable: EnsureDefaults fills
// every unset field.
type Options struct {
	// FS is the filesystem for block files and the database alike.
	// Default: vfs.Default.
	FS vfs.FS
	// Logger receives warnings found while opening a volume. Default:
	// slog.Default().
	Logger *slog.Logger
	// MaxChunkSize bounds one WriteChunk. Default: 32 MiB (Ozone's limit).
	MaxChunkSize int64
	// MaxBlockSize bounds the end offset of any chunk. Default: 256 MiB, the
	// default block size of the design.
	MaxBlockSize int64
	// DefaultLayout is used by Create when no layout is given.
	// Default: FilePerBlock.
	DefaultLayout Layout
	// SyncParallelism is how many files Container.Sync fsyncs at once.
	// Default: 8.
	SyncParallelism int
	// PebbleCacheSize is the block cache of the volume's database in bytes.
	// Default: 64 MiB.
	PebbleCacheSize int64
	// DisableDirectIO turns off the direct-I/O fast path of FILE_PER_BLOCK:
	// on Linux with FS = vfs.Default, a chunk of at least DirectIOMinSize
	// bytes whose buffer address, offset and length are multiples of 4096
	// is written with O_DIRECT, skipping the page-cache copy (large chunks
	// then go at the disk's sequential rate, as dd oflag=direct does).
	// Everything else is buffered. Durability is unchanged: Sync and
	// PutBlock with Sync fsync the file either way. If the filesystem
	// refuses O_DIRECT, the volume falls back to buffered writes.
	DisableDirectIO bool
	// DirectIOMinSize is the smallest chunk written with O_DIRECT.
	// Default: 1 MiB.
	DirectIOMinSize int64
	// EagerWriteback starts writing each buffered FILE_PER_BLOCK chunk
	// back to disk as soon as it is written (sync_file_range on Linux),
	// so that dirty pages do not pile up until the kernel throttles
	// writers, and a later fsync has little left to do; the data stays in
	// the page cache for readers.
	EagerWriteback bool
	// EagerWritebackMinSize is the smallest chunk EagerWriteback starts
	// writing back; smaller ones (small objects, hflushed tails) are left
	// to the kernel's writeback, which gathers them: one writeback per 1
	// KiB object cost its block allocation and a disk write of its own,
	// and 1 KiB PUTs went 20% faster without it (docs/s3.md). Default:
	// 64 KiB.
	EagerWritebackMinSize int64
	// WriteCacheBytes bounds the bytes of FILE_PER_BLOCK chunks written
	// through the page cache that the volume leaves there: beyond it, the
	// oldest are dropped from the page cache as new ones are written
	// (writecache.go; Linux with FS = vfs.Default). 0: no bound, the kernel
	// keeps them until it needs the memory.
	WriteCacheBytes int64
	// RecycleFiles is how many files of deleted FILE_PER_BLOCK blocks a
	// volume keeps for new blocks (recycle.go; Linux with FS = vfs.Default).
	// Default: 100,000; negative: none.
	RecycleFiles int
}

// Default values of Options.
const (
	DefaultMaxChunkSize          = 32 << 20
	DefaultMaxBlockSize          = 256 << 20
	DefaultSyncParallelism       = 8
	DefaultPebbleCacheSize       = 64 << 20
	DefaultDirectIOMinSize       = 1 << 20
	DefaultRecycleFiles          = 100_000
	DefaultEagerWritebackMinSize = 64 << 10
	directIOAlign                = 4096
)

// EnsureDefaults fills unset fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MaxChunkSize == 0 {
		o.MaxChunkSize = DefaultMaxChunkSize
	}
	if o.MaxBlockSize == 0 {
		o.MaxBlockSize = DefaultMaxBlockSize
	}
	if o.DefaultLayout == 0 {
		o.DefaultLayout = FilePerBlock
	}
	if o.SyncParallelism == 0 {
		o.SyncParallelism = DefaultSyncParallelism
	}
	if o.PebbleCacheSize == 0 {
		o.PebbleCacheSize = DefaultPebbleCacheSize
	}
	if o.DirectIOMinSize == 0 {
		o.DirectIOMinSize = DefaultDirectIOMinSize
	}
	if o.EagerWritebackMinSize == 0 {
		o.EagerWritebackMinSize = DefaultEagerWritebackMinSize
	}
	if o.RecycleFiles == 0 {
		o.RecycleFiles = DefaultRecycleFiles
	}
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	switch {
	case o.MaxChunkSize <= 0:
		return fmt.Errorf("%w: MaxChunkSize %d must be positive", ErrInvalid, o.MaxChunkSize)
	case o.MaxBlockSize <= 0:
		return fmt.Errorf("%w: MaxBlockSize %d must be positive", ErrInvalid, o.MaxBlockSize)
	case o.MaxChunkSize > o.MaxBlockSize:
		return fmt.Errorf("%w: MaxChunkSize %d exceeds MaxBlockSize %d", ErrInvalid, o.MaxChunkSize, o.MaxBlockSize)
	case !o.DefaultLayout.Valid():
		return fmt.Errorf("%w: DefaultLayout %v", ErrInvalid, o.DefaultLayout)
	case o.SyncParallelism < 1:
		return fmt.Errorf("%w: SyncParallelism %d must be at least 1", ErrInvalid, o.SyncParallelism)
	case o.DirectIOMinSize < directIOAlign || o.DirectIOMinSize%directIOAlign != 0:
		return fmt.Errorf("%w: DirectIOMinSize %d must be a positive multiple of %d", ErrInvalid, o.DirectIOMinSize, directIOAlign)
	case o.WriteCacheBytes < 0:
		return fmt.Errorf("%w: WriteCacheBytes %d must not be negative", ErrInvalid, o.WriteCacheBytes)
	case o.PebbleCacheSize < 0:
		return fmt.Errorf("%w: PebbleCacheSize %d must not be negative", ErrInvalid, o.PebbleCacheSize)
	}
	return nil
}
