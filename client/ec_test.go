package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/client"
	"github.com/strato-io/strato/ec"
	stratov1 "github.com/strato-io/strato/proto/strato/v1"
)

func TestParseReplication(t *testing.T) {
	for s, want := range map[string]string{"ONE": "ONE", "three": "THREE", "1": "ONE", " 3 ": "THREE",
		"rs-6-3-1024k": "rs-6-3-1024k", "RS-3-2": "rs-3-2-1024k", "xor-2-1-64k": "xor-2-1-64k", "rs-10-4-1024k": "rs-10-4-1024k"} {
		repl, e, err := client.ParseReplication(s)
		require.NoError(t, err, s)
		require.Equal(t, want, client.Redundancy(repl, e), s)
		require.True(t, (repl == 0) != (e == nil), s)
	}
	for _, s := range []string{"", "TWO", "rs-3-0", "xor-3-2", "rs-3-2-1001k"} {
		_, _, err := client.ParseReplication(s)
		require.ErrorIs(t, err, client.ErrInvalid, s)
		require.ErrorIs(t, err, ec.ErrInvalidConfig, s)
	}
	c, err := client.ECConfig(client.ErasureCoding(ec.RS104))
	require.NoError(t, err)
	require.Equal(t, ec.RS104, c)
	_, err = client.ECConfig(&stratov1.ErasureCoding{Data: 3, Parity: 2})
	require.ErrorIs(t, err, client.ErrInvalid)
}

// TestErasureCodedKeyHasNoHsync: a writer of an erasure coded key refuses
// Hflush and Hsync (docs/ec.md says why), and its key, empty, commits and
// reads back as erasure coded (test/cluster/ec_test.go writes data).
func TestErasureCodedKeyHasNoHsync(t *testing.T) {
	c, err := client.New(client.Options{Meta: []string{realMeta(t)}})
	require.NoError(t, err)
	defer c.Close()
	ctx := t.Context()
	_, err = c.CreateVolume(ctx, &stratov1.CreateVolumeRequest{Name: "vol"})
	require.NoError(t, err)
	_, err = c.CreateBucket(ctx, &stratov1.CreateBucketRequest{Volume: "vol", Name: "bkt", ErasureCoding: client.ErasureCoding(ec.RS32)})
	require.NoError(t, err)

	w, err := c.Create(ctx, "/vol/bkt/f", client.CreateOptions{})
	require.NoError(t, err)
	require.ErrorIs(t, w.Hflush(), client.ErrErasureCoded)
	w.Abort()
	w, err = c.Create(ctx, "/vol/bkt/g", client.CreateOptions{})
	require.NoError(t, err)
	err = w.Hsync()
	require.ErrorIs(t, err, client.ErrErasureCoded)
	require.ErrorContains(t, err, "hflush or hsync on vol/bkt/g (rs-3-2-1024k")
	w.Abort()

	w, err = c.Create(ctx, "/vol/bkt/empty", client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	r, err := c.Open(ctx, "/vol/bkt/empty")
	require.NoError(t, err)
	require.Equal(t, "rs-3-2-1024k", client.Redundancy(r.Info().Replication, r.Info().ErasureCoding))
	require.Zero(t, r.Size())

	w, err = c.Create(ctx, "/vol/bkt/three", client.CreateOptions{WriteOptions: client.WriteOptions{
		Replication: stratov1.ReplicationFactor_REPLICATION_THREE}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
}
