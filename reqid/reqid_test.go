package reqid

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

func TestValid(t *testing.T) {
	require.True(t, Valid(New()))
	require.Len(t, New(), 16)
	require.NotEqual(t, New(), New())
	for _, id := range []string{"a", "ticket-4711", strings.Repeat("x", MaxLen)} {
		require.True(t, Valid(id), id)
	}
	for _, id := range []string{"", "two words", "tab\t", "ключ", strings.Repeat("x", MaxLen+1)} {
		require.False(t, Valid(id), id)
		require.Empty(t, From(With(context.Background(), id)), id)
	}
}

// TestInterceptors: the client interceptor sends the context's ID as
// metadata, the server interceptor puts it back in a context.
func TestInterceptors(t *testing.T) {
	ctx := With(context.Background(), "4A2F9C1E0B7D3856")
	var sent metadata.MD
	err := UnaryClient(ctx, "/m", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		sent, _ = metadata.FromOutgoingContext(ctx)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"4A2F9C1E0B7D3856"}, sent.Get(MetadataKey))

	in := metadata.NewIncomingContext(context.Background(), sent)
	require.Equal(t, "4A2F9C1E0B7D3856", Incoming(in))
	_, err = UnaryServer(in, nil, &grpc.UnaryServerInfo{}, func(ctx context.Context, _ any) (any, error) {
		require.Equal(t, "4A2F9C1E0B7D3856", From(ctx))
		return nil, nil
	})
	require.NoError(t, err)

	// Nothing to send, nothing sent; a bad ID is dropped.
	err = UnaryClient(context.Background(), "/m", nil, nil, nil, func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		_, ok := metadata.FromOutgoingContext(ctx)
		require.False(t, ok)
		return nil
	})
	require.NoError(t, err)
	bad := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MetadataKey, "two words"))
	require.Empty(t, Incoming(bad))
}
