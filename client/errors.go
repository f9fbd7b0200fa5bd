package client

import (
	"context"
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/metaconn"
	"github.com/strato-io/strato/proto/strato/v1"
)

// Error classes. Every error a meta call of this package returns matches
// at most one of them with errors.Is, whatever the server's wording; the
// more specific errors below match their class too (ErrBucketNotFound is
// also ErrNotFound). A cancelled or timed-out call matches
// context.Canceled or context.DeadlineExceeded instead.
var (
	ErrNotFound     = errors.New("client: not found")
	ErrExists       = errors.New("client: already exists")
	ErrNotEmpty     = errors.New("client: not empty")
	ErrQuota        = errors.New("client: quota exceeded")
	ErrPrecondition = errors.New("client: failed precondition") // other rules of the namespace
	ErrInvalid      = errors.New("client: invalid argument")
	ErrUnavailable  = metaconn.ErrUnavailable                 // no leader, safe mode, shutting down: retry later
	ErrNoSpace      = errors.New("client: no space")          // no healthy pipeline, meta's disk under its reserve
	ErrPermission   = errors.New("client: permission denied") // PermissionDenied, and Unauthenticated (ErrUnauthenticated)
	ErrUnsupported  = errors.New("client: not supported by this meta server")
)

// ErrPermissionDenied is ErrPermission: meta refused the caller (not an
// administrator, another user's token or key).
var ErrPermissionDenied = ErrPermission

// ErrUnauthenticated: meta refused the call's token (none, malformed,
// unknown, expired, revoked; the message says which: strato login). It is
// also ErrPermission. Not retried.
var ErrUnauthenticated = errors.New("client: not authenticated")

// ErrTLS is wrapped by the error of a call whose TLS handshake with meta
// failed (a certificate not trusted, TLS on one end only): it is not
// retried, since the next handshake would fail alike.
var ErrTLS = metaconn.ErrTLS

// Specific errors, each matching its class as well.
var (
	ErrVolumeNotFound    = errors.New("client: volume not found")
	ErrBucketNotFound    = errors.New("client: bucket not found")
	ErrKeyNotFound       = errors.New("client: key not found") // a key, or a file or directory of an FSO bucket
	ErrParentNotFound    = errors.New("client: parent directory not found")
	ErrVolumeExists      = errors.New("client: volume already exists")
	ErrBucketExists      = errors.New("client: bucket already exists")
	ErrKeyExists         = errors.New("client: key already exists") // a key or a file
	ErrDirectoryExists   = errors.New("client: directory already exists")
	ErrVolumeNotEmpty    = errors.New("client: volume not empty")
	ErrBucketNotEmpty    = errors.New("client: bucket not empty")
	ErrDirectoryNotEmpty = errors.New("client: directory not empty")
	ErrNotADirectory     = errors.New("client: not a directory")
	ErrIsADirectory      = errors.New("client: is a directory")
	ErrWrongLayout       = errors.New("client: not supported by the bucket's layout")
	ErrSafeMode          = errors.New("client: meta is in safe mode")
	ErrKeyReplaced       = errors.New("client: key replaced")  // not the object the caller named
	ErrObjectLocked      = errors.New("client: object locked") // an S3 object lock forbids it
)

// errCreateTokenUnknown: meta refused a deferred write's commit (the
// leader that gave the token out is no longer leader, or the token
// expired); the Writer writes the key again after an ordinary open. Its
// class is ErrUnavailable: a caller that sees it may try again.
var errCreateTokenUnknown = errors.New("client: create token unknown to meta")

// errorDomain is the domain of meta's ErrorInfo details: the API's
// protobuf package, "strato.v1".
var errorDomain = string(stratov1.File_strato_v1_namespace_proto.Package())

