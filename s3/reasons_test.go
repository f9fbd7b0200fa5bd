package s3

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/proto/strato/v1"
)

// metaReason is a reason meta sends, with the status code it comes with
// (meta/status.go).
type metaReason struct {
	code codes.Code
	// s3 is the S3 error fromClient answers it with.
	s3 *Error
}

// s3Reasons says how the gateway answers every reason of the API. A
// reason meta gains must go here (or, if meta never sends it, into
// s3NoMapping).
var s3Reasons = map[stratov1.ErrorReason]metaReason{
	// MetaConn follows the leader; a call that found none is retried later.
	stratov1.ErrorReason_NOT_LEADER: {codes.Unavailable, ErrServiceUnavailable},
	stratov1.ErrorReason_SAFE_MODE:  {codes.Unavailable, ErrServiceUnavailable},

	stratov1.ErrorReason_VOLUME_NOT_FOUND: {codes.NotFound, ErrNoSuchBucket},
	stratov1.ErrorReason_BUCKET_NOT_FOUND: {codes.NotFound, ErrNoSuchBucket},
	// Callers that mean another missing thing (NoSuchUpload) say so.
	stratov1.ErrorReason_KEY_NOT_FOUND:      {codes.NotFound, ErrNoSuchKey},
	stratov1.ErrorReason_FILE_NOT_FOUND:     {codes.NotFound, ErrNoSuchKey},
	stratov1.ErrorReason_OPEN_KEY_NOT_FOUND: {codes.NotFound, ErrNoSuchKey},
	stratov1.ErrorReason_PARENT_NOT_FOUND:   {codes.NotFound, ErrNoSuchKey},
	// Access keys are AdminService's: the gateway's lookup of a missing one
	// answers InvalidAccessKeyId itself (credentials.go).
	stratov1.ErrorReason_S3_KEY_NOT_FOUND: {codes.NotFound, ErrNoSuchKey},

	stratov1.ErrorReason_BUCKET_EXISTS: {codes.AlreadyExists, ErrBucketAlreadyOwnedByYou},
	// A file or directory of an FSO bucket in the way of a key (a PUT of
	// "a/b/" where the object "a/b" is), as NOT_A_DIRECTORY below.
	stratov1.ErrorReason_KEY_EXISTS:       {codes.AlreadyExists, ErrInvalidRequest},
	stratov1.ErrorReason_FILE_EXISTS:      {codes.AlreadyExists, ErrInvalidRequest},
	stratov1.ErrorReason_DIRECTORY_EXISTS: {codes.AlreadyExists, ErrInvalidRequest},
	// The gateway creates its volume tolerating VOLUME_EXISTS, and no
	// access key.
	stratov1.ErrorReason_VOLUME_EXISTS: {codes.AlreadyExists, ErrInvalidRequest},
	stratov1.ErrorReason_S3_KEY_EXISTS: {codes.AlreadyExists, ErrInvalidRequest},

	stratov1.ErrorReason_BUCKET_NOT_EMPTY: {codes.FailedPrecondition, ErrBucketNotEmpty},
	// The gateway deletes no volume; a DELETE of a directory of an FSO
	// bucket that still holds keys succeeds (S3 has no directories: its
	// keys keep it), answered by deleteKey before fromClient.
	stratov1.ErrorReason_VOLUME_NOT_EMPTY:    {codes.FailedPrecondition, ErrInternalError},
	stratov1.ErrorReason_DIRECTORY_NOT_EMPTY: {codes.FailedPrecondition, ErrInternalError},
	stratov1.ErrorReason_QUOTA_EXCEEDED:      {codes.FailedPrecondition, ErrQuotaExceeded},
	stratov1.ErrorReason_NOT_A_DIRECTORY:     {codes.FailedPrecondition, ErrInvalidRequest},
	stratov1.ErrorReason_IS_A_DIRECTORY:      {codes.FailedPrecondition, ErrInvalidRequest},
	stratov1.ErrorReason_WRONG_LAYOUT:        {codes.FailedPrecondition, ErrInvalidRequest},
	stratov1.ErrorReason_KEY_REPLACED:        {codes.FailedPrecondition, ErrInvalidRequest},

	stratov1.ErrorReason_RENAME_UNDER_SELF: {codes.InvalidArgument, ErrInvalidArgument},
	stratov1.ErrorReason_INVALID_NAME:      {codes.InvalidArgument, ErrInvalidArgument},
	stratov1.ErrorReason_INVALID_BLOCKS:    {codes.InvalidArgument, ErrInvalidArgument},

	stratov1.ErrorReason_NO_PIPELINE: {codes.ResourceExhausted, ErrServiceUnavailable},
	stratov1.ErrorReason_DISK_FULL:   {codes.ResourceExhausted, ErrServiceUnavailable},

	stratov1.ErrorReason_PERMISSION_DENIED: {codes.PermissionDenied, ErrAccessDenied},
	// AWS's answer to a change an object lock forbids.
	stratov1.ErrorReason_OBJECT_LOCKED: {codes.FailedPrecondition, ErrObjectLocked},
	// The client writes the key again after an ordinary open; the gateway
	// sees it only if that fails alike, and the SDK may retry.
	stratov1.ErrorReason_CREATE_TOKEN_UNKNOWN: {codes.FailedPrecondition, ErrServiceUnavailable},
}

// s3NoMapping are the reasons meta never sends.
var s3NoMapping = map[stratov1.ErrorReason]bool{
	stratov1.ErrorReason_ERROR_REASON_UNSPECIFIED: true, // the enum's zero value
}

// TestEveryReasonMapped: every reason of the API, sent with its status
// code, becomes the S3 error s3Reasons names (unless meta never sends
// it); adding a reason to the proto without deciding which fails here.
func TestEveryReasonMapped(t *testing.T) {
	for n, name := range stratov1.ErrorReason_name {
		r := stratov1.ErrorReason(n)
		want, mapped := s3Reasons[r]
		if s3NoMapping[r] {
			require.False(t, mapped, "%s is both mapped and in s3NoMapping", name)
			continue
		}
		require.True(t, mapped, "meta's reason %s has no S3 error: add it to s3Reasons", name)
		st, err := status.New(want.code, "namespace: "+name).WithDetails(&errdetails.ErrorInfo{
			Reason: name, Domain: string(stratov1.File_strato_v1_namespace_proto.Package())})
		require.NoError(t, err)
		got := fromClient(client.Classify(st.Err()), nil)
		require.Equal(t, want.s3.Code, got.Code, "%s (%v)", name, want.code)
		require.Equal(t, want.s3.Status, got.Status, "%s (%v)", name, want.code)
	}
}
