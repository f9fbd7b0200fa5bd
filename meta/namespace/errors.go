package namespace

import "errors"

// Error classes. Every error this package returns for a bad request wraps
// exactly one of them, so the server maps errors to gRPC codes with
// errors.Is: NotFound, AlreadyExists, FailedPrecondition, InvalidArgument.
// Anything else (a Pebble error, a corrupt record) is internal.
var (
	ErrNotFound           = errors.New("namespace: not found")
	ErrExists             = errors.New("namespace: already exists")
	ErrFailedPrecondition = errors.New("namespace: failed precondition")
	ErrInvalid            = errors.New("namespace: invalid argument")
	// ErrDenied: the caller lacks a right (acl.go); only Prepare and the
	// Reader return it, never Apply.
	ErrDenied = errors.New("namespace: permission denied")
	// ErrCorrupt marks a stored record that cannot be decoded.
	ErrCorrupt = errors.New("namespace: corrupt record")
)

// classed is a specific sentinel that belongs to one of the classes above.
type classed struct {
	msg   string
	class error
}

func (e *classed) Error() string { return e.msg }
func (e *classed) Unwrap() error { return e.class }

func sentinel(msg string, class error) error { return &classed{msg: msg, class: class} }

// Specific errors; each wraps its class. Returned errors wrap these with the
// name of the object concerned, e.g. "namespace: bucket not found: vol/bkt".
var (
	ErrVolumeNotFound    = sentinel("namespace: volume not found", ErrNotFound)
	ErrBucketNotFound    = sentinel("namespace: bucket not found", ErrNotFound)
	ErrKeyNotFound       = sentinel("namespace: key not found", ErrNotFound)
	ErrFileNotFound      = sentinel("namespace: file or directory not found", ErrNotFound)
	ErrOpenKeyNotFound   = sentinel("namespace: open key not found", ErrNotFound)
	ErrParentNotFound    = sentinel("namespace: parent directory not found", ErrNotFound)
	ErrVolumeExists      = sentinel("namespace: volume already exists", ErrExists)
	ErrBucketExists      = sentinel("namespace: bucket already exists", ErrExists)
	ErrKeyExists         = sentinel("namespace: key already exists", ErrExists)
	ErrFileExists        = sentinel("namespace: file already exists", ErrExists)
	ErrDirectoryExists   = sentinel("namespace: directory already exists", ErrExists)
	ErrVolumeNotEmpty    = sentinel("namespace: volume not empty", ErrFailedPrecondition)
	ErrBucketNotEmpty    = sentinel("namespace: bucket not empty", ErrFailedPrecondition)
	ErrDirectoryNotEmpty = sentinel("namespace: directory not empty", ErrFailedPrecondition)
	ErrQuotaExceeded     = sentinel("namespace: quota exceeded", ErrFailedPrecondition)
	ErrNotADirectory     = sentinel("namespace: not a directory", ErrFailedPrecondition)
	ErrIsADirectory      = sentinel("namespace: is a directory", ErrFailedPrecondition)
	ErrWrongLayout       = sentinel("namespace: operation not supported by the bucket layout", ErrFailedPrecondition)
	ErrRenameUnderSelf   = sentinel("namespace: cannot move a directory under itself", ErrInvalid)
	ErrInvalidName       = sentinel("namespace: invalid name", ErrInvalid)
	ErrInvalidBlocks     = sentinel("namespace: invalid block list", ErrInvalid)
	ErrS3KeyNotFound     = sentinel("namespace: S3 access key not found", ErrNotFound)
	ErrS3KeyExists       = sentinel("namespace: S3 access key already exists", ErrExists)
	ErrKeyReplaced       = sentinel("namespace: key replaced", ErrFailedPrecondition)
	ErrUserNotFound      = sentinel("namespace: user not found", ErrNotFound)
	ErrUserExists        = sentinel("namespace: user already exists", ErrExists)
	ErrTokenNotFound     = sentinel("namespace: token not found", ErrNotFound)
	ErrPermissionDenied  = sentinel("namespace: permission denied", ErrDenied)
	ErrSnapshotNotFound  = sentinel("namespace: snapshot not found", ErrNotFound)
	ErrSnapshotExists    = sentinel("namespace: snapshot already exists", ErrExists)
	ErrHasSnapshots      = sentinel("namespace: bucket has snapshots", ErrFailedPrecondition)
)

// Class returns the class of err (ErrNotFound, ErrExists,
// ErrFailedPrecondition, ErrInvalid, ErrDenied) or nil when err is nil or
// belongs to none of them (an internal error).
func Class(err error) error {
	for _, c := range []error{ErrNotFound, ErrExists, ErrFailedPrecondition, ErrInvalid, ErrDenied} {
		if errors.Is(err, c) {
			return c
		}
	}
	return nil
}
