package exporter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/tracing/otlptest"
)

// TestStart: no endpoint, no tracing; with one (the flag's, or the
// environment's), the spans reach the collector there, by Shutdown.
func TestStart(t *testing.T) {
	t.Setenv(EndpointEnv, "")
	tp, err := Start(context.Background(), "", "strato-test", "")
	require.NoError(t, err)
	require.Nil(t, tp, "tracing off without an endpoint")

	c, err := otlptest.Start()
	require.NoError(t, err)
	defer c.Close()
	for _, tc := range []struct{ flag, env, span string }{
		{c.Addr, "", "by the flag"},
		{"", "http://" + c.Addr, "by the environment"},
	} {
		t.Setenv(EndpointEnv, tc.env)
		tp, err := Start(context.Background(), tc.flag, "strato-test", "127.0.0.1:1")
		require.NoError(t, err)
		require.NotNil(t, tp)
		_, span := tp.Tracer("test").Start(context.Background(), tc.span)
		span.End()
		require.NoError(t, tp.Shutdown(context.Background()))
	}
	spans := c.Spans()
	require.Len(t, spans, 2)
	for i, want := range []string{"by the flag", "by the environment"} {
		require.Equal(t, want, spans[i].Name)
		require.Equal(t, "strato-test", spans[i].Service)
		require.Equal(t, "127.0.0.1:1", spans[i].Instance)
		require.Empty(t, spans[i].Parent)
	}
}
