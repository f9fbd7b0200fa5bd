package benchcluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConnectInProcess: without a meta address Connect starts a cluster in
// a temporary directory, says where, and Close removes it; EnsureBucket
// creates what is missing and accepts what exists.
func TestConnectInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := t.Context()
	var log bytes.Buffer
	c, err := Connect(ctx, Options{Bench: "test", Log: &log})
	require.NoError(t, err)
	line := log.String()
	require.True(t, strings.HasPrefix(line, "bench test: starting an in-process cluster (meta + 3 datanodes) in "), line)
	dir := strings.TrimSpace(line[strings.LastIndex(line, " ")+1:])
	require.Contains(t, dir, "strato-test-")
	require.DirExists(t, dir)
	require.NotEmpty(t, c.Meta)

	require.NoError(t, c.EnsureBucket(ctx, "vol", "bkt"))
	require.NoError(t, c.EnsureBucket(ctx, "vol", "bkt"), "again: both exist")
	_, err = c.Client.GetBucket(ctx, "vol", "bkt")
	require.NoError(t, err)

	require.NoError(t, c.Close())
	require.NoDirExists(t, dir)
}

// TestConnectInProcessTLS: with TLS the in-process cluster serves TLS and
// the connection's client trusts it; TLS with a meta address is refused.
func TestConnectInProcessTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	ctx := t.Context()
	var log bytes.Buffer
	c, err := Connect(ctx, Options{Bench: "test", Log: &log, TLS: true, Datanodes: 1})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close()) }()
	require.Contains(t, log.String(), "(meta + 1 datanodes, TLS)")
	require.NotEmpty(t, c.Cluster.CAFile())
	require.NoError(t, c.EnsureBucket(ctx, "vol", "bkt"))

	_, err = Connect(ctx, Options{Bench: "test", Meta: c.Meta, TLS: true})
	require.ErrorContains(t, err, "TLS is for the in-process cluster")
}
