package namespace

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestS3Keys(t *testing.T) {
	h := newHarness(t)
	// Generated: 20 characters of access key, 40 of secret.
	gen := h.must(&stratov1.CreateS3KeyRequest{User: "alice"}).(*stratov1.CreateS3KeyResponse)
	require.Len(t, gen.Key.AccessKey, 20)
	require.Len(t, gen.Secret, 40)
	require.NoError(t, ValidateAccessKey(gen.Key.AccessKey))
	require.Equal(t, "alice", gen.Key.User)
	require.Equal(t, h.now.UnixMilli(), gen.Key.CreatedUnixMs)
	other := h.must(&stratov1.CreateS3KeyRequest{User: "alice"}).(*stratov1.CreateS3KeyResponse)
	require.NotEqual(t, gen.Key.AccessKey, other.Key.AccessKey)
	require.NotEqual(t, gen.Secret, other.Secret)
	// Given.
	h.must(&stratov1.CreateS3KeyRequest{User: "bob", AccessKey: "bob-key", Secret: "bob-secret-1"})
	h.fails(ErrExists, &stratov1.CreateS3KeyRequest{AccessKey: "bob-key"})
	for _, bad := range []*stratov1.CreateS3KeyRequest{
		{AccessKey: "ab"}, {AccessKey: "a/b/c"}, {AccessKey: "key with space"},
		{AccessKey: "ok-key", Secret: "short"}, {AccessKey: "ok-key", Secret: "has a space"},
		{AccessKey: "ok-key", Secret: "naïve-secret"},
	} {
		err := h.fails(ErrInvalid, bad)
		if bad.Secret != "" {
			require.NotContains(t, err.Error(), bad.Secret, "an error must not quote a secret")
		}
	}
	// Without a source of randomness, both must be given.
	_, err := h.ns.Prepare(t.Context(), &stratov1.CreateS3KeyRequest{AccessKey: "x-key"}, h.db, PrepareEnv{Now: h.now})
	require.Error(t, err)

	got, err := h.rd().S3Secret("bob-key")
	require.NoError(t, err)
	require.Equal(t, "bob-secret-1", got.Secret)
	require.Equal(t, "bob", got.Key.User)
	got, err = h.rd().S3Secret(gen.Key.AccessKey)
	require.NoError(t, err)
	require.Equal(t, gen.Secret, got.Secret)
	_, err = h.rd().S3Secret("nope")
	require.ErrorIs(t, err, ErrS3KeyNotFound)
	_, err = h.rd().S3Secret("")
	require.ErrorIs(t, err, ErrNotFound)

	list := func(req *stratov1.ListS3KeysRequest) (keys []string, truncated bool) {
		res, err := h.rd().ListS3Keys(req)
		require.NoError(t, err)
		for _, k := range res.Keys {
			keys = append(keys, k.AccessKey)
		}
		return keys, res.Truncated
	}
	all, tr := list(&stratov1.ListS3KeysRequest{})
	require.Len(t, all, 3)
	require.False(t, tr)
	require.IsIncreasing(t, all)
	alice, _ := list(&stratov1.ListS3KeysRequest{User: "alice"})
	require.ElementsMatch(t, []string{gen.Key.AccessKey, other.Key.AccessKey}, alice)
	page, tr := list(&stratov1.ListS3KeysRequest{Limit: 2})
	require.Equal(t, all[:2], page)
	require.True(t, tr)
	page, tr = list(&stratov1.ListS3KeysRequest{StartAfter: all[1]})
	require.Equal(t, all[2:], page)
	require.False(t, tr)

	h.must(&stratov1.RevokeS3KeyRequest{AccessKey: "bob-key"})
	_, err = h.rd().S3Secret("bob-key")
	require.ErrorIs(t, err, ErrS3KeyNotFound)
	err = h.fails(ErrNotFound, &stratov1.RevokeS3KeyRequest{AccessKey: "bob-key"})
	require.ErrorIs(t, err, ErrS3KeyNotFound)
	// A revoked access key may be made again, with another secret.
	h.must(&stratov1.CreateS3KeyRequest{AccessKey: "bob-key", Secret: "bob-secret-2"})
	got, err = h.rd().S3Secret("bob-key")
	require.NoError(t, err)
	require.Equal(t, "bob-secret-2", got.Secret)
}
