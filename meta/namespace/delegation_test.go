package namespace

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/strato-io/strato/proto/strato/v1"
)

// Delegation token records: apply takes each sequence number once and in
// increasing order, renews within the max date only, and purges only
// expired records; ListTokens leaves them to ListDelegationTokens.
func TestDelegationTokenRecords(t *testing.T) {
	h := newHarness(t)
	h.must(&stratov1.CreateUserRequest{Name: "alice"})
	now := h.now.UnixMilli()
	rec := func(seq uint64) *stratov1.TokenRecord {
		return &stratov1.TokenRecord{Id: DelegationTokenID(seq), User: "alice", SecretSha256: HashTokenSecret(bytes.Repeat([]byte{1}, 32)),
			CreatedUnixMs: now, ExpiresUnixMs: now + time.Hour.Milliseconds(), Delegation: &stratov1.DelegationRecord{
				Renewer: "rm", MaxUnixMs: now + 3*time.Hour.Milliseconds(), RenewIntervalMs: time.Hour.Milliseconds(), Sequence: seq}}
	}
	h.must(rec(1))
	h.must(rec(5))
	h.fails(ErrExists, rec(5))
	h.fails(ErrExists, rec(3)) // below the counter: a racing leader's
	bad := rec(6)
	bad.Id = DelegationTokenID(7)
	h.fails(ErrInvalid, bad)
	h.fails(ErrInvalid, &stratov1.TokenRecord{Id: "x", User: "alice"}) // not a delegation token
	seq, err := h.rd().DelegationSequence()
	require.NoError(t, err)
	require.Equal(t, uint64(5), seq)

	// Renewals: within the max date only; not once cancelled.
	h.must(&stratov1.RenewTokenCommand{Id: "dt1", ExpiresUnixMs: now + 2*time.Hour.Milliseconds()})
	h.fails(ErrInvalid, &stratov1.RenewTokenCommand{Id: "dt1", ExpiresUnixMs: now + 4*time.Hour.Milliseconds()})
	h.fails(ErrNotFound, &stratov1.RenewTokenCommand{Id: "dt9", ExpiresUnixMs: now + time.Hour.Milliseconds()})
	h.must(&stratov1.RevokeTokenRequest{Id: "dt5"})
	h.fails(ErrDenied, &stratov1.RenewTokenCommand{Id: "dt5", ExpiresUnixMs: now + time.Hour.Milliseconds()})

	list, err := h.rd().ListDelegationTokens(&stratov1.ListDelegationTokensRequest{})
	require.NoError(t, err)
	require.Len(t, list.Tokens, 2)
	require.Equal(t, now+2*time.Hour.Milliseconds(), list.Tokens[0].ExpiresUnixMs)
	require.NotZero(t, list.Tokens[1].CancelledUnixMs)
	users, err := h.rd().ListTokens(&stratov1.ListTokensRequest{})
	require.NoError(t, err)
	require.Empty(t, users.Tokens)

	// Purge: only what has expired at the command's time.
	h.now = h.now.Add(90 * time.Minute)
	h.must(&stratov1.PurgeTokensCommand{Ids: []string{"dt1", "dt5", "dt9"}})
	list, err = h.rd().ListDelegationTokens(&stratov1.ListDelegationTokensRequest{})
	require.NoError(t, err)
	require.Len(t, list.Tokens, 1)
	require.Equal(t, "dt1", list.Tokens[0].Id)
	// The counter stays: a purged number is never taken again.
	h.fails(ErrExists, rec(5))
}
