// Package leader follows the leader of a replicated group from the client
// side: Redirector sends each call to the node believed to lead, moves to
// the node an error names as leader, and tries the others in turn when none
// is named. It knows nothing of the group's errors: the caller's Hint
// classifies them (meta's client reads gRPC statuses, the consensus tests
// consensus errors). It is shared by the public client and the server so
// that the client links no server code.
package leader

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Redirector sends a call to the node believed to lead a group, following
// NotLeaderError hints and trying the other addresses when there is none.
// A client library wraps its RPCs with Do; Hint maps its errors (e.g. gRPC
// statuses carrying the leader's address) to a leader address and whether
// the call may be retried. It is safe for concurrent use.
type Redirector struct {
	// Addrs are the group's addresses. Required.
	Addrs []string
	// Hint classifies an error from fn: the leader's address if the error
	// names one, and whether the call may be sent again. Required.
	Hint func(err error) (leaderAddr string, retry bool)
	// Backoff is the pause before trying again when no leader is known;
	// it doubles up to 32 times its value. Default: 10ms.
	Backoff time.Duration

	mu     sync.Mutex
	leader string
	next   int
}

// Do calls fn with the presumed leader's address until fn succeeds, fails
// with an error Hint says not to retry, or ctx ends.
func (r *Redirector) Do(ctx context.Context, fn func(ctx context.Context, addr string) error) error {
	hint := r.Hint
	if hint == nil {
		hint = func(error) (string, bool) { return "", false }
	}
	base := r.Backoff
	if base <= 0 {
		base = 10 * time.Millisecond
	}
	backoff := base
	var last error
	for {
		addr := r.current()
		err := fn(ctx, addr)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil && last != nil {
			// The context ended during this attempt, which then says only
			// that: the attempts before say why the call did not succeed.
			return errors.Join(ctx.Err(), last)
		}
		last = err
		leader, retry := hint(err)
		if !retry {
			return err
		}
		if leader != "" && leader != addr {
			r.setLeader(leader)
			continue
		}
		r.rotate(addr)
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 32*base)
	}
}

func (r *Redirector) current() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leader == "" && len(r.Addrs) > 0 {
		r.leader = r.Addrs[r.next%len(r.Addrs)]
	}
	return r.leader
}

func (r *Redirector) setLeader(addr string) {
	r.mu.Lock()
	r.leader = addr
	r.mu.Unlock()
}

// rotate moves past addr, unless another caller already did.
func (r *Redirector) rotate(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leader == addr {
		r.next++
		r.leader = ""
	}
}
