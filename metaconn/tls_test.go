package metaconn

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTLSFailure: which Unavailable errors are TLS failures, not retried,
// and which connection failures sent nothing (retried anywhere).
func TestTLSFailure(t *testing.T) {
	const (
		unknownCA = `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`
		plainTLS  = `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`
		cutShort  = `connection error: desc = "transport: authentication handshake failed: context deadline exceeded"`
		preface   = `connection error: desc = "error reading server preface: EOF"`
		reset     = `connection error: desc = "error reading server preface: read tcp 10.213.1.2:41234->10.213.2.2:9860: read: connection reset by peer"`
		refused   = `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`
	)
	for _, tc := range []struct {
		err     error
		tls     bool
		notSent bool
	}{
		{status.Error(codes.Unavailable, unknownCA), true, false},
		{&retryElsewhereError{err: status.Error(codes.Unavailable, unknownCA)}, true, false},
		{status.Error(codes.Unavailable, plainTLS), true, false},
		{status.Error(codes.Unavailable, cutShort), false, false},
		// Closed before the server spoke: a replica starting, or TLS
		// expected (Do decides after RefusedTimeout); nothing was sent.
		{status.Error(codes.Unavailable, preface), false, true},
		{status.Error(codes.Unavailable, reset), false, true},
		{status.Error(codes.Unavailable, refused), false, true},
		{status.Error(codes.Internal, unknownCA), false, false},
		{errors.New(unknownCA), false, false},
		{nil, false, false},
	} {
		hint, detail := tlsFailure(tc.err)
		require.Equal(t, tc.tls, hint != "", "%v", tc.err)
		if tc.tls {
			require.NotContains(t, detail, "desc =")
			require.NotContains(t, detail, "rpc error")
		}
		require.Equal(t, tc.notSent, isRefused(tc.err), "%v", tc.err)
		_, retry := LeaderHint(tc.err)
		require.Equal(t, tc.notSent || tc.err != nil && errors.As(tc.err, new(*retryElsewhereError)), retry, "%v", tc.err)
	}
}
