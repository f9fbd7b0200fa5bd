package leader

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type notLeader struct{ leader string }

func (e notLeader) Error() string { return "not the leader; try " + e.leader }

var errDown = errors.New("down")

func hint(err error) (string, bool) {
	var nl notLeader
	if errors.As(err, &nl) {
		return nl.leader, true
	}
	return "", errors.Is(err, errDown)
}

// The call follows a named leader at once, tries the others in turn when a
// node is down, remembers the leader for the next call, and returns any
// other error as it is.
func TestRedirector(t *testing.T) {
	r := &Redirector{Addrs: []string{"a", "b", "c"}, Hint: hint, Backoff: time.Millisecond}
	var tried []string
	err := r.Do(context.Background(), func(_ context.Context, addr string) error {
		tried = append(tried, addr)
		switch addr {
		case "a":
			return notLeader{"c"}
		case "c":
			if len(tried) < 4 {
				return errDown
			}
			return nil
		}
		return notLeader{"c"}
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c", "b", "c"}, tried)

	tried = nil
	require.NoError(t, r.Do(context.Background(), func(_ context.Context, addr string) error {
		tried = append(tried, addr)
		return nil
	}))
	require.Equal(t, []string{"c"}, tried, "the leader is remembered")

	other := errors.New("no such key")
	require.ErrorIs(t, r.Do(context.Background(), func(context.Context, string) error { return other }), other)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = r.Do(ctx, func(context.Context, string) error { return errDown })
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, errDown)
}

// A context that ends during an attempt leaves that attempt with nothing
// but the context's error; the error returned still says what went wrong
// before.
func TestRedirectorKeepsTheReasonWhenTheContextEnds(t *testing.T) {
	refused := errors.New("connection refused")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &Redirector{Addrs: []string{"a"}, Backoff: time.Millisecond,
		Hint: func(err error) (string, bool) { return "", errors.Is(err, refused) }}
	n := 0
	err := r.Do(ctx, func(ctx context.Context, _ string) error {
		if n++; n == 1 {
			return refused
		}
		cancel()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, refused)
}
