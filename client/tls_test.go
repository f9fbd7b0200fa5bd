package client

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTLSFailure: which Unavailable errors are TLS failures, not retried.
func TestTLSFailure(t *testing.T) {
	const (
		unknownCA = `connection error: desc = "transport: authentication handshake failed: tls: failed to verify certificate: x509: certificate signed by unknown authority"`
		plainTLS  = `connection error: desc = "transport: authentication handshake failed: tls: first record does not look like a TLS handshake"`
		cutShort  = `connection error: desc = "transport: authentication handshake failed: context deadline exceeded"`
		preface   = `connection error: desc = "error reading server preface: EOF"`
		refused   = `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`
	)
	for _, tc := range []struct {
		err      error
		answered bool
		tls      bool
	}{
		{status.Error(codes.Unavailable, unknownCA), true, true},
		{&retryElsewhereError{err: status.Error(codes.Unavailable, unknownCA)}, false, true},
		{status.Error(codes.Unavailable, plainTLS), true, true},
		{status.Error(codes.Unavailable, cutShort), false, false},
		{status.Error(codes.Unavailable, preface), false, true},
		{status.Error(codes.Unavailable, preface), true, false}, // a replica that answered before: a restart
		{status.Error(codes.Unavailable, refused), false, false},
		{status.Error(codes.Internal, unknownCA), false, false},
		{errors.New(unknownCA), false, false},
		{nil, false, false},
	} {
		hint, detail := tlsFailure(tc.err, tc.answered)
		require.Equal(t, tc.tls, hint != "", "%v (answered %v)", tc.err, tc.answered)
		if tc.tls {
			require.NotContains(t, detail, "desc =")
			require.NotContains(t, detail, "rpc error")
		}
	}
}
