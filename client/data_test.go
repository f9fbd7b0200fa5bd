package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/wire"
)

// A datanode's ACCESS_DENIED is ErrAccessDenied and ErrPermission, and
// still the wire code; other codes are left alone.
func TestDataErrAccessDenied(t *testing.T) {
	err := dataErr(fmt.Errorf("wrapped: %w", &wire.Error{Code: wire.CodeAccessDenied, Message: "no token for READ of block 1/2 on this connection"}))
	require.ErrorIs(t, err, ErrAccessDenied)
	require.ErrorIs(t, err, ErrPermission)
	require.ErrorIs(t, err, wire.CodeAccessDenied)
	require.Contains(t, err.Error(), "no token for READ of block 1/2")

	other := &wire.Error{Code: wire.CodeIO}
	require.Same(t, other, dataErr(other))
	require.False(t, errors.Is(dataErr(other), ErrAccessDenied))
	require.NoError(t, dataErr(nil))
	require.False(t, nodeFault(wire.CodeAccessDenied), "not the datanode's fault")
}
