package namespace

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/strato-io/strato/proto/strato/v1"
)

func TestUsersAndTokens(t *testing.T) {
	h := newHarness(t)
	u := h.must(&stratov1.CreateUserRequest{Name: "alice", Groups: []string{"dev", "ops"}}).(*stratov1.CreateUserResponse)
	require.Equal(t, &stratov1.User{Name: "alice", Groups: []string{"dev", "ops"}, CreatedUnixMs: h.now.UnixMilli()}, u.User)
	h.must(&stratov1.CreateUserRequest{Name: "root", Admin: true})
	h.fails(ErrExists, &stratov1.CreateUserRequest{Name: "alice"})
	for _, bad := range []*stratov1.CreateUserRequest{
		{Name: ""}, {Name: "Alice"}, {Name: "-x"}, {Name: "a b"}, {Name: string(make([]byte, 65))},
		{Name: "ok", Groups: []string{"Bad Group"}},
	} {
		h.fails(ErrInvalid, bad)
	}

	// A token: its secret comes from the server, only its hash is kept
	// (in the command and in the record).
	secret := bytes.Repeat([]byte{7}, MinTokenSecret)
	issue := func(user string, ttlMs int64) (*stratov1.IssueTokenResponse, error) {
		env := h.env()
		env.TokenSecret = secret
		cmd, err := h.ns.Prepare(t.Context(), &stratov1.IssueTokenRequest{User: user, TtlMs: ttlMs}, h.db, env)
		if err != nil {
			return nil, err
		}
		data, err := proto.Marshal(cmd)
		require.NoError(t, err)
		require.False(t, bytes.Contains(data, secret), "the command holds the secret")
		res, err := h.apply(cmd)
		if err != nil {
			return nil, err
		}
		return res.(*stratov1.IssueTokenResponse), nil
	}
	tok, err := issue("alice", 0)
	require.NoError(t, err)
	require.Len(t, tok.Info.Id, 16)
	require.Equal(t, DefaultTokenTTL.Milliseconds(), tok.Info.ExpiresUnixMs-tok.Info.CreatedUnixMs)
	rec, err := h.rd().Token(tok.Info.Id)
	require.NoError(t, err)
	require.Equal(t, HashTokenSecret(secret), rec.SecretSha256)
	_, err = issue("nobody", 0)
	require.ErrorIs(t, err, ErrUserNotFound)
	for _, ttl := range []int64{-1, (MaxTokenTTL + time.Millisecond).Milliseconds()} {
		_, err = issue("alice", ttl)
		require.ErrorIs(t, err, ErrInvalid)
	}
	_, err = issue("root", time.Hour.Milliseconds())
	require.NoError(t, err)
	// No secret: refused.
	_, err = h.prepare(&stratov1.IssueTokenRequest{User: "alice"})
	require.Error(t, err)

	list, err := h.rd().ListTokens(&stratov1.ListTokensRequest{User: "alice"})
	require.NoError(t, err)
	require.Len(t, list.Tokens, 1)
	all, err := h.rd().ListTokens(&stratov1.ListTokensRequest{})
	require.NoError(t, err)
	require.Len(t, all.Tokens, 2)

	h.must(&stratov1.RevokeTokenRequest{Id: tok.Info.Id})
	rec, err = h.rd().Token(tok.Info.Id)
	require.NoError(t, err)
	require.Equal(t, h.now.UnixMilli(), rec.RevokedUnixMs)
	h.fails(ErrNotFound, &stratov1.RevokeTokenRequest{Id: "0000000000000000"})

	// Deleting a user revokes its live tokens.
	tok2, err := issue("alice", 0)
	require.NoError(t, err)
	res := h.must(&stratov1.DeleteUserRequest{Name: "alice"}).(*stratov1.DeleteUserResponse)
	require.Equal(t, uint32(1), res.RevokedTokens)
	rec, err = h.rd().Token(tok2.Info.Id)
	require.NoError(t, err)
	require.NotZero(t, rec.RevokedUnixMs)
	_, err = h.rd().User("alice")
	require.ErrorIs(t, err, ErrUserNotFound)
	h.fails(ErrNotFound, &stratov1.DeleteUserRequest{Name: "alice"})
	users, err := h.rd().ListUsers(&stratov1.ListUsersRequest{})
	require.NoError(t, err)
	require.Len(t, users.Users, 1)
	has, err := h.rd().HasUsers()
	require.NoError(t, err)
	require.True(t, has)
}
