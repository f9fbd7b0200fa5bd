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
	"github.com/strato-io/strato/proto/stratopb"
)

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
		if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: stratopb.NotLeaderReason, Domain: stratopb.ErrorDomain,
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
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: stratopb.ErrorDomain}); err == nil {
		return d
	}
	return st
}

// reasons name the rule behind an error (stratopb.Reason*), the first
// match winning.
var reasons = []struct {
	err    error
	reason string
}{
	{namespace.ErrVolumeNotFound, stratopb.ReasonVolumeNotFound},
	{namespace.ErrBucketNotFound, stratopb.ReasonBucketNotFound},
	{namespace.ErrKeyNotFound, stratopb.ReasonKeyNotFound},
	{namespace.ErrFileNotFound, stratopb.ReasonFileNotFound},
	{namespace.ErrOpenKeyNotFound, stratopb.ReasonOpenKeyNotFound},
	{namespace.ErrParentNotFound, stratopb.ReasonParentNotFound},
	{namespace.ErrVolumeExists, stratopb.ReasonVolumeExists},
	{namespace.ErrBucketExists, stratopb.ReasonBucketExists},
	{namespace.ErrKeyExists, stratopb.ReasonKeyExists},
	{namespace.ErrFileExists, stratopb.ReasonFileExists},
	{namespace.ErrDirectoryExists, stratopb.ReasonDirectoryExists},
	{namespace.ErrVolumeNotEmpty, stratopb.ReasonVolumeNotEmpty},
	{namespace.ErrBucketNotEmpty, stratopb.ReasonBucketNotEmpty},
	{namespace.ErrDirectoryNotEmpty, stratopb.ReasonDirectoryNotEmpty},
	{namespace.ErrQuotaExceeded, stratopb.ReasonQuotaExceeded},
	{namespace.ErrNotADirectory, stratopb.ReasonNotADirectory},
	{namespace.ErrIsADirectory, stratopb.ReasonIsADirectory},
	{namespace.ErrWrongLayout, stratopb.ReasonWrongLayout},
	{namespace.ErrRenameUnderSelf, stratopb.ReasonRenameUnderSelf},
	{namespace.ErrInvalidName, stratopb.ReasonInvalidName},
	{namespace.ErrInvalidBlocks, stratopb.ReasonInvalidBlocks},
	{cluster.ErrSafeMode, stratopb.ReasonSafeMode},
	{cluster.ErrNoPipeline, stratopb.ReasonNoPipeline},
}

// isWrapped reports whether err is a status error wrapped in more context
// (status.FromError unwraps; such errors keep their code but we rebuild
// the message).
func isWrapped(err error) bool {
	_, ok := err.(interface{ GRPCStatus() *status.Status })
	return !ok
}
