package meta

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strato-io/strato/meta/cluster"
	"github.com/strato-io/strato/meta/consensus"
	"github.com/strato-io/strato/meta/namespace"
	"github.com/strato-io/strato/proto/strato/v1"
)

// errorDomain is the domain of meta's ErrorInfo details: the API's
// protobuf package, "strato.v1".
var errorDomain = string(stratov1.File_strato_v1_namespace_proto.Package())

// toStatus turns an error of the namespace, cluster or consensus into a
// gRPC status. A nil error stays nil; a status passes through.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isWrapped(err) {
		return err
	}
	var nl *consensus.NotLeaderError
	if errors.As(err, &nl) {
		st := status.New(codes.Unavailable, err.Error())
		if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: stratov1.ErrorReason_NOT_LEADER.String(), Domain: errorDomain,
			Metadata: map[string]string{"leader": nl.LeaderAddr, "leader_id": fmt.Sprint(nl.LeaderID)}}); derr == nil {
			st = d
		}
		return st.Err()
	}
	code, reason := codes.Internal, ""
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			reason = r.reason
			break
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, namespace.ErrNotFound), errors.Is(err, cluster.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, namespace.ErrExists):
		code = codes.AlreadyExists
	case errors.Is(err, namespace.ErrFailedPrecondition), errors.Is(err, cluster.ErrBadTransition), errors.Is(err, cluster.ErrOtherCluster):
		code = codes.FailedPrecondition
	case errors.Is(err, namespace.ErrInvalid), errors.Is(err, cluster.ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, namespace.ErrDenied):
		code = codes.PermissionDenied
	case errors.Is(err, cluster.ErrSafeMode):
		code = codes.Unavailable // wait and retry
	case errors.Is(err, cluster.ErrNoPipeline):
		code = codes.ResourceExhausted // not enough healthy datanodes
	case errors.Is(err, cluster.ErrUnknownNode):
		code = codes.NotFound
	case errors.Is(err, ErrClosed), errors.Is(err, consensus.ErrClosed):
		code = codes.Unavailable
	case errors.Is(err, consensus.ErrChangeInProgress):
		code = codes.FailedPrecondition
	case errors.Is(err, consensus.ErrInvalidMember):
		code = codes.InvalidArgument
	case errors.Is(err, consensus.ErrTransferFailed):
		code = codes.Aborted
	case errors.Is(err, consensus.ErrResultUnknown):
		code = codes.Unknown
	}
	return withReason(status.New(code, err.Error()), reason).Err()
}

// withReason attaches the ErrorInfo naming reason, if any.
func withReason(st *status.Status, reason string) *status.Status {
	if reason == "" {
		return st
	}
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain}); err == nil {
		return d
	}
	return st
}

// reasons name the rule behind an error (stratov1.Reason*), the first
// match winning.
var reasons = []struct {
	err    error
	reason string
}{
	{namespace.ErrVolumeNotFound, stratov1.ErrorReason_VOLUME_NOT_FOUND.String()},
	{namespace.ErrBucketNotFound, stratov1.ErrorReason_BUCKET_NOT_FOUND.String()},
	{namespace.ErrKeyNotFound, stratov1.ErrorReason_KEY_NOT_FOUND.String()},
	{namespace.ErrFileNotFound, stratov1.ErrorReason_FILE_NOT_FOUND.String()},
	{namespace.ErrOpenKeyNotFound, stratov1.ErrorReason_OPEN_KEY_NOT_FOUND.String()},
	{namespace.ErrParentNotFound, stratov1.ErrorReason_PARENT_NOT_FOUND.String()},
	{namespace.ErrVolumeExists, stratov1.ErrorReason_VOLUME_EXISTS.String()},
	{namespace.ErrBucketExists, stratov1.ErrorReason_BUCKET_EXISTS.String()},
	{namespace.ErrKeyExists, stratov1.ErrorReason_KEY_EXISTS.String()},
	{namespace.ErrFileExists, stratov1.ErrorReason_FILE_EXISTS.String()},
	{namespace.ErrDirectoryExists, stratov1.ErrorReason_DIRECTORY_EXISTS.String()},
	{namespace.ErrVolumeNotEmpty, stratov1.ErrorReason_VOLUME_NOT_EMPTY.String()},
	{namespace.ErrBucketNotEmpty, stratov1.ErrorReason_BUCKET_NOT_EMPTY.String()},
	{namespace.ErrDirectoryNotEmpty, stratov1.ErrorReason_DIRECTORY_NOT_EMPTY.String()},
	{namespace.ErrQuotaExceeded, stratov1.ErrorReason_QUOTA_EXCEEDED.String()},
	{namespace.ErrNotADirectory, stratov1.ErrorReason_NOT_A_DIRECTORY.String()},
	{namespace.ErrIsADirectory, stratov1.ErrorReason_IS_A_DIRECTORY.String()},
	{namespace.ErrWrongLayout, stratov1.ErrorReason_WRONG_LAYOUT.String()},
	{namespace.ErrRenameUnderSelf, stratov1.ErrorReason_RENAME_UNDER_SELF.String()},
	{namespace.ErrInvalidName, stratov1.ErrorReason_INVALID_NAME.String()},
	{namespace.ErrInvalidBlocks, stratov1.ErrorReason_INVALID_BLOCKS.String()},
	{namespace.ErrS3KeyNotFound, stratov1.ErrorReason_S3_KEY_NOT_FOUND.String()},
	{namespace.ErrS3KeyExists, stratov1.ErrorReason_S3_KEY_EXISTS.String()},
	{namespace.ErrKeyReplaced, stratov1.ErrorReason_KEY_REPLACED.String()},
	{namespace.ErrPermissionDenied, stratov1.ErrorReason_PERMISSION_DENIED.String()},
	{namespace.ErrObjectLocked, stratov1.ErrorReason_OBJECT_LOCKED.String()},
	{ErrCreateTokenUnknown, stratov1.ErrorReason_CREATE_TOKEN_UNKNOWN.String()},
	{cluster.ErrSafeMode, stratov1.ErrorReason_SAFE_MODE.String()},
	{cluster.ErrNoPipeline, stratov1.ErrorReason_NO_PIPELINE.String()},
}

// isWrapped reports whether err is a status error wrapped in more context
// (status.FromError unwraps; such errors keep their code but we rebuild
// the message).
func isWrapped(err error) bool {
	_, ok := err.(interface{ GRPCStatus() *status.Status })
	return !ok
}