// byReason maps the server's reasons (stratov1.Reason*) to a specific
// error and its class.
var byReason = map[string][2]error{
	stratov1.ErrorReason_VOLUME_NOT_FOUND.String():     {ErrVolumeNotFound, ErrNotFound},
	stratov1.ErrorReason_BUCKET_NOT_FOUND.String():     {ErrBucketNotFound, ErrNotFound},
	stratov1.ErrorReason_KEY_NOT_FOUND.String():        {ErrKeyNotFound, ErrNotFound},
	stratov1.ErrorReason_FILE_NOT_FOUND.String():       {ErrKeyNotFound, ErrNotFound},
	stratov1.ErrorReason_OPEN_KEY_NOT_FOUND.String():   {nil, ErrNotFound},
	stratov1.ErrorReason_PARENT_NOT_FOUND.String():     {ErrParentNotFound, ErrNotFound},
	stratov1.ErrorReason_VOLUME_EXISTS.String():        {ErrVolumeExists, ErrExists},
	stratov1.ErrorReason_BUCKET_EXISTS.String():        {ErrBucketExists, ErrExists},
	stratov1.ErrorReason_KEY_EXISTS.String():           {ErrKeyExists, ErrExists},
	stratov1.ErrorReason_FILE_EXISTS.String():          {ErrKeyExists, ErrExists},
	stratov1.ErrorReason_DIRECTORY_EXISTS.String():     {ErrDirectoryExists, ErrExists},
	stratov1.ErrorReason_VOLUME_NOT_EMPTY.String():     {ErrVolumeNotEmpty, ErrNotEmpty},
	stratov1.ErrorReason_BUCKET_NOT_EMPTY.String():     {ErrBucketNotEmpty, ErrNotEmpty},
	stratov1.ErrorReason_DIRECTORY_NOT_EMPTY.String():  {ErrDirectoryNotEmpty, ErrNotEmpty},
	stratov1.ErrorReason_QUOTA_EXCEEDED.String():       {nil, ErrQuota},
	stratov1.ErrorReason_NOT_A_DIRECTORY.String():      {ErrNotADirectory, ErrPrecondition},
	stratov1.ErrorReason_IS_A_DIRECTORY.String():       {ErrIsADirectory, ErrPrecondition},
	stratov1.ErrorReason_WRONG_LAYOUT.String():         {ErrWrongLayout, ErrPrecondition},
	stratov1.ErrorReason_SAFE_MODE.String():            {ErrSafeMode, ErrUnavailable},
	stratov1.ErrorReason_S3_KEY_NOT_FOUND.String():     {nil, ErrNotFound},
	stratov1.ErrorReason_S3_KEY_EXISTS.String():        {nil, ErrExists},
	stratov1.ErrorReason_KEY_REPLACED.String():         {ErrKeyReplaced, ErrPrecondition},
	stratov1.ErrorReason_PERMISSION_DENIED.String():    {nil, ErrPermission},
	stratov1.ErrorReason_OBJECT_LOCKED.String():        {ErrObjectLocked, ErrPrecondition},
	stratov1.ErrorReason_CREATE_TOKEN_UNKNOWN.String(): {errCreateTokenUnknown, ErrUnavailable},
}

// byCode is the class of a status code when no reason says better.
var byCode = map[codes.Code]error{
	codes.NotFound:           ErrNotFound,
	codes.AlreadyExists:      ErrExists,
	codes.FailedPrecondition: ErrPrecondition,
	codes.InvalidArgument:    ErrInvalid,
	codes.OutOfRange:         ErrInvalid,
	codes.Unavailable:        ErrUnavailable,
	codes.ResourceExhausted:  ErrNoSpace,
	codes.PermissionDenied:   ErrPermission,
	codes.Unauthenticated:    ErrPermission,
	codes.Unimplemented:      ErrUnsupported,
	codes.Canceled:           context.Canceled,
	codes.DeadlineExceeded:   context.DeadlineExceeded,
}

// Error is an error meta returned, as this package returns it: its text
// and gRPC status are the server's (status.Code and status.FromError see
// through it), and errors.Is matches its class and specific error.
type Error struct {
	// Code is the status code; Reason the server's reason
	// (stratov1.Reason*), "" if it gave none.
	Code   codes.Code
	Reason string
	err    error
	kind   error
	class  error
}

func (e *Error) Error() string { return e.err.Error() }

// Unwrap returns the error as received (a gRPC status error, possibly
// joined with the caller's context error).
func (e *Error) Unwrap() error { return e.err }

// Is matches the error's class and specific error.
func (e *Error) Is(target error) bool {
	return target != nil && (target == e.kind || target == e.class)
}

// Classify returns an error of meta's gRPC API as this package's Error, for
// callers of the generated stubs (the client's own calls already return
// it). nil, errors that carry no gRPC status and errors already classified
// pass through.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e = &Error{Code: st.Code(), err: err, class: byCode[st.Code()]}
	if st.Code() == codes.Unauthenticated {
		e.kind = ErrUnauthenticated
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == errorDomain {
			e.Reason = info.Reason
			if k, ok := byReason[info.Reason]; ok {
				e.kind, e.class = k[0], k[1]
			}
		}
	}
	return e
}
