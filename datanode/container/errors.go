package container

import (
	"errors"
	"fmt"
	"syscall"
)

// Errors returned by this package, wrapped with details; classify them with
// errors.Is.
var (
	// ErrInvalidID is returned for container ID 0 and for names that are not
	// a container ID (anything that could escape the volume directory).
	ErrInvalidID = errors.New("container: invalid container ID")
	// ErrNotFound is returned for an unknown container.
	ErrNotFound = errors.New("container: container not found")
	// ErrExists is returned when creating a container that exists.
	ErrExists = errors.New("container: container already exists")
	// ErrBlockNotFound is returned for a block that has never been committed
	// (or was deleted).
	ErrBlockNotFound = errors.New("container: block not found")
	// ErrNotOpen is returned for a write to a container that is not OPEN.
	ErrNotOpen = errors.New("container: container is not open for writes")
	// ErrBadState is returned for a state transition that is not allowed.
	ErrBadState = errors.New("container: state transition not allowed")
	// ErrOverwrite is returned for a chunk that overlaps data already
	// written to the block, unless it is an identical retry of a chunk.
	ErrOverwrite = errors.New("container: chunk overwrites existing block data")
	// ErrBlockTooLarge is returned for a chunk that ends past the maximum
	// block size.
	ErrBlockTooLarge = errors.New("container: offset past the maximum block size")
	// ErrChunkTooLarge is returned for a chunk larger than the maximum.
	ErrChunkTooLarge = errors.New("container: chunk larger than the maximum chunk size")
	// ErrChecksum is returned when a chunk does not match its checksums.
	ErrChecksum = errors.New("container: chunk does not match its checksums")
	// ErrInvalid is returned for malformed arguments: an empty chunk, a
	// negative offset, malformed checksums, a range outside the block.
	ErrInvalid = errors.New("container: invalid argument")
	// ErrIncomplete is returned by PutBlock when the written chunks do not
	// cover [0, length) without holes.
	ErrIncomplete = errors.New("container: chunks do not cover the committed length")
	// ErrDiskFull is returned when the disk has no space left.
	ErrDiskFull = errors.New("container: disk full")
	// ErrCorrupt is returned when on-disk data or metadata is damaged: a row
	// that does not decode, a block file shorter than its committed length.
	ErrCorrupt = errors.New("container: corrupt data")
	// ErrBusy is returned by DeleteBlocks while the container's blocks are
	// held (HoldBlocks: a copy to another datanode is reading them); the
	// caller tries again later.
	ErrBusy = errors.New("container: blocks held by a copy in progress")
	// ErrClosed is returned after the volume has been closed.
	ErrClosed = errors.New("container: volume closed")
)

// ioError classifies an error from the filesystem: ENOSPC becomes
// ErrDiskFull; everything else is returned with context.
func ioError(op string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %s: %w", ErrDiskFull, op, err)
	}
	return fmt.Errorf("container: %s: %w", op, err)
}
