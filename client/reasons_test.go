package client

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// noSpecificError are the reasons byReason leaves to the status code, and
// why. A reason meta gains must go into byReason or here.
var noSpecificError = map[stratov1.ErrorReason]string{
	// Never sent: the enum's zero value.
	stratov1.ErrorReason_ERROR_REASON_UNSPECIFIED: "not a reason",
	// Unavailable: MetaConn redirects the call to the leader the
	// ErrorInfo names (LeaderHint); a caller sees ErrUnavailable only when
	// no leader answered in time.
	stratov1.ErrorReason_NOT_LEADER: "followed by MetaConn",
	// InvalidArgument: the caller's request is wrong, and ErrInvalid says
	// so; none of them is something a caller recovers from differently.
	stratov1.ErrorReason_RENAME_UNDER_SELF: "ErrInvalid",
	stratov1.ErrorReason_INVALID_NAME:      "ErrInvalid",
	stratov1.ErrorReason_INVALID_BLOCKS:    "ErrInvalid",
	// ResourceExhausted: ErrNoSpace, whichever resource ran out.
	stratov1.ErrorReason_NO_PIPELINE: "ErrNoSpace",
	stratov1.ErrorReason_DISK_FULL:   "ErrNoSpace",
}

// TestEveryReasonMapped: every reason of the API is mapped to a client
// error, or is in noSpecificError; adding a reason to the proto without
// deciding which fails here.
func TestEveryReasonMapped(t *testing.T) {
	for n, name := range stratov1.ErrorReason_name {
		r := stratov1.ErrorReason(n)
		k, mapped := byReason[name]
		_, none := noSpecificError[r]
		require.False(t, mapped && none, "%s is both mapped and in noSpecificError", name)
		require.True(t, mapped || none, "meta's reason %s has no client error: add it to byReason (errors.go) or to noSpecificError", name)
		if mapped {
			require.NotNil(t, k[1], "%s maps to no class", name)
		}
	}
	for name := range byReason {
		_, ok := stratov1.ErrorReason_value[name]
		require.True(t, ok, "byReason maps %s, which is no ErrorReason", name)
	}
}
